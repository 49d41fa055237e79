"""Comparing two evaluated runs query by query: per-metric change with a paired test, flips at k, how far the
ranked lists moved, and which k (the reranker's opportunity).

`compare(ev_a, ev_b, gold=gold)` returns a `Diff`; the CLI (`ragdiff diff`) and the review app both read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import numpy as np
import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.diff_result import (JUDGED_VERDICT_WORDS, MIN_QUERIES_FOR_VERDICT, VERDICT_WORDS, Diff,
                                              Flip, MetricDiff, Opportunity, UnjudgedCheck, decide, worth_text)
from ragdiff.core.metrics.overlap import RBO_P, RBO_RANKS, Overlap, jaccard, overlap_of, rbo, rbo_weight
from ragdiff.core.metrics.evaluate import RunEval, evaluate
from ragdiff.core.metrics.prepared import aligned_frame
from ragdiff.core.metrics.specs import EvalSettings, Metric
from ragdiff.core.metrics.stats import DEFAULT_FLIPS, DEFAULT_SEED, EXACT_MAX, PairedTest, bootstrap_ci, detectable_jobs, paired_tests
from ragdiff.core.metrics.unjudged import unjudged_checks

# what the CLI, the report and the app import from here: the result types live in diff_result, the overlap of the
# lists in overlap, the unjudged check in unjudged
__all__ = ["JUDGED_VERDICT_WORDS", "MIN_QUERIES_FOR_VERDICT", "POWER", "RBO_P", "RBO_RANKS", "VERDICT_WORDS", "Diff",
           "Flip", "MetricDiff", "Opportunity", "Overlap", "UnjudgedCheck", "compare", "decide", "flips", "flips_of",
           "jaccard", "paired", "rbo", "rbo_weight", "unjudged_checks", "worth_text"]

POWER = 0.8  # the detectable change: found by the test 80% of the time  # the lesson: under about thirty queries, read the results by hand
JUDGED_GAP = 0.10  # judged@k gap between the runs above which the less-judged run's scores are understated


def paired(ev_a: RunEval, ev_b: RunEval, metric: Metric) -> pl.DataFrame:
    """query_id, a, b for one metric over the queries both evaluations scored (gold order)."""
    name = metric.name
    return (
        ev_a.per_query.select("query_id", pl.col(name).alias("a"))
        .join(ev_b.per_query.select("query_id", pl.col(name).alias("b")), on="query_id", how="inner",
              maintain_order="left")
    )


def flips(ev_a: RunEval, ev_b: RunEval, k: int) -> tuple[list[str], list[str]]:
    """(hit→miss, miss→hit) query ids at k: a hit is any relevant chunk in the top k (recall@k)."""
    pairs = paired(ev_a, ev_b, Metric("recall", k))
    return flips_of(pairs.get_column("query_id").to_numpy(), pairs.get_column("a").to_numpy(),
                    pairs.get_column("b").to_numpy())


def flips_of(ids: np.ndarray, recall_a: np.ndarray, recall_b: np.ndarray) -> tuple[list[str], list[str]]:
    """The flips' rule on arrays: `ids` (the queries both runs scored, in A's order) and their recall@k in A
    and in B; hit→miss where A's is > 0 and B's is 0, miss→hit the other way (`flips`; the review reads its
    view at k through it too)."""
    hit_to_miss = (recall_a > 0) & (recall_b == 0)
    miss_to_hit = (recall_a == 0) & (recall_b > 0)
    return ids[hit_to_miss].tolist(), ids[miss_to_hit].tolist()


_flip_ids = flips  # `compare` takes a keyword named flips (the number of sign flips)






# --------------------------------------------------------------------------------------------------------------
# compare


def compare(ev_a: RunEval, ev_b: RunEval, *, gold: Gold | None = None, flips: int = DEFAULT_FLIPS,
            seed: int = DEFAULT_SEED, alpha: float = 0.05, exact_max: int = EXACT_MAX,
            detectable: bool = True, threads: int = 1) -> Diff:
    """A against B on the same gold set and settings.

    `detectable=False` leaves each metric's smallest detectable change nan (for a caller that shows none of it:
    the review header); every other number is the same.

    `threads` > 1 computes the bootstrap intervals and the detectable changes in that many threads beside the
    rest (numpy and polars release the GIL): the same numbers. Only for a caller whose BLAS runs one thread per
    call (the CLI sees to it): OpenBLAS's own threads spin after each product and starve the others.

    `gold` gives query text for the flips, regression-marked queries, first-relevant ranks, and any metric the
    evaluations lack that the report needs (recall@k, recall@depth); without it those parts are thinner.
    Every test is seeded: the same inputs give the same numbers.
    """
    settings = ev_a.settings
    if ev_b.settings != settings:
        raise ValueError(f"the runs were evaluated with different settings: {ev_a.settings} vs {ev_b.settings}")
    k, depth = settings.k, settings.depth
    names_b = {m.name for m in ev_b.metrics}
    metrics = [m for m in ev_a.metrics if m.name in names_b]
    needed = [Metric("recall", k), Metric("recall", depth)]
    if gold is not None and any(m not in metrics for m in needed):
        extra = [m for m in needed if m not in metrics]
        ev_a = _with_metrics(ev_a, gold, extra)
        ev_b = _with_metrics(ev_b, gold, extra)
    have = {m.name for m in ev_a.metrics} & {m.name for m in ev_b.metrics}

    scored_b = set(ev_b.queries.scored)
    scored = [q for q in ev_a.queries.scored if q in scored_b]
    by_hand = len(scored) < MIN_QUERIES_FOR_VERDICT

    text = _query_text(ev_a, ev_b, gold, scored)
    if threads <= 1:
        overlap = overlap_of(ev_a, ev_b, gold, scored, k, depth)
        diffs, finish = _metric_diffs(ev_a, ev_b, metrics, flips, seed, alpha, exact_max, by_hand, detectable)
        return _compared(ev_a, ev_b, gold, settings, scored, text, diffs, finish, have, by_hand, flips, seed,
                         alpha, exact_max, overlap)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ragdiff-compare") as pool:
        # the overlap while the pool draws the bootstrap intervals (a few MB of buffers), where it ran alone
        # before the pool started (~70 ms at depth 1000); still not beside the detectable changes: its polars
        # buffers (both runs' top RBO_RANKS hashed and joined) and theirs were the depth-1000 peak together
        found: dict[str, Overlap | None] = {}
        diffs, finish = _metric_diffs(ev_a, ev_b, metrics, flips, seed, alpha, exact_max, by_hand, detectable,
                                      pool=pool,
                                      meanwhile=lambda: found.update(overlap=overlap_of(ev_a, ev_b, gold, scored, k,
                                                                                        depth)))
        return _compared(ev_a, ev_b, gold, settings, scored, text, diffs, finish, have, by_hand, flips, seed,
                         alpha, exact_max, found["overlap"])


def _compared(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, settings: EvalSettings, scored: list[str],
              text: dict[str, str | None], diffs: list[MetricDiff], finish: Callable[[], None], have: set[str],
              by_hand: bool, flips: int, seed: int, alpha: float, exact_max: int, overlap: Overlap | None) -> Diff:
    """The rest of `compare`, while the metrics' intervals and detectable changes are computed (`finish`)."""
    k, depth = settings.k, settings.depth

    first_a = _first_relevant(ev_a, gold) if gold is not None else {}
    first_b = _first_relevant(ev_b, gold) if gold is not None else {}

    def flip(qid: str, direction: str) -> Flip:
        return Flip(qid, text.get(qid), direction, first_a.get(qid), first_b.get(qid))

    h2m: list[Flip] = []
    m2h: list[Flip] = []
    recall_k = Metric("recall", k)
    if recall_k.name in have:
        lost, gained = _flip_ids(ev_a, ev_b, k)
        h2m = [flip(q, "hit_to_miss") for q in lost]
        m2h = [flip(q, "miss_to_hit") for q in gained]

    opportunity: dict[str, Opportunity] = {}
    recall_d = Metric("recall", depth)
    if recall_k.name in have and recall_d.name in have:
        for side, ev in (("a", ev_a), ("b", ev_b)):
            opportunity[side] = _opportunity(ev, k, depth)

    regressions: list[Flip] = []
    if gold is not None and recall_k.name in have:
        marked = gold.queries.filter(pl.col("regression")).get_column("query_id").to_list()
        b_hits = dict(ev_b.per_query.select("query_id", recall_k.name).iter_rows())
        for qid in marked:
            if qid in b_hits and not (b_hits[qid] or 0) > 0:
                regressions.append(flip(qid, "regression"))

    if gold is not None and ev_a.run.frame.height and ev_b.run.frame.height:
        unjudged_checks(ev_a, ev_b, gold, diffs, scored, flips=flips, seed=seed, alpha=alpha, exact_max=exact_max,
                        by_hand=by_hand)

    finish()
    return Diff(
        a_name=ev_a.run.name, b_name=ev_b.run.name, settings=settings, scored=scored,
        unanswerable=list(ev_a.queries.unanswerable), metrics=diffs, hit_to_miss=h2m, miss_to_hit=m2h,
        overlap=overlap, opportunity=opportunity,
        judged_warning=_judged_warning(ev_a, ev_b, k), regressions=regressions, alpha=alpha, flips=flips,
        seed=seed, query_text=text,
    )


def _with_metrics(ev: RunEval, gold: Gold, extra: list[Metric]) -> RunEval:
    more = evaluate(ev.run, gold, ev.settings, extra, bounds=bool(ev.bounds))
    per_query = ev.per_query.join(more.per_query, on="query_id", how="left", maintain_order="left")
    return RunEval(run=ev.run, metrics=list(ev.metrics) + extra, per_query=per_query, queries=ev.queries,
                   settings=ev.settings, means={**ev.means, **more.means}, bounds={**ev.bounds, **more.bounds},
                   prepared=ev.prepared)


def _query_text(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, scored: list[str]) -> dict[str, str | None]:
    text: dict[str, str | None] = {}
    if gold is not None:
        text = {q: t for q, t in gold.queries.select("query_id", "text").iter_rows()}
    for ev in (ev_b, ev_a):
        for qid, t in ev.run.query_text.items():
            if not text.get(qid):
                text[qid] = t
    return text


def _metric_diffs(ev_a: RunEval, ev_b: RunEval, metrics: list[Metric], flips: int, seed: int, alpha: float,
                  exact_max: int, by_hand: bool, detectable_change_too: bool = True,
                  pool: Executor | None = None,
                  meanwhile: Callable[[], None] | None = None) -> tuple[list[MetricDiff], Callable[[], None]]:
    """Every metric's comparison; metrics paired over the same queries share one batch of random draws.

    The p-values (and so the verdicts) are set here; the bootstrap intervals and the smallest detectable
    changes are jobs handed to `pool` (numpy releases the GIL, so they run beside the caller's next steps):
    call the returned function to wait for them and set them. Without a pool they run here. `meanwhile` is
    called once the intervals are handed out and before the detectable changes are."""
    pairs = {m: paired(ev_a, ev_b, m).drop_nulls(["a", "b"]).with_columns(delta=pl.col("b") - pl.col("a"))
             for m in metrics}
    groups: dict[tuple[str, ...], list[Metric]] = {}
    for m in metrics:
        groups.setdefault(tuple(pairs[m].get_column("query_id").to_list()), []).append(m)
    submit = pool.submit if pool is not None else _run_now
    tests = {}
    intervals: list[tuple[list[Metric], Future]] = []
    detectable: list[tuple[Metric, Future]] = []
    matrices = [(group, np.vstack([pairs[m].get_column("delta").to_numpy() for m in group]))
                for group in groups.values()]
    for group, matrix in matrices:
        # the bootstrap first: the longest job (~0.1 s CPU at 1,000 queries), so that the short detectable-change
        # jobs fill the other thread and neither waits alone at the end
        if matrix.shape[1]:
            intervals.append((group, submit(bootstrap_ci, matrix, flips, seed)))
    if meanwhile is not None:
        meanwhile()
    for group, matrix in matrices:
        if detectable_change_too:
            for row, job in detectable_jobs(matrix, alpha=alpha, power=POWER, seed=seed):
                detectable.append((group[row], submit(job)))
        tests.update(zip(group, paired_tests(matrix, flips=flips, seed=seed, exact_max=exact_max, interval=False)))
    diffs = [_metric_diff(ev_a, ev_b, m, pairs[m], tests[m], alpha, by_hand) for m in metrics]
    by_metric = {md.metric: md for md in diffs}

    def finish() -> None:
        for group, future in intervals:
            for m, ci in zip(group, future.result()):
                by_metric[m].ci95 = ci
        for m, future in detectable:
            by_metric[m].detectable = float(future.result())

    return diffs, finish


def _run_now(function, *args) -> Future:
    future: Future = Future()
    future.set_result(function(*args))
    return future


def _metric_diff(ev_a: RunEval, ev_b: RunEval, metric: Metric, pairs: pl.DataFrame, test: PairedTest,
                 alpha: float, by_hand: bool) -> MetricDiff:
    a = ev_a.means.get(metric.name, math.nan)
    b = ev_b.means.get(metric.name, math.nan)
    delta = b - a
    n = test.n
    worth = float(pairs.get_column("delta").sum()) if n else 0.0
    md = MetricDiff(metric=metric, a=a, b=b, delta=delta, n=n, queries_worth=worth, p_value=test.p_value,
                    ci95=test.ci95, method=test.method, verdict="", sentence="", per_query=pairs)
    decide(md, alpha, by_hand)
    return md


def _first_relevant(ev: RunEval, gold: Gold) -> dict[str, int]:
    """Rank of the first relevant chunk per query (queries without one are absent).

    It is 1 / mrr (mrr has no cutoff); only when an evaluation lacks mrr are the runs joined again.
    """
    if "mrr" in ev.per_query.columns:
        found = ev.per_query.filter(pl.col("mrr") > 0)
        return dict(zip(found["query_id"], (1.0 / found["mrr"]).round().cast(pl.Int64)))
    qrels = gold.qrels(ev.settings.level).filter(pl.col("grade") >= ev.settings.threshold)
    frame = aligned_frame(ev.run, gold).select("query_id", "chunk_id", "rank")
    hits = frame.join(qrels.select("query_id", "chunk_id"), on=["query_id", "chunk_id"], how="semi")
    return dict(hits.group_by("query_id").agg(pl.col("rank").min()).iter_rows())


def _opportunity(ev: RunEval, k: int, depth: int) -> Opportunity:
    rk, rd = Metric("recall", k).name, Metric("recall", depth).name
    queries = (ev.per_query.filter((pl.col(rd) > 0) & (pl.col(rk) == 0)).get_column("query_id").to_list()
               if depth > k else [])
    return Opportunity(run=ev.run.name, k=k, depth=depth, recall_k=ev.means.get(rk, math.nan),
                       recall_depth=ev.means.get(rd, math.nan), queries=queries)


def _judged_warning(ev_a: RunEval, ev_b: RunEval, k: int) -> str | None:
    name = Metric("judged", k).name
    a, b = ev_a.means.get(name), ev_b.means.get(name)
    if a is None or b is None or a != a or b != b or abs(a - b) <= JUDGED_GAP:
        return None
    low, high = (ev_a.run.name, ev_b.run.name) if a < b else (ev_b.run.name, ev_a.run.name)
    la, lb = (a, b) if a < b else (b, a)
    return (f"{name}: {low} {la:.0%} vs {high} {lb:.0%} — {low}'s top {k} is much less judged, so its scores are "
            f"understated (unjudged chunks count as misses). Review its unjudged chunks before trusting the change.")




