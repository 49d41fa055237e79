"""Slices of the gold set by tag (`tags: [typo, follow-up]` per query): every metric's mean per tag.

A tag's mean is the mean over the scored queries that carry the tag, the same rule as the overall mean
(a query with no value for a metric, such as judged@k with nothing returned, is left out of that mean), so
`eval --by-tag` equals `eval` run on a label file holding only the tag's queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ragdiff.core.gold import Gold
from ragdiff.core.metrics import RunEval


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
