"""The judgments of the open label file, in memory: the one copy every view reads (DESIGN: "One judgment store").

(query, chunk) -> its Judgment (gold, evidence, not relevant, or a model's draft), and the chunks flagged for a
second opinion, with a generation number that moves with every change. `apply` is the only way to change a
judgment: it takes the Changes the label writer reports (ragdiff.core.labels.Change, or anything with
query_id, chunk_id and after.kind / after.grade) and tells each listener what changed, before and after, once
per call. The judging queue keeps only its order, position and progress and reads labels here; the review's
model rescores the one query a change touches; the gold frames the metrics read are derived from it (`gold`).

A store made from a gold set reads each query's labels from the gold set's frames when the query is first
read: making 143,000 of them at once cost ~150 ms of the review's first screen at 10,000 queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.labels.marks import UNJUDGED, Judgment

Label = tuple[str, int | None]


@dataclass(frozen=True)
class Changed:
    """One (query, chunk) as a change left it: what it was and what it is (equal when the change was a
    mark that changed nothing: a listener may still care that the decision came back)."""

    query_id: str
    chunk_id: str
    before: Judgment
    after: Judgment


def _kept(kind: str | None) -> bool:
    """A person's judgment or a model's draft is kept; unjudged (an undo back to nothing) is not."""
    return kind is not None and (vocab.kind_of(kind).judged or kind == vocab.DRAFTED)


def stretches(frame: pl.DataFrame, order: list[str]) -> tuple[pl.DataFrame, dict[str, tuple[int, int]]]:
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


class Judgments(Mapping):
    """(query, chunk) -> (kind, grade), read-only to everyone but `apply` (a Mapping: `get`, `in`, `len`)."""

    def __init__(self, labels: Mapping[tuple[str, str], Label] | None = None,
                 flagged: Iterable[tuple[str, str]] = ()) -> None:
        self._queries: dict[str, dict[str, Label]] = {}  # query -> chunk -> label, each made at its first read
        for (query_id, chunk_id), label in (labels or {}).items():
            self._queries.setdefault(query_id, {})[chunk_id] = label
        self._flagged = set(flagged)
        self.generation = 0
        self._listeners: list[Callable[[list[Changed]], object]] = []
        self._log: list[list[Changed]] = []  # what each generation changed: `since`
        # a store of a gold set: its frames, each query's stretch of them read at its first read (`_of`); the
        # queries changed since (in order), which `gold` takes from the store
        self._loaded = None
        self._frames: tuple | None = None
        self._touched: dict[str, None] = {}
        self._derived: tuple[int, object] | None = None

    @classmethod
    def of_gold(cls, gold, flagged: Iterable[tuple[str, str]] = ()) -> "Judgments":
        """From a gold set's frames (its judgments, then its drafts where nobody judged the chunk)."""
        store = cls(None, flagged)
        store._loaded = gold
        store._frames = (stretches(gold.judgments.select("query_id", "chunk_id", "level", "grade"), []),
                         stretches(gold.drafts.select("query_id", "chunk_id", "grade"), []))
        return store

    def _of(self, query_id: str) -> dict[str, Label]:
        """The query's chunk -> label, read from the gold set's frames the first time (the same dict after: a
        worker thread reading a query at the same moment as the screen gets the screen's, `setdefault`)."""
        labels = self._queries.get(query_id)
        if labels is None:
            labels = {}
            if self._frames is not None:
                (judged, index), (drafts, drafts_index) = self._frames
                start, n = index.get(query_id, (0, 0))
                if n:
                    labels.update(((c, (lv, g)) for c, lv, g in
                                   judged.slice(start, n).select("chunk_id", "level", "grade").iter_rows()))
                start, n = drafts_index.get(query_id, (0, 0))
                for chunk, grade in drafts.slice(start, n).select("chunk_id", "grade").iter_rows() if n else ():
                    labels.setdefault(chunk, (vocab.DRAFTED, grade))
            labels = self._queries.setdefault(query_id, labels)
        return labels

    # ---- reading ---------------------------------------------------------------------------------------

    def __getitem__(self, key: tuple[str, str]) -> Label:
        return self._of(key[0])[key[1]]

    def _all(self) -> Iterator[str]:
        """Every query with labels (each read from the frames, once)."""
        if self._frames is not None:
            for query_id in (*self._frames[0][1], *self._frames[1][1]):
                self._of(query_id)
        return iter(list(self._queries))

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for query_id in self._all():
            for chunk_id in list(self._queries[query_id]):
                yield query_id, chunk_id

    def __len__(self) -> int:
        return sum(len(self._queries[q]) for q in self._all())

    def label_of(self, query_id: str, chunk_id: str) -> tuple[str | None, int | None]:
        return self._of(query_id).get(chunk_id, (None, None))

    def of_query(self, query_id: str) -> Mapping[str, Label]:
        """chunk -> (kind, grade) of one query, drafts included (the store's own: read it, never change it)."""
        return self._of(query_id)

    def is_judged(self, query_id: str, chunk_id: str) -> bool:
        """A person's judgment (gold, evidence, not relevant); a draft or a negative qrels grade is not one."""
        kind, grade = self.label_of(query_id, chunk_id)
        return vocab.kind_of(kind, grade).judged

    @property
    def flagged(self) -> frozenset[tuple[str, str]]:
        return frozenset(self._flagged)

    def is_flagged(self, query_id: str, chunk_id: str) -> bool:
        return (query_id, chunk_id) in self._flagged

    # ---- the gold frames, derived ----------------------------------------------------------------------

    def frames_of(self, query_ids: Iterable[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(judgments, drafts) of these queries as the store has them, in the gold set's schema."""
        schema = self._loaded.judgments.schema
        drafts_schema = self._loaded.drafts.schema
        judged, drafted = [], []
        for query_id in query_ids:
            for chunk_id, (kind, grade) in self._of(query_id).items():
                if kind == vocab.DRAFTED:
                    drafted.append((query_id, chunk_id, grade))
                else:
                    judged.append((query_id, chunk_id, grade, kind))
        judgments = pl.DataFrame(judged, schema={c: schema[c] for c in ("query_id", "chunk_id", "grade", "level")},
                                 orient="row")
        drafts = pl.DataFrame(drafted, schema={c: drafts_schema[c] for c in ("query_id", "chunk_id", "grade")},
                              orient="row")
        return (pl.concat([judgments, pl.DataFrame(schema=schema)], how="diagonal_relaxed").select(schema.names()),
                pl.concat([drafts, pl.DataFrame(schema=drafts_schema)], how="diagonal_relaxed")
                .select(drafts_schema.names()))

    def gold(self):
        """The gold set as the store has it now: the one it was made from, each query changed since with its
        judgments and drafts taken from the store (at the end of the frames, in the order they changed)."""
        if not self._touched:
            return self._loaded
        if self._derived is not None and self._derived[0] == self.generation:
            return self._derived[1]
        touched = list(self._touched)
        judgments, drafts = self.frames_of(touched)
        loaded = self._loaded
        keep = ~pl.col("query_id").is_in(pl.Series(touched, dtype=pl.String).implode())
        gold = replace(loaded, judgments=pl.concat([loaded.judgments.filter(keep), judgments]),
                       drafts=pl.concat([loaded.drafts.filter(keep) if loaded.drafts.height else loaded.drafts,
                                         drafts]))
        self._derived = (self.generation, gold)
        return gold

    # ---- changing --------------------------------------------------------------------------------------

    def listen(self, listener: Callable[[list[Changed]], object]) -> None:
        """`listener(changed)` after every `apply`, with what it changed, in order."""
        self._listeners.append(listener)

    def since(self, generation: int) -> list[Changed]:
        """What every `apply` after `generation` changed, in order (for a reader made from the store as it was
        then, e.g. the judging queue built on another thread)."""
        return [changed for changes in self._log[generation:] for changed in changes]

    def apply(self, changes: Iterable) -> list[Changed]:
        """Each change's `after` becomes the chunk's judgment; the listeners are told, once for all of them."""
        out = []
        for change in changes:
            query_id, chunk_id = change.query_id, change.chunk_id
            labels = self._of(query_id)
            held = labels.get(chunk_id)
            before = UNJUDGED if held is None else Judgment(*held)
            kind, grade = change.after.kind, change.after.grade
            if _kept(kind):
                labels[chunk_id] = (kind, grade)
                after = Judgment(kind, grade)
            else:
                labels.pop(chunk_id, None)
                after = UNJUDGED
            self._touched[query_id] = None
            out.append(Changed(query_id, chunk_id, before, after))
        if out:
            self.generation += 1
            self._log.append(out)
            for listener in self._listeners:
                listener(out)
        return out

    def flag(self, query_id: str, chunk_id: str) -> None:
        """Flagged for a second opinion (it stays unjudged)."""
        self._flagged.add((query_id, chunk_id))
