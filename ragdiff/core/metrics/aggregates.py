"""The per-query aggregates a metric's value reads (`specs.MetricSpec.aggs`), as polars expressions, each naming
the per-k kernel of `by_k.ByK` that gives it at every cutoff at once; and nDCG's gain and discount."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

# A spec's expressions work on one table with a row per scored query: `returned` (chunks the run returned),
# `num_rel` (relevant chunks labelled, R), `num_nonrel` (judged not relevant, N), and the aggregates the spec
# asks for. Aggregates run over the run's judged rows of a query, sorted by rank, each row carrying `rank`,
# `grade`, `rel` (grade >= threshold), `judged` (grade >= 0), `nonrel` (0 <= grade < threshold), `dg` (gain ×
# discount), `rel_upto` / `nonrel_upto` (relevant / judged non-relevant rows at this rank or above), `num_rel`
# and `num_nonrel`. Ideal aggregates run over the query's judged grades sorted best first (`pos`, `ig`).
# Aggregate names carry their cutoff, so two metrics needing the same aggregate share it.
#
# Each aggregate names the per-k kernel of `by_k.ByK` that gives it at every cutoff at once (the review
# screen's `+`/`-`); ByK reads that name and nothing else, and scores a metric with an aggregate that names none
# through `scoring.per_query_values` instead.


def cut_name(k: int | None) -> str:
    """How an aggregate's column names its cutoff: "hits_5", "dcg_all"."""
    return "all" if k is None else str(k)


def _top(k: int | None) -> pl.Expr:
    return pl.lit(True) if k is None else pl.col("rank") <= k


def _hits(k: int | None) -> dict[str, pl.Expr]:
    return {f"hits_{cut_name(k)}": (pl.col("rel") & _top(k)).sum()}


def _first_rel(k: int | None) -> dict[str, pl.Expr]:
    return {"first_rel": pl.col("rank").filter(pl.col("rel")).min()}


def _dcg(k: int | None) -> dict[str, pl.Expr]:
    return {f"dcg_{cut_name(k)}": pl.col("dg").filter(_top(k)).sum()}


def _idcg(k: int | None) -> dict[str, pl.Expr]:
    keep = pl.lit(True) if k is None else pl.col("pos") <= k
    return {f"idcg_{cut_name(k)}": pl.col("ig").filter(keep).sum()}


def _judged_top(k: int | None) -> dict[str, pl.Expr]:
    return {f"judged_{cut_name(k)}": (pl.col("judged") & _top(k)).sum()}


def _ap_sum(k: int | None) -> dict[str, pl.Expr]:
    # precision at each relevant chunk's rank: relevant at or above it / its rank (trec_eval's m_map.c)
    prec = pl.col("rel_upto").cast(pl.Float64) / pl.col("rank").cast(pl.Float64)
    return {f"ap_{cut_name(k)}": prec.filter(pl.col("rel") & _top(k)).sum()}


def _rprec_hits(k: int | None) -> dict[str, pl.Expr]:
    return {"rprec_hits": (pl.col("rel") & (pl.col("rank") <= pl.col("num_rel"))).sum()}


def _bpref_sum(k: int | None) -> dict[str, pl.Expr]:
    # trec_eval's m_bpref.c: each relevant retrieved chunk adds 1 - min(nonrel above, R) / min(N, R)
    above = pl.col("nonrel_upto").cast(pl.Float64)
    r, n = pl.col("num_rel").cast(pl.Float64), pl.col("num_nonrel").cast(pl.Float64)
    term = pl.when(above > 0).then(1.0 - pl.min_horizontal(above, r) / pl.min_horizontal(n, r)).otherwise(1.0)
    return {"bpref_sum": term.filter(pl.col("rel")).sum()}


@dataclass(frozen=True)
class Aggregate:
    """One per-query aggregate a metric's value reads: `make(k)` gives {its column at cutoff k: its polars
    expression}, over the run's judged rows of a query (`over="rows"`) or its ideal ranking (`"ideal"`).
    `kernel`: the per-k kernel of `by_k.ByK` that gives the same column at any k — "relevant_count",
    "judged_count", "first_relevant", "gain_sum" (down the ranking it is over) or "precision_sum" — or None."""

    make: Callable[[int | None], dict[str, pl.Expr]]
    over: str = "rows"
    kernel: str | None = None


HITS = Aggregate(_hits, kernel="relevant_count")
FIRST_REL = Aggregate(_first_rel, kernel="first_relevant")
DCG = Aggregate(_dcg, kernel="gain_sum")
IDCG = Aggregate(_idcg, over="ideal", kernel="gain_sum")
JUDGED_TOP = Aggregate(_judged_top, kernel="judged_count")
AP_SUM = Aggregate(_ap_sum, kernel="precision_sum")
RPREC_HITS = Aggregate(_rprec_hits)  # no cutoff: ByK scores it once
BPREF_SUM = Aggregate(_bpref_sum)  # no cutoff: ByK scores it once


def graded_gain(grade: pl.Expr, gain: str) -> pl.Expr:
    grade = grade.fill_null(0).clip(0).cast(pl.Float64)
    return (2.0 ** grade - 1.0) if gain == "exp" else grade


def rank_discount(rank: pl.Expr) -> pl.Expr:
    return 1.0 / (rank.cast(pl.Float64) + 1.0).log(2)
