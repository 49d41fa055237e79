"""The paired sign-flip test and the bootstrap: checked against exact enumeration, seeded, fast."""

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiff.core.metrics.stats import bootstrap_ci, exact_sign_flip_p, paired_test, paired_tests, sign_flip_p


def brute_force_p(d):
    """All 2^n sign patterns with itertools: the definition, no cleverness."""
    observed = abs(sum(d))
    count = 0
    total = 0
    for signs in itertools.product((-1, 1), repeat=len(d)):
        s = sum(x * y for x, y in zip(signs, d))
        count += abs(s) >= observed - 1e-9
        total += 1
    return count / total


def mc_tolerance(p, flips):
    return 4 * math.sqrt(p * (1 - p) / flips) + 1 / flips + 1e-12


HAND_MADE = [
    [1, 1, 1],  # every flip but the all-equal two is smaller: p = 2/8
    [1, -1],  # mean 0: every flip is at least as far: p = 1
    [0, 0, 0, 0],
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # p = 2/1024
    [0.2, 0.2, -0.1, 0.5, 0.0, 0.3, -0.4, 0.1],
    [1, 0, 0, 1, -1, 1, 0, 1, 1, 0, 0, 1],  # recall@k style: six gains, one loss
    [0.5, 1 / 3, -0.25, 1.0, -1.0, 0.2, 0.2, 1 / 3, -1 / 3, 0.1, 0.0, 0.75, -0.5, 0.25, 1 / 6, 0.6],
]


def test_exact_matches_hand_counts():
    assert exact_sign_flip_p([1, 1, 1]) == 2 / 8
    assert exact_sign_flip_p([1, -1]) == 1.0
    assert exact_sign_flip_p([0, 0, 0]) == 1.0
    assert exact_sign_flip_p([1] * 10) == 2 / 1024
    assert exact_sign_flip_p([]) == 1.0


@pytest.mark.parametrize("d", HAND_MADE)
def test_exact_matches_brute_force(d):
    assert exact_sign_flip_p(d) == pytest.approx(brute_force_p(d), abs=1e-12)


@pytest.mark.parametrize("d", HAND_MADE)
def test_monte_carlo_within_error_of_exact(d):
    flips = 10_000
    exact = exact_sign_flip_p(d)
    mc = sign_flip_p(d, flips=flips, seed=7)
    assert abs(mc - exact) < mc_tolerance(exact, flips)


@pytest.mark.parametrize("case", range(12))
def test_monte_carlo_within_error_of_exact_random(case):
    rng = np.random.default_rng(1000 + case)
    n = int(rng.integers(4, 17))
    kind = case % 3
    if kind == 0:  # recall-like: −1, 0, +1 with a tilt
        d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.2, 0.5, 0.3])
    elif kind == 1:  # reciprocal-rank-like
        d = 1 / rng.integers(1, 11, size=n) - 1 / rng.integers(1, 11, size=n)
    else:  # continuous with a shift
        d = rng.normal(0.15, 0.3, size=n)
    flips = 10_000
    exact = exact_sign_flip_p(d)
    mc = sign_flip_p(d, flips=flips, seed=case)
    assert abs(mc - exact) < mc_tolerance(exact, flips), (d, exact, mc)


def test_p_formula_floor():
    # 30 queries that all lose: no random flip reaches the observed sum (but the identity, rarely): p ~ 1/(B+1)
    p = sign_flip_p([-1.0] * 30, flips=999, seed=1)
    assert p == pytest.approx(1 / 1000)


def test_same_inputs_same_numbers():
    rng = np.random.default_rng(3)
    d = rng.normal(0.02, 0.2, size=200)
    assert sign_flip_p(d, 5000, seed=11) == sign_flip_p(d, 5000, seed=11)
    assert bootstrap_ci(d, 5000, seed=11) == bootstrap_ci(d, 5000, seed=11)
    t1, t2 = paired_test(d, 3000, seed=5), paired_test(d, 3000, seed=5)
    assert t1 == t2
    assert t1.method == "sign-flip" and t1.n == 200


def test_small_n_uses_exact():
    t = paired_test([1, 1, 1, 0, -1], flips=100, seed=0)
    assert t.method == "exact"
    assert t.p_value == exact_sign_flip_p([1, 1, 1, 0, -1])
    assert t.flips == 32


def test_bootstrap_interval():
    d = np.array([0.0, 1.0] * 50)
    lo, hi = bootstrap_ci(d, 4000, seed=2)
    assert lo < 0.5 < hi
    assert 0.35 < lo and hi < 0.65
    assert bootstrap_ci([0.25] * 10, 500, seed=0) == (0.25, 0.25)
    lo, hi = bootstrap_ci([], 10)
    assert math.isnan(lo) and math.isnan(hi)


def test_fast_on_a_thousand_queries():
    d = np.random.default_rng(0).normal(0.0, 0.3, size=1000)
    start = time.perf_counter()
    t = paired_test(d, flips=10_000, seed=1)
    elapsed = time.perf_counter() - start
    assert 0 < t.p_value <= 1
    assert elapsed < 10, elapsed  # well under a second on a laptop; generous for slow CI


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        sign_flip_p([1.0, float("nan")])
    with pytest.raises(ValueError):
        sign_flip_p([1.0], flips=0)
    with pytest.raises(ValueError):
        exact_sign_flip_p([1.0] * 25)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), min_size=1, max_size=40),
       st.integers(min_value=0, max_value=2**32))
def test_properties(d, seed):
    p = sign_flip_p(d, flips=200, seed=seed)
    assert 1 / 201 <= p <= 1
    # the same flips applied to −d give the same |sums|: the test is symmetric in A and B
    assert sign_flip_p([-x for x in d], flips=200, seed=seed) == p
    if len(d) <= 12:
        exact = exact_sign_flip_p(d)
        assert 0 < exact <= 1
        assert exact_sign_flip_p(list(reversed(d))) == exact


def test_a_matrix_of_metrics_gets_the_numbers_each_row_gets_alone():
    rng = np.random.default_rng(3)
    matrix = rng.choice([-1.0, 0.0, 0.0, 0.5, 1.0], size=(4, 60))
    together = paired_tests(matrix, flips=2000, seed=11)
    for row, test in zip(matrix, together):
        alone = paired_test(row, flips=2000, seed=11)
        assert (test.p_value, test.ci95, test.mean) == (alone.p_value, alone.ci95, alone.mean)
        assert alone.p_value == sign_flip_p(row, 2000, 11)


# ---- the detectable change ---------------------------------------------------------------------------------


def _simulated_power(diffs, shift, resamples=1500, seed=99):
    """Resample the observed differences, centred and shifted, and run the real test on each resample."""
    from ragdiff.core.metrics.stats import sign_flip_p

    d = np.asarray(diffs, dtype=float)
    rng = np.random.default_rng(seed)
    drawn = (d - d.mean() + shift)[rng.integers(0, len(d), size=(resamples, len(d)))]
    p = sign_flip_p(drawn, flips=2000, seed=seed + 1)
    return float(np.mean(p < 0.05))


@pytest.mark.parametrize("case", ["recall-like n=67", "graded n=50", "skewed n=40"])
def test_detectable_change_agrees_with_a_simulation(case):
    from ragdiff.core.metrics.stats import DETECT_RESAMPLES, detectable_change

    rng = np.random.default_rng(14)
    d = {"recall-like n=67": lambda: rng.choice([-1.0, 0.0, 1.0], size=67, p=[0.1, 0.8, 0.1]),
         "graded n=50": lambda: rng.normal(0.01, 0.2, size=50),
         "skewed n=40": lambda: rng.exponential(0.2, size=40) - 0.2}[case]()
    m = detectable_change(d)
    assert 0 < m < 1
    sims = 1500
    # Monte-Carlo error of both estimates of the power (ours from DETECT_RESAMPLES resamples), 3 sigma
    tol = 3 * math.sqrt(0.8 * 0.2 / sims + 0.8 * 0.2 / DETECT_RESAMPLES)
    up, down = _simulated_power(d, m), _simulated_power(d, -m)
    # it is the larger of the shift up and the shift down: the harder direction is found 80% of the time
    assert abs(min(up, down) - 0.8) <= tol, (up, down)
    # a shift well under it is detected clearly less often: the test can fail
    assert min(_simulated_power(d, 0.6 * m), _simulated_power(d, -0.6 * m)) < 0.8 - tol


def test_detectable_change_is_seeded_and_shared_across_rows():
    from ragdiff.core.metrics.stats import detectable_change

    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 0.3, size=60), rng.choice([-1.0, 0.0, 1.0], size=60)
    assert detectable_change(a) == detectable_change(a)
    both = detectable_change(np.vstack([a, b]))
    assert list(both) == [detectable_change(a), detectable_change(b)]
    assert math.isnan(detectable_change(np.zeros(40)))  # nothing changed: no noise to measure
    assert detectable_change(a, seed=1) != detectable_change(a)
    assert abs(detectable_change(a, seed=1) - detectable_change(a)) < 0.1 * detectable_change(a)


def test_paired_tests_without_the_interval_give_the_same_p_values():
    from ragdiff.core.metrics.stats import paired_tests

    rng = np.random.default_rng(5)
    for n in (12, 60):  # exact and sampled
        m = np.vstack([rng.integers(-1, 2, n).astype(float), rng.normal(0, 0.3, n)])
        full, bare = paired_tests(m, flips=2000), paired_tests(m, flips=2000, interval=False)
        assert [(t.p_value, t.mean, t.method, t.n) for t in full] == [(t.p_value, t.mean, t.method, t.n) for t in bare]
        assert all(math.isnan(lo) and math.isnan(hi) for lo, hi in (t.ci95 for t in bare))
        assert not any(math.isnan(lo) for lo, _ in (t.ci95 for t in full))


def test_sign_flip_p_kept_draws_are_the_fresh_ones():
    """The sign test keeps its random bits for the next test with the same seed, queries and flips (the
    unjudged check after the metrics), and draws big ones afresh: the same p-values every way."""
    from ragdiff.core.metrics import stats

    rng = np.random.default_rng(3)
    d = np.round(rng.normal(0.02, 0.3, size=(2, 301)), 2)
    first = stats.sign_flip_p(d, flips=3000, seed=9)
    assert (9, 301, 3000) in stats._DRAWS
    again = stats.sign_flip_p(d, flips=3000, seed=9)
    kept, stats._DRAWS_MAX_CELLS = stats._DRAWS_MAX_CELLS, 0
    try:
        fresh = stats.sign_flip_p(d, flips=3000, seed=9)
    finally:
        stats._DRAWS_MAX_CELLS = kept
    assert list(first) == list(again) == list(fresh)
    assert list(stats.sign_flip_p(d, flips=3000, seed=10)) != list(first)


def _bootstrap_by_definition(d, resamples, seed, level=0.95):
    """The percentile bootstrap as `bootstrap_ci` defines it, written plainly and without the module: resample r's
    queries are draws r*n to r*n+n-1 of rng([seed, 1]).integers(0, n), all drawn in one call; its mean is the
    mean of its drawn values. (The module draws in blocks of resamples; numpy's PCG64 keeps a 32-bit half word
    left over for the next call, so the blocks draw these same indices whatever their size.)"""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    idx = np.random.default_rng([seed, 1]).integers(0, d.shape[1], size=(resamples, d.shape[1]))
    tail = (1 - level) / 2 * 100
    return [tuple(float(x) for x in np.percentile(values[idx].mean(axis=1), [tail, 100 - tail])) for values in d]


@pytest.mark.parametrize("metrics,n,resamples", [(1, 50, 3000), (3, 1000, 2500), (7, 1000, 10_000), (2, 7, 100),
                                                 (5, 4099, 777), (7, 20_000, 30), (1, 1, 5)])
def test_bootstrap_is_its_definition_to_the_last_bit(metrics, n, resamples):
    """bootstrap_ci gathers a few resamples at a time for all metrics at once: the same intervals, bit for bit,
    as every resample drawn in one call and averaged one metric at a time (shapes where the gathers do not divide
    the resamples, one metric, one query, and metrics × queries past one gather's cells: one resample a gather,
    as at 10,000 queries)."""
    rng = np.random.default_rng(n)
    d = np.vstack([rng.choice([-1.0, 0.0, 0.0, 1.0], size=n), rng.normal(0, 0.3, size=n),
                   *rng.normal(0.01, 0.2, size=(max(metrics - 2, 0), n))])[:metrics]
    got = bootstrap_ci(d, resamples, seed=7)
    assert got == _bootstrap_by_definition(d, resamples, seed=7)
    assert bootstrap_ci(d[0], resamples, seed=7) == got[0]


@pytest.mark.parametrize("seed,n,flips", [(20_250_806, 1000, 10_000), (1, 67, 10_000), (3, 7, 101), (2, 3, 3),
                                          (5, 1, 5), (11, 4099, 777), (4, 6, 400_000), (8, 10, 200_001)])
def test_sign_bits_are_numpys_integers(seed, n, flips):
    """The sign test's bits, read off the generator's raw words, are rng.integers(0, 2, int8)'s in the same
    blocks, bit for bit: blocks whose bytes end inside a 32-bit word (n = 7, 4099), blocks that leave half a
    64-bit word for the next (n = 6 and 10 over several blocks)."""
    from ragdiff.core.metrics.stats import _draw_bits

    rng = np.random.default_rng(seed)
    # the blocks are part of the definition, written here and not taken from the module: an int8 draw starts
    # each call on a fresh 32-bit word, so another block size draws other bits and every p-value changes
    rows = max(1, (1 << 20) // n)
    expected = [rng.integers(0, 2, size=(min(rows, flips - done), n), dtype=np.int8) for done in range(0, flips, rows)]
    got = list(_draw_bits(seed, n, flips))
    assert len(got) == len(expected) > 0
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def test_the_p_values_and_intervals_are_the_ones_ragdiff_printed_before():
    """Golden values, written once from bc2d470 with numpy 2.4.6 (`PYTHONPATH=<bc2d470's tree> python -c` on
    the inputs below, printing `[float(p) for p in sign_flip_p(m, 40_000, SEED)]` and `bootstrap_ci(m, 5_000,
    SEED)`): the same inputs give the same numbers every run, so a changed block size (40,000 flips over 67
    queries are 3 blocks), stream, draw order or numpy generator fails here, not only in a byte comparison."""
    from ragdiff.core.metrics import stats

    d = np.array([0.5, 1 / 3, -0.25, 1.0, -1.0, 0.2, 0.2, 1 / 3, -1 / 3, 0.1, 0.0, 0.75, -0.5, 0.25, 1 / 6, 0.6] * 4
                 + [0.3, -0.2, 0.1])
    m = np.vstack([d, d[::-1] * 0.5])
    stats._DRAWS.clear()  # drawn here, not kept from another test
    assert [float(p) for p in sign_flip_p(m, flips=40_000, seed=20_250_806)] == [0.01579960500987475,
                                                                                 0.01582460438489038]
    assert bootstrap_ci(m, 5_000, seed=20_250_806) == [(0.03283582089552239, 0.2507587064676615),
                                                       (0.015046641791044786, 0.12824315920397994)]


@pytest.mark.parametrize("n,resamples,flips", [(1000, 120, 60), (40, 50, 60), (7, 9, 101)])
def test_detectable_jobs_in_their_buffers_are_fresh_arrays_to_the_last_bit(n, resamples, flips):
    """The jobs work in buffers each thread reuses (the draws, their flipped sums, and the searches' sums and
    outcomes in the draws' memory when they fit: n = 1000 here; apart when not: n = 40 and 7): each row's value
    is the search over fresh arrays of the same draws, bit for bit, in whatever order and thread the jobs run,
    each job run twice."""
    from concurrent.futures import ThreadPoolExecutor

    from ragdiff.core.metrics.stats import _shift_to_detect, detectable_jobs

    rng = np.random.default_rng(n)
    d = np.vstack([rng.choice([-1.0, 0.0, 0.0, 1.0], size=n), rng.normal(0, 0.3, size=n),
                   rng.normal(0.05, 0.2, size=n), rng.choice([-0.2, 0.0, 0.4], size=n)])
    seed = 5
    # the draws as detectable_jobs' docstring defines them, each row searched over fresh arrays
    draws = np.random.default_rng([seed, 2])
    signs = draws.integers(0, 2, size=(flips, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
    idx = draws.integers(0, n, size=(resamples, n))
    expected = []
    for row in d - d.mean(axis=1, keepdims=True):
        drawn = row[idx]
        observed, flipped = drawn.sum(axis=1), signs @ drawn.T
        expected.append(max(_shift_to_detect(observed, flipped, signs.sum(axis=1), n, 0.05, 0.8, sign)
                            for sign in (1.0, -1.0)))
    jobs = detectable_jobs(d, alpha=0.05, power=0.8, resamples=resamples, flips=flips, seed=seed)
    assert [row for row, _ in jobs] == [0, 1, 2, 3]
    with ThreadPoolExecutor(max_workers=2) as pool:
        got = list(pool.map(lambda job: job[1](), [*jobs[::-1], *jobs]))
    assert got == expected[::-1] + expected
