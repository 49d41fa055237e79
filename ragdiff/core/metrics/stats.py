"""Is a difference real? Paired tests on per-query differences (B − A), seeded so that the same inputs give the
same numbers on every run.

- `sign_flip_p`: the paired randomization test. Under the null hypothesis that A and B are exchangeable, each
  query's difference is as likely to carry either sign, so the test flips signs at random and counts how often
  the mean change is at least as far from zero as the one observed. Two-sided, p = (b + 1) / (B + 1).
- `exact_sign_flip_p`: the same test over all 2^n sign patterns (n <= 20), used when n is small and by the tests.
- `bootstrap_ci`: the percentile bootstrap interval of the mean change.

Everything is numpy and vectorised in blocks of (flips × queries), so 1,000 queries × 10,000 flips takes a
fraction of a second and a few megabytes.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragdiff.core.io.choices import DEFAULT_FLIPS, DEFAULT_SEED

EXACT_MAX = 16  # 2^16 sign patterns: enumerate instead of sampling
_BLOCK_CELLS = 1 << 20  # cells of one (flips × queries) block: 8 MB of float64
_GATHER_CELLS = 1 << 17  # cells the bootstrap gathers at a time: 1 MB of float64, in a core's L2


def _as_diffs(diffs) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim > 2:
        raise ValueError("differences must be a vector, or a matrix of one row per metric")
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite numbers")
    return d


def _rows(d: np.ndarray) -> np.ndarray:
    """Every entry point takes one vector of differences or a matrix of them (one row per metric, the same
    queries in each row): the random signs and resamples are drawn once and shared by all rows, which gives
    each row exactly the numbers it would get alone, at a fraction of the cost."""
    return d.reshape(1, -1) if d.ndim == 1 else d


def _unwrap(values: np.ndarray, d: np.ndarray):
    return float(values[0]) if d.ndim == 1 else values


def _tolerance(d: np.ndarray) -> np.ndarray:
    """Sums of ±d that equal the observed |sum| in exact arithmetic may differ in the last bits: count them."""
    return 1e-9 * np.maximum(1.0, np.abs(d).sum(axis=-1))


def _block_rows(n: int) -> int:
    # depends on the number of queries only: the draws, and so the numbers, are the same however many
    # metrics share them
    return max(1, _BLOCK_CELLS // max(n, 1))


_DRAWS: dict[tuple[int, int, int], list[np.ndarray]] = {}  # the last few sign draws, by (seed, queries, flips)
_DRAWS_LOCK = threading.Lock()
_DRAWS_KEPT = 2  # 10 MB of int8 each at 1,000 queries x 10,000 flips
_DRAWS_MAX_CELLS = 1 << 25  # draws bigger than 32 MB (--flips in the millions) are drawn again each time


def _draw_bits(seed: int, n: int, flips: int):
    """The sign test's random bits: blocks of `rng.integers(0, 2, size=(rows, n), dtype=np.int8)` from the
    generator seeded `seed`, read straight off its raw 64-bit words (twice as fast, the same bits)."""
    rng = np.random.default_rng(seed)
    rows, done = _block_rows(n), 0
    if sys.byteorder != "little":  # pragma: no cover - the raw words' bytes below are read little-endian
        while done < flips:
            m = min(rows, flips - done)
            yield rng.integers(0, 2, size=(m, n), dtype=np.int8)
            done += m
        return
    # numpy draws an int8 in [0, 2) from one byte of a 32-bit word (Lemire's method: 2 * byte >> 8, its top
    # bit; no byte is ever rejected for a range of 2), four bytes a word from the lowest, each call starting
    # on a fresh word; the 32-bit words are each 64-bit output's low half then its high half, a high half left
    # over kept for the next call (`spare`). tests/test_stats.py holds it to rng.integers.
    spare = np.empty(0, dtype=np.uint32)
    while done < flips:
        m = min(rows, flips - done)
        words = -(-m * n // 4)
        raw = rng.bit_generator.random_raw(-(-(words - len(spare)) // 2)).view(np.uint32)
        stream = np.concatenate([spare, raw]) if len(spare) else raw
        spare = stream[words:].copy()
        bits = stream[:words].view(np.uint8)[:m * n]
        yield np.right_shift(bits, 7, out=bits).view(np.int8).reshape(m, n)  # in the words' own buffer
        done += m


def _sign_bits(seed: int, n: int, flips: int):
    """The sign test's random bits (0/1, int8), in the blocks `sign_flip_p` draws them: one seeded stream per
    (seed, queries, flips), kept for the next test with the same three (diff tests the metrics, then the
    unjudged check with the same seed and queries), so the same bits are drawn once."""
    if n * flips > _DRAWS_MAX_CELLS:
        return _draw_bits(seed, n, flips)
    key = (seed, n, flips)
    with _DRAWS_LOCK:
        bits = _DRAWS.get(key)
        if bits is None:
            bits = list(_draw_bits(seed, n, flips))
            while len(_DRAWS) >= _DRAWS_KEPT:
                _DRAWS.pop(next(iter(_DRAWS)))
            _DRAWS[key] = bits
        return bits


def sign_flip_p(diffs, flips: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED):
    """Two-sided paired randomization p-value: (b + 1) / (B + 1), b = flips with |mean| >= |observed mean|.

    A vector gives a float; a matrix (one row per metric) gives one p-value per row.
    """
    given = _as_diffs(diffs)
    d = _rows(given)
    if flips < 1:
        raise ValueError("flips must be at least 1")
    if d.shape[1] == 0:
        return _unwrap(np.ones(d.shape[0]), given)
    observed = np.abs(d.sum(axis=1))
    threshold = observed - _tolerance(d)
    b = np.zeros(d.shape[0], dtype=np.int64)
    signs = None
    for bits in _sign_bits(seed, d.shape[1], flips):
        # a random ±1 matrix times the differences: one sum per flip and metric (bits * 2 - 1, in one buffer)
        if signs is None or signs.shape != bits.shape:
            signs = np.empty(bits.shape, dtype=np.float64)
        signs[...] = bits
        signs *= 2.0
        signs -= 1.0
        sums = signs @ d.T
        b += np.count_nonzero(np.abs(sums) >= threshold, axis=0)
    return _unwrap((b + 1) / (flips + 1), given)


def exact_sign_flip_p(diffs):
    """Two-sided p over all 2^n sign patterns (the observed pattern is one of them): b / 2^n."""
    given = _as_diffs(diffs)
    d = _rows(given)
    n = d.shape[1]
    if n == 0:
        return _unwrap(np.ones(d.shape[0]), given)
    if n > 20:
        raise ValueError(f"exact enumeration of 2^{n} sign flips is too large; use sign_flip_p")
    threshold = np.abs(d.sum(axis=1)) - _tolerance(d)
    total = 1 << n
    bits = np.arange(n, dtype=np.int64)
    rows = _block_rows(n)
    b = np.zeros(d.shape[0], dtype=np.int64)
    for start in range(0, total, rows):
        patterns = np.arange(start, min(total, start + rows), dtype=np.int64)
        signs = ((patterns[:, None] >> bits) & 1).astype(np.float64) * 2.0 - 1.0
        b += np.count_nonzero(np.abs(signs @ d.T) >= threshold, axis=0)
    return _unwrap(b / total, given)


def bootstrap_ci(diffs, resamples: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED, level: float = 0.95):
    """Percentile bootstrap interval of the mean difference (queries resampled with replacement).

    A vector gives (lo, hi); a matrix gives one (lo, hi) per row.
    """
    given = _as_diffs(diffs)
    d = _rows(given)
    if d.shape[1] == 0:
        out = [(math.nan, math.nan)] * d.shape[0]
        return out[0] if given.ndim == 1 else out
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    # a stream of its own, so the interval does not depend on how many flips the test drew
    rng = np.random.default_rng([seed, 1])
    metrics, n = d.shape
    means = np.empty((metrics, resamples), dtype=np.float64)
    # the draws come in blocks of `step` resamples, each gathered for every metric at once into one buffer that
    # stays in a core's cache (~1 MB), where a whole block per metric went out to memory and back. The indices do
    # not depend on the block size (numpy draws each below 2^32 from a 32-bit word and keeps a spare half of a
    # 64-bit one for the next call — only the sign test's int8 bits depend on their blocks, tests/test_stats.py),
    # and a small block is the allocator's to hand back and reuse: 8 MB blocks of 10,000 resamples of 1,000
    # queries were fresh memory each, faulted in page by page (huge pages: numpy asks for them from 4 MB): zeroing
    # fresh pages fell from 7.8 % to 0.55 % of a `diff`'s CPU samples (perf on bench/run_bench.py's 1M pair). Each resample's mean is the same sum of the same values in the same order: the
    # same numbers. mode="clip" only skips take's bounds check and the copy it buffers `out` through: every
    # index is in range.
    step = max(1, _GATHER_CELLS // (metrics * n))
    drawn = np.empty((metrics, step, n), dtype=np.float64)
    for done in range(0, resamples, step):
        part = rng.integers(0, n, size=(min(step, resamples - done), n))
        buffer = drawn[:, :len(part)]
        np.take(d, part, axis=1, out=buffer, mode="clip")
        np.mean(buffer, axis=2, out=means[:, done:done + len(part)])
    tail = (1.0 - level) / 2.0 * 100.0
    bounds = np.percentile(means, [tail, 100.0 - tail], axis=1).T
    out = [(float(lo), float(hi)) for lo, hi in bounds]
    return out[0] if given.ndim == 1 else out


DETECT_RESAMPLES = 1_000  # resamples of the observed differences
DETECT_FLIPS = 500  # sign flips each resample is tested with (p down to 1/501: enough to judge p < 0.05)


def _shift_to_detect(observed: np.ndarray, flipped: np.ndarray, signs_sum: np.ndarray, n: int, alpha: float,
                     power: float, direction: float, sums: np.ndarray | None = None,
                     passed: np.ndarray | None = None) -> float:
    """The smallest shift d >= 0 (times `direction`) at which a share `power` of the resamples pass the
    sign-flip test at `alpha`. A resample's values are its centred draws plus the shift, so its sum is
    observed + n·d and each flipped sum is flipped + d·(sum of that flip's signs): linear in d. `sums` and
    `passed`: buffers of flipped's shape (f64, bool) to work in, when the caller has them."""

    # one (flips × resamples) buffer of sums and one of outcomes, reused by every shift tried: the same
    # element-wise arithmetic as a fresh array each time, and the outcomes' column sums taken as bytes into
    # 16-bit counts (exact below 65,535 flips; 5x faster than summing booleans, which count_nonzero(axis=0)
    # is several times slower than), so the same counts at a fraction of the cost
    sums = np.empty_like(flipped) if sums is None else sums
    passed = np.empty(flipped.shape, dtype=bool) if passed is None else passed
    counts = np.uint16 if flipped.shape[0] < 65_535 else np.int64

    def share(d: float) -> float:
        shift = direction * d
        obs = np.abs(observed + n * shift)
        np.add(flipped, shift * signs_sum[:, None], out=sums)
        np.abs(sums, out=sums)
        np.greater_equal(sums, obs[None, :] - 1e-9 * np.maximum(1.0, obs[None, :]), out=passed)
        b = passed.view(np.uint8).sum(axis=0, dtype=counts)
        return float(np.mean((b + 1) / (flipped.shape[0] + 1) < alpha))

    if 2 / (flipped.shape[0] + 1) >= alpha:  # pragma: no cover - too few flips to reach alpha at all
        return math.inf
    # bracket from the normal approximation (z 0.975 + z 0.8 = 2.8 standard errors), then halve 14 times
    # (to 1/8000 of the bracket: finer than the 3 decimals shown)
    lo, hi = 0.0, 2 * 2.8 * float(np.sqrt(np.mean(observed * observed))) / n + 1e-12
    while share(hi) < power:
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if share(mid) >= power else (mid, hi)
    # discrete differences (recall@k's -1, 0, 1) make power jump at a shift where sums tie: stand past the jump
    return hi * (1 + 1e-6)


def detectable_change(diffs, alpha: float = 0.05, power: float = 0.8, resamples: int = DETECT_RESAMPLES,
                      flips: int = DETECT_FLIPS, seed: int = DEFAULT_SEED):
    """The smallest change of the mean (up or down, whichever is larger) that the paired sign-flip test finds
    with probability `power` at level `alpha`, from the observed per-query differences: the differences,
    centred on 0 and shifted by d, resampled with replacement, each resample tested with `flips` random sign
    flips (one seeded set of draws for every d, so the answer is the same on every run). nan when the
    differences have no spread (nothing to estimate the noise from).

    A vector gives a float; a matrix (one row per metric, the same queries) one value per row.
    """
    given = _as_diffs(diffs)
    out = np.full(_rows(given).shape[0], math.nan)
    for row, job in detectable_jobs(given, alpha, power, resamples, flips, seed):
        out[row] = job()
    return _unwrap(out, given)


def detectable_jobs(diffs, alpha: float = 0.05, power: float = 0.8, resamples: int = DETECT_RESAMPLES,
                    flips: int = DETECT_FLIPS, seed: int = DEFAULT_SEED) -> list[tuple[int, Callable[[], float]]]:
    """`detectable_change` as (row, job) pairs: the draws made once, each row's search a job that gives its
    value — the same value in whatever order or thread the jobs run (numpy releases the GIL). Rows without
    spread (nan) have no job."""
    d = _rows(_as_diffs(diffs))
    n = d.shape[1]
    if n < 2:
        return []
    centred = d - d.mean(axis=1, keepdims=True)
    rng = np.random.default_rng([seed, 2])
    signs = rng.integers(0, 2, size=(flips, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
    signs_sum = signs.sum(axis=1)
    idx = rng.integers(0, n, size=(resamples, n))
    # each thread's buffers, reused by every job it runs: a row's draws (resamples × n), their flipped sums
    # (flips × resamples) and the searches' sums and outcomes — in the draws' memory once the flipped sums are
    # taken, when they fit. Fresh arrays for each of the seven rows of a `diff` were ~20 MB of new memory a job,
    # faulted in (huge pages: numpy asks for them from 4 MB); the same arithmetic into the same shapes, so the
    # same numbers (tests/test_stats.py).
    scratch = threading.local()

    def buffers() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        kept = getattr(scratch, "buffers", None)
        if kept is None:
            drawn = np.empty((resamples, n), dtype=np.float64)
            flipped = np.empty((flips, resamples), dtype=np.float64)
            cells = flips * resamples
            if cells + -(-cells // 8) <= drawn.size:  # the searches' sums, then their outcomes, in drawn's memory
                flat = drawn.reshape(-1)
                sums, passed = flat[:cells].reshape(flips, resamples), flat[cells:].view(np.bool_)[:cells]
            else:
                sums, passed = np.empty_like(flipped), np.empty(cells, dtype=np.bool_)
            kept = scratch.buffers = (drawn, flipped, sums, passed.reshape(flips, resamples))
        return kept

    def job(row: int) -> Callable[[], float]:
        def run() -> float:
            drawn, flipped, sums, passed = buffers()
            np.take(centred[row], idx, out=drawn, mode="clip")  # clip: no bounds check, no copy through a buffer
            observed = drawn.sum(axis=1)
            np.matmul(signs, drawn.T, out=flipped)  # flips × resamples
            up = _shift_to_detect(observed, flipped, signs_sum, n, alpha, power, 1.0, sums, passed)
            down = _shift_to_detect(observed, flipped, signs_sum, n, alpha, power, -1.0, sums, passed)
            return max(up, down)
        return run

    return [(row, job(row)) for row in range(d.shape[0]) if np.ptp(d[row]) != 0]


@dataclass(frozen=True)
class PairedTest:
    n: int
    mean: float  # mean of B − A over the paired queries
    p_value: float
    ci95: tuple[float, float]
    method: str  # "exact" (all 2^n sign flips) or "sign-flip" (B random flips)
    flips: int  # sign patterns counted: 2^n when exact


def paired_tests(matrix, flips: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED,
                 exact_max: int = EXACT_MAX, interval: bool = True) -> list[PairedTest]:
    """paired_test for each row of a (metrics × queries) matrix, sharing the random draws. `interval=False`
    skips the bootstrap (ci95 is nan) for a caller that reads only the p-value: the p-values are the same."""
    d = _rows(_as_diffs(matrix))
    n = int(d.shape[1])
    if n == 0:
        return [PairedTest(0, math.nan, math.nan, (math.nan, math.nan), "none", 0)] * d.shape[0]
    if n <= exact_max:
        p, method, counted = exact_sign_flip_p(d), "exact", 1 << n
    else:
        p, method, counted = sign_flip_p(d, flips, seed), "sign-flip", flips
    cis = bootstrap_ci(d, flips, seed) if interval else [(math.nan, math.nan)] * d.shape[0]
    means = d.mean(axis=1)
    return [PairedTest(n, float(means[i]), float(p[i]), cis[i], method, counted) for i in range(d.shape[0])]


def paired_test(diffs, flips: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED,
                exact_max: int = EXACT_MAX) -> PairedTest:
    """Mean change, p-value (exact when n <= exact_max, else sampled) and bootstrap 95% interval."""
    d = _as_diffs(diffs)
    if d.ndim != 1:
        raise ValueError("paired_test takes one vector of differences; use paired_tests for a matrix")
    return paired_tests(d, flips, seed, exact_max)[0]
