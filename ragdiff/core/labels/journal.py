"""The append-only journal beside a label file: who marked what, when, from which run and rank.

One JSON object per line in ``<label file>.ragdiff-journal.jsonl``. Every append is fsync'd before the call
returns; a batch of decisions is one append (`append_many`: one write, one fsync for all of them). A write of the label file is bracketed by two lines:

- an *op* line (``"type": "mark"``, ``"undo"``, or ``"edit"`` for a change to the file beyond one chunk's
  judgment: ``"edit": "add_query"``, ``"corpus"``, ``"drafts"``, ``"reviewed"``, or for drafted queries ``"add_drafted"``,
  ``"keep_query"``, ``"drop_query"``) written BEFORE the label file is replaced, holding
  everything needed to redo or undo it (query, chunk, label, grade, the previous label and grade, the
  sha256 of the file before and after, and a line patch that turns one into the other);
- a ``"type": "saved"`` line written AFTER the rename (or ``"failed"`` when the write failed).

A mark that changed nothing (the chunk already had that judgment) writes nothing, so it has no such bracket:
it is one ``"type": "mark"`` line with ``"noop": true`` (before and after the same), complete as it stands —
`replay` takes it as saved, `labels log` shows it as "no change", `u` skips it, and `labels stale` counts it
as a person having read the query (why it is journaled at all). No "saved" line follows it: nothing was saved.

An op with neither (a no-op mark aside) is *unconfirmed*: the program stopped between the two. On the next
start the label file itself says which way it went (its sha256 is the op's ``before_sha256`` or
``after_sha256``), see ``LabelFile``. No record is ever rewritten or deleted here; a torn last line (a crash
mid-append: no line break after it) is dropped when read, and cut off before the next append.

A batch's ops are a chain: the first holds the file's sha256 before the batch, the last the sha256 after it (the
ones between hold null for both: hashing the whole text after every mark of a batch cost more than the batch).
The label file is rewritten with a whole chain's end, never part of a batch, so its sha256 says how far it got.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

JOURNAL_SUFFIX = ".ragdiff-journal.jsonl"
FORMAT_VERSION = 1


def journal_path(label_path: str | Path) -> Path:
    label_path = Path(label_path)
    return label_path.with_name(label_path.name + JOURNAL_SUFFIX)


def utc_now() -> str:
    """UTC ISO 8601 with an explicit offset, to the microsecond (journal lines sort by it)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def fsync_dir(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Journal:
    """Append-only JSON lines, each one fsync'd. Raises OSError when it cannot write (the caller words it)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def append(self, record: dict) -> None:
        self.append_many([record])

    def append_many(self, records: list[dict]) -> None:
        """Every record, one line each, in ONE write and ONE fsync (a group commit: the batch is durable
        together). A crash inside the write leaves whole lines and at most one torn last line, which
        `numbered` drops."""
        if not records:
            return
        data = "".join(json.dumps({"v": FORMAT_VERSION, **record}, ensure_ascii=False, sort_keys=False) + "\n"
                       for record in records).encode("utf-8")
        created = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # a torn last line from an earlier crash (a write that never finished: nothing counted it) is cut
            # off before this one: glued onto it, or ended with a line break, it would read as a record later
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as fh:
                    fh.seek(max(0, size - 65536))
                    tail = fh.read()
                if not tail.endswith(b"\n"):
                    cut = tail.rfind(b"\n")
                    if cut < 0 and size > len(tail):  # a torn line longer than the tail read: find its start
                        with open(self.path, "rb") as fh:
                            cut = fh.read().rfind(b"\n") - (size - len(tail))
                    os.ftruncate(fd, size - len(tail) + cut + 1)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.path.parent)

    def read(self) -> list[dict]:
        """Every whole record in order; a line that does not parse (a torn write) is skipped."""
        return [rec for _line, rec in self.numbered()]

    def numbered(self) -> list[tuple[int, dict]]:
        """(1-based line, record) of every whole record in order, as `read` gives them."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        records = []
        lines = raw.split(b"\n")
        torn = len(lines) if lines and lines[-1] else None  # a last line with no line break: cut short by a crash
        for number, line in enumerate(lines, start=1):
            if not line.strip() or number == torn:
                continue  # a torn last line is dropped, whatever it reads as: never half a record
            try:
                rec = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(rec, dict) and "type" in rec:
                records.append((number, rec))
        return records


OP_TYPES = ("mark", "undo", "edit")
STATUS_TYPES = ("saved", "failed", "dropped")
EDITS = ("add_query", "corpus", "drafts", "reviewed", "add_drafted", "keep_query", "drop_query")


def record_problem(rec: dict) -> str | None:
    """What in a record is not as the label writer writes it (a hand edit, a merge gone wrong), or None.
    Records of other types are left alone (nothing reads them)."""
    from datetime import datetime

    from ragdiff.core.labels.marks import LABELS

    kind = rec.get("type")
    if kind not in OP_TYPES + STATUS_TYPES:
        return None
    if not isinstance(rec.get("id"), str):
        return f"id {rec.get('id')!r}: expected a string"
    if kind in STATUS_TYPES:
        return None
    for name in ("undoes", "retry_of"):
        if not isinstance(rec.get(name), (str, type(None))):
            return f"{name} {rec.get(name)!r}: expected the id of another record"
    when = rec.get("when")
    try:
        datetime.fromisoformat(str(when).replace("Z", "+00:00"))
    except ValueError:
        return f"when {when!r}: expected a UTC time like 2026-12-01T08:12:33+00:00"
    if not isinstance(rec.get("who"), (str, type(None))):
        return f"who {rec.get('who')!r}: expected a name"
    if "edit" in rec:
        return None if rec["edit"] in EDITS else f"edit {rec['edit']!r}: expected one of {', '.join(EDITS)}"
    for name in ("query", "chunk"):
        if not isinstance(rec.get(name), str):
            return f"{name} {rec.get(name)!r}: expected an id (a string)"
    for name, optional in (("label", False), ("prev_label", True)):
        value = rec.get(name)
        if value not in LABELS and value != "unjudged" and not (optional and value is None):
            return f"{name} {value!r}: expected one of {', '.join(LABELS)}"
    for name in ("grade", "prev_grade", "rank"):
        value = rec.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{name} {value!r}: expected a whole number or null"
    if not isinstance(rec.get("run"), (str, type(None))):
        return f"run {rec.get('run')!r}: expected a run's name"
    return None


def first_problem(numbered: list[tuple[int, dict]]) -> tuple[int, str] | None:
    """(line, words) of the first record the label writer would not have written, or None."""
    for line, rec in numbered:
        problem = record_problem(rec)
        if problem is not None:
            return line, f"journal record {rec.get('id')!r} {problem}; was the journal edited by hand?"
    return None


@dataclass
class Op:
    """One mark or undo from the journal, with what became of it."""

    record: dict
    status: str | None = None  # "saved" | "failed" | "dropped" | None (unconfirmed)
    recovered: bool = False  # confirmed on a later start from the file's content, not by a "saved" line
    undone_by: str | None = None  # id of the saved undo op that reverted this mark
    retried_by: str | None = None  # id of a later op that re-applied this failed mark

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def kind(self) -> str:
        return self.record["type"]


@dataclass
class Replay:
    ops: dict[str, Op] = field(default_factory=dict)  # in journal order

    def undo_stack(self) -> list[Op]:
        """Saved marks not yet undone, oldest first: what `u` walks back through."""
        return [
            op
            for op in self.ops.values()
            if op.kind == "mark" and op.status == "saved" and op.undone_by is None
        ]

    def unconfirmed(self) -> list[Op]:
        """Ops with neither "saved" nor "failed" after them, and not superseded by a retry."""
        return [op for op in self.ops.values() if op.status is None and op.retried_by is None]

    def failed(self) -> list[Op]:
        """Marks whose write failed and that were neither re-applied nor dropped."""
        return [
            op
            for op in self.ops.values()
            if op.kind == "mark" and op.status == "failed" and op.retried_by is None
        ]


def replay(records: list[dict]) -> Replay:
    state = Replay()
    for rec in records:
        kind = rec.get("type")
        if kind in ("mark", "undo", "edit") and "id" in rec:  # edit: a query added, the corpus snapshot recorded
            op = Op(rec)
            if rec.get("noop"):
                op.status = "saved"  # nothing to write, nothing that can be lost
            state.ops[rec["id"]] = op
            retry_of = rec.get("retry_of")
            if retry_of in state.ops:
                state.ops[retry_of].retried_by = rec["id"]
        elif kind in ("saved", "failed", "dropped"):
            op = state.ops.get(rec.get("id"))
            if op is None:
                continue
            op.status = kind
            op.recovered = bool(rec.get("recovered"))
        if kind in ("saved",):
            op = state.ops.get(rec.get("id"))
            if op is not None and op.kind == "undo":
                target = state.ops.get(op.record.get("undoes"))
                if target is not None:
                    target.undone_by = op.id
    # a noop undo is saved at once too
    for op in state.ops.values():
        if op.kind == "undo" and op.status == "saved":
            target = state.ops.get(op.record.get("undoes"))
            if target is not None and target.undone_by is None:
                target.undone_by = op.id
    return state
