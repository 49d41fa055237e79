"""Unjudged chunks count as misses: could they change a verdict? Each run's upper bound, and the comparison again
with the lower run's unjudged chunks in the top k made relevant (`unjudged_checks`, part of `compare`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ragdiff.core import fmt
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.diff_result import VERDICT_WORDS, MetricDiff, UnjudgedCheck
from ragdiff.core.metrics.bounds import bound_window, can_count, counted_values, promote, unjudged_in, window_counts
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import PreparedRun, aligned_frame, prepare, rows_of_pairs
from ragdiff.core.metrics.scoring import per_query_values
from ragdiff.core.metrics.specs import EvalSettings, Metric
from ragdiff.core.metrics.stats import paired_tests

def unjudged_checks(ev_a: RunEval, ev_b: RunEval, gold: Gold, diffs: list[MetricDiff], scored: list[str], *,
                    flips: int, seed: int, alpha: float, exact_max: int, by_hand: bool) -> None:
    """Set `MetricDiff.unjudged` for every quality metric: each run's upper bound (from `evaluate(...,
    bounds=True)`), and — if the lower run's unjudged chunks in the top k were relevant, both runs rescored on
    that gold set over the same queries — the change, its p-value and verdict, and whether the verdict flips."""
    settings = ev_a.settings
    order = pl.DataFrame({"query_id": scored}, schema={"query_id": pl.String})
    cases: dict[tuple[str, int], list[MetricDiff]] = {}
    for md in diffs:
        if not md.metric.spec.quality or md.n == 0:
            continue
        window = bound_window(md.metric, settings)
        ba, bb = ev_a.bounds.get(md.name), ev_b.bounds.get(md.name)
        side = "b" if md.delta < 0 else "a" if md.delta > 0 else None
        md.unjudged = UnjudgedCheck(window, ba.value if ba else None, ba.unjudged if ba else None,
                                    bb.value if bb else None, bb.unjudged if bb else None, side)
        if side is not None:
            cases.setdefault((side, window), []).append(md)
    prepared = {"a": _prepared(ev_a, gold), "b": _prepared(ev_b, gold)} if cases else {}
    evs = {"a": ev_a, "b": ev_b}
    for (side, window), group in cases.items():
        metrics = list(dict.fromkeys(md.metric for md in group))
        other = "b" if side == "a" else "a"
        low, high = prepared[side], prepared[other]
        # recall, recall_frac and precision are counted when both runs allow it (as in metrics.upper_bounds):
        # the lower run's unjudged rows in the window need not be listed for them
        counting = can_count(low, settings) and can_count(high, settings)
        by_count = [m for m in metrics if counting and m.spec.counted]
        rest = [m for m in metrics if m not in by_count]
        counts = (window_counts(low, window, settings).join(order, on="query_id", how="semi")
                  if by_count else None)
        chunks = unjudged_in(low, window).join(order, on="query_id", how="semi") if rest else None
        count = chunks.height if chunks is not None else int(counts.get_column("unjudged").sum())
        if count == 0:
            for md in group:
                md.unjudged.sentence = _unjudged_sentence(md, side, 0)
            continue
        # both runs as if evaluated on `with_relevant(gold, chunks)` (tests/test_diff.py holds it to evaluating
        # on that gold set). The lower run's values are its upper bound's (the same promotion, and a query's
        # values do not depend on other queries' chunks); the other run's: its rows of those chunks promoted, or
        # counted
        values = {side: _bound_values(evs[side], low, metrics, order)}
        if values[side] is None:
            values[side] = _rescored(low, by_count, rest, settings, order, window, chunks, counts,
                                     counts.get_column("unjudged") if by_count else None, None)
        found = _found_in(high, low, counts, by_count, chunks, gold, settings, window, order) if by_count else None
        values[other] = _rescored(high, by_count, rest, settings, order, window,
                                  _rows_of(evs[other], gold, chunks) if rest else None, counts, found, chunks)
        again = [values["a"], values["b"]]
        pairs = again[0].join(again[1], on="query_id", how="inner", suffix="_b", maintain_order="left")
        matrix = np.vstack([(pairs[f"{m.name}_b"] - pairs[m.name]).fill_null(0.0).to_numpy() for m in metrics])
        # only the p-value and the mean are read here: no bootstrap interval
        tests = dict(zip(metrics, paired_tests(matrix, flips=flips, seed=seed, exact_max=exact_max, interval=False)))
        rows_of = dict(zip(metrics, matrix))
        for md in group:
            row, test = rows_of[md.metric], tests[md.metric]
            check = md.unjudged
            check.if_a = float(again[0][md.name].mean())
            check.if_b = float(again[1][md.name].mean())
            check.p_value = test.p_value
            if by_hand:
                check.verdict = "by hand"
                check.could_flip = (check.if_b - check.if_a) * md.delta < 0
            else:
                check.verdict = ("same" if not np.any(row) else ("gain" if test.mean > 0 else "drop")
                                 if test.p_value < alpha else "noise")
                same = {"same": "noise"}  # no change and no real change: either way, not a verdict
                check.could_flip = same.get(check.verdict, check.verdict) != same.get(md.verdict, md.verdict)
            check.sentence = _unjudged_sentence(md, side, count)


def _unjudged_sentence(md: MetricDiff, side: str, count: int) -> str:
    """'if B's 21 unjudged chunks in the top 5 were relevant: recall@5 A 0.851 B 0.940, p = 0.01, a real gain —
    the verdict could flip'."""
    c = md.unjudged
    run = side.upper()
    if count == 0:
        return f"{md.name}: {run} has no unjudged chunk in its top {c.window}: the verdict stands"
    p = fmt.number(c.p_value, 'p')
    p = f"p {p}" if p.startswith("<") else f"p = {p}"
    words = "no verdict under 30 queries" if c.verdict == "by hand" else VERDICT_WORDS.get(c.verdict, c.verdict)
    tail = ("the verdict could flip" if c.could_flip and c.verdict != "by hand" else
            "the order could flip" if c.could_flip else "the verdict stands")
    return (f"if {run}'s {count} unjudged chunks in the top {c.window} were relevant: {md.name} A {fmt.number(c.if_a)} "
            f"B {fmt.number(c.if_b)}, {p}, {words} — {tail}")


def _prepared(ev: RunEval, gold: Gold) -> PreparedRun:
    """The prepared run the evaluation was scored from when it was prepared against this gold set, else again."""
    kept = ev.prepared
    if kept is not None and kept.gold is gold and kept.run is ev.run:
        return kept
    return prepare(ev.run, gold, ev.settings)


def _bound_values(ev: RunEval, prepared: PreparedRun, metrics: list[Metric], order: pl.DataFrame):
    """query_id and each metric's upper-bound values over the queries in `order`, when the evaluation kept them
    for this prepared run (else None)."""
    bounds = [ev.bounds.get(m.name) for m in metrics]
    if ev.prepared is not prepared or any(b is None or b.per_query is None for b in bounds):
        return None
    frame = pl.DataFrame([prepared.scored.get_column("query_id"), *[b.per_query.alias(m.name)
                                                                   for m, b in zip(metrics, bounds)]])
    return frame.join(order, on="query_id", how="semi")


def _rescored(prepared: PreparedRun, by_count: list[Metric], rest: list[Metric], settings: EvalSettings,
              order: pl.DataFrame, window: int, rows: pl.DataFrame | None, counts: pl.DataFrame | None,
              found: pl.Series | None, keys: pl.DataFrame | None) -> pl.DataFrame:
    """query_id and each metric over the queries in `order` with the lower run's unjudged chunks in the window
    relevant: `rest` from this run's `rows` of them promoted (`keys`: all of them), `by_count` counted — `found`
    of them among this run's top `window` (per query of `counts`, the lower run's), one relevant chunk more for
    each of them labelled (`counts`' `unjudged`)."""
    parts = []
    if by_count:
        own = window_counts(prepared, window, settings).join(order, on="query_id", how="semi")
        added = counts.select("query_id", pl.col("unjudged").alias("added"), found.alias("found"))
        own = own.join(added, on="query_id", how="left", maintain_order="left").select(
            "query_id", hits=pl.col("hits") + pl.col("found"), num_rel=pl.col("num_rel") + pl.col("added"))
        parts.append(counted_values(own, by_count, window))
    if rest:
        promoted = promote(prepared, rows, settings, keys=keys)
        parts.append(per_query_values(promoted, rest, settings).join(order, on="query_id", how="semi"))
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on="query_id", how="left", maintain_order="left")
    return out


def _found_in(high: PreparedRun, low: PreparedRun, counts: pl.DataFrame, by_count: list[Metric],
              chunks: pl.DataFrame | None, gold: Gold, settings: EvalSettings, window: int,
              order: pl.DataFrame) -> pl.Series:
    """Per query of `counts` (the lower run's window counts): how many of the lower run's unjudged chunks in the
    top `window` the other run has in its own top `window`. When every counted metric is recall (a hit or not),
    only the queries where the other run has no hit yet are looked up (the others are hits either way: 0)."""
    need = counts.filter(pl.col("unjudged") > 0)
    if all(m.family == "recall" for m in by_count):
        hits = window_counts(high, window, settings).filter(pl.col("hits") == 0)
        need = need.join(hits, on="query_id", how="semi")
    zero = pl.Series("found", [0] * counts.height, dtype=pl.Int64)
    if need.height == 0:
        return zero
    queries = need.select("query_id")
    keys = (chunks.join(queries, on="query_id", how="semi") if chunks is not None
            else unjudged_in(low, window, queries))
    wanted = queries.get_column("query_id").implode()
    # the rank first (a number): the query ids of the top window alone are looked up, not a million of them
    theirs = (aligned_frame(high.run, gold).filter(pl.col("rank") <= window).filter(pl.col("query_id").is_in(wanted))
              .select("query_id", "chunk_id")
              .join(keys.select("query_id", "chunk_id"), on=["query_id", "chunk_id"], how="semi")
              .group_by("query_id").agg(found=pl.len().cast(pl.Int64)))
    return (counts.select("query_id").join(theirs, on="query_id", how="left", maintain_order="left")
            .get_column("found").fill_null(0))


def _rows_of(ev: RunEval, gold: Gold, chunks: pl.DataFrame) -> pl.DataFrame:
    """query_id, chunk_id, rank of the run's rows of these (query, chunk) pairs, at any rank."""
    return rows_of_pairs(aligned_frame(ev.run, gold).select("query_id", "chunk_id", "rank"),
                         chunks.select("query_id", "chunk_id"))
