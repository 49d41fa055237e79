"""The judging queue of `ragdiff judge` (DESIGN: "Judging the pool"), without Textual.

The lesson: label from the merged results of two different retrievers. The pool of a query is the union of
every run's top `depth` chunks, each with the rank it has in each run (at any depth). The queue walks the
gold queries in file order; within a query its unjudged chunks come first (best rank across the runs
first), then the judged ones, so they can be revisited. The order is fixed when the queue is built: a
decision never moves a chunk under the reader. Restarting builds it again from the label file, so the
first unjudged chunk is where work resumes and nothing is judged twice by accident.

A chunk found by searching the corpus (`search_corpus`) is added to its query's list; it is judged like
any other but is not part of the pool's `N/M` count. A flag asks for a second opinion: it is kept in a
JSONL file beside the label file (`flags_path`) and leaves the chunk unjudged.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.folding import find_spans
from ragdiff.core.labels.gold import Gold
from ragdiff.core.labels.journal import utc_now
from ragdiff.core.labels.marks import Judgment
from ragdiff.core.labels.store import Changed, Judgments
from ragdiff.core.metrics.prepared import aligned_frame
from ragdiff.core.io.runs import Run

if TYPE_CHECKING:
    from ragdiff.core.judge.pool_order import QueueOrder

FLAGS_SUFFIX = ".ragdiff-flags.jsonl"


@dataclass(frozen=True)
class Entry:
    chunk_id: str
    ranks: tuple[int | None, ...]  # its rank in each run (any depth); None: the run did not return it
    pooled: bool = True  # False: added from a corpus search (not counted in the pool's progress)


@dataclass(frozen=True)
class Position:
    query: int  # index into JudgeQueue.queries
    entry: int  # index into that query's entries


class JudgeQueue:
    """The queue keeps its order, position and progress; the labels and flags are the judgment store's
    (ragdiff.core.labels.store.Judgments), read-only here, which tells the queue of every change (`changed`:
    the progress counts follow). The entries are read through a read-only view (`entries`) and changed only
    through `add`; a decision in flight through `decide` and `apply`."""

    # the decision that leaves none of a query's pool undecided finishes the query (its `reviewed:` date)
    finishes_queries = True
    to_do = "pooled chunks to judge"  # what the queue holds, in the status line as it opens

    def __init__(self, queries: Iterable[str], texts: dict[str, str], entries: Mapping[str, Iterable[Entry]],
                 labels: Judgments | dict[tuple[str, str], tuple[str, int | None]], run_names: Iterable[str],
                 depth: int, flagged: Iterable[tuple[str, str]] = (), listen: bool = True) -> None:
        """`labels`: the store the queue reads (a dict: a store of its own, made from it). `listen`: the queue
        hears the store's changes from now on (False: its owner calls `changed` itself, e.g. with what changed
        while the queue was built on another thread). The texts dict is kept as given (copying it cost ~40 ms
        at 10,000 queries). A query's entries are kept as a tuple, made here once: `entries` hands out that
        tuple itself, no copy."""
        self.queries: tuple[str, ...] = tuple(queries)  # gold queries, in file order
        self.run_names: tuple[str, ...] = tuple(run_names)
        self.depth = depth
        self._texts = texts
        # per query, in queue order; `add` puts a longer tuple in its place
        self._entries: dict[str, tuple[Entry, ...]] = {
            q: e if isinstance(e, tuple) else tuple(e) for q, e in entries.items()}
        self.store = labels if isinstance(labels, Judgments) else Judgments(labels)
        for pair in flagged:
            self.store.flag(*pair)
        if listen:
            self.store.listen(self.changed)
        self._views = (MappingProxyType(self._texts), MappingProxyType(self._entries))
        # per query, the ids of its pooled chunks, made at its first change (`_counting`); `add` adds none
        self._pooled: dict[str, frozenset[str]] = {}
        # decisions sent to the writer whose Change has not come back: the queue moves past them at once
        self._in_flight: set[tuple[str, str]] = set()
        # the progress, kept as decisions come (never walked again): per query its pooled chunks and how many of
        # them are done (judged or in flight), and the sums over the pool; `build` counts them with polars, a
        # queue made otherwise walks its entries once, at the first read
        self._size: dict[str, int] | None = None
        self._done: dict[str, int] | None = None
        self._judged = 0  # pooled chunks done: judged, or decided and on their way
        self._durable = 0  # pooled chunks judged (their decision is durable): the header's `N judged`
        self._total = 0
        # the widest chunk id as the screen measures it (`widest_id`), kept with the queue from one opening to
        # the next
        self._cells: Callable[[str], int] | None = None
        self._widest: tuple[int, int] | None = None
        # queries a model drafted (`proposed: true`), which a person keeps or drops before judging their chunks,
        # and those dropped since the queue was built: out of its walk and its counts (`set_dropped`). A query
        # kept leaves `proposed` (the app's drafted-query step keeps it)
        self.proposed: set[str] = set()
        self._dropped: set[str] = set()
        # the order the queue is walked in when it is not its own (`use_order`), and the gold-left estimate
        self.walk: QueueOrder | None = None

    @property
    def texts(self) -> Mapping[str, str]:
        """query -> its text (read-only)."""
        return self._views[0]

    @property
    def entries(self) -> Mapping[str, tuple[Entry, ...]]:
        """query -> its chunks in queue order, a tuple (read-only, not a copy: the pool list reads it per row;
        `add` appends a chunk found in the corpus)."""
        return self._views[1]

    @property
    def labels(self) -> Judgments:
        """(query, chunk) -> (kind, grade) as labelled, drafts included: the store, read-only here."""
        return self.store

    @property
    def flagged(self) -> frozenset[tuple[str, str]]:
        """The (query, chunk) pairs flagged for a second opinion (a copy: `flag` adds one)."""
        return self.store.flagged

    def is_flagged(self, query_id: str, chunk_id: str) -> bool:
        return self.store.is_flagged(query_id, chunk_id)

    def _counts(self) -> tuple[dict[str, int], dict[str, int]]:
        if self._done is None:
            size, done = {}, {}
            for qid in self.queries:
                pooled = [e.chunk_id for e in self._entries.get(qid, ()) if e.pooled]
                size[qid], done[qid] = len(pooled), sum(self.is_done(qid, chunk) for chunk in pooled)
            self._set_counts(size, done)
        return self._size, self._done

    def _set_counts(self, size: dict[str, int], done: dict[str, int]) -> None:
        self._size, self._done = size, done
        dropped = self._dropped
        self._total = sum(n for q, n in size.items() if q not in dropped)
        self._judged = sum(n for q, n in done.items() if q not in dropped)
        self._durable = self._judged - sum(chunk in self._pooled_ids(q) and not self.is_judged(q, chunk)
                                           for q, chunk in self._in_flight if q not in dropped)

    # ---- building ----------------------------------------------------------------------------------------

    @classmethod
    def build(cls, runs: list[Run], gold: Gold, depth: int = 10, flagged: set[tuple[str, str]] | None = None,
              store: Judgments | None = None) -> "JudgeQueue":
        """The queue over `gold` (its order and counts from gold's frames); its labels are `store`'s (the app's,
        which then tells the queue of changes itself: `changed`), else a store made from `gold`."""
        queries_frame = gold.queries.sort("position")
        queries = queries_frame.get_column("query_id").to_list()
        texts = {}
        for qid, text in zip(queries, queries_frame.get_column("text").to_list()):
            # a qrels gold set and runs without query text: no text ("" — never the id standing in for it)
            texts[qid] = text if text is not None else next(
                (run.query_text[qid] for run in runs if qid in run.query_text), "")
        # a model's proposals are in the store too: shown as such, still waiting for a person (is_judged says no)
        labels = store if store is not None else Judgments.of_gold(gold)
        pool, rank_cols = pool_frame(runs, gold, depth)
        lists: dict[str, list[Entry]] = {q: [] for q in queries}
        for row in pool.select("query_id", "chunk_id", *rank_cols).iter_rows():
            lists[row[0]].append(Entry(row[1], tuple(row[2:])))
        queue = cls(queries, texts, lists, labels, [run.name for run in runs], depth, flagged or (),
                    listen=store is None)
        queue.proposed = set(gold.proposed)
        counts = {q: (n, d) for q, n, d in pool.group_by("query_id").agg(pl.len(), pl.col("judged").sum()).iter_rows()}
        queue._set_counts({q: counts.get(q, (0, 0))[0] for q in queries},
                          {q: counts.get(q, (0, 0))[1] for q in queries})
        return queue

    def use_order(self, name: str, threshold: int = 1) -> None:
        """Walk the queue in `name`'s order (core/pool_order.py; `rank`: its own walk, with the gold-left estimate
        kept beside it). Built from the queue as it is (a worker's job: ~1 s at 10,000 queries)."""
        from ragdiff.core.judge.pool_order import QueueOrder

        self.walk = QueueOrder(self, name, threshold)

    # ---- reading -----------------------------------------------------------------------------------------

    def is_judged(self, query_id: str, chunk_id: str) -> bool:
        """A person's judgment (gold, evidence, not relevant); a draft or a negative qrels grade is not one."""
        return self.store.is_judged(query_id, chunk_id)

    def is_done(self, query_id: str, chunk_id: str) -> bool:
        """Judged, or a decision on its way to the label file."""
        return (query_id, chunk_id) in self._in_flight or self.is_judged(query_id, chunk_id)

    @property
    def in_flight(self) -> frozenset[tuple[str, str]]:
        """Decisions sent to the writer whose outcome has not come back (`decide`, then `apply`): a copy."""
        return frozenset(self._in_flight)

    def is_in_flight(self, query_id: str, chunk_id: str) -> bool:
        """One chunk's decision on its way to the label file (`in_flight` without its copy: per row drawn)."""
        return (query_id, chunk_id) in self._in_flight

    def label_of(self, query_id: str, chunk_id: str) -> tuple[str | None, int | None]:
        return self.store.label_of(query_id, chunk_id)

    def proposal(self, query_id: str, chunk_id: str) -> int | None:
        """The drafted grade a model proposed for this chunk, while no person has judged it."""
        kind, grade = self.store.label_of(query_id, chunk_id)
        return grade if kind == vocab.DRAFTED else None

    def accepting(self, query_id: str, chunk_id: str) -> tuple[str, int | None] | None:
        """The decision that accepts the draft (a mark with its grade: gold ☆n -> gold n, ☆0 -> not relevant);
        None when the chunk has no draft."""
        grade = self.proposal(query_id, chunk_id)
        if grade is None:
            return None
        return (vocab.GOLD, grade) if grade > 0 else (vocab.NOT_RELEVANT, None)

    def progress(self) -> tuple[int, int]:
        """(judged, pooled) over the whole pool: the `N/M judged` line. Judged counts durable decisions only
        (a decision on its way to the label file is `saving`)."""
        self._counts()
        return self._durable, self._total

    def decided(self) -> int:
        """Pooled chunks judged or decided and on their way (what the queue moves past)."""
        self._counts()
        return self._judged

    @property
    def saving(self) -> int:
        """Decisions sent to the writer whose outcome has not come back (the header's `· saving n`)."""
        return len(self._in_flight)

    def query_progress(self, query_id: str) -> tuple[int, int]:
        size, done = self._counts()
        return done.get(query_id, 0), size.get(query_id, 0)

    def widest_id(self, cells: Callable[[str], int]) -> tuple[int, int]:
        """(the widest chunk id as `cells` measures it, the largest rank of a pooled chunk): measured over the
        whole queue once (~40 ms at 10,000 queries), then kept as `add` brings chunks in."""
        if self._widest is None or self._cells is not cells:
            entries = [entry for pool in self._entries.values() for entry in pool]
            widest = max((cells(entry.chunk_id) for entry in entries), default=0)
            rank = max((r for entry in entries if entry.pooled for r in entry.ranks if r is not None), default=0)
            self._cells, self._widest = cells, (widest, rank)
        return self._widest

    def entry_at(self, position: Position) -> tuple[str, Entry]:
        qid = self.queries[position.query]
        return qid, self._entries[qid][position.entry]

    def positions(self, start: Position | None = None):
        """Every position in queue order, from `start` (exclusive) round to `start` itself; from the first
        when `start` is None. Lazy: the next unjudged chunk is usually a step away."""

        def query(qi: int, begin: int = 0, end: int | None = None):
            if self._dropped and self.queries[qi] in self._dropped:
                return
            count = len(self._entries[self.queries[qi]])
            for ei in range(begin, count if end is None else min(end, count)):
                yield Position(qi, ei)

        n = len(self.queries)
        if start is None:
            for qi in range(n):
                yield from query(qi)
            return
        yield from query(start.query, start.entry + 1)
        for qi in (*range(start.query + 1, n), *range(0, start.query)):
            yield from query(qi)
        yield from query(start.query, 0, start.entry + 1)

    def next_unjudged(self, after: Position | None = None) -> Position | None:
        """The next unjudged chunk after `after` in queue order (round to the start: skipped ones come back
        last), or the first one when `after` is None; None when everything is judged. With an adaptive order
        (`use_order`): the chunk it offers next, wherever it is."""
        if self.walk is not None and self.walk.adaptive:
            return self.walk.next()
        for position in self.positions(after):
            qid, entry = self.entry_at(position)
            if not self.is_done(qid, entry.chunk_id):
                return position
        return None

    def first_of_query(self, query_index: int) -> Position | None:
        """The query's first unjudged chunk, else its first chunk; None when it has no chunk at all."""
        qid = self.queries[query_index]
        entries = self._entries[qid]
        if not entries or qid in self._dropped:
            return None
        for i, entry in enumerate(entries):
            if not self.is_done(qid, entry.chunk_id):
                return Position(query_index, i)
        return Position(query_index, 0)

    # ---- changing ----------------------------------------------------------------------------------------

    def decide(self, query_id: str, chunk_id: str, kind: str | None = None, grade: int | None = None) -> None:
        """A decision sent to the label writer: done for the queue at once, until `apply` hears back; the
        order learns it now (`kind`, `grade`: what was decided), so the next chunk follows from it."""
        with self._counting(query_id, chunk_id):
            self._in_flight.add((query_id, chunk_id))
        if self.walk is not None:
            self.walk.tell(query_id, chunk_id, kind, grade)

    def skip(self, query_id: str, chunk_id: str) -> None:
        """Left unjudged for now: an adaptive order offers it again when nothing else is left."""
        if self.walk is not None:
            self.walk.skip(query_id, chunk_id)

    def apply(self, changes: Iterable, failed=None, flagged: tuple[str, str] | None = None) -> None:
        """What a label job did, whichever screen is up (the queue outlives its screen): each Change (a mark, a
        grade refining it, an undo; one that changed nothing too) applied to the store, which tells the queue;
        `failed` — the target (query_id, chunk_id) of a job that failed — out of flight, to judge again; and
        `flagged`, the (query, chunk) a flag job wrote (so a flag written after the flags file was read for
        `build` is not missed)."""
        self.store.apply(changes)
        if flagged is not None:
            self.flag(*flagged)
        if failed is not None:
            with self._counting(failed.query_id, failed.chunk_id):
                self._in_flight.discard((failed.query_id, failed.chunk_id))
            if self.walk is not None:
                self.walk.failed(failed.query_id, failed.chunk_id)

    def set_label(self, query_id: str, chunk_id: str, kind: str | None, grade: int | None) -> None:
        """The chunk's judgment now (kind unjudged or None: no judgment), through the store."""
        self.store.apply([Changed(query_id, chunk_id, Judgment(kind, grade), Judgment(kind, grade))])

    def changed(self, changes: list[Changed]) -> None:
        """The store's changes: each chunk's decision is back (out of flight), its counts follow its judgment
        before and after."""
        if self._done is None:  # counted later, by a walk over the pool as it is then
            self._in_flight.difference_update((c.query_id, c.chunk_id) for c in changes)
            self._walk_changed(changes)
            return
        _, done = self._counts()
        for change in changes:
            query_id, chunk_id = change.query_id, change.chunk_id
            was_judged = vocab.kind_of(change.before.kind, change.before.grade).judged
            was = (query_id, chunk_id) in self._in_flight or was_judged
            self._in_flight.discard((query_id, chunk_id))
            if chunk_id in self._pooled_ids(query_id):
                now = vocab.kind_of(change.after.kind, change.after.grade).judged
                done[query_id] += now - was
                if query_id not in self._dropped:  # a dropped query's counts are out of the sums
                    self._judged += now - was
                    self._durable += now - was_judged
        self._walk_changed(changes)

    def _walk_changed(self, changes: list[Changed]) -> None:
        if self.walk is not None:
            for change in changes:
                after = change.after
                self.walk.changed(change.query_id, change.chunk_id, vocab.kind_of(after.kind, after.grade).judged,
                                  after.kind, after.grade)

    @property
    def dropped_queries(self) -> frozenset[str]:
        """The drafted queries dropped since the queue was built (out of its walk and its counts)."""
        return frozenset(self._dropped)

    def note(self, query_id: str, chunk_id: str) -> str | None:
        """What the chunk's title says besides its judgment (the queue of disagreements: both reviewers')."""
        return None

    def taken_back(self, query_id: str, chunk_id: str) -> None:
        """An undo took back this queue's decision on the chunk (its Change has come back): nothing more to do here;
        the queue of disagreements waits on it again (core/judge/settle.py)."""

    def is_dropped(self, query_id: str) -> bool:
        return query_id in self._dropped

    def set_dropped(self, query_id: str, dropped: bool) -> None:
        """A drafted query dropped from the label file (or back, after an undo): its chunks leave the walk and
        the pool's counts (or come back to them)."""
        if dropped == (query_id in self._dropped):
            return
        size, done = self._counts()
        sign = -1 if dropped else 1
        self._total += sign * size.get(query_id, 0)
        self._judged += sign * done.get(query_id, 0)
        self._durable += sign * sum(self.is_judged(query_id, c) for c in self._pooled_ids(query_id))
        (self._dropped.add if dropped else self._dropped.discard)(query_id)

    def flag(self, query_id: str, chunk_id: str) -> None:
        """Flagged for a second opinion (it stays unjudged: no count moves; an order offers it again last)."""
        self.store.flag(query_id, chunk_id)
        self.skip(query_id, chunk_id)

    @contextmanager
    def _counting(self, query_id: str, chunk_id: str):
        """Keep the progress counts across one change of a chunk's state (pooled chunks only count)."""
        _, done = self._counts()
        pooled = chunk_id in self._pooled_ids(query_id)
        was = pooled and self.is_done(query_id, chunk_id)
        was_judged = pooled and self.is_judged(query_id, chunk_id)
        yield
        if pooled:
            step = self.is_done(query_id, chunk_id) - was
            done[query_id] += step
            if query_id not in self._dropped:
                self._judged += step
                self._durable += self.is_judged(query_id, chunk_id) - was_judged

    def _pooled_ids(self, query_id: str) -> frozenset[str]:
        ids = self._pooled.get(query_id)
        if ids is None:
            ids = self._pooled[query_id] = frozenset(e.chunk_id for e in self._entries.get(query_id, ()) if e.pooled)
        return ids

    def add(self, query_id: str, chunk_id: str) -> Position:
        """A chunk no run returned (found by searching the corpus), appended to the query's list."""
        qi = self.queries.index(query_id)
        for i, entry in enumerate(self._entries[query_id]):
            if entry.chunk_id == chunk_id:
                return Position(qi, i)
        self._entries[query_id] += (Entry(chunk_id, tuple(None for _ in self.run_names), pooled=False),)
        if self._widest is not None:
            self._widest = (max(self._widest[0], self._cells(chunk_id)), self._widest[1])
        return Position(qi, len(self._entries[query_id]) - 1)


# ---- flags: a second opinion wanted ------------------------------------------------------------------------


def pool_frame(runs: list[Run], gold: Gold, depth: int) -> tuple[pl.DataFrame, list[str]]:
    """The pool of `runs` over `gold`'s queries, one row per pooled chunk in queue order (gold's query order; within
    a query unjudged first, then the judged ones, each part best rank across the runs first, then the chunks more
    runs hold, then by id): query_id, chunk_id, each run's rank at any depth (`rank_0` …, null: not returned),
    judged, its judgment's level and grade (null: none), best, runs, and `position` (the query's in gold). The one
    place a pool is made: the queue (`JudgeQueue.build`) and the gold-left estimate (`pool_order.Pool.from_runs`)
    read it."""
    queries = gold.queries.select("query_id", "position")
    # is_judged's rule over the frame (vocab.judged_rows: its one home); the reader refuses a pair judged twice,
    # and a draft of a judged chunk
    judgments = gold.judgments.select("query_id", "chunk_id", "level", "grade").with_columns(
        judged=vocab.judged_rows("level"))
    frames = [aligned_frame(run, gold).select("query_id", "chunk_id", "rank") for run in runs]
    # the pool: every run's top `depth`, each chunk once per query (a run's query the gold set lacks is not
    # judged here)
    # and a drafted query's drafted chunks (what the model drafted it from), whether a run returned them or not
    proposed = pl.Series(gold.proposed, dtype=pl.String).implode()
    drafted = ([gold.drafts.filter(pl.col("query_id").is_in(proposed)).select("query_id", "chunk_id")]
               if gold.proposed else [])
    pool = (pl.concat([*(f.filter(pl.col("rank") <= depth).select("query_id", "chunk_id") for f in frames),
                       *drafted])
            .unique().join(queries, on="query_id", how="inner"))
    keys = pool.select("query_id", "chunk_id")
    for i, frame in enumerate(frames):  # each pooled chunk's rank in each run, at any depth
        best = (frame.join(keys, on=["query_id", "chunk_id"], how="semi")  # the pool's rows only, then grouped
                .group_by("query_id", "chunk_id").agg(pl.col("rank").min().alias(f"rank_{i}")))
        pool = pool.join(best, on=["query_id", "chunk_id"], how="left")
    rank_cols = [f"rank_{i}" for i in range(len(frames))]
    pool = pool.join(judgments, on=["query_id", "chunk_id"], how="left").with_columns(
        pl.col("judged").fill_null(False),
        best=pl.min_horizontal(rank_cols), runs=pl.sum_horizontal([pl.col(c).is_not_null() for c in rank_cols]),
    ).sort(["position", "judged", "best", "runs", "chunk_id"], descending=[False, False, False, True, False])
    return pool, rank_cols


def flags_path(label_path: str | Path) -> Path:
    label_path = Path(label_path)
    return label_path.with_name(label_path.name + FLAGS_SUFFIX)


def read_flags(label_path: str | Path) -> set[tuple[str, str]]:
    """(query, chunk) pairs flagged for a second opinion (a torn or foreign line is skipped)."""
    path = flags_path(label_path)
    out: set[tuple[str, str]] = set()
    if not path.is_file():
        return out
    # split on \n alone, as add_flag writes: a raw U+2028 or U+0085 in an id is inside its JSON string
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        try:
            record = json.loads(line)
            out.add((str(record["query"]), str(record["chunk"])))
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return out


def add_flag(label_path: str | Path, query_id: str, chunk_id: str, who: str) -> Path:
    path = flags_path(label_path)
    record = {"query": query_id, "chunk": chunk_id, "who": who, "when": utc_now()}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
    return path


# ---- searching the corpus for a chunk no run returned ---------------------------------------------------


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    title: str | None
    snippet: str  # the text around its first match, whitespace runs as one space
    score: float  # a substring search: the words it holds; a BM25 search: its BM25 score
    marks: tuple[tuple[int, int], ...] = ()  # spans of the snippet that matched a word of the search


_TOKEN = re.compile(r"\S+")


def _snippet(text: str, spans: list[tuple[int, int]], start: int, stop: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """text[start:stop] with its whitespace runs made one space, and the spans (of `text`) that fall in it
    as spans of that snippet."""
    start = max(0, start)
    window = text[start:stop]
    at = [-1] * len(window)  # the snippet's index of each non-space character of the window
    pieces: list[str] = []
    n = 0
    for m in _TOKEN.finditer(window):
        n += 1 if pieces else 0
        for j in range(m.start(), m.end()):
            at[j] = n + j - m.start()
        n += m.end() - m.start()
        pieces.append(m.group())
    marks = []
    for a, b in spans:
        inside = [at[j] for j in range(max(0, a - start), min(len(window), b - start)) if at[j] >= 0]
        if inside:
            marks.append((inside[0], inside[-1] + 1))
    return " ".join(pieces), tuple(marks)


def search_corpus(path: str | Path, text: str, limit: int = 20) -> list[Hit]:
    """Chunks whose title or text holds the words of `text` (most distinct words first, then the most
    occurrences, then file order). One pass over the JSONL; call it from a worker."""
    words = [w for w in dict.fromkeys(re.findall(r"\w+", text.casefold())) if w]
    if not words:
        return []
    patterns = word_patterns(words)
    # a JSON writer may spell a letter as \uXXXX (Python's json.dumps does every non-ASCII one by default):
    # the raw line then cannot show a word holding it, only the decoded text can — and that is so for an
    # ASCII search too, since ﬁ (\ufb01) folds to "fi" and ß (\u00df) to "ss": "fish" finds "ﬁsh"
    hits: list[tuple[int, int, int, Hit]] = []
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle):
            lowered = raw.decode("utf-8", errors="replace").casefold()
            if not any(w in lowered for w in words) and "\\u" not in lowered:
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            chunk_id = record.get("id", record.get("_id"))
            if chunk_id is None:
                continue
            title, text_of = record.get("title"), record.get("text")
            plain = "" if text_of is None else str(text_of)  # a null is no text, not the text "None"
            body = f"{'' if title is None else title}\n{plain}".casefold()
            counts = [len(p.findall(body)) for p in patterns]
            distinct = sum(1 for c in counts if c)
            if not distinct:
                continue
            hits.append((-distinct, -sum(counts), number,
                         hit_of(str(chunk_id), None if title is None else str(title), plain, patterns, distinct)))
    hits.sort(key=lambda h: h[:3])
    return [h[3] for h in hits[:limit]]


def word_patterns(words: Iterable[str]) -> list[re.Pattern[str]]:
    """A pattern per word, for case-folded text: the word where a word starts."""
    return [re.compile(r"\b" + re.escape(w.casefold())) for w in dict.fromkeys(words) if w]


def hit_of(chunk_id: str, title: str | None, text: str, patterns: list[re.Pattern[str]], score: float) -> Hit:
    """A chunk as a search result: the text around its first match, the matches in it marked."""
    # positions in the folded text are not positions in the text when folding changed its length
    # (ß -> ss, İ -> i̇, ﬁ -> fi): find_spans gives the original's
    spans = find_spans(text, patterns)
    first = spans[0][0] if spans else 0
    snippet, marks = _snippet(text, spans, first - 40, first + 120)
    return Hit(chunk_id, title, snippet, score, marks)
