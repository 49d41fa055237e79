"""The review screen's view-model: everything the widgets show, computed from the core, no Textual.

Built once per gold set (the ranked rows of both runs with their labels and their rank in the other run),
and once per k (per-query hit/miss, reciprocal rank and nDCG, filters and their counts, header numbers:
`ragdiff.app.views`, `ragdiff.app.header_numbers`). A keypress only reads from these tables: moving to the
next query slices one query out of a frame that is sorted and indexed by query, and keeps the last few
queries' rows in a small cache.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

import polars as pl

from ragdiff.app.header_numbers import Header, compute_verdicts, header_of, without_lists
from ragdiff.app.query_labels import QueryLabels
from ragdiff.app.views import Basis, KView, unjudged_rows_of, unjudged_tables, view_at
from ragdiff.core.labels.gold import Gold
from ragdiff.core.labels.store import Judgments, stretches
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import PreparedRun, aligned_frame, judged_pairs, prepare
from ragdiff.core.metrics.scoring import recall_curve
from ragdiff.core.metrics.specs import EvalSettings, default_metrics
from ragdiff.core.metrics.by_k import ByK, Ranked
from ragdiff.core.io.runs import Run

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


class ReviewModel:
    """Two runs against one gold set at one k. Call `set_k` to change k; the labels are the judgment store's,
    and a change there (`store.apply`, or `apply_change`) rescores the queries it touches (`relabel`).

    Loading does only what the first screen needs: both runs prepared and scored at k, and an index of each
    run's (and the labels') rows by query. A query's ranked rows, with their labels and their rank in the other
    run, are put together when the query is shown (`ranked`), from its ~100-1,000 rows: joining whole runs for
    them cost 0.6 s of the first screen at 10,000 queries. Another k is a `KView`, which `view_job` lets a
    worker build ahead of the key.
    """

    def __init__(self, run_a: Run, run_b: Run, gold: Gold, settings: EvalSettings, row_cache: int = 64,
                 unjudged_later: bool = False, store: Judgments | None = None):
        """`unjudged_later`: leave the unjudged rows to `unjudged_job` (the app runs it after the first screen).
        `store`: the judgment store made from `gold` (one of its own when None), which the model listens to."""
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
        self.set_gold(gold, store)

    @property
    def gold(self) -> Gold:
        """The gold set as the store has it now (its frames derived from the store: `Judgments.gold`)."""
        return self.store.gold()

    # ---- per gold set -------------------------------------------------------------------------------------

    def set_gold(self, gold: Gold, store: Judgments | None = None) -> None:
        """Build the label-dependent tables (once, after loading), then compute at k. A change in the store
        afterwards (`apply_change`) rescores the one query it touches."""
        self.store = store if store is not None else Judgments.of_gold(gold)
        store = self.store  # a store of an earlier set_gold tells this model nothing more
        store.listen(lambda changed: self.relabel(changed) if store is self.store else None)
        self._gold_name = gold.path.name
        self._generation += 1
        settings = self.settings
        self._frames = {}
        self._index = {}
        for side, run in (("a", self.run_a), ("b", self.run_b)):
            frame = aligned_frame(run, gold).select("query_id", "chunk_id", "score", "rank")
            self._frames[side], self._index[side] = stretches(frame, ["rank"])
        self._labels = QueryLabels(self.store, gold, settings.level, settings.threshold)
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
        return self._generation, unjudged_tables, (self._frames, self.store.gold().judgments, self.settings.depth,
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

    def relevant(self, query_id: str) -> list[tuple[str, int, str]]:
        """The query's relevant chunks, best first: (chunk, grade, level)."""
        return self._labels.of(query_id)[1]

    # ---- one judgment changed -----------------------------------------------------------------------------

    def apply_change(self, change) -> None:
        """A mark's `ragdiff.core.labels.Change` into the store, which tells the model (`relabel`)."""
        self._ensure_unjudged()
        self.store.apply([change])

    def relabel(self, changed: list) -> None:
        """The store's listener: each query whose judgments changed is relabelled (its labels, its unjudged
        rows, its judged rows in the prepared runs) from the store; then the numbers at k are scored again from
        the prepared runs, as a k change does. Nothing is read from disk."""
        queries = list(dict.fromkeys(c.query_id for c in changed if c.before != c.after))
        if not queries:
            return
        self._ensure_unjudged()  # a mark before the worker found them: found now, from the labels before it
        for qid in queries:
            self._relabel_one(qid)
        self._rescore()

    def _relabel_one(self, qid: str) -> None:
        # that query alone, as a gold set of one query: the same rules (qrels, prepare) as the whole set
        one, labels = self._labels.frame(qid)
        self._labels.forget(qid, labels)
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
        if all(new.scored is old.scored for new, old in zip(self._prepared, self._basis.prepared)):
            self._basis = replace(self._basis, generation=self._generation, prepared=self._prepared, by_k=by_k,
                                  unjudged=tuple(unjudged))
        else:
            self._new_basis(by_k, tuple(unjudged))

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

    def _rescore(self) -> None:
        """After queries' labels changed: the numbers at k again, from the new generation's basis (every
        query's row, kind and memberships, as a k change does: lookups, so no cheaper for one query)."""
        self._views.clear()
        self._curves = None
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
        labels = self._labels.of(query_id)[0]
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
        relevant = self._labels.of(query_id)[1]
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
        """As the chunk pane names it: the judgment, or a model's draft ("drafted ☆2", never scored)."""
        return self.store.label_of(query_id, chunk_id)

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
        return header_of((self.run_a, self.run_b), (self.eval_a, self.eval_b), self._gold_name,
                         len(self._query_order), self.settings, self.metrics, (self.hit_to_miss, self.miss_to_hit),
                         self._verdicts.get(self._verdict_key()))

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
