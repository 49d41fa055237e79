"""The review screen's view-model: everything the widgets show, computed from the core, no Textual.

Built once per gold set (the ranked rows of both runs with their labels and their rank in the other run),
and once per k (per-query hit/miss, reciprocal rank and nDCG, filters and their counts, header numbers).
A keypress only reads from these tables: moving to the next query slices one query out of a frame that is
sorted and indexed by query, and keeps the last few queries' rows in a small cache.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace

import polars as pl

from ragdiff.core.diff import MIN_QUERIES_FOR_VERDICT, compare
from ragdiff.core.diff import flips as core_flips
from ragdiff.core.gold import Gold
from ragdiff.core import vocab
from ragdiff.core.metrics import (EvalSettings, Metric, PreparedRun, RunEval, aligned_frame, prepare,
                                  recall_curve, score)
from ragdiff.core.runs import Run

FILTERS: tuple[tuple[str, str], ...] = (
    ("all", "all"),
    ("hit_to_miss", "hit→miss"),
    ("miss_to_hit", "miss→hit"),
    ("both_miss", "both miss"),
    ("unanswerable", "unanswerable"),
    ("unjudged", "unjudged@k"),
)
SORTS: tuple[tuple[str, str], ...] = (
    ("flips", "flips first"),
    ("delta_rr", "Δ reciprocal rank"),
    ("delta_ndcg", "Δ nDCG@k"),
)

UNJUDGED = None  # a row's level when the gold set has no judgment for the chunk


@dataclass(frozen=True)
class RankedRow:
    rank: int
    chunk_id: str
    score: float | None
    level: str | None  # "gold" | "evidence" | "not_relevant" | None (unjudged)
    grade: int | None  # the grade as labelled (None when unjudged)
    relevant: bool  # counts as relevant under the settings (level, threshold)
    other_rank: int | None  # the chunk's rank in the other run, None when absent there


@dataclass(frozen=True)
class MissedGold:
    chunk_id: str
    level: str
    grade: int
    rank: int | None  # where this run put it (beyond k), None when it did not retrieve it


# slots, not frozen: set_k makes one per query (10,000 frozen ones cost ~10 ms of CPU per k, these ~1 ms)
@dataclass(slots=True)
class QueryRow:
    query_id: str
    text: str
    position: int
    unanswerable: bool
    hit_a: bool | None  # None for an unanswerable query
    hit_b: bool | None
    rr_a: float | None
    rr_b: float | None
    ndcg_a: float | None
    ndcg_b: float | None
    unjudged_a: int  # unjudged chunks in run A's top k
    unjudged_b: int
    in_a: bool  # the run has the query at all
    in_b: bool

    @property
    def kind(self) -> str:
        if self.unanswerable:
            return "unanswerable"
        if self.hit_a and not self.hit_b:
            return "hit_to_miss"
        if self.hit_b and not self.hit_a:
            return "miss_to_hit"
        return "both_hit" if self.hit_a else "both_miss"

    @property
    def delta_rr(self) -> float | None:
        return None if self.rr_a is None or self.rr_b is None else self.rr_b - self.rr_a

    @property
    def delta_ndcg(self) -> float | None:
        return None if self.ndcg_a is None or self.ndcg_b is None else self.ndcg_b - self.ndcg_a


@dataclass(frozen=True)
class MetricLine:
    name: str  # the core's metric name, e.g. "recall@5"
    label: str  # what the header shows, e.g. "recall@5", "MRR", "nDCG@5"
    a: float
    b: float
    delta: float
    worth: float  # the change in queries: delta × scored queries (exact for recall@k)
    exact: bool  # worth is a whole number of queries (recall@k)
    percent: bool = False  # show as a percentage (judged@k)
    p_value: float | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class Header:
    name_a: str
    name_b: str
    gold_name: str
    queries: int
    scored: int
    unanswerable: int
    k: int
    depth: int
    metrics: list[MetricLine]
    notes: list[str] = field(default_factory=list)
    verdicts_ready: bool = False  # p-values are computed in the background
    by_hand: bool = False  # under 30 scored queries: no verdict, read the flips by hand


def header_metrics(k: int, depth: int) -> list[Metric]:
    """What the header shows: recall at k, ordering, graded gain, padding, label coverage, and recall at depth."""
    out = [Metric("recall", k), Metric("mrr"), Metric("ndcg", k), Metric("precision", k), Metric("judged", k)]
    if depth != k:
        out.append(Metric("recall", depth))
    return out


class ReviewModel:
    """Two runs against one gold set at one k. Call `set_k` to change k, `apply_change` after a mark."""

    def __init__(self, run_a: Run, run_b: Run, gold: Gold, settings: EvalSettings, row_cache: int = 64):
        self.run_a = run_a
        self.run_b = run_b
        self.settings = settings
        self._row_cache: OrderedDict[tuple[str, str], list[RankedRow]] = OrderedDict()
        self._row_cache_size = row_cache
        self._visible_cache: OrderedDict[tuple, list[str]] = OrderedDict()
        self._verdicts: dict[tuple[int, int], tuple[dict, bool]] = {}
        self._evals: dict[tuple[int, int], tuple[RunEval, RunEval]] = {}  # (k, generation) -> both evaluations
        self._generation = 0  # bumped on every set_gold: verdicts of an older gold set are not shown
        self.set_gold(gold)

    # ---- per gold set -------------------------------------------------------------------------------------

    def set_gold(self, gold: Gold) -> None:
        """Build the label-dependent tables (once, after loading), then compute at k. After a mark use
        `apply_change`, which updates the one judgment instead."""
        self.gold = gold
        self._generation += 1
        settings = self.settings
        labels = self._labels(gold)
        frame_a = aligned_frame(self.run_a, gold).select("query_id", "chunk_id", "score", "rank")
        frame_b = aligned_frame(self.run_b, gold).select("query_id", "chunk_id", "score", "rank")
        self._frames = {}
        self._index = {}
        for side, mine, other in (("a", frame_a, frame_b), ("b", frame_b, frame_a)):
            base = (
                mine.join(other.select("query_id", "chunk_id", pl.col("rank").alias("other_rank")),
                          on=["query_id", "chunk_id"], how="left")
                .sort(["query_id", "rank"])
                .with_row_index("row")
            )
            joined = self._labelled(base, labels)
            self._frames[side] = joined
            starts = joined.group_by("query_id").agg(pl.col("row").min().alias("start"), pl.len().alias("n"))
            self._index[side] = {q: (s, n) for q, s, n in starts.iter_rows()}
        # (query, chunk) -> (level, grade): the chunk pane asks on every cursor move, a dict answers at once
        self._label_of = {(q, c): (lv, g) for q, c, lv, g in
                          labels.select("query_id", "chunk_id", "level", "grade").iter_rows()}
        # a model's proposals: the chunk pane says "drafted ☆2"; they are never scored (not in `labels`)
        for q, c, g in gold.drafts.select("query_id", "chunk_id", "grade").iter_rows():
            self._label_of.setdefault((q, c), (vocab.DRAFTED, g))
        self._label_index: dict[str, list[tuple[str, int, str]]] = {}
        for qid, chunk, grade, level in self._relevant(labels).iter_rows():
            self._label_index.setdefault(qid, []).append((chunk, grade, level))
        queries = gold.queries.sort("position")
        self._query_text = {
            q: (t if t is not None else (self.run_a.query_text.get(q) or self.run_b.query_text.get(q) or ""))
            for q, t in zip(queries.get_column("query_id"), queries.get_column("text"))
        }
        self._query_order = list(self._query_text)
        self._position = {q: i for i, q in enumerate(self._query_order)}
        self._queries_frame = pl.DataFrame(
            {"query_id": self._query_order, "text": [self._query_text[q] for q in self._query_order],
             "position": list(range(len(self._query_order)))},
            schema={"query_id": pl.String, "text": pl.String, "position": pl.Int64})
        # the k-independent halves: a k change re-aggregates judged rows only, never the whole runs
        self._prepared = (prepare(self.run_a, gold, settings), prepare(self.run_b, gold, settings))
        self._curves = None
        self._unjudged = {side: self._unjudged_rows(frame) for side, frame in self._frames.items()}
        self._row_cache.clear()
        self.set_k(self.settings.k)

    def _labels(self, gold: Gold) -> pl.DataFrame:
        """query_id, chunk_id, grade, level (as labelled) and effective (the grade scored at the level)."""
        judgments = gold.judgments.select("query_id", "chunk_id", "grade", "level")
        effective = gold.qrels(self.settings.level).rename({"grade": "effective"})
        return judgments.join(effective, on=["query_id", "chunk_id"], how="left")

    def _labelled(self, base: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
        """Ranked rows (in their order) with each chunk's label, whether it counts relevant, whether judged."""
        return (base.join(labels, on=["query_id", "chunk_id"], how="left", maintain_order="left")
                .with_columns(relevant=(pl.col("effective") >= self.settings.threshold).fill_null(False),
                              judged=(pl.col("grade") >= 0).fill_null(False)))

    def _relevant(self, labels: pl.DataFrame) -> pl.DataFrame:
        """The relevant judgments, best first per query: what "missed gold" lists."""
        return (labels.filter((pl.col("effective") >= self.settings.threshold).fill_null(False))
                .sort(["query_id", "effective", "chunk_id"], descending=[False, True, False])
                .select("query_id", "chunk_id", "grade", "level"))

    def _unjudged_rows(self, frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(~pl.col("judged") & (pl.col("rank") <= self.settings.depth)).select("query_id", "rank")

    # ---- one judgment changed -----------------------------------------------------------------------------

    def apply_change(self, change) -> None:
        """A mark's `ragdiff.core.labels.Change`: that one (query, chunk) judgment is now `change.after`.

        Only that query's rows are relabelled (its slice of each run's frame, its labels, its judged rows in
        the prepared runs); then the numbers at k are scored again from the prepared runs, as a k change
        does. Nothing is read from disk.
        """
        qid, chunk = change.query_id, change.chunk_id
        after = change.after
        judgments = self.gold.judgments
        keep = ~((pl.col("query_id") == qid) & (pl.col("chunk_id") == chunk))
        mine = judgments.filter(pl.col("query_id") == qid).filter(keep)
        if after.kind in (vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT):
            row = pl.DataFrame({"query_id": [qid], "chunk_id": [chunk], "grade": [after.grade],
                                "level": [after.kind]}, schema={c: judgments.schema[c] for c in
                                                                 ("query_id", "chunk_id", "grade", "level")})
            mine = pl.concat([mine, row], how="diagonal_relaxed").select(judgments.columns)
            self._label_of[(qid, chunk)] = (after.kind, after.grade)
        elif after.kind == vocab.DRAFTED:  # an undo back to the model's proposal: shown, not scored
            self._label_of[(qid, chunk)] = (after.kind, after.grade)
        else:  # unjudged (an undo back to nothing)
            self._label_of.pop((qid, chunk), None)
        self.gold = replace(self.gold, judgments=pl.concat([judgments.filter(pl.col("query_id") != qid), mine],
                                                           how="diagonal_relaxed"))
        # that query alone, as a gold set of one query: the same rules (qrels, prepare) as the whole set
        one = replace(self.gold, queries=self.gold.queries.filter(pl.col("query_id") == qid), judgments=mine)
        labels = self._labels(one)
        self._label_index[qid] = [(c, g, lv) for _, c, g, lv in self._relevant(labels).iter_rows()]
        if not self._label_index[qid]:
            del self._label_index[qid]
        for side in ("a", "b"):
            start, n = self._index[side].get(qid, (0, 0))
            if n:
                frame = self._frames[side]
                part = self._labelled(frame.slice(start, n).select(
                    "row", "query_id", "chunk_id", "score", "rank", "other_rank"), labels)
                self._frames[side] = pl.concat([frame.slice(0, start), part, frame.slice(start + n)])
                self._unjudged[side] = pl.concat([self._unjudged[side].filter(pl.col("query_id") != qid),
                                                  self._unjudged_rows(part)])
            self._row_cache.pop((qid, side), None)
        self._prepared = tuple(self._prepare_one(prepared, one, qid) for prepared in self._prepared)
        self._generation += 1
        self._evals.clear()
        self._curves = None
        self._rescore_one(qid)

    def _prepare_one(self, prepared: PreparedRun, one: Gold, qid: str) -> PreparedRun:
        """`prepared` with query `qid` prepared again from the gold set of that one query."""
        side = "a" if prepared.run is self.run_a else "b"
        start, n = self._index[side].get(qid, (0, 0))
        rows = self._frames[side].slice(start, n).select("query_id", "chunk_id", "score", "rank")
        fresh = prepare(replace(prepared.run, frame=rows), one, self.settings)

        def splice(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
            return pl.concat([old.filter(pl.col("query_id") != qid), new.select(old.columns)])

        sets = prepared.queries
        was, now = qid in set(prepared.scored.get_column("query_id").to_list()), bool(fresh.queries.scored)
        scored = prepared.scored
        if was != now or (qid in sets.unanswerable) != bool(fresh.queries.unanswerable):
            scored_ids = (set(sets.scored) - {qid}) | set(fresh.queries.scored)
            unanswerable = (set(sets.unanswerable) - {qid}) | set(fresh.queries.unanswerable)
            sets = replace(sets, scored=[q for q in self._query_order if q in scored_ids],
                           unanswerable=[q for q in self._query_order if q in unanswerable])
            scored = pl.DataFrame({"query_id": sets.scored}, schema={"query_id": pl.String})
        return replace(prepared, queries=sets, scored=scored, returned=splice(prepared.returned, fresh.returned),
                       judged=splice(prepared.judged, fresh.judged), qrels=splice(prepared.qrels, fresh.qrels))

    # ---- per k --------------------------------------------------------------------------------------------

    def set_k(self, k: int) -> None:
        k = max(1, int(k))
        self.settings = replace(self.settings, k=k)
        self.metrics = header_metrics(k, self.settings.depth)
        cached = self._evals.get((k, self._generation))
        if cached is None:
            cached = tuple(score(prepared, self.settings, self.metrics) for prepared in self._prepared)
            self._evals[(k, self._generation)] = cached
            if len(self._evals) > 8:
                self._evals.pop(next(iter(self._evals)))
        self.eval_a: RunEval = cached[0]
        self.eval_b: RunEval = cached[1]
        self.hit_to_miss, self.miss_to_hit = core_flips(self.eval_a, self.eval_b, k)
        table = self._query_table(self._queries_frame)
        self.rows = self._query_rows(table)
        kind = table.get_column("kind")
        ids = table.get_column("query_id")
        flipped = set(self.hit_to_miss) | set(self.miss_to_hit)
        self._flips_order = (self.hit_to_miss + self.miss_to_hit
                             + [q for q in self._query_order if q not in flipped])
        self._members = {
            "all": self._query_order,
            "hit_to_miss": self.hit_to_miss,
            "miss_to_hit": self.miss_to_hit,
            "both_miss": ids.filter(kind == "both_miss").to_list(),
            "unanswerable": ids.filter(table.get_column("unanswerable")).to_list(),
            "unjudged": ids.filter((table.get_column("unjudged_a") > 0) | (table.get_column("unjudged_b") > 0)).to_list(),
        }
        self._visible_cache.clear()
        self.header = self._header()

    def _query_table(self, queries: pl.DataFrame, one: str | None = None) -> pl.DataFrame:
        """Per query (of `queries`, in its order): hit, reciprocal rank and nDCG at k in A and B, unjudged
        chunks in each top k, whether unanswerable, and its kind — joined and classified in polars, the
        Python loop only wraps the results (set_k at 10,000 queries: 84 ms -> 66 ms). `one`: that query only."""
        k = self.settings.k
        recall, rr, ndcg = f"recall@{k}", "mrr", f"ndcg@{k}"
        table = queries
        for side, ev in (("a", self.eval_a), ("b", self.eval_b)):
            per_query = ev.per_query if one is None else ev.per_query.filter(pl.col("query_id") == one)
            values = per_query.select(
                "query_id",
                (pl.col(recall) > 0).alias(f"hit_{side}"), pl.col(rr).alias(f"rr_{side}"),
                pl.col(ndcg).alias(f"ndcg_{side}"), pl.lit(True).alias(f"scored_{side}"))
            rows = self._unjudged[side] if one is None else self._unjudged[side].filter(pl.col("query_id") == one)
            unjudged = (rows.filter(pl.col("rank") <= k).group_by("query_id")
                        .agg(pl.len().cast(pl.Int64).alias(f"unjudged_{side}")))
            table = (table.join(values, on="query_id", how="left", maintain_order="left")
                     .join(unjudged, on="query_id", how="left", maintain_order="left"))
        unanswerable = pl.Series(self.eval_a.queries.unanswerable, dtype=pl.String)
        return table.with_columns(
            pl.col("unjudged_a", "unjudged_b").fill_null(0),
            unanswerable=pl.col("query_id").is_in(unanswerable.implode()) & pl.col("scored_a").is_null(),
        ).with_columns(
            kind=pl.when(pl.col("unanswerable")).then(pl.lit("unanswerable"))
            .when(pl.col("hit_a") & ~pl.col("hit_b")).then(pl.lit("hit_to_miss"))
            .when(pl.col("hit_b") & ~pl.col("hit_a")).then(pl.lit("miss_to_hit"))
            .when(pl.col("hit_a")).then(pl.lit("both_hit"))
            .otherwise(pl.lit("both_miss")),
        )

    def _query_rows(self, table: pl.DataFrame) -> dict[str, QueryRow]:
        in_a, in_b = self._index["a"], self._index["b"]
        columns = [table.get_column(c).to_list() for c in (
            "query_id", "text", "position", "unanswerable", "hit_a", "hit_b", "rr_a", "rr_b", "ndcg_a", "ndcg_b",
            "unjudged_a", "unjudged_b")]  # a list per column, zipped: cheaper than iter_rows over 10,000 rows
        return {
            q: QueryRow(q, t, pos, un, ha, hb, ra, rb, na, nb, ua, ub, q in in_a, q in in_b)
            for q, t, pos, un, ha, hb, ra, rb, na, nb, ua, ub in zip(*columns)
        }

    def _rescore_one(self, qid: str) -> None:
        """After one query's labels changed: the numbers at k again (the means from the prepared runs, as a k
        change does), but only that query's row, kind and memberships are worked out again."""
        k = self.settings.k
        cached = tuple(score(prepared, self.settings, self.metrics) for prepared in self._prepared)
        self._evals[(k, self._generation)] = cached
        self.eval_a, self.eval_b = cached
        table = self._query_table(self._queries_frame.filter(pl.col("query_id") == qid), one=qid)
        row = self._query_rows(table)[qid]
        self.rows[qid] = row
        kind = row.kind
        position = self._position
        members = self._members

        def place(name: str, member: bool) -> list[str]:
            ids = [q for q in members[name] if q != qid]
            if member:
                at = next((i for i, q in enumerate(ids) if position[q] > position[qid]), len(ids))
                ids.insert(at, qid)
            members[name] = ids
            return ids

        self.hit_to_miss = place("hit_to_miss", kind == "hit_to_miss")
        self.miss_to_hit = place("miss_to_hit", kind == "miss_to_hit")
        place("both_miss", kind == "both_miss")
        place("unanswerable", row.unanswerable)
        place("unjudged", row.unjudged_a > 0 or row.unjudged_b > 0)
        flipped = set(self.hit_to_miss) | set(self.miss_to_hit)
        self._flips_order = (self.hit_to_miss + self.miss_to_hit
                             + [q for q in self._query_order if q not in flipped])
        self._visible_cache.clear()
        self.header = self._header()

    @property
    def k(self) -> int:
        return self.settings.k

    @property
    def depth(self) -> int:
        return self.settings.depth

    def filter_counts(self) -> dict[str, int]:
        return {key: len(self._members[key]) for key, _ in FILTERS}

    def visible(self, filter_key: str = "all", sort_key: str = "flips", search: str = "") -> list[str]:
        """Query ids to list, in order: the filter, then the sort, then the search over id and text."""
        key = (filter_key, sort_key, search)
        cached = self._visible_cache.get(key)
        if cached is not None:
            return cached
        members = set(self._members[filter_key])
        if sort_key == "flips":
            order = [q for q in self._flips_order if q in members]
        else:
            attr = "delta_rr" if sort_key == "delta_rr" else "delta_ndcg"

            def by_delta(q: str):
                value = getattr(self.rows[q], attr)
                # the largest losses first, then gains; queries with no value last, in gold order
                return (value is None, value if value is not None else 0.0, self.rows[q].position)

            order = sorted(members, key=by_delta)
        if search:
            needle = search.casefold()
            order = [q for q in order if needle in q.casefold() or needle in self.rows[q].text.casefold()]
        self._visible_cache[key] = order
        if len(self._visible_cache) > 32:
            self._visible_cache.popitem(last=False)
        return order

    # ---- one query ----------------------------------------------------------------------------------------

    def ranked(self, query_id: str, side: str) -> list[RankedRow]:
        """Every row run `side` returned for the query (all ranks), read once and kept in a small cache."""
        key = (query_id, side)
        cached = self._row_cache.get(key)
        if cached is not None:
            self._row_cache.move_to_end(key)
            return cached
        start, n = self._index[side].get(query_id, (0, 0))
        part = self._frames[side].slice(start, n)
        rows = [
            RankedRow(rank=r, chunk_id=c, score=s, level=lv, grade=g, relevant=rel, other_rank=o)
            for r, c, s, lv, g, rel, o in part.select(
                "rank", "chunk_id", "score", "level", "grade", "relevant", "other_rank").iter_rows()
        ]
        self._row_cache[key] = rows
        if len(self._row_cache) > self._row_cache_size:
            self._row_cache.popitem(last=False)
        return rows

    def rows_for(self, query_id: str, side: str) -> list[RankedRow]:
        rows = self.ranked(query_id, side)
        depth = self.settings.depth
        return rows if not rows or rows[-1].rank <= depth else [r for r in rows if r.rank <= depth]

    def missed_gold(self, query_id: str, side: str) -> list[MissedGold]:
        """Relevant chunks not in this run's top k, with where the run put them (or None: not retrieved)."""
        relevant = self._label_index.get(query_id)
        if relevant is None:
            return []
        rows = self.ranked(query_id, side)
        rank_of = {r.chunk_id: r.rank for r in rows}
        k = self.settings.k
        out = []
        for chunk, grade, level in relevant:
            rank = rank_of.get(chunk)
            if rank is None or rank > k:
                out.append(MissedGold(chunk, level, grade, rank))
        return out

    def label_of(self, query_id: str, chunk_id: str) -> tuple[str | None, int | None]:
        return self._label_of.get((query_id, chunk_id), (None, None))

    def rank_in(self, query_id: str, side: str, chunk_id: str) -> int | None:
        for row in self.ranked(query_id, side):
            if row.chunk_id == chunk_id:
                return row.rank
        return None

    def found_by(self, query_id: str, side: str, chunk_id: str) -> tuple[int, int, str] | None:
        """For an agent run (several searches per query): (search number, searches, its query) of the first
        search that returned the chunk; None for an ordinary run or a chunk it did not return."""
        run = self.run_a if side == "a" else self.run_b
        searches = run.searches.get(query_id)
        if not searches:
            return None
        for number, (query, chunks) in enumerate(searches, start=1):
            if chunk_id in chunks:
                return number, len(searches), query
        return None

    def which_k(self) -> tuple[list[float], list[float]]:
        """recall@j for j = 1 … depth for A and B (the which-k plot); k-independent, so once per gold set."""
        if self._curves is None:
            self._curves = tuple(recall_curve(p, self.settings, self.settings.depth) for p in self._prepared)
        return self._curves

    def query_text(self, query_id: str) -> str:
        return self._query_text.get(query_id, "")

    # ---- header -------------------------------------------------------------------------------------------

    def _header(self) -> Header:
        scored = len(self.eval_a.queries.scored)
        # "by hand" follows from the count alone: the header knows it before the p-values arrive
        verdicts, by_hand = self._verdicts.get(self._verdict_key(), ({}, scored < MIN_QUERIES_FOR_VERDICT))
        lines = []
        for metric in self.metrics:
            a = self.eval_a.means.get(metric.name, math.nan)
            b = self.eval_b.means.get(metric.name, math.nan)
            delta = b - a if not (math.isnan(a) or math.isnan(b)) else math.nan
            exact = metric.spec.counts_queries
            if exact and metric.k == self.settings.k:
                worth = float(len(self.miss_to_hit) - len(self.hit_to_miss))
            else:
                worth = delta * scored if not math.isnan(delta) else math.nan
            p_value, verdict = verdicts.get(metric.name, (None, None))
            lines.append(MetricLine(metric.name, metric.label, a, b, delta, worth, exact,
                                    percent=metric.spec.percent, p_value=p_value, verdict=verdict))
        notes = []
        for run, ev in ((self.run_a, self.eval_a), (self.run_b, self.eval_b)):
            if ev.queries.missing_from_run:
                notes.append(f"{run.name} lacks {len(ev.queries.missing_from_run)} gold queries (scored 0)")
            if ev.queries.not_in_gold:
                notes.append(f"{run.name} has {len(ev.queries.not_in_gold)} queries not in the gold set (left out)")
        return Header(
            name_a=self.run_a.path.name, name_b=self.run_b.path.name, gold_name=self.gold.path.name,
            queries=len(self._query_order), scored=scored, unanswerable=len(self.eval_a.queries.unanswerable),
            k=self.settings.k, depth=self.settings.depth, metrics=lines, notes=notes,
            verdicts_ready=self._verdict_key() in self._verdicts, by_hand=by_hand,
        )

    # ---- verdicts (p-values) ------------------------------------------------------------------------------

    def _verdict_key(self) -> tuple[int, int]:
        return (self.settings.k, self._generation)

    def verdict_job(self):
        """(key, function, args) to run off the UI thread (or in another process: the args pickle small);
        hand `function(*args)` to `apply_verdicts(key, result)`."""
        return self._verdict_key(), compute_verdicts, (without_lists(self.eval_a), without_lists(self.eval_b))

    def has_verdicts(self, key: tuple[int, int]) -> bool:
        return key in self._verdicts

    def apply_verdicts(self, key: tuple[int, int], result) -> bool:
        """Store a verdict result; True when it is for what is on screen now (the header was rebuilt)."""
        self._verdicts[key] = result
        if key == self._verdict_key():
            self.header = self._header()
            return True
        return False

    def compute_verdicts(self) -> None:
        key, function, args = self.verdict_job()
        self.apply_verdicts(key, function(*args))


def compute_verdicts(ev_a: RunEval, ev_b: RunEval) -> tuple[dict[str, tuple[float | None, str]], bool]:
    """Per metric (p-value, verdict words) from `ragdiff.core.diff.compare`, and whether it is "by hand".

    Slow on big inputs (a seeded sign-flip test per metric): the app runs it in a worker after the header's
    plain numbers are on screen.
    """
    # the header needs only the per-metric tests: hand compare() runs without their ranked lists, so it does
    # not spend seconds (holding the GIL) on the list-overlap statistics the screen does not show
    # nor the smallest detectable change per metric (1,000 resamples each), which the header does not show
    result = compare(without_lists(ev_a), without_lists(ev_b), detectable=False)
    out = {}
    for m in result.metrics:
        p_value = m.p_value if m.p_value == m.p_value else None
        out[m.name] = (p_value, m.short_verdict)
    return out, bool(result.by_hand)


def without_lists(ev: RunEval) -> RunEval:
    """The evaluation without its run's ranked rows (nor the prepared run, which holds them): all compare() needs
    for the tests, and cheap to pickle."""
    run = replace(ev.run, frame=ev.run.frame.clear())
    return replace(ev, run=run, prepared=None)


def quiet_process() -> None:
    """Initializer of the p-value process: it shares the terminal the app draws on, so it must print nothing."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")
