"""Upper bounds: each quality metric's value if every unjudged chunk in its window were relevant, promoted
(rescored) or counted, and the rows behind them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.prepared import PreparedRun, aligned_frame, condensed, unjudged_rows
from ragdiff.core.metrics.scoring import mean_of, per_query_values
from ragdiff.core.metrics.specs import EvalSettings, Metric


def bound_grade(settings: EvalSettings) -> int:
    """The grade an unjudged chunk gets in the upper bound: the lowest that counts as relevant."""
    return max(settings.threshold, 1)


def bound_window(metric: Metric, settings: EvalSettings) -> int:
    """Which unjudged chunks the bound makes relevant: those in the metric's own cutoff, or in the top k for a
    metric of the whole ranking (mrr, map, ndcg, rprec, bpref)."""
    return metric.k if metric.k is not None else settings.k


@dataclass(frozen=True)
class Bound:
    """A metric's value if every unjudged chunk in the top `window` were relevant (at the lowest relevant
    grade), over the same scored queries, and how many unjudged chunks stand behind the gap."""

    value: float
    unjudged: int
    window: int
    # the per-query values behind `value`, in the prepared run's scored order (diff's check reads them again)
    per_query: pl.Series | None = field(default=None, repr=False, compare=False)


def promote(prepared: PreparedRun, chunks: pl.DataFrame, settings: EvalSettings,
            keys: pl.DataFrame | None = None) -> PreparedRun:
    """The prepared run as if `chunks` (query_id, chunk_id, rank of this run) were labelled relevant; with `keys`
    (query_id, chunk_id of scored queries, `chunks` among them), as if all of `keys` were: `chunks` are then the
    rows of this run that `keys` name. The same as preparing the run again on `with_relevant(gold, keys)`, from
    the judged rows and the promoted ones instead of the whole run (tests/test_diff.py holds them equal). `keys`
    name each pair once (a run's rows do: core/io/runs.py refuses repeated chunks)."""
    keys = (chunks if keys is None else keys).select("query_id", "chunk_id")
    grade = pl.lit(bound_grade(settings), dtype=prepared.qrels.schema["grade"])
    judged = pl.concat([prepared.judged.join(keys, on=["query_id", "chunk_id"], how="anti"),
                        chunks.select("query_id", "chunk_id", "rank", grade.alias("grade"))], how="vertical_relaxed")
    qrels = pl.concat([prepared.qrels.join(keys, on=["query_id", "chunk_id"], how="anti"),
                       keys.with_columns(grade.alias("grade"))], how="vertical_relaxed")
    return replace(prepared, judged=judged, qrels=qrels)


def promote_window(prepared: PreparedRun, window: int, settings: EvalSettings) -> tuple[PreparedRun, int] | None:
    """`promote(prepared, unjudged_in(prepared, window), settings)` and the count of unjudged rows promoted,
    without listing the run's unjudged rows (a million of them for a window of 1,000): when every scored query's
    rows are ranked 1 … returned (`can_count`) and no chunk is judged twice in a query, a query's unjudged rows in
    the window are its ranks 1 … min(returned, window) that hold no judged chunk, so the promoted rows are those
    ranks at the bound's grade. The rows carry query_id, rank and grade (scoring reads no chunk id), the
    judgments query_id and grade (each promoted row one judgment more; the unjudged rows' negative grades, which
    no metric counts, are left in), and a query is keyed by its position among the scored ones, not its id.
    The same rows in each query, so `per_query_values` gives the same floats in the same (scored) order
    (tests/test_metrics.py): at a depth of 1,000, 0.47 -> 0.16 s and +115 -> +50 MiB per run. None when the
    shortcut does not hold: the caller promotes the listed rows."""
    judged = prepared.judged
    if not can_count(prepared, settings) or judged.select(
            pl.struct("query_id", "chunk_id").is_duplicated().any()).item():
        return None
    grade_type, rank_type = prepared.qrels.schema["grade"], judged.schema["rank"]
    # queries keyed by their position among the scored ones (what scoring reads of them: which rows are one
    # query's), so that a million promoted rows hold no query id string
    scored = prepared.scored.with_columns(code=pl.int_range(pl.len(), dtype=pl.UInt32))

    def coded(frame: pl.DataFrame) -> pl.DataFrame:
        columns = frame.columns
        return (frame.join(scored, on="query_id", how="inner", maintain_order="left").drop("query_id")
                .rename({"code": "query_id"}).select(columns))

    returned = (scored.join(prepared.returned, on="query_id", how="left", maintain_order="left")
                .get_column("returned").fill_null(0).to_numpy().astype(np.int64))
    lengths = np.minimum(returned, window)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    judged = coded(judged.select("query_id", "rank", "grade"))
    # the ranks of the window that hold a judged chunk (a grade >= 0): not promoted
    taken = judged.filter((pl.col("grade") >= 0) & (pl.col("rank") <= window))
    free = np.ones(int(starts[-1]), dtype=bool)
    at = starts[taken.get_column("query_id").to_numpy()] + taken.get_column("rank").to_numpy().astype(np.int64)
    free[at - 1] = False
    which = np.repeat(np.arange(len(lengths), dtype=np.uint32), lengths)
    rank = np.arange(int(starts[-1]), dtype=np.int64) - starts[which] + 1
    which, rank = which[free], rank[free]
    rows = pl.DataFrame({"query_id": which, "rank": pl.Series(rank).cast(rank_type),
                         "grade": pl.Series(np.full(len(which), bound_grade(settings))).cast(grade_type)})
    kept = judged.filter((pl.col("grade") >= 0) | (pl.col("rank") > window))
    qrels = pl.concat([coded(prepared.qrels.select("query_id", "grade")), rows.select("query_id", "grade")])
    promoted = replace(prepared, scored=scored.select(pl.col("code").alias("query_id")),
                       returned=coded(prepared.returned), judged=pl.concat([kept, rows]), qrels=qrels)
    return promoted, rows.height


def unjudged_in(prepared: PreparedRun, window: int, queries: pl.DataFrame | None = None) -> pl.DataFrame:
    """query_id, chunk_id, rank of the prepared run's unjudged rows in the top `window` (of its scored queries,
    or of those of them in `queries`): from the rows it keeps when they reach that deep, else from the run."""
    if prepared.unjudged is not None and window <= prepared.unjudged_depth:
        rows = prepared.unjudged.filter(pl.col("rank") <= window)
        return rows if queries is None else rows.join(queries, on="query_id", how="semi")
    frame = aligned_frame(prepared.run, prepared.gold)
    if prepared.judged_only:  # condensed lists hold no unjudged row
        frame = condensed(frame, prepared.qrels)
    wanted = (prepared.scored if queries is None else queries).get_column("query_id").implode()
    ranked = (frame.filter(pl.col("rank") <= window).filter(pl.col("query_id").is_in(wanted))
              .select("query_id", "chunk_id", "rank"))
    if queries is not None:  # of the scored queries only
        ranked = ranked.join(prepared.scored, on="query_id", how="semi")
    return unjudged_rows(ranked, prepared.qrels, window)


def can_count(prepared: PreparedRun, settings: EvalSettings) -> bool:
    """Whether the counted metrics' bounds may be counted: each query's top w holds min(returned, w) rows, and
    an unjudged chunk (no grade >= 0) was not relevant before it was promoted."""
    return prepared.ranked_from_one and settings.threshold >= 0


def window_counts(prepared: PreparedRun, window: int, settings: EvalSettings) -> pl.DataFrame:
    """Per scored query (the prepared run's order): `hits` (relevant rows in the top `window`), `num_rel`
    (relevant chunks labelled) and `unjudged` (rows in the top `window` without a judgment: min(returned,
    window) less the judged ones — `can_count` says when that holds), from the judged rows alone."""
    threshold = settings.threshold
    kept = prepared.counts_kept.get((window, threshold))
    if kept is None:
        kept = prepared.counts_kept[(window, threshold)] = _window_counts(prepared, window, threshold)
    return kept


def _window_counts(prepared: PreparedRun, window: int, threshold: int) -> pl.DataFrame:
    top = prepared.judged.filter(pl.col("rank") <= window).group_by("query_id").agg(
        hits=(pl.col("grade") >= threshold).sum(),
        # rows, not judgments: a pair labelled twice is one row of the run
        judged=pl.col("rank").filter(pl.col("grade") >= 0).n_unique(),
    )
    counts = prepared.qrels.group_by("query_id").agg(num_rel=(pl.col("grade") >= threshold).sum())
    left = {"on": "query_id", "how": "left", "maintain_order": "left"}  # the prepared run's order, as said
    return (prepared.scored.join(prepared.returned, **left).join(counts, **left).join(top, **left)
            .with_columns(pl.col("returned", "num_rel", "hits", "judged").fill_null(0))
            .select("query_id", "hits", "num_rel",
                    unjudged=pl.min_horizontal(pl.col("returned").cast(pl.Int64), pl.lit(window, dtype=pl.Int64))
                    - pl.col("judged").cast(pl.Int64)))


def counted_values(table: pl.DataFrame, metrics: list[Metric], window: int) -> pl.DataFrame:
    """query_id and each counted metric (cutoff `window`) from a table of `hits` and `num_rel` per query: the
    spec's own expression, as `per_query_values` applies it to its aggregates."""
    table = table.rename({"hits": f"hits_{window}"})
    return table.select(pl.col("query_id"), *[m.spec.value(m.k).cast(pl.Float64).alias(m.name) for m in metrics])


def upper_bounds(prepared: PreparedRun, metrics: list[Metric], settings: EvalSettings,
                 counted: bool = True) -> dict[str, Bound]:
    """Per quality metric, its `Bound` (metrics of label coverage, judged@k, have none; nor has a metric whose
    window is deeper than max(k, depth)).

    The definition: the prepared run with its unjudged rows in the window promoted (`promote`), rescored. A
    counted metric (recall, recall_frac, precision: hits and relevant counts) gets the same floats by counting —
    each unjudged row in the window adds one hit and one relevant chunk — without the promoted rows (a million
    of them for recall@1000); `counted=False` promotes every metric (tests/test_metrics.py holds both equal)."""
    out: dict[str, Bound] = {}
    if prepared.unjudged is None:
        return out
    windows: dict[int, list[Metric]] = {}
    for m in metrics:
        window = bound_window(m, settings)
        if m.spec.quality and window <= prepared.bounds_to:
            windows.setdefault(window, []).append(m)
    counting = counted and can_count(prepared, settings)
    for window, group in windows.items():
        by_count = [m for m in group if counting and m.spec.counted]
        rest = [m for m in group if m not in by_count]
        columns: dict[str, pl.Series] = {}
        unjudged = 0
        if by_count:
            table = window_counts(prepared, window, settings)
            unjudged = int(table.get_column("unjudged").sum())
            table = table.select("query_id", hits=pl.col("hits") + pl.col("unjudged"),
                                 num_rel=pl.col("num_rel") + pl.col("unjudged"))
            values = counted_values(table, by_count, window)
            columns.update({m.name: values.get_column(m.name) for m in by_count})
        if rest:
            shortcut = promote_window(prepared, window, settings) if counted else None
            if shortcut is None:
                chunks = unjudged_in(prepared, window)
                shortcut = promote(prepared, chunks, settings), chunks.height
            promoted, unjudged = shortcut
            values = per_query_values(promoted, rest, settings)
            columns.update({m.name: values.get_column(m.name) for m in rest})
        for m in group:
            out[m.name] = Bound(mean_of(columns[m.name]), unjudged, window, per_query=columns[m.name])
    return out


def rows_for_bounds(metrics: list[Metric], settings: EvalSettings) -> int:
    """How deep the unjudged rows are kept for these metrics' bounds: the widest window, no deeper than k, of a
    metric whose bound is promoted, not counted (diff's unjudged check lists them again). A deeper window (ndcg at
    the depth) is promoted from the judged rows (`promote_window`), or its rows read again from the run when that
    does not hold: keeping a million unjudged rows for it cost ~35 MiB at a depth of 1,000."""
    return max((window for m in metrics if m.spec.quality and not m.spec.counted
                and (window := bound_window(m, settings)) <= settings.k), default=0)


def with_relevant(gold: Gold, chunks: pl.DataFrame, settings: EvalSettings) -> Gold:
    """The gold set with `chunks` (query_id, chunk_id) labelled gold at the lowest relevant grade, replacing
    whatever judgment they had: the upper bound's "if every unjudged chunk were relevant", as a gold set."""
    keys = chunks.select("query_id", "chunk_id").unique()
    kept = gold.judgments.join(keys, on=["query_id", "chunk_id"], how="anti")
    added = keys.with_columns(pl.lit(bound_grade(settings), dtype=gold.judgments.schema["grade"]).alias("grade"),
                              pl.lit("gold").alias("level"))
    return replace(gold, judgments=pl.concat([kept, added], how="diagonal_relaxed"))
