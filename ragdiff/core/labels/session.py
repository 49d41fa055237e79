"""One label file open for marking: read -> plan -> verify -> journal -> write; undo, retry, recover.

- Every mark is saved at once: the edited text (planned by the file's document class, see `document`) is
  re-read with the gold loader's own reader and must say exactly the old judgments with this one change,
  or nothing is written (LabelFormatError).
- Every mark and undo goes to the journal beside the file (ragdiff.core.labels.journal) BEFORE the rename, and a
  "saved" line after it. Undo reads the journal, so it works across restarts; it takes back only this
  reviewer's own marks.
- Before every write the file is read again under a lock. If someone else changed it, the mark is applied
  to their version; if they changed the label of this very chunk, LabelConflictError (never overwrite
  their edit).
- A label file reached through a symbolic link is written where the link points; the link stays.

`LabelFile` is put together from one part per concern: `planning` (check, plan, verify, the sentence),
`journaling`, `group_commit` (apply_many, flush, someone else's version), `recovery` (on opening), `undo`
(undo, retry, giving up) and `file_edits` (queries, corpus, reviewed, drafts).
"""

from __future__ import annotations

import gc
import getpass
import os
import uuid
from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.io.formats import GOLD_FORMATS as FORMATS
from ragdiff.core.io.formats import locate
from ragdiff.core.labels.journal import Journal, Op, journal_path, replay, utc_now
from ragdiff.core.labels.atomic import atomic_write, clean_stray_temps, file_lock, line_patch, line_unpatch, stat_key
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.edits import sha
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, LabelWriteError
from ragdiff.core.labels.file_edits import Edit, FileEdits
from ragdiff.core.labels.group_commit import GroupCommit
from ragdiff.core.labels.journaling import Journaling
from ragdiff.core.labels.marks import Change, Mark, judgment, normal_mark, word
from ragdiff.core.labels.planning import Planning
from ragdiff.core.labels.qrels_doc import QrelsDoc
from ragdiff.core.labels.reader import parse_document
from ragdiff.core.labels.recovery import Recovery
from ragdiff.core.labels.snapshot import Snapshot
from ragdiff.core.labels.undo import Undo
from ragdiff.core.io.textio import BOM

__all__ = ["FORMATS", "Edit", "LabelFile"]

FREEZE_AT = 1 << 18  # characters of label file above which its parsed document is frozen (see LabelFile)


def _who(reviewer: str | None) -> str:
    if reviewer:
        return reviewer
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


class LabelFile(Undo, FileEdits, Recovery, GroupCommit, Planning, Journaling):
    """One label file open for marking. Every `apply` and `undo` is written to disk before it returns.

    After opening, `recovery_notes` says in plain words what the journal showed about marks whose save
    was never confirmed (a crash or a failed write), and `pending` lists the marks that are journaled but
    not in the file; `retry()` applies them, `discard_pending()` gives them up.
    """

    def __init__(self, path, fmt: str | None = None, reviewer: str | None = None):
        given = Path(path)
        if fmt is not None and fmt not in FORMATS:
            raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, not {fmt!r}")
        if not given.exists():
            raise FileNotFoundError(f"{given}: no such label file")
        try:
            where = locate(given, fmt)
        except InputError as err:
            raise LabelFormatError(str(err)) from None
        # a label file reached through a symbolic link is written where the link points; the link stays
        self.path = Path(os.path.realpath(where.file))
        self.name = where.file.name  # the name the reviewer knows it by, in every sentence
        self._beir_dir = where.folder
        self.fmt = where.fmt
        self.reviewer = _who(reviewer)
        self.journal = Journal(journal_path(self.path))
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such label file")
        if self.journal.path.is_dir():
            raise LabelWriteError(
                f"cannot open {self.name} for marking: its journal {self.journal.path} is a folder; ragdiff "
                "keeps who marked what in a file by that name: move the folder away")
        self._snap = self._read()
        self._snap.doc = self._parse(self._snap.text)
        if len(self._snap.text) > FREEZE_AT:
            # the document's node tree (~150 objects a query) lives as long as the file is open: out of the
            # cyclic collector's way, whose full collections walked it again and again during a batch (a flood
            # of decisions into a 10,000-query file: ~1,000 -> ~1,950 a second, bench/bench_writer.py)
            gc.freeze()
        self._pending: list[tuple[Mark, str | None]] = []  # (mark, journal op id)
        # group commit (`apply_many`, `flush`): ops journaled and durable, not yet in the file (the in-memory
        # snapshot has them; the file on disk is `_disk`'s sha and stat)
        self._unwritten: list[str] = []
        self._disk: tuple[str, tuple] = (self._snap.sha, self._snap.stat)  # kept while _unwritten is not empty
        self.conflicts: list[str] = []  # the last flush's decisions someone else's edit contradicted (named)
        self._deferred: list[dict] = []  # resolutions found on open, written with the next journal line
        self.recovery_notes: list[str] = []
        self.recovered: list[Change] = []  # what the decisions replayed from the journal on opening changed
        self.stray_temp_files = clean_stray_temps(self.path)
        self._replay = replay(self._journal_records())
        self._recover()
        self._write_recovered()

    def _read(self) -> Snapshot:
        try:
            raw = self.path.read_bytes()
            st = os.stat(self.path)
        except FileNotFoundError as err:
            if not self.path.parent.is_dir():
                raise LabelWriteError(
                    f"cannot save {self.path}: its folder {self.path.parent} is gone ({err.strerror})"
                ) from None
            raise LabelWriteError(f"cannot save {self.path}: the file is gone ({err.strerror})") from None
        except OSError as err:
            raise LabelWriteError(f"cannot read {self.path} ({err.strerror})") from None
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError as err:
            raise LabelFormatError(f"{self.name}: invalid UTF-8 at byte {err.start}") from None
        return Snapshot(raw, sha(raw), stat_key(st), bom, text, None)  # type: ignore[arg-type]

    def _parse(self, text: str) -> LabelDoc:
        try:
            return parse_document(Path(self.name), self.fmt, text, self._beir_dir, empty_start=True)
        except InputError as err:
            raise LabelFormatError(str(err)) from None

    def _encode(self, text: str, bom: bool) -> bytes:
        return (BOM if bom else b"") + text.encode("utf-8")

    @property
    def queries(self) -> list[str]:
        return list(self._snap.doc.order)

    @property
    def texts(self) -> dict[str, str | None]:
        """Each query's text as the file says it (None where it has only an id)."""
        return dict(self._snap.doc.texts)

    def current_label(self, query_id: str, chunk_id: str) -> tuple[str, int | None]:
        """(level, grade) as the gold loader reads it: ("gold", 3), ("gold", 1) for a plain list entry,
        ("evidence", 1), ("not_relevant", 0), or ("none", None) when unjudged (also for a query the file
        lacks)."""
        return self._snap.doc.current(query_id, chunk_id)

    def can_say(self, kind: str) -> bool:
        """Can this file's format hold this kind (drafted needs the ragdiff label file)?"""
        return self._snap.doc.can_express(kind)

    @property
    def shape(self) -> str:
        """What people call this file's format: "label file", "short form", "TREC qrels", "BEIR qrels"."""
        return self._snap.doc.shape

    @property
    def pending(self) -> list[Mark]:
        return [m for m, _ in self._pending]

    def apply(self, mark: Mark) -> Change:
        """Write one mark; the Change says what the chunk's judgment was and is now, and the sentence."""
        self.flush()
        return self._apply(normal_mark(mark), kind="mark")

    def _apply(self, mark: Mark, kind: str, undoes: Op | None = None, retry_of: str | None = None,
               unpatch: dict | None = None) -> Change:
        self._check(mark)
        # two reviewers marking the same file: the read, the edit and the rename happen under one lock, so
        # each one re-reads the other's save and applies its mark on top of it
        try:
            with file_lock(self.path):
                return self._apply_locked(mark, kind, undoes, retry_of, unpatch)
        except LabelWriteError:
            # the mark stays in memory (and, once journaled, in the journal) for retry()
            if kind == "mark" and retry_of is None and not any(m == mark for m, _ in self._pending):
                self._pending.append((mark, None))
            raise

    def _apply_locked(self, mark: Mark, kind: str, undoes: Op | None, retry_of: str | None,
                      unpatch: dict | None) -> Change:
        for _attempt in range(3):
            snap = self._refresh(mark)
            if not (kind == "undo" and isinstance(snap.doc, QrelsDoc)):  # undo may bring back a qrels query
                self._require_query(snap.doc, mark.query_id)
            prev = snap.doc.current(mark.query_id, mark.chunk_id)
            if self._is_noop(snap.doc, mark) and kind == "mark":
                self._journal_noop(mark, prev, retry_of)
                before = judgment(*prev)
                return Change(mark.query_id, mark.chunk_id, before, before, self._noop_sentence(mark, prev),
                              saved=False)
            new_text = None
            notes: list[str] = []
            if unpatch is not None:
                cand = line_unpatch(snap.text, unpatch)
                if cand is not None:
                    try:
                        new_doc = self._verify(snap, cand, mark)
                        new_text = cand
                    except LabelFormatError:
                        new_text = None
            if new_text is None:
                new_text, notes, new_doc = self._plan(snap, mark)
            new_raw = self._encode(new_text, snap.bom)
            new_sha = sha(new_raw)
            rec = {
                "type": kind,
                "id": uuid.uuid4().hex,
                "file": self.name,
                "query": mark.query_id,
                "chunk": mark.chunk_id,
                "label": mark.label,
                "grade": mark.grade,
                "prev_label": prev[0],
                "prev_grade": prev[1],
                "who": self.reviewer,
                "when": utc_now(),
                "run": mark.run,
                "rank": mark.rank,
                "before_sha256": snap.sha,
                "after_sha256": new_sha,
                "patch": line_patch(snap.text, new_text),
            }
            if undoes is not None:
                rec["undoes"] = undoes.id
            if retry_of is not None:
                rec["retry_of"] = retry_of
            sentence = self._sentence(mark, prev, notes, saved=True)
            self._journal(rec, mark, retry_of)
            try:
                done = atomic_write(self.path, new_raw, snap.stat)
            except LabelWriteError as err:
                self._fail(rec, mark, err)
                raise
            if not done:  # changed on disk between our read and the rename: the op is void, go again
                self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": "changed on disk; re-applied"})
                self._replay.ops[rec["id"]].status = "failed"
                self._replay.ops[rec["id"]].retried_by = "-"
                continue
            self._snap = Snapshot(new_raw, new_sha, done, snap.bom, new_text, new_doc)
            self._journal_quiet({"type": "saved", "id": rec["id"], "when": utc_now()})
            op = self._replay.ops[rec["id"]]
            op.status = "saved"
            if undoes is not None:
                undoes.undone_by = rec["id"]
            if retry_of is not None:
                self._pending = [(m, i) for m, i in self._pending if i != retry_of]
            return Change(mark.query_id, mark.chunk_id, judgment(*prev), judgment(mark.label, mark.grade),
                          sentence, saved=True)
        raise LabelConflictError(f"{self.name} keeps changing on disk; the mark was not written")

    def _refresh(self, mark: Mark, check: bool = True) -> Snapshot:
        """The file as it is on disk now; if someone else changed it, their version (conflict-checked)."""
        cur = self._read()
        if cur.sha == self._snap.sha:
            self._snap.stat = cur.stat
            return self._snap
        try:
            cur.doc = self._parse(cur.text)
        except LabelFormatError as err:
            raise LabelConflictError(
                f"{self.name} changed on disk and no longer reads as a label file ({err}); the mark was not written"
            ) from None
        old = self._snap.doc
        if mark.query_id in old.order and mark.query_id not in cur.doc.order:
            self._snap = cur
            raise LabelConflictError(
                f"{self.name} changed on disk and no longer has query {mark.query_id!r}; the mark was not written"
            )
        before = old.current(mark.query_id, mark.chunk_id)
        now = cur.doc.current(mark.query_id, mark.chunk_id)
        self._snap = cur
        if check and before != now:
            raise LabelConflictError(
                f"{self.name} changed on disk: someone else set {mark.chunk_id} for {mark.query_id} to "
                f"{word(now[0])} (it was {word(before[0])} here); the mark was not written, the file was re-read"
            )
        return cur
