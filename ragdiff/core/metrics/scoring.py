"""Per-query values of any metrics of `SPECS` from a prepared run (`per_query_values`), their mean, and
recall at every depth at once (`recall_curve`)."""

from __future__ import annotations

import polars as pl

from ragdiff.core.metrics.aggregates import graded_gain, rank_discount
from ragdiff.core.metrics.prepared import PreparedRun
from ragdiff.core.metrics.specs import EvalSettings, Metric


def recall_curve(prepared: PreparedRun, settings: EvalSettings, depth: int) -> list[float]:
    """recall@j for j = 1 … depth at once (the lesson's "which k"), from each query's first relevant rank."""
    scored = prepared.scored.height
    if scored == 0:
        return [float("nan")] * depth
    first = (prepared.judged.filter(pl.col("grade") >= settings.threshold)
             .group_by("query_id").agg(pl.col("rank").min()).get_column("rank"))
    reached = (first.filter(first <= depth).value_counts().sort("rank")
               .with_columns(pl.col("count").cum_sum()))
    curve = [0.0] * depth
    for rank, total in reached.iter_rows():
        curve[rank - 1] = total / scored
    for j in range(1, depth):  # carry the running share across ranks where no first hit landed
        curve[j] = max(curve[j], curve[j - 1])
    return curve


def mean_of(values: pl.Series) -> float:
    value = values.drop_nulls().mean()
    return float(value) if value is not None else float("nan")


def per_query_values(prepared: PreparedRun, metrics: list[Metric], settings: EvalSettings) -> pl.DataFrame:
    """One row per scored query (in gold order), one column per metric, each from its spec in `SPECS`."""
    threshold = settings.threshold
    scored, qrels = prepared.scored, prepared.qrels
    counts = qrels.group_by("query_id").agg(
        num_rel=(pl.col("grade") >= threshold).sum(),
        num_nonrel=((pl.col("grade") >= 0) & (pl.col("grade") < threshold)).sum(),
    )
    aggs: dict[str, pl.Expr] = {}
    ideal_aggs: dict[str, pl.Expr] = {}
    for m in metrics:
        for agg in m.spec.aggs:
            (ideal_aggs if agg.over == "ideal" else aggs).update(agg.make(m.k))
    # the per-row columns the aggregates read, each computed as always: at a depth of 1,000 the rows of a run
    # with its unjudged ones promoted are a million, and every column over them costs time and memory
    read = {name for expr in aggs.values() for name in expr.meta.root_names()}
    read |= {"rel"} if "rel_upto" in read else set()
    read |= {"nonrel"} if "nonrel_upto" in read else set()
    first = {name: expr for name, expr in (
        ("rel", pl.col("grade") >= threshold),
        ("judged", pl.col("grade") >= 0),
        ("nonrel", (pl.col("grade") >= 0) & (pl.col("grade") < threshold)),
        ("dg", graded_gain(pl.col("grade"), settings.gain) * rank_discount(pl.col("rank"))),
    ) if name in read}
    second = {name: expr for name, expr in (
        ("rel_upto", pl.col("rel").cum_sum().over("query_id")),
        ("nonrel_upto", pl.col("nonrel").cum_sum().over("query_id")),
    ) if name in read}
    # every join keeps the left frame's order (maintain_order): the rows in gold order, and the order of the
    # float sums over them, are what the code says, not what a join's implementation happens to give
    left = {"on": "query_id", "how": "left", "maintain_order": "left"}
    table = scored.join(prepared.returned, **left).join(counts, **left)
    if aggs:
        rows = prepared.judged.select("query_id", "rank", "grade").sort("query_id", "rank")
        if first:
            rows = rows.with_columns(**first)
        if second:
            rows = rows.with_columns(**second)
        if read & {"num_rel", "num_nonrel"}:
            rows = rows.join(counts, **left)
        table = table.join(rows.group_by("query_id").agg(**aggs), **left)
    if ideal_aggs:
        ideal = (
            qrels.filter(pl.col("grade") > 0)
            .sort(["query_id", "grade"], descending=[False, True])
            .with_columns(pos=pl.int_range(1, pl.len() + 1).over("query_id"))
            .with_columns(ig=graded_gain(pl.col("grade"), settings.gain) * rank_discount(pl.col("pos")))
            .group_by("query_id")
            .agg(**ideal_aggs)
        )
        table = table.join(ideal, **left)
    # a query the run lacks, or with nothing judged in it, has no rows: its counts and sums are 0
    filled = [c for c in (*aggs, *ideal_aggs, "returned", "num_rel", "num_nonrel") if c != "first_rel"]
    table = table.with_columns(pl.col(filled).fill_null(0))
    return table.select(pl.col("query_id"), *[m.spec.value(m.k).cast(pl.Float64).alias(m.name) for m in metrics])
