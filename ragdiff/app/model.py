"""The review screen's view-model: everything the widgets show, computed from the core, no Textual.

Built once per gold set (the ranked rows of both runs with their labels and their rank in the other run),
and once per k (per-query hit/miss, reciprocal rank and nDCG, filters and their counts, header numbers).
A keypress only reads from these tables: moving to the next query slices one query out of a frame that is
sorted and indexed by query, and keeps the last few queries' rows in a small cache.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from ragdiff.core.diff import MIN_QUERIES_FOR_VERDICT, compare
from ragdiff.core import diff as core_diff
from ragdiff.core.gold import Gold
from ragdiff.core import vocab
from ragdiff.core.metrics import (EvalSettings, Metric, PreparedRun, RunEval, aligned_frame, default_metrics,
                                  judged_pairs,
                                  prepare, recall_curve, rows_without)
from ragdiff.core.metrics_by_k import ByK, Ranked
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


class QueryRows(Mapping):
    """query id -> `QueryRow` at one k, each made when first read from the view's per-query arrays: the screen
    reads the ~40 rows on screen, and 10,000 of them made at every k cost ~16 ms of CPU (their columns as
    Python lists ~1.5 ms more)."""

    def __init__(self, basis: "Basis", sides: tuple["SideAtK", "SideAtK"]):
        self._basis = basis
        self._sides = sides
        self._made: dict[str, QueryRow] = {}

    def __getitem__(self, query_id: str) -> QueryRow:
        row = self._made.get(query_id)
        if row is None:
            basis = self._basis
            i = basis.at[query_id]
            a, b = self._sides
            row = self._made[query_id] = QueryRow(
                query_id, basis.texts[i], basis.positions[i], bool(basis.unanswerable[i]),
                a.value(a.hit, i, bool), b.value(b.hit, i, bool), a.value(a.rr, i, float), b.value(b.rr, i, float),
                a.value(a.ndcg, i, float), b.value(b.ndcg, i, float), int(a.unjudged[i]), int(b.unjudged[i]),
                query_id in basis.present[0], query_id in basis.present[1])
        return row

    def __iter__(self):
        return iter(self._basis.at)

    def __len__(self) -> int:
        return len(self._basis.at)


@dataclass(frozen=True, repr=False)
class SideAtK:
    """One run's per-query numbers at one k, by query in the basis' order (`scored`: the run's evaluation
    scored the query; the other arrays mean nothing where it did not)."""

    scored: np.ndarray  # bool
    hit: np.ndarray  # bool: recall@k > 0
    rr: np.ndarray  # float64: reciprocal rank
    ndcg: np.ndarray  # float64: nDCG@k
    unjudged: np.ndarray  # int64: unjudged chunks in the top k (0 for a query no score counts)

    def value(self, column: np.ndarray, i: int, kind):
        """Query i's value as a Python bool/float, None where the query is not scored."""
        return kind(column[i]) if self.scored[i] else None


@dataclass(frozen=True, repr=False)
class Basis:
    """What the per-k numbers are computed from, for one generation of labels. `view_at(basis, k)` reads
    nothing else, so a worker thread can build another k's view while the screen goes on."""

    def __repr__(self) -> str:
        # short: Textual's @work describes a worker by the repr of its arguments, and printing these tables
        # (million-element arrays) cost ~10 ms of every `+` whose k the worker had scored ahead
        return f"Basis(generation={self.generation}, queries={len(self.order)})"

    generation: int
    settings: EvalSettings  # at any k: view_at sets it
    prepared: tuple[PreparedRun, PreparedRun]
    by_k: tuple[ByK, ByK]  # the prepared runs scored at every k at once (each k a lookup)
    unjudged: tuple[Ranked, Ranked] | None  # per run, its unjudged rows down to depth, by query in `order`
    # (None until the worker has found them: unjudged@k has no count yet)
    queries: pl.DataFrame  # query_id, text, position: every gold query in gold order
    order: list[str]  # the same ids
    at: dict[str, int]  # query id -> its position in `order`
    present: tuple[dict, dict]  # query ids run A / run B returned something for
    slots: tuple[np.ndarray, np.ndarray]  # per run, where each of its scored queries (per_query's order) is in `order`
    unanswerable: np.ndarray  # per query in `order`: unanswerable and not scored (its own filter, no marks)
    # the same at every k, made once per basis: what view_at made again at each k
    texts: list[str]  # per query in `order`: its text
    positions: list[int]  # its position in the gold set
    ids: np.ndarray  # `order` as an object array (the filters' members are masks of it)
    scored: tuple[np.ndarray, np.ndarray]  # per run, per query in `order`: scored by the run's evaluation
    unanswerable_ids: list[str]
    both_scored: np.ndarray  # the queries both runs scored, as places in `order`, in run A's per-query order

    @classmethod
    def build(cls, generation: int, settings: EvalSettings, prepared: tuple[PreparedRun, PreparedRun],
              by_k: tuple[ByK, ByK], unjudged: tuple[Ranked, Ranked] | None, queries: pl.DataFrame, order: list[str],
              at: dict[str, int], present: tuple[dict, dict]) -> "Basis":
        slots = tuple(np.fromiter((at[q] for q in b.queries.to_list()), dtype=np.int64, count=len(b.queries))
                      for b in by_k)
        scored = np.zeros(len(order), dtype=bool)
        scored[slots[0]] = True
        unanswerable = np.zeros(len(order), dtype=bool)
        unanswerable[[at[q] for q in prepared[0].queries.unanswerable if q in at]] = True
        unanswerable &= ~scored
        by_run = []
        for run_slots in slots:
            mask = np.zeros(len(order), dtype=bool)
            mask[run_slots] = True
            by_run.append(mask)
        ids = np.array(order, dtype=object)
        return cls(generation, settings, prepared, by_k, unjudged, queries, order, at, present, slots,
                   unanswerable, queries.get_column("text").to_list(), queries.get_column("position").to_list(),
                   ids, tuple(by_run), ids[unanswerable].tolist(), slots[0][by_run[1][slots[0]]])


@dataclass
class KView:
    """Everything the screen shows that depends on k (one generation of labels)."""

    k: int
    generation: int
    eval_a: RunEval
    eval_b: RunEval
    rows: QueryRows
    hit_to_miss: list[str]
    miss_to_hit: list[str]
    members: dict[str, list[str] | None]  # filter key -> query ids in gold order (flips: core order); None: not known yet
    flips_order: list[str]
    counted_unjudged: bool = True  # built from a basis with the unjudged rows (else members["unjudged"] is None)


def view_at(basis: Basis, k: int) -> KView:
    """Both runs' numbers at k (lookups in the runs' `ByK`), and every query classified (the work of a k
    change): per query in gold order, hit, reciprocal rank and nDCG at k in A and B (None where not scored),
    unjudged chunks in each top k, whether unanswerable, and the filters' members."""
    settings = replace(basis.settings, k=k)
    metrics = default_metrics(k, settings.depth, "header")
    eval_a, eval_b = (by_k.score(settings, metrics) for by_k in basis.by_k)
    n = len(basis.order)
    counted = basis.unjudged is not None
    sides, recalls = [], []
    for i, (ev, slots) in enumerate(((eval_a, basis.slots[0]), (eval_b, basis.slots[1]))):
        values = ev.per_query
        columns = []
        for name in (f"recall@{k}", "mrr", f"ndcg@{k}"):
            column = np.zeros(n, dtype=np.float64)
            column[slots] = values.get_column(name).to_numpy()
            columns.append(column)
        # unjudged@k counts the scored queries' unjudged chunks, as judged@k, the bounds and diff's unjudged
        # check do (metrics.unjudged_in): an unanswerable query is in no score, and has its own filter
        unjudged = (np.where(basis.scored[0], basis.unjudged[i].upto(k), 0) if counted
                    else np.zeros(n, dtype=np.int64))
        sides.append(SideAtK(basis.scored[i], columns[0] > 0, columns[1], columns[2], unjudged))
        recalls.append(columns[0])
    a, b = sides
    ids = basis.ids
    # the core's flips (core_diff.flips_of: recall@k > 0 in one run and 0 in the other, over the queries both
    # scored, in A's order) of the same recall columns
    both = basis.both_scored
    hit_to_miss, miss_to_hit = core_diff.flips_of(ids[both], recalls[0][both], recalls[1][both])
    flipped = np.zeros(n, dtype=bool)
    flipped[[basis.at[q] for q in hit_to_miss]] = True
    flipped[[basis.at[q] for q in miss_to_hit]] = True
    members = {
        "all": basis.order,
        "hit_to_miss": hit_to_miss,
        "miss_to_hit": miss_to_hit,
        "both_miss": ids[~basis.unanswerable & ~a.hit & ~b.hit].tolist(),  # hit is False where not scored
        "unanswerable": basis.unanswerable_ids,
        "unjudged": ids[(a.unjudged > 0) | (b.unjudged > 0)].tolist() if counted else None,
    }
    return KView(k, basis.generation, eval_a, eval_b, QueryRows(basis, (a, b)), hit_to_miss, miss_to_hit, members,
                 hit_to_miss + miss_to_hit + ids[~flipped].tolist(), counted)


def unjudged_rows_of(frame: pl.DataFrame, judged: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, rank of `frame`'s rows down to depth with no judgment (grade >= 0) in `judged`, in their order:
    the core's rule (metrics.rows_without)."""
    return rows_without(frame, judged, depth).select("query_id", "rank")


def unjudged_tables(frames: dict[str, pl.DataFrame], judged: pl.DataFrame, depth: int, at: dict[str, int],
                    queries: int) -> tuple[Ranked, Ranked]:
    """Both runs' unjudged rows down to depth, by query in the order of `at` (what `view_at` counts unjudged@k
    from; a mark replaces one query's stretch, `Ranked.replaced`)."""
    return tuple(Ranked.of_stretches(unjudged_rows_of(frames[side], judged, depth), "rank", at, queries)
                 for side in ("a", "b"))


def _stretches(frame: pl.DataFrame, order: list[str]) -> tuple[pl.DataFrame, dict[str, tuple[int, int]]]:
    """`frame` with each query's rows in one stretch (sorted by `order` within it), and query -> (first row,
    rows). A run's frame is one stretch per query already: its index is a run-length count, no sort."""
    column = frame.get_column("query_id")
    runs = column.rle()
    values, lengths = runs.struct.field("value").to_list(), runs.struct.field("len").to_list()
    if len(set(values)) != len(values):  # a query in two stretches (a run keyed by both a query's id and text)
        frame = frame.sort(["query_id", *order], maintain_order=True)
        runs = frame.get_column("query_id").rle()
        values, lengths = runs.struct.field("value").to_list(), runs.struct.field("len").to_list()
    index, start = {}, 0
    for value, n in zip(values, lengths):
        index[value] = (start, n)
        start += n
    return frame, index


class ReviewModel:
    """Two runs against one gold set at one k. Call `set_k` to change k, `apply_change` after a mark.

    Loading does only what the first screen needs: both runs prepared and scored at k, and an index of each
    run's (and the labels') rows by query. A query's ranked rows, with their labels and their rank in the other
    run, are put together when the query is shown (`ranked`), from its ~100-1,000 rows: joining whole runs for
    them cost 0.6 s of the first screen at 10,000 queries. Another k is a `KView`, which `view_job` lets a
    worker build ahead of the key.
    """

    def __init__(self, run_a: Run, run_b: Run, gold: Gold, settings: EvalSettings, row_cache: int = 64,
                 unjudged_later: bool = False):
        """`unjudged_later`: leave the unjudged rows to `unjudged_job` (the app runs it after the first screen)."""
        self.unjudged_later = unjudged_later
        self.run_a = run_a
        self.run_b = run_b
        self.settings = settings
        self._row_cache: OrderedDict[tuple[str, str], list[RankedRow]] = OrderedDict()
        self._row_cache_size = row_cache
        self._visible_cache: OrderedDict[tuple, list[str]] = OrderedDict()
        self._verdicts: dict[tuple[int, int], tuple[dict, bool]] = {}
        self._views: OrderedDict[tuple[int, int], KView] = OrderedDict()  # (k, generation) -> its view
        self._generation = 0  # bumped on every set_gold and mark: numbers of older labels are not shown
        self.set_gold(gold)

    # ---- per gold set -------------------------------------------------------------------------------------

    def set_gold(self, gold: Gold) -> None:
        """Build the label-dependent tables (once, after loading), then compute at k. After a mark use
        `apply_change`, which updates the one judgment instead."""
        self.gold = gold
        self._generation += 1
        settings = self.settings
        labels = self._labels(gold)
        self._frames = {}
        self._index = {}
        for side, run in (("a", self.run_a), ("b", self.run_b)):
            frame = aligned_frame(run, gold).select("query_id", "chunk_id", "score", "rank")
            self._frames[side], self._index[side] = _stretches(frame, ["rank"])
        # each query's labels, read from its stretch of this frame when the query is first shown; a query
        # marked since keeps the dicts the marks updated (they are never dropped)
        self._labels_frame, self._labels_index = _stretches(labels, [])
        self._drafts_frame, self._drafts_index = _stretches(gold.drafts.select("query_id", "chunk_id", "grade"), [])
        self._row_labels: dict[str, tuple[dict, list]] = {}
        self._shown_labels: dict[str, dict[str, tuple[str | None, int | None]]] = {}
        queries = gold.queries.sort("position")
        self._query_text = {
            q: (t if t is not None else (self.run_a.query_text.get(q) or self.run_b.query_text.get(q) or ""))
            for q, t in zip(queries.get_column("query_id").to_list(), queries.get_column("text").to_list())
        }
        self._query_order = list(self._query_text)
        self._position = {q: i for i, q in enumerate(self._query_order)}
        self._queries_frame = pl.DataFrame(
            {"query_id": self._query_order, "text": [self._query_text[q] for q in self._query_order],
             "position": list(range(len(self._query_order)))},
            schema={"query_id": pl.String, "text": pl.String, "position": pl.Int64})
        # the k-independent half of each run, without the unjudged rows `prepare` keeps for the upper bounds,
        # which the screen does not show (an anti-join over every row down to depth: ~90 ms at 10,000 queries),
        # and its scores at every k
        self._prepared = tuple(prepare(run, gold, settings, unjudged_depth=0) for run in (self.run_a, self.run_b))
        by_k = tuple(ByK(prepared, settings) for prepared in self._prepared)
        # the screen's own unjudged rows (unjudged@k) come after the first screen: `unjudged_job`
        self._judged_labels = judged_pairs(labels)
        self._curves = None
        self._row_cache.clear()
        self._views.clear()
        self._new_basis(by_k, None)
        if not self.unjudged_later:
            self._ensure_unjudged()
        self.set_k(self.settings.k)

    def _new_basis(self, by_k: tuple[ByK, ByK], unjudged: tuple[Ranked, Ranked] | None) -> None:
        self._basis = Basis.build(self._generation, self.settings, self._prepared, by_k, unjudged,
                                  self._queries_frame, self._query_order, self._position,
                                  (self._index["a"], self._index["b"]))

    # ---- the unjudged rows, after the first screen -------------------------------------------------------

    def unjudged_job(self):
        """(generation, function, args) that find both runs' unjudged rows (down to depth) off the UI thread;
        hand the result to `apply_unjudged`. None when they are there. Until then unjudged@k has no count."""
        if self._basis.unjudged is not None:
            return None
        return self._generation, unjudged_tables, (self._frames, self._judged_labels, self.settings.depth,
                                                   self._position, len(self._query_order))

    def apply_unjudged(self, generation: int, result) -> bool:
        """Take `unjudged_job`'s result; True when it is for these labels (the view at k now counts them)."""
        if generation != self._generation or self._basis.unjudged is not None:
            return False  # a mark came since: it found them itself, with its labels
        self._basis = replace(self._basis, unjudged=tuple(result))
        self._views.clear()  # each counted nothing unjudged
        view = view_at(self._basis, self.settings.k)
        self.store_view(view)
        self._use(view)
        return True

    def _ensure_unjudged(self) -> None:
        job = self.unjudged_job()
        if job is not None:
            generation, function, args = job
            self.apply_unjudged(generation, function(*args))

    def _labels(self, gold: Gold) -> pl.DataFrame:
        """query_id, chunk_id, grade, level (as labelled) and effective (the grade scored at the level)."""
        # gold.qrels is the judgments' own rows, a grade each at the level (one expression over the frame):
        # its column is taken beside them, where a join on (query, chunk) cost ~20 ms of each load at 10,000
        # queries (tests/test_app_model.py holds the rows aligned)
        effective = gold.qrels(self.settings.level).get_column("grade").alias("effective")
        return gold.judgments.select("query_id", "chunk_id", "grade", "level").with_columns(effective)

    def _query_labels(self, query_id: str) -> tuple[dict, list]:
        """(chunk -> (level, grade, relevant), the relevant chunks best first as (chunk, grade, level)) of one
        query: what its ranked rows and its "missed gold" show."""
        found = self._row_labels.get(query_id)
        if found is None:
            start, n = self._labels_index.get(query_id, (0, 0))
            found = self._row_labels[query_id] = self._labels_of(self._labels_frame.slice(start, n))
        return found

    def _labels_of(self, labels: pl.DataFrame) -> tuple[dict, list]:
        threshold = self.settings.threshold
        by_chunk, relevant = {}, []
        for chunk, grade, level, effective in labels.select("chunk_id", "grade", "level", "effective").iter_rows():
            counts = effective is not None and effective >= threshold
            by_chunk[chunk] = (level, grade, counts)
            if counts:
                relevant.append((-effective, chunk, grade, level))
        relevant.sort(key=lambda r: (r[0], r[1]))
        return by_chunk, [(chunk, grade, level) for _, chunk, grade, level in relevant]

    def _shown(self, query_id: str) -> dict[str, tuple[str | None, int | None]]:
        """chunk -> (level, grade) as the chunk pane names it: the judgments, and a model's drafts ("drafted
        ☆2", never scored) where nobody judged the chunk."""
        shown = self._shown_labels.get(query_id)
        if shown is None:
            by_chunk = self._query_labels(query_id)[0]
            shown = {chunk: (level, grade) for chunk, (level, grade, _) in by_chunk.items()}
            start, n = self._drafts_index.get(query_id, (0, 0))
            for chunk, grade in self._drafts_frame.slice(start, n).select("chunk_id", "grade").iter_rows():
                shown.setdefault(chunk, (vocab.DRAFTED, grade))
            self._shown_labels[query_id] = shown
        return shown

    def relevant(self, query_id: str) -> list[tuple[str, int, str]]:
        """The query's relevant chunks, best first: (chunk, grade, level)."""
        return self._query_labels(query_id)[1]

    # ---- one judgment changed -----------------------------------------------------------------------------

    def _drafts_after(self, change) -> pl.DataFrame:
        """The gold set's drafts after a Change, as the label file has them: a decided draft leaves `drafted:`,
        an undo back to a draft brings it back (the judging queue built from this gold set reads them)."""
        drafts = self.gold.drafts
        pair = (pl.col("query_id") == change.query_id) & (pl.col("chunk_id") == change.chunk_id)
        if drafts.height:
            drafts = drafts.filter(~pair)
        if change.after.kind == vocab.DRAFTED:
            row = pl.DataFrame({"query_id": [change.query_id], "chunk_id": [change.chunk_id],
                                "grade": [change.after.grade]}).cast({c: drafts.schema[c] for c in
                                                                      ("query_id", "chunk_id", "grade")})
            drafts = pl.concat([drafts, row], how="diagonal_relaxed").select(drafts.columns)
        return drafts

    def apply_change(self, change) -> None:
        """A mark's `ragdiff.core.labels.Change`: that one (query, chunk) judgment is now `change.after`.

        Only that query is relabelled (its labels, its unjudged rows, its judged rows in the prepared runs);
        then the numbers at k are scored again from the prepared runs, as a k change does. Nothing is read
        from disk.
        """
        self._ensure_unjudged()  # a mark before the worker found them: found now, from the labels before it
        qid, chunk = change.query_id, change.chunk_id
        after = change.after
        judgments = self.gold.judgments
        shown = self._shown(qid)  # made from the labels before this change, then changed as they are
        keep = ~((pl.col("query_id") == qid) & (pl.col("chunk_id") == chunk))
        mine = judgments.filter(pl.col("query_id") == qid).filter(keep)
        if after.kind in (vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT):
            row = pl.DataFrame({"query_id": [qid], "chunk_id": [chunk], "grade": [after.grade],
                                "level": [after.kind]}, schema={c: judgments.schema[c] for c in
                                                                 ("query_id", "chunk_id", "grade", "level")})
            mine = pl.concat([mine, row], how="diagonal_relaxed").select(judgments.columns)
            shown[chunk] = (after.kind, after.grade)
        elif after.kind == vocab.DRAFTED:  # an undo back to the model's proposal: shown, not scored
            shown[chunk] = (after.kind, after.grade)
        else:  # unjudged (an undo back to nothing)
            shown.pop(chunk, None)
        self.gold = replace(self.gold, judgments=pl.concat([judgments.filter(pl.col("query_id") != qid), mine],
                                                           how="diagonal_relaxed"), drafts=self._drafts_after(change))
        # that query alone, as a gold set of one query: the same rules (qrels, prepare) as the whole set
        one = replace(self.gold, queries=self.gold.queries.filter(pl.col("query_id") == qid), judgments=mine)
        labels = self._labels(one)
        self._row_labels[qid] = self._labels_of(labels)
        judged = judged_pairs(labels)
        unjudged = list(self._basis.unjudged)
        position = self._position[qid]
        for i, side in enumerate("ab"):
            start, n = self._index[side].get(qid, (0, 0))
            if n:  # that query's stretch of the run's unjudged rows found again (`unjudged_tables`' rule)
                part = unjudged_rows_of(self._frames[side].slice(start, n), judged, self.settings.depth)
                unjudged[i] = unjudged[i].replaced(position, part.get_column("rank").to_numpy())
            self._row_cache.pop((qid, side), None)
        prepared = [self._prepare_one(prepared, one, qid) for prepared in self._prepared]
        self._prepared = tuple(whole for whole, _ in prepared)
        # each run's scores at every k: that query's stretch replaced (the whole built again only when the
        # scored queries changed: a query's first or last relevant chunk)
        by_k = tuple(old.with_query(whole, part) or ByK(whole, self.settings)
                     for old, (whole, part) in zip(self._basis.by_k, prepared))
        self._generation += 1
        self._views.clear()
        self._curves = None
        if all(new.scored is old.scored for new, old in zip(self._prepared, self._basis.prepared)):
            self._basis = replace(self._basis, generation=self._generation, prepared=self._prepared, by_k=by_k,
                                  unjudged=tuple(unjudged))
        else:
            self._new_basis(by_k, tuple(unjudged))
        self._rescore_one(qid)

    def _prepare_one(self, prepared: PreparedRun, one: Gold, qid: str) -> tuple[PreparedRun, PreparedRun]:
        """`prepared` with query `qid` prepared again from the gold set of that one query, and that query's
        own prepared run."""
        side = "a" if prepared.run is self.run_a else "b"
        start, n = self._index[side].get(qid, (0, 0))
        rows = self._frames[side].slice(start, n).select("query_id", "chunk_id", "score", "rank")
        fresh = prepare(replace(prepared.run, frame=rows), one, self.settings, unjudged_depth=0)

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
                       judged=splice(prepared.judged, fresh.judged), qrels=splice(prepared.qrels, fresh.qrels)), fresh

    # ---- per k --------------------------------------------------------------------------------------------

    def set_k(self, k: int) -> None:
        k = max(1, int(k))
        view = self._views.get((k, self._generation))
        if view is None:
            view = view_at(self._basis, k)
            self.store_view(view)
        self._use(view)

    def _use(self, view: KView) -> None:
        self.settings = replace(self.settings, k=view.k)
        self.metrics = default_metrics(view.k, self.settings.depth, "header")
        self.view = view
        self.eval_a: RunEval = view.eval_a
        self.eval_b: RunEval = view.eval_b
        self.rows = view.rows
        self.hit_to_miss, self.miss_to_hit = view.hit_to_miss, view.miss_to_hit
        self._members = view.members
        self._flips_order = view.flips_order
        self._visible_cache.clear()
        self.header = self._header()

    def view_job(self, k: int):
        """(key, function, args) that build k's view off the UI thread; hand the result to `store_view`.
        None when k is out of range or its view is already there."""
        key = (k, self._generation)
        if not 1 <= k <= self.settings.depth or key in self._views:
            return None
        return key, view_at, (self._basis, k)

    def store_view(self, view: KView) -> bool:
        """Keep a view built by `view_job` (False, dropped, when the labels changed since it was asked for)."""
        if view.generation != self._generation or view.counted_unjudged != (self._basis.unjudged is not None):
            return False
        self._views[(view.k, view.generation)] = view
        if len(self._views) > 16:
            self._views.popitem(last=False)
        return True

    def _rescore_one(self, qid: str) -> None:
        """After one query's labels changed: the numbers at k again, from the new generation's basis (every
        query's row, kind and memberships, as a k change does: lookups, so no cheaper for one query)."""
        view = view_at(self._basis, self.settings.k)
        self.store_view(view)
        self._use(view)

    @property
    def k(self) -> int:
        return self.settings.k

    @property
    def depth(self) -> int:
        return self.settings.depth

    def filter_counts(self) -> dict[str, int | None]:
        """filter key -> how many queries it lists (None: not counted yet, unjudged@k before its worker)."""
        return {key: None if self._members[key] is None else len(self._members[key]) for key, _ in FILTERS}

    def visible(self, filter_key: str = "all", sort_key: str = "flips", search: str = "") -> list[str]:
        """Query ids to list, in order: the filter, then the sort, then the search over id and text."""
        key = (filter_key, sort_key, search)
        cached = self._visible_cache.get(key)
        if cached is not None:
            return cached
        if sort_key == "flips" and filter_key == "all":
            order = list(self._flips_order)  # every query: the flips first, then the gold order
        elif sort_key == "flips":
            members = set(self._members[filter_key] or ())
            order = [q for q in self._flips_order if q in members]
        else:
            members = set(self._members[filter_key] or ())
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
        """Every row run `side` returned for the query (all ranks), with its label and its rank in the other
        run: put together from the query's stretch of each run when first asked, kept in a small cache."""
        key = (query_id, side)
        cached = self._row_cache.get(key)
        if cached is not None:
            self._row_cache.move_to_end(key)
            return cached
        other = "b" if side == "a" else "a"
        start, n = self._index[side].get(query_id, (0, 0))
        part = self._frames[side].slice(start, n)
        start, n = self._index[other].get(query_id, (0, 0))
        theirs = self._frames[other].slice(start, n)
        other_rank = dict(zip(theirs.get_column("chunk_id").to_list(), theirs.get_column("rank").to_list()))
        labels = self._query_labels(query_id)[0]
        unjudged = (None, None, False)
        rows = [
            RankedRow(r, c, s, *labels.get(c, unjudged), other_rank.get(c))
            for r, c, s in zip(part.get_column("rank").to_list(), part.get_column("chunk_id").to_list(),
                               part.get_column("score").to_list())
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
        relevant = self._query_labels(query_id)[1]
        if not relevant:
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
        return self._shown(query_id).get(chunk_id, (None, None))

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
