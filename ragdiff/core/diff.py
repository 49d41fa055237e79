"""Comparing two evaluated runs query by query: flips at k (more comes with `ragdiff diff`)."""

from __future__ import annotations

import polars as pl

from ragdiff.core.metrics import Metric, RunEval


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
    hit_to_miss = pairs.filter((pl.col("a") > 0) & (pl.col("b") == 0)).get_column("query_id").to_list()
    miss_to_hit = pairs.filter((pl.col("a") == 0) & (pl.col("b") > 0)).get_column("query_id").to_list()
    return hit_to_miss, miss_to_hit
