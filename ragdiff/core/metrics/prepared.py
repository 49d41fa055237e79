"""A run prepared for scoring: its scored queries and their judged rows (`prepare`), and the row rules every
scorer shares (the run's query ids aligned to the gold set's, judged pairs, unjudged rows, condensed lists)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ragdiff.core import vocab
from ragdiff.core.io.runs import Run
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.specs import EvalSettings


@dataclass
class QuerySets:
    scored: list[str]
    unanswerable: list[str]
    missing_from_run: list[str]
    not_in_gold: list[str]
    not_retrieval: list[str] = field(default_factory=list)  # `retrieval: false`: left out of every score, listed


def aligned_frame(run: Run, gold: Gold) -> pl.DataFrame:
    """The run's frame with queries keyed by text renamed to the gold set's ids."""
    aliases = gold.aliases()
    if not aliases:
        return run.frame
    return run.frame.with_columns(pl.col("query_id").replace(aliases))


def query_table(gold: Gold, settings: EvalSettings) -> pl.DataFrame:
    """Per gold query: relevant count and ideal DCG inputs. Keeps gold order."""
    qrels = gold.qrels(settings.level)
    num_rel = qrels.group_by("query_id").agg(num_rel=(pl.col("grade") >= settings.threshold).sum())
    return (
        gold.queries.select("query_id", "text", "position")
        .join(num_rel, on="query_id", how="left")
        .with_columns(pl.col("num_rel").fill_null(0))
        .sort("position")
    )


@dataclass
class PreparedRun:
    """What scoring needs of a run at any k: per scored query, how many chunks came back and the judged ones
    with their ranks. A million-line run shrinks to its judged rows, so scoring again at another k (the review
    screen's `+`/`-`) touches a few thousand rows."""

    run: Run
    queries: QuerySets
    scored: pl.DataFrame  # query_id, in gold order
    returned: pl.DataFrame  # query_id, returned
    judged: pl.DataFrame  # query_id, chunk_id, rank, grade
    qrels: pl.DataFrame  # query_id, chunk_id, grade (scored queries)
    # unjudged chunks (no grade >= 0) in the top `unjudged_depth`: query_id, chunk_id, rank (for the bound)
    unjudged: pl.DataFrame | None = None
    unjudged_depth: int = 0
    gold: Gold | None = field(default=None, repr=False, compare=False)  # the gold set it was prepared against
    # every scored query's rows are ranked 1 … returned (one stretch of the run each), so its top w holds
    # min(returned, w) rows and its unjudged ones can be counted from the judged rows (`window_counts`)
    ranked_from_one: bool = False
    # the deepest window with an upper bound, when deeper than the unjudged rows kept (0: `unjudged_depth`)
    bound_depth: int = 0
    judged_only: bool = False  # prepared from the condensed lists (`EvalSettings.judged_only`)
    # `window_counts` by (window, threshold): the bounds count them and diff's unjudged check again, for both
    # runs. Not an init field, so a run made from this one by `replace` (promote) starts with none
    counts_kept: dict[tuple[int, int], pl.DataFrame] = field(default_factory=dict, init=False, repr=False,
                                                             compare=False)

    @property
    def bounds_to(self) -> int:
        """Metrics whose window reaches no deeper than this have an upper bound."""
        return max(self.bound_depth, self.unjudged_depth)


def prepare(run: Run, gold: Gold, settings: EvalSettings, unjudged_depth: int | None = None) -> PreparedRun:
    """The k-independent half of `evaluate` (it uses the settings' threshold, level and query rules).

    The unjudged rows are kept to `unjudged_depth` (default max(k, depth), where the upper bounds reach): a
    caller that counts its bounds (`MetricSpec.counted`) needs them only as deep as its other metrics' windows."""
    original = gold
    not_retrieval = gold.not_retrieval()
    gold_qids = gold.queries.get_column("query_id")
    frame = aligned_frame(run, gold)
    if settings.judged_only:
        frame = condensed(frame, gold.qrels(settings.level))
    gold = gold.scored_queries()  # the answer is not inside a chunk: recall@k measures nothing there
    qtable = query_table(gold, settings)
    per_query = _returned(frame)
    run_qids = per_query.get_column("query_id")
    scored = (qtable if settings.unanswerable_as_zero else qtable.filter(pl.col("num_rel") > 0)).select("query_id")
    sets = QuerySets(
        scored=scored.get_column("query_id").to_list(),
        unanswerable=qtable.filter(pl.col("num_rel") == 0).get_column("query_id").to_list(),
        missing_from_run=qtable.filter(~pl.col("query_id").is_in(run_qids.implode())).get_column("query_id").to_list(),
        not_in_gold=sorted(set(run_qids.to_list()) - set(gold_qids.to_list())),
        not_retrieval=not_retrieval,
    )
    qrels = gold.qrels(settings.level).filter(pl.col("grade").is_not_null()).join(scored, on="query_id", how="semi")
    ranked = frame.select("query_id", "chunk_id", "rank")
    # when every query of the run is scored (the usual case) the million-row join is not needed
    returned = per_query
    if not run_qids.is_in(scored.get_column("query_id").implode()).all():
        ranked = ranked.join(scored, on="query_id", how="semi")
        returned = per_query.join(scored, on="query_id", how="semi")
    bound_depth = max(settings.k, settings.depth)
    kept = bound_depth if unjudged_depth is None else min(unjudged_depth, bound_depth)
    return PreparedRun(
        run=run, queries=sets, scored=scored,
        returned=returned.select("query_id", "returned"),
        # every metric counts judged chunks only, so the million unjudged rows of a big run stop here
        judged=rows_of_pairs(ranked, qrels, how="inner"),
        qrels=qrels,
        unjudged=unjudged_rows(ranked, qrels, kept),
        unjudged_depth=kept,
        gold=original,
        # a query's rows are stretches ranked 1 … length (core/io/runs.py ranks by position): one stretch exactly
        # when its deepest rank is its count — two (a run keying a query both by its id and by its text) are not
        ranked_from_one=bool((returned.get_column("deepest") == returned.get_column("returned")).all()),
        bound_depth=bound_depth,
        judged_only=settings.judged_only,
    )


def _returned(frame: pl.DataFrame) -> pl.DataFrame:
    """query_id, returned (rows) and deepest (largest rank) per query of a run's frame, from its stretches of
    one query (a run's rows come a query at a time, core/io/runs.py: about a thousand stretches for a million rows,
    and any order gives the same counts): no hashing of a million query ids."""
    stretches = frame.get_column("query_id").rle().struct.unnest()
    lengths = stretches.get_column("len").to_numpy().astype(np.int64)
    rank = frame.get_column("rank").to_numpy()
    starts = np.cumsum(lengths) - lengths
    deepest = np.maximum.reduceat(rank, starts) if len(starts) else rank[:0]
    return (pl.DataFrame({"query_id": stretches.get_column("value"), "returned": lengths, "deepest": deepest})
            .group_by("query_id", maintain_order=True)
            .agg(returned=pl.col("returned").sum().cast(pl.UInt32), deepest=pl.col("deepest").max()))


def rows_of_pairs(rows: pl.DataFrame, pairs: pl.DataFrame, how: str = "semi") -> pl.DataFrame:
    """`rows` joined (inner or semi) with `pairs` on (query_id, chunk_id), in `rows`' order: the rows whose
    (query, chunk) pair hashes to one of `pairs`' are found first, so the join on both columns (which polars
    keys by encoding both, row by row: +45 MiB at a million rows) runs over those few; a hash that collides only
    lets a row through to the join, which drops it. The chunk id alone stops sorting them out once the gold set
    labels a good part of the corpus: at 10,000 queries over 200,000 chunks it let 5.3M of a 10M-line run's
    rows through to the join (a million lines: 80,000). The hashes are taken eagerly, a slice of
    `_HASHED_ROWS` rows at a time: hashed whole, the two evaluations' 8-byte hashes of every row raised the 1M
    diff's peak by ~17 MiB; a slice at a time, the peak is as before and the 10M pair's fell 1,830 -> 1,390 MiB
    (bench/run_bench.py). The slices' masks are joined in order, so no engine's batch order is relied on (the
    streaming engine, polars 2's lazy default, does not promise it); tests/test_metrics.py holds every slice
    size against the plain join."""
    keys = pairs.select(_pair_hash()).to_series().implode()
    mask = pl.concat([rows.slice(start, _HASHED_ROWS).select(_pair_hash().is_in(keys)).to_series()
                      for start in range(0, rows.height, _HASHED_ROWS)] or [pl.Series(dtype=pl.Boolean)])
    return rows.filter(mask).join(pairs, on=["query_id", "chunk_id"], how=how, maintain_order="left")


_HASHED_ROWS = 1 << 18  # rows rows_of_pairs hashes at a time: 2 MiB of hashes


def _pair_hash() -> pl.Expr:
    """A 64-bit hash of a row's (query_id, chunk_id), the same for the same two strings in any frame."""
    return (pl.col("chunk_id").cast(pl.String).hash(seed=_PAIR_SEED)
            ^ pl.col("query_id").cast(pl.String).hash(seed=_PAIR_SEED + 1))


_PAIR_SEED = 0x9A1E


def condensed(frame: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """The run's rows of judged chunks only (a grade >= 0), ranked again 1, 2, … in their order: trec_eval -J's
    condensed lists (Sakai), a standard answer to incomplete judgments. `frame` is ordered by (query, rank)."""
    kept = rows_of_pairs(frame, judged_pairs(qrels))
    return kept.with_columns(pl.col("rank").rank("ordinal").over("query_id").cast(kept.schema["rank"]))


def judged_pairs(judgments: pl.DataFrame) -> pl.DataFrame:
    """query_id, chunk_id of the judged chunks: those with a grade >= 0 (a negative qrels grade is unjudged, as in
    trec_eval) — vocab.judged_rows' rule, its one home; a frame with a `level` column is read by its kind too."""
    level = "level" if "level" in judgments.columns else None
    return judgments.filter(vocab.judged_rows(level)).select("query_id", "chunk_id")


def unjudged_rows(ranked: pl.DataFrame, qrels: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, chunk_id, rank of the chunks in the top `depth` that carry no judgment (no grade >= 0)."""
    return rows_without(ranked, judged_pairs(qrels), depth)


def rows_without(ranked: pl.DataFrame, judged: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, chunk_id, rank of `ranked`'s rows down to `depth` that are not among `judged` (judged_pairs'
    pairs), in `ranked`'s order: the one rule for an unjudged row, read by the bounds, diff's unjudged check
    and the review's unjudged@k (app/model.py), each over the scored queries (`unjudged_in`)."""
    return (ranked.lazy().filter(pl.col("rank") <= depth).select("query_id", "chunk_id", "rank")
            .join(judged.lazy(), on=["query_id", "chunk_id"], how="anti", maintain_order="left").collect())
