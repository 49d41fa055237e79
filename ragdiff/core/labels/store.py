"""The judgments of the open label file, in memory: the one copy every view reads (DESIGN: "One judgment store").

(query, chunk) -> its Judgment (gold, evidence, not relevant, or a model's draft), and the chunks flagged for a
second opinion, with a generation number that moves with every change. `apply` is the only way to change a
judgment: it takes the Changes the label writer reports (ragdiff.core.labels.Change, or anything with
query_id, chunk_id and after.kind / after.grade) and tells each listener what changed, before and after, once
per call. The judging queue keeps only its order, position and progress and reads labels here; the review's
model rescores the one query a change touches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from ragdiff.core import vocab
from ragdiff.core.labels.marks import UNJUDGED, Judgment


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


class Judgments(Mapping):
    """(query, chunk) -> (kind, grade), read-only to everyone but `apply` (a Mapping: `get`, `in`, `len`)."""

    def __init__(self, labels: dict[tuple[str, str], tuple[str, int | None]] | None = None,
                 flagged: Iterable[tuple[str, str]] = ()) -> None:
        """The store keeps the dict it is given (`of_gold` makes it): copying 195,000 entries cost ~40 ms at
        10,000 queries."""
        self._labels = labels if labels is not None else {}
        self._flagged = set(flagged)
        self.generation = 0
        self._listeners: list[Callable[[list[Changed]], object]] = []

    @classmethod
    def of_gold(cls, gold, flagged: Iterable[tuple[str, str]] = ()) -> "Judgments":
        """From a gold set's frames (its judgments, then its drafts where nobody judged the chunk)."""
        labels = {(q, c): (lv, g) for q, c, lv, g in
                  gold.judgments.select("query_id", "chunk_id", "level", "grade").iter_rows()}
        labels.update(((q, c), (vocab.DRAFTED, g)) for q, c, g in
                      gold.drafts.select("query_id", "chunk_id", "grade").iter_rows() if (q, c) not in labels)
        return cls(labels, flagged)

    # ---- reading ---------------------------------------------------------------------------------------

    def __getitem__(self, key: tuple[str, str]) -> tuple[str, int | None]:
        return self._labels[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def label_of(self, query_id: str, chunk_id: str) -> tuple[str | None, int | None]:
        return self._labels.get((query_id, chunk_id), (None, None))

    def is_judged(self, query_id: str, chunk_id: str) -> bool:
        """A person's judgment (gold, evidence, not relevant); a draft or a negative qrels grade is not one."""
        kind, grade = self._labels.get((query_id, chunk_id), (None, None))
        return vocab.kind_of(kind, grade).judged

    @property
    def flagged(self) -> frozenset[tuple[str, str]]:
        return frozenset(self._flagged)

    def is_flagged(self, query_id: str, chunk_id: str) -> bool:
        return (query_id, chunk_id) in self._flagged

    # ---- changing --------------------------------------------------------------------------------------

    def listen(self, listener: Callable[[list[Changed]], object]) -> None:
        """`listener(changed)` after every `apply`, with what it changed, in order."""
        self._listeners.append(listener)

    def apply(self, changes: Iterable) -> list[Changed]:
        """Each change's `after` becomes the chunk's judgment; the listeners are told, once for all of them."""
        out = []
        for change in changes:
            key = (change.query_id, change.chunk_id)
            held = self._labels.get(key)
            before = UNJUDGED if held is None else Judgment(*held)
            kind, grade = change.after.kind, change.after.grade
            if _kept(kind):
                self._labels[key] = (kind, grade)
                after = Judgment(kind, grade)
            else:
                self._labels.pop(key, None)
                after = UNJUDGED
            out.append(Changed(change.query_id, change.chunk_id, before, after))
        if out:
            self.generation += 1
            for listener in self._listeners:
                listener(out)
        return out

    def flag(self, query_id: str, chunk_id: str) -> None:
        """Flagged for a second opinion (it stays unjudged)."""
        self._flagged.add((query_id, chunk_id))
