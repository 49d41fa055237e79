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
from dataclasses import dataclass

import numpy as np

DEFAULT_FLIPS = 10_000
DEFAULT_SEED = 20_250_806
EXACT_MAX = 16  # 2^16 sign patterns: enumerate instead of sampling
_BLOCK_CELLS = 1 << 20  # cells of one (flips × queries) block: 8 MB of float64


def _as_diffs(diffs) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64).ravel()
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite numbers")
    return d


def _tolerance(d: np.ndarray) -> float:
    """Sums of ±d that equal the observed |sum| in exact arithmetic may differ in the last bits: count them."""
    return 1e-9 * max(1.0, float(np.abs(d).sum()))


def _block_rows(n: int) -> int:
    return max(1, _BLOCK_CELLS // max(n, 1))


def sign_flip_p(diffs, flips: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED) -> float:
    """Two-sided paired randomization p-value: (b + 1) / (B + 1), b = flips with |mean| >= |observed mean|."""
    d = _as_diffs(diffs)
    if flips < 1:
        raise ValueError("flips must be at least 1")
    if d.size == 0:
        return 1.0
    observed = abs(float(d.sum()))
    tol = _tolerance(d)
    rng = np.random.default_rng(seed)
    rows = _block_rows(d.size)
    b = 0
    done = 0
    while done < flips:
        m = min(rows, flips - done)
        # a random ±1 matrix times the difference vector: one sum per flip
        signs = rng.integers(0, 2, size=(m, d.size), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        sums = signs @ d
        b += int(np.count_nonzero(np.abs(sums) >= observed - tol))
        done += m
    return (b + 1) / (flips + 1)


def exact_sign_flip_p(diffs) -> float:
    """Two-sided p over all 2^n sign patterns (the observed pattern is one of them): b / 2^n."""
    d = _as_diffs(diffs)
    n = d.size
    if n == 0:
        return 1.0
    if n > 20:
        raise ValueError(f"exact enumeration of 2^{n} sign flips is too large; use sign_flip_p")
    observed = abs(float(d.sum()))
    tol = _tolerance(d)
    total = 1 << n
    bits = np.arange(n, dtype=np.int64)
    rows = _block_rows(n)
    b = 0
    for start in range(0, total, rows):
        patterns = np.arange(start, min(total, start + rows), dtype=np.int64)
        signs = ((patterns[:, None] >> bits) & 1).astype(np.float64) * 2.0 - 1.0
        b += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
    return b / total


def bootstrap_ci(diffs, resamples: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference (queries resampled with replacement)."""
    d = _as_diffs(diffs)
    if d.size == 0:
        return (math.nan, math.nan)
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    # a stream of its own, so the interval does not depend on how many flips the test drew
    rng = np.random.default_rng([seed, 1])
    rows = _block_rows(d.size)
    means = np.empty(resamples, dtype=np.float64)
    done = 0
    while done < resamples:
        m = min(rows, resamples - done)
        idx = rng.integers(0, d.size, size=(m, d.size))
        means[done:done + m] = d[idx].mean(axis=1)
        done += m
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class PairedTest:
    n: int
    mean: float  # mean of B − A over the paired queries
    p_value: float
    ci95: tuple[float, float]
    method: str  # "exact" (all 2^n sign flips) or "sign-flip" (B random flips)
    flips: int  # sign patterns counted: 2^n when exact


def paired_test(diffs, flips: int = DEFAULT_FLIPS, seed: int = DEFAULT_SEED,
                exact_max: int = EXACT_MAX) -> PairedTest:
    """Mean change, p-value (exact when n <= exact_max, else sampled) and bootstrap 95% interval."""
    d = _as_diffs(diffs)
    n = int(d.size)
    if n == 0:
        return PairedTest(0, math.nan, math.nan, (math.nan, math.nan), "none", 0)
    if n <= exact_max:
        p, method, counted = exact_sign_flip_p(d), "exact", 1 << n
    else:
        p, method, counted = sign_flip_p(d, flips, seed), "sign-flip", flips
    return PairedTest(n, float(d.mean()), p, bootstrap_ci(d, flips, seed), method, counted)
