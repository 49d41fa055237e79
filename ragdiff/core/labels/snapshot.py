"""What the label writer's parts share: a snapshot of the file as read, and two readings of a journal record."""

from __future__ import annotations

from dataclasses import dataclass

from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.marks import Mark


@dataclass
class Snapshot:
    """The label file as last read or written: its bytes, their sha256, its stat key, whether it starts with a
    BOM, its text and its parsed document."""

    raw: bytes
    sha: str
    stat: tuple
    bom: bool
    text: str
    doc: LabelDoc


def mark_of(r: dict) -> Mark:
    """The mark a journal record made."""
    return Mark(r["query"], r["chunk"], r["label"], r.get("grade"), r.get("run"), r.get("rank"))


def holds(now: tuple[str, int | None], mark: Mark) -> bool:
    """Does a chunk's current (label, grade) say what `mark` set?"""
    if now[0] != mark.label:
        return False
    if mark.label in ("gold", "drafted") and mark.grade is not None:
        return (1 if now[1] is None else now[1]) == mark.grade
    return True
