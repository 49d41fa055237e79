"""A mark (what the reviewer asked for), a Judgment (what a file says), a Change (what a mark did)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ragdiff.core import vocab

# "none" (or vocab.UNJUDGED) = remove any judgment, used by undo; drafted = a model's proposal (labels import,
# and undo bringing back a draft a person decided)
LABELS = (*vocab.MARKABLE, vocab.DRAFTED, "none")


def word(label: str) -> str:
    return vocab.kind_of(label).word


@dataclass(frozen=True)
class Mark:
    query_id: str  # the id as ragdiff knows it (YAML: `id`, else the text)
    chunk_id: str
    label: str  # "gold" | "evidence" | "not_relevant" | "drafted" | "none" (none = remove any label; used by undo)
    grade: int | None = None  # for gold in a graded set; None = the file's default (plain entry / grade 1)
    run: str | None = None  # which run and rank it was marked from (journal only)
    rank: int | None = None


@dataclass(frozen=True)
class Judgment:
    """What a label file says about one (query, chunk): a kind from ragdiff.core.vocab and its grade.

    The grade is the one the gold loader scores with: gold >= 1 (a plain list entry is 1), not relevant 0,
    evidence 1, unjudged None.
    """

    kind: str
    grade: int | None = None

    @property
    def word(self) -> str:
        return vocab.word(self.kind, self.grade)


UNJUDGED = Judgment(vocab.UNJUDGED, None)


@dataclass(frozen=True)
class Change:
    """What one mark or undo did: the app updates its model from this alone, never by re-reading the file.

    saved is False when nothing needed writing (the chunk already had that judgment): before == after.
    """

    query_id: str
    chunk_id: str
    before: Judgment
    after: Judgment
    message: str
    saved: bool

    def __str__(self) -> str:
        return self.message


def judgment(label: str, grade: int | None) -> Judgment:
    """The writer's (label, grade as written) as a Judgment with the grade the loader scores with."""
    if label in ("none", vocab.UNJUDGED):
        return UNJUDGED
    if label == vocab.GOLD:
        return Judgment(vocab.GOLD, 1 if grade is None else grade)
    if label == vocab.NOT_RELEVANT:
        return Judgment(vocab.NOT_RELEVANT, 0)
    return Judgment(label, 1 if grade is None else grade)


def normal_mark(mark: Mark) -> Mark:
    """vocab.UNJUDGED is the writer's "none" (remove the judgment)."""
    return dataclasses.replace(mark, label="none") if mark.label == vocab.UNJUDGED else mark
