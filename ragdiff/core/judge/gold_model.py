"""The gold-left model of the judging queue: P(gold) of every pooled chunk and the gold still unjudged
(`GoldModel`), read by the `global` order (core/judge/pool_order.py), the stopping suggestion
(core/judge/stopping.py: `judge`'s header, `labels stale --runs`, `eval --gold-left`) and the replay's estimate
error (core/judge/pool_replay.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragdiff.core.judge.pool_order import Pool

# rank buckets of the global model: 1, 2, 3, 4-5, 6-10, 11-20, 21-50, 51+ (0: the run did not return it)
_BUCKET_EDGES = np.array([1, 2, 3, 4, 6, 11, 21, 51])
# a first guess of P(gold | a run ranked it at k), before any decision: 1 / (k + 1) at each bucket's top rank
_BUCKET_PRIOR = 1.0 / (_BUCKET_EDGES + 1.0)
_BASE_RATE = 0.02  # P(gold) of a chunk no run returned near the top, before any decision
_PRIOR_PRECISION = 1.0  # of the Gaussian prior on each weight
_NEWTON_STEPS = 8
_MAX_STEP = 2.0  # largest change of one weight per Newton step
_QUERY_WEIGHT = 1.0  # pseudo-gold behind a query's factor
_ARM_WEIGHT = 1.0  # pseudo-gold behind a (query, run)'s factor
# a drafted label's first guess, in logit: a drafter right about 4 times in 5 (odds e^1.5 = 4.5), for a draft
# saying relevant (+) or not (-); learnt from the drafted chunks people judge (bench/RESULTS.md, "Drafted labels")
_DRAFT_LIFT = 1.5


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0)))


def _curvature(hot: np.ndarray, curvature: np.ndarray, columns: int) -> np.ndarray:
    """X^T W X over one-hot rows (`hot`: each row's columns holding a 1): each row adds its weight to every pair of
    its columns. One `bincount` over the pairs, rows in order, where `np.add.at` per pair of hot slots took ~40 ms
    at 10,000 queries: each cell gets its weights in the same order (the slots' columns never overlap: the
    intercept, then one range per run), so the same sums to the bit (tests/test_gold_left_eval.py)."""
    slots = hot.shape[1]
    cells = (hot[:, :, None] * columns + hot[:, None, :]).transpose(1, 2, 0).ravel()  # pair (a, b), then row
    return np.bincount(cells, weights=np.tile(curvature, slots * slots),
                       minlength=columns * columns).reshape(columns, columns)


class GoldModel:
    """P(gold) of every pooled chunk, from its ranks in the runs and the decisions so far, in three layers:

    1. a logistic regression of "gold" on each run's rank bucket for the chunk (1, 2, 3, 4-5, 6-10, 11-20,
       21-50, 51+, or not returned: one indicator per run and bucket, so how many runs returned it and how high
       are both in it), fitted to every decision so far in any query (maximum a posteriori, Newton steps, a
       Gaussian prior of precision 1 on each weight centred on a first guess: P(gold) = 1 / (rank + 1) for a
       chunk one run returned, 2% for one no run returned near the top). It is refitted whenever the decisions
       have grown by 2% since the last fit, and after each of the first 50. A pool with drafted labels (a model's,
       not yet read by a person) has one indicator more per chunk: drafted relevant, drafted not relevant, or no
       draft, its prior centred on a drafter right about 4 times in 5 (logit +1.5 / -1.5 / 0), so drafts seed the
       model before any decision and the drafted chunks people judge teach it how far to trust them;
    2. per query, the odds scaled by (gold found + 1) / (gold the model expected among its judged chunks + 1),
       so a query whose chunks keep being gold rises and an unanswerable one sinks;
    3. per query and run, the same ratio over the judged chunks of that run's top `depth` in that query (what the
       decisions say of each run there: move-to-front's signal), a chunk taking the best ratio of its runs.
    Layers 2 and 3 are recomputed at every request (bench/pool_orders.py measured each layer's part).

    The gold left is the sum of these probabilities over the unjudged chunks, per query and for the pool."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        ranks = pool.ranks
        nb = len(_BUCKET_EDGES) + 1
        bucket = np.where(ranks > 0, np.searchsorted(_BUCKET_EDGES, ranks, side="right"), 0)  # 0: absent
        # the design: an intercept, then one column per (run, bucket); an item has one 1 per run
        self.columns = 1 + pool.runs * nb
        self.hot = np.concatenate([np.zeros((len(pool), 1), dtype=np.int64),
                                   1 + np.arange(pool.runs) * nb + bucket], axis=1)  # column of each 1
        base = math.log(_BASE_RATE / (1 - _BASE_RATE))
        lift = np.log(_BUCKET_PRIOR / (1 - _BUCKET_PRIOR)) - base
        self.prior = np.concatenate([[base], np.tile(np.concatenate([[0.0], lift]), pool.runs)])
        if pool.drafted is not None and pool.drafted.any():
            said = self.columns + np.where(pool.drafted > 0, 0, np.where(pool.drafted < 0, 1, 2))
            self.hot = np.concatenate([self.hot, said[:, None]], axis=1)
            self.prior = np.concatenate([self.prior, [_DRAFT_LIFT, -_DRAFT_LIFT, 0.0]])
            self.columns += 3
        self.weights = self.prior.copy()
        self.query_rel = np.zeros(len(pool.queries))
        self.judged = np.zeros(len(pool), dtype=bool)
        self.gold = np.zeros(len(pool), dtype=bool)
        self.fitted_at = 0
        self.count = 0
        self._p: np.ndarray | None = None
        # the decisions the pool starts with, recorded at once (`_record` one by one took ~30 ms at 10,000
        # queries): whole counts, so the sums are those of the loop exactly
        self.judged[:] = pool.judged
        self.gold[:] = pool.judged & pool.relevant
        self.query_rel += np.bincount(pool.query[self.gold], minlength=len(pool.queries))
        self.count = int(self.judged.sum())
        self._fit()

    def tell_index(self, i: int, relevant: bool) -> None:
        if self.judged[i]:
            return
        self._record(i, relevant)
        if self.count <= 50 or self.count >= self.fitted_at * 1.02:
            self._fit()

    def _record(self, i: int, relevant: bool) -> None:
        self.judged[i], self.gold[i] = True, relevant
        self.query_rel[self.pool.query[i]] += relevant
        self.count += 1
        self._p = None

    def untell_index(self, i: int) -> None:
        """A decision taken back: out of the counts at once, out of the weights at the next fit."""
        if not self.judged[i]:
            return
        self.query_rel[self.pool.query[i]] -= self.gold[i]
        self.judged[i], self.gold[i] = False, False
        self.count -= 1
        self._p = None

    def _fit(self) -> None:
        self.fitted_at = self.count
        self._p = None
        rows = np.flatnonzero(self.judged)
        if not len(rows):
            return
        hot, y = self.hot[rows], self.gold[rows].astype(float)
        w = self.weights.copy()
        for _ in range(_NEWTON_STEPS):
            p = _sigmoid(w[hot].sum(axis=1))
            grad = np.bincount(hot.ravel(), weights=np.repeat(p - y, hot.shape[1]), minlength=self.columns)
            grad += _PRIOR_PRECISION * (w - self.prior)
            hessian = _curvature(hot, p * (1 - p), self.columns)
            hessian[np.diag_indices(self.columns)] += _PRIOR_PRECISION
            step = np.linalg.solve(hessian, grad)
            step *= min(1.0, _MAX_STEP / max(np.abs(step).max(), 1e-12))  # a damped step: no overshoot
            w -= step
            if np.abs(step).max() < 1e-6:
                break
        self.weights = w

    def probabilities(self) -> np.ndarray:
        """P(gold) of every pooled chunk as things stand (judged ones included, by the same model)."""
        if self._p is None:
            logit = self.weights[self.hot].sum(axis=1)
            p = _sigmoid(logit)
            nq = len(self.pool.queries)
            expected = np.bincount(self.pool.query[self.judged], weights=p[self.judged], minlength=nq)
            factor = (self.query_rel + _QUERY_WEIGHT) / (expected + _QUERY_WEIGHT)
            logit = logit + np.log(factor)[self.pool.query]
            if self.pool.runs:
                # per (query, run): gold found among the judged chunks of that run's top depth / the gold the
                # model (with the query's factor) expected there; a chunk takes the best of its runs
                pq = _sigmoid(logit)
                inside = (self.pool.ranks >= 1) & (self.pool.ranks <= self.pool.depth)
                arm = self.pool.query[:, None] * self.pool.runs + np.arange(self.pool.runs)[None, :]
                n_arms = nq * self.pool.runs
                j = self.judged[:, None] & inside
                exp_arm = np.bincount(arm[j], weights=np.broadcast_to(pq[:, None], arm.shape)[j], minlength=n_arms)
                g = j & self.gold[:, None]
                rel_arm = np.bincount(arm[g], minlength=n_arms)
                arm_factor = np.log((rel_arm + _ARM_WEIGHT) / (exp_arm + _ARM_WEIGHT))
                best = np.where(inside, arm_factor[arm], -np.inf).max(axis=1)
                logit = logit + np.where(np.isfinite(best), best, 0.0)
            self._p = _sigmoid(logit)
        return self._p

    def gold_left(self) -> tuple[float, np.ndarray]:
        """The expected gold among the unjudged pooled chunks: the whole pool's, and each query's."""
        p = np.where(self.judged, 0.0, self.probabilities())
        per_query = np.bincount(self.pool.query, weights=p, minlength=len(self.pool.queries))
        return float(per_query.sum()), per_query
