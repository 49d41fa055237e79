"""`ragdiff judge --simulate ORACLE`: the judging queue replayed against a finished label file, nothing written.

The queue is built as `ragdiff judge` builds it (runs, the label file it starts from, `--pool`); the order asks
for one chunk after another and the oracle answers each (a chunk the oracle has not judged is not relevant).
The replay never looks at the oracle to decide when to leave a query: it asks until the pool is judged.

The gold left: after each judgment, `GoldModel.gold_left()` (core/judge/gold_model.py) estimates the gold still
unjudged in the pool, whichever order asks; its error along the replay is the estimate minus the truth (the
oracle's gold among the unjudged chunks), averaged over every step (`estimate_error`: `mean_signed`, `mean_abs`,
`max_abs`; `per_query_mean_abs` is each query's |estimate - truth| averaged over the queries, then the steps;
`at` the estimate and the truth when 50/80/90/95% of the gold was found).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.judge.gold_model import GoldModel
from ragdiff.core.judge.pool_order import Pool, make_order, percent_needed
from ragdiff.core.io.runs import Run

PERCENTS = (50, 80, 90, 95, 100)


@dataclass
class Replay:
    order: str
    pool_size: int
    gold_in_pool: int
    judged_at_start: int
    judgments_to: dict[str, int | None]
    # how often the next chunk was another query's than the last, until each share was found: each switch is
    # a new query for the reviewer to read
    query_switches_to: dict[str, int | None]
    curve: list[list[int]]  # [judgments, gold found], at the start, at each gold found, and at the end
    estimate_error: dict
    left_out: dict[str, list[str]]

    def document(self) -> dict:
        return {"order": self.order, "pool_size": self.pool_size, "gold_in_pool": self.gold_in_pool,
                "judged_at_start": self.judged_at_start, "judgments_to": self.judgments_to,
                "query_switches_to": self.query_switches_to, "curve": self.curve,
                "estimate_error": self.estimate_error,
                "queries_left_out": {k: {"count": len(v), "queries": v} for k, v in self.left_out.items()}}


def oracle_gold(oracle: Gold, threshold: int = 1) -> set[tuple[str, str]]:
    """The (query, chunk) pairs the oracle holds gold at `threshold`."""
    qrels = oracle.qrels("gold").filter(pl.col("grade") >= threshold)
    return set(zip(qrels.get_column("query_id").to_list(), qrels.get_column("chunk_id").to_list()))


def left_out(runs: list[Run], start: Gold, oracle: Gold) -> dict[str, list[str]]:
    """The oracle's queries the replay cannot use: no run has them, or the label file it starts from lacks them."""
    from ragdiff.core.metrics.prepared import aligned_frame

    in_runs: set[str] = set()
    for run in runs:
        in_runs.update(aligned_frame(run, oracle).get_column("query_id").unique().to_list())
    oracle_queries = oracle.queries.sort("position").get_column("query_id").to_list()
    start_queries = set(start.queries.get_column("query_id").to_list())
    return {"not_in_runs": [q for q in oracle_queries if q not in in_runs],
            "not_in_start": [q for q in oracle_queries if q in in_runs and q not in start_queries]}


def replay_pool(pool: Pool, truth: np.ndarray, order_name: str) -> Replay:
    """Replay one order over `pool`, `truth[i]` saying whether item i is gold."""
    order = make_order(order_name, pool)
    model = order.model if hasattr(order, "model") else GoldModel(pool)
    gold_total = int(truth.sum())
    found = int((pool.judged & truth).sum())
    needed = {p: percent_needed(gold_total, p) for p in PERCENTS}
    reached: dict[str, int | None] = {str(p): (0 if found >= n else None) for p, n in needed.items()}
    switched: dict[str, int | None] = dict.fromkeys(reached)
    switches, last_query = 0, -1
    curve = [[0, found]]
    errors: list[float] = []
    query_errors: list[float] = []
    # per query: the gold still unjudged, the truth each query's estimate is held to
    truth_left = np.bincount(pool.query[truth & ~pool.judged], minlength=len(pool.queries)).astype(float)
    has_pool = np.bincount(pool.query, minlength=len(pool.queries)) > 0
    at: dict[str, dict] = {}
    left_truth = gold_total - found
    judgments = 0

    def measure() -> None:
        estimate, per_query = model.gold_left()
        errors.append(estimate - left_truth)
        query_errors.append(float(np.abs(per_query - truth_left)[has_pool].mean()) if has_pool.any() else 0.0)
        for p, n in needed.items():
            if found >= n and str(p) not in at and p < 100:
                at[str(p)] = {"judgments": judgments, "estimate": round(estimate, 2), "truth": left_truth}

    measure()
    while True:
        i = order.next_index()
        if i is None:
            break
        relevant = bool(truth[i])
        switches += last_query not in (-1, int(pool.query[i]))
        last_query = int(pool.query[i])
        order.tell_index(i, relevant)
        if model is not getattr(order, "model", None):
            model.tell_index(i, relevant)
        judgments += 1
        if relevant:
            truth_left[pool.query[i]] -= 1
            found += 1
            left_truth -= 1
            curve.append([judgments, found])
            for p, n in needed.items():
                if reached[str(p)] is None and found >= n:
                    reached[str(p)] = judgments
                    switched[str(p)] = switches
        measure()
    if curve[-1][0] != judgments:
        curve.append([judgments, found])
    err = np.array(errors)
    estimate_error = {
        "estimator": "GoldModel (core/judge/gold_model.py): the sum of P(gold) over the unjudged pooled chunks; a "
                     "logistic regression on each run's rank bucket, with per-query and per-(query, run) factors",
        "steps": len(err),
        "mean_abs": round(float(np.abs(err).mean()), 3),
        "mean_signed": round(float(err.mean()), 3),
        "max_abs": round(float(np.abs(err).max()), 3),
        "mean_abs_share_of_gold": round(float(np.abs(err).mean()) / gold_total, 4) if gold_total else None,
        "per_query_mean_abs": round(float(np.mean(query_errors)), 3),
        "at": at,
    }
    for p, n in reached.items():
        if n == 0:
            switched[p] = 0
    return Replay(order.name, len(pool), gold_total, int(pool.judged.sum()), reached, switched, curve,
                  estimate_error, {})


def simulate(runs: list[Run], start: Gold, oracle: Gold, depth: int, order_name: str,
             threshold: int = 1) -> Replay:
    queue = JudgeQueue.build(runs, start, depth)
    pool = Pool.from_queue(queue, threshold)
    gold = oracle_gold(oracle, threshold)
    truth = np.array([pool.item(i) in gold for i in range(len(pool))], dtype=bool)
    replay = replay_pool(pool, truth, order_name)
    replay.left_out = left_out(runs, start, oracle)
    return replay
