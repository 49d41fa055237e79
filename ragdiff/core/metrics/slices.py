"""Slices of the gold set by tag (`tags: [typo, follow-up]` per query): every metric's mean per tag.

A tag's mean is the mean over the scored queries that carry the tag, the same rule as the overall mean
(a query with no value for a metric, such as judged@k with nothing returned, is left out of that mean), so
`eval --by-tag` equals `eval` run on a label file holding only the tag's queries.

`diff --by-tag` tests each slice as diff tests the whole set (`tag_tests`): the same paired test and interval
over the tag's queries, p-values Holm-adjusted across the tags, no verdict under thirty queries in the slice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.evaluate import RunEval

if TYPE_CHECKING:
    from ragdiff.core.metrics.diff import MetricDiff


@dataclass(frozen=True)
class TagSlice:
    tag: str
    queries: list[str]  # the scored queries carrying the tag, in gold order
    means: dict[str, float]  # metric name -> mean over those queries (NaN when none)


def tags_in_order(gold: Gold) -> list[str]:
    """Every tag, in the order it first appears in the file."""
    if "tags" not in gold.queries.columns:
        return []
    return gold.queries.sort("position").get_column("tags").explode().drop_nulls().unique(maintain_order=True).to_list()


def by_tag(ev: RunEval, gold: Gold) -> list[TagSlice]:
    tags = tags_in_order(gold)
    if not tags:
        return []
    names = [m.name for m in ev.metrics]
    tagged = gold.queries.select("query_id", tag="tags").explode("tag").drop_nulls("tag")
    rows = ev.per_query.with_row_index("order").join(tagged, on="query_id", how="inner")
    grouped = rows.group_by("tag").agg(pl.col("query_id").sort_by("order"), *[pl.col(n).mean() for n in names])
    found = {row["tag"]: row for row in grouped.iter_rows(named=True)}
    out = []
    for tag in tags:
        row = found.get(tag)
        if row is None:  # every query with this tag is unanswerable or left out
            out.append(TagSlice(tag, [], {n: float("nan") for n in names}))
            continue
        out.append(TagSlice(tag, row["query_id"],
                            {n: float("nan") if row[n] is None else float(row[n]) for n in names}))
    return out


@dataclass(frozen=True)
class TagTest:
    """One tag, one metric, B against A over the tag's paired queries: diff's own comparison (`MetricDiff`, the
    same paired sign-flip test and bootstrap interval), its p-value Holm-adjusted across the tags and its verdict
    decided by diff's rule on the slice's own size (no verdict under thirty queries)."""

    tag: str
    result: MetricDiff


def tag_tests(ev_a: RunEval, ev_b: RunEval, gold: Gold, *, flips: int, seed: int, alpha: float) -> list[TagTest]:
    """For every tag and every metric both evaluations have: diff's paired test of B against A over the tag's
    queries, p-values Holm-adjusted across the tags (one family per metric: the tags of one metric are the
    comparisons a reader scans together), each slice's verdict under diff's rules at its own size."""
    from ragdiff.core.metrics.diff import MIN_QUERIES_FOR_VERDICT, MetricDiff, decide, paired
    from ragdiff.core.metrics.holm import HOLM, holm
    from ragdiff.core.metrics.stats import paired_tests

    names_b = {m.name for m in ev_b.metrics}
    metrics = [m for m in ev_a.metrics if m.name in names_b]
    slices = by_tag(ev_a, gold)
    tests: dict[tuple[str, str], MetricDiff] = {}
    for t in slices:
        keep = pl.Series(t.queries, dtype=pl.String).implode()
        pairs = {m: paired(ev_a, ev_b, m).filter(pl.col("query_id").is_in(keep)).drop_nulls(["a", "b"])
                 .with_columns(delta=pl.col("b") - pl.col("a")) for m in metrics}
        for m in metrics:
            d = pairs[m]
            test = paired_tests(d.get_column("delta").to_numpy(), flips=flips, seed=seed)[0]
            mean = (lambda column: float(d.get_column(column).mean()) if d.height else float("nan"))
            md = MetricDiff(metric=m, a=mean("a"), b=mean("b"), delta=mean("b") - mean("a"), n=test.n,
                            queries_worth=float(d.get_column("delta").sum()) if d.height else 0.0,
                            p_value=test.p_value, ci95=test.ci95, method=test.method, verdict="", sentence="",
                            per_query=d)
            tests[(t.tag, m.name)] = md
    for m in metrics:
        family = [tests[(t.tag, m.name)] for t in slices]
        for md, p in zip(family, holm([md.p_value for md in family])):
            md.p_adjusted = p if p == p else None
            md.adjustment = HOLM if p == p else None
            decide(md, alpha, md.n < MIN_QUERIES_FOR_VERDICT)
    return [TagTest(t.tag, tests[(t.tag, m.name)]) for t in slices for m in metrics]
