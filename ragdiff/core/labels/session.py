"""One label file open for marking: read -> plan -> verify -> journal -> write; undo, retry, recover.

- Every mark is saved at once: the edited text (planned by the file's document class, see `document`) is
  re-read with the gold loader's own reader and must say exactly the old judgments with this one change,
  or nothing is written (LabelFormatError).
- Every mark and undo goes to the journal beside the file (ragdiff.core.journal) BEFORE the rename, and a
  "saved" line after it. Undo reads the journal, so it works across restarts; it takes back only this
  reviewer's own marks.
- Before every write the file is read again under a lock. If someone else changed it, the mark is applied
  to their version; if they changed the label of this very chunk, LabelConflictError (never overwrite
  their edit).
- A label file reached through a symbolic link is written where the link points; the link stays.
"""

from __future__ import annotations

import dataclasses
import gc
import getpass
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.formats import GOLD_FORMATS as FORMATS
from ragdiff.core.formats import locate
from ragdiff.core.journal import Journal, Op, first_problem, journal_path, replay, utc_now
from ragdiff.core.labels.atomic import _patch, _unpatch, atomic_write, clean_stray_temps, file_lock, stat_key
from ragdiff.core.labels.document import LabelDoc, check_grade
from ragdiff.core.labels.edits import sha
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, LabelWriteError, UnknownQueryError
from ragdiff.core.labels.marks import LABELS, Change, Mark, judgment, normal_mark, word
from ragdiff.core.labels.qrels_doc import QrelsDoc
from ragdiff.core.labels.reader import parse_document
from ragdiff.core.labels.yaml_doc import PROPOSED, map_grade
from ragdiff.core.textio import BOM


FREEZE_AT = 1 << 18  # characters of label file above which its parsed document is frozen (see LabelFile)


@dataclass
class _Snapshot:
    raw: bytes
    sha: str
    stat: tuple
    bom: bool
    text: str
    doc: LabelDoc


def _who(reviewer: str | None) -> str:
    if reviewer:
        return reviewer
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


class LabelFile:
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

    # ------------------------------------------------------------------ reading

    def _journal_records(self) -> list[dict]:
        """The journal's records; LabelFormatError naming its line when one is not what this writer writes
        (a hand edit, a merge): undo and recovery read them, so a foreign one is refused, never guessed at."""
        try:
            numbered = self.journal.numbered()
        except OSError as err:
            raise LabelWriteError(f"cannot read the journal {self.journal.path} ({err.strerror or err})") from None
        bad = first_problem(numbered)
        if bad is not None:
            raise LabelFormatError(f"{self.journal.path}:{bad[0]}: {bad[1]}; nothing was written")
        return [rec for _line, rec in numbered]

    def _read(self) -> _Snapshot:
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
        return _Snapshot(raw, sha(raw), stat_key(st), bom, text, None)  # type: ignore[arg-type]

    def _parse(self, text: str) -> LabelDoc:
        try:
            return parse_document(Path(self.name), self.fmt, text, self._beir_dir, empty_start=True)
        except InputError as err:
            raise LabelFormatError(str(err)) from None

    def _encode(self, text: str, bom: bool) -> bytes:
        return (BOM if bom else b"") + text.encode("utf-8")

    # ------------------------------------------------------------------ reading API

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

    # ------------------------------------------------------------------ marks

    def apply(self, mark: Mark) -> Change:
        """Write one mark; the Change says what the chunk's judgment was and is now, and the sentence."""
        self.flush()
        return self._apply(normal_mark(mark), kind="mark")

    # ------------------------------------------------------------------ group commit

    @property
    def unwritten(self) -> int:
        """Decisions durable in the journal and not yet in the label file (`flush` writes them)."""
        return len(self._unwritten)

    def apply_many(self, marks: list[Mark]) -> list[Change | Exception]:
        """Make a batch of marks durable together: each planned and verified like a mark, then ONE journal
        append and ONE fsync for all of them. The label file is not rewritten here (`flush` does, once for
        many batches); until then the marks are what `current_label` says and what a crash replays on the
        next open. One result per mark, in order: its Change, or the error that refused it (nothing of a
        refused mark is journaled). Raises LabelWriteError when the journal cannot be written (every mark
        is then kept in memory, `pending`)."""
        marks = [normal_mark(m) for m in marks]
        results: list[Change | Exception | None] = [None] * len(marks)
        todo: list[tuple[int, Mark]] = []
        for i, mark in enumerate(marks):
            try:
                self._check(mark)
                todo.append((i, mark))
            except LabelFormatError as err:
                results[i] = err
        if not todo:
            return results  # type: ignore[return-value]
        try:
            return self._apply_many_locked(todo, results)
        except LabelWriteError:
            # the marks stay in memory for retry() (a journal that could not be written, a file gone)
            for _i, mark in todo:
                if not any(m == mark for m, _ in self._pending):
                    self._pending.append((mark, None))
            raise

    def _apply_many_locked(self, todo: list[tuple[int, Mark]], results: list) -> list:
        with file_lock(self.path):
            self._catch_up([m for _i, m in todo], results, [i for i, _m in todo])
            todo = [(i, m) for i, m in todo if results[i] is None]
            snap = self._snap
            for i, mark in todo:
                if mark.query_id not in snap.doc.judg:
                    try:
                        self._require_query(snap.doc, mark.query_id)
                    except UnknownQueryError as err:
                        results[i] = err
            todo = [(i, m) for i, m in todo if results[i] is None]
            doc, planned = self._plan_many(snap, todo)
            records, changes = [], {}
            for i, mark in todo:
                p = planned[i]
                if isinstance(p, Exception):
                    results[i] = p
                    continue
                rec = {"type": "mark", "id": uuid.uuid4().hex, "file": self.name, "query": mark.query_id,
                       "chunk": mark.chunk_id, "label": mark.label, "grade": mark.grade, "prev_label": p.prev[0],
                       "prev_grade": p.prev[1], "who": self.reviewer, "when": utc_now(), "run": mark.run,
                       "rank": mark.rank}
                if p.noop:
                    rec["noop"] = True
                    before = judgment(*p.prev)
                    changes[i] = Change(mark.query_id, mark.chunk_id, before, before, self._noop_sentence(mark, p.prev),
                                        saved=False)
                else:
                    rec.update(before_sha256=None, after_sha256=None, patch=p.patch)
                    changes[i] = Change(mark.query_id, mark.chunk_id, judgment(*p.prev),
                                        judgment(mark.label, mark.grade), self._sentence(mark, p.prev, p.notes, True),
                                        saved=True)
                records.append(rec)
            chain = [r for r in records if not r.get("noop")]
            new_snap = snap
            if chain and not self._unwritten:
                self._disk = (snap.sha, snap.stat)
            if chain:
                new_raw = self._encode(doc.text, snap.bom)
                new_snap = _Snapshot(new_raw, sha(new_raw), snap.stat, snap.bom, doc.text, doc)
                chain[0]["before_sha256"], chain[-1]["after_sha256"] = snap.sha, new_snap.sha
            try:
                self.journal.append_many([*self._deferred, *records])
            except OSError as err:
                raise LabelWriteError(
                    f"cannot save {self.path}: cannot write the journal {self.journal.path} "
                    f"({err.strerror or err}); the file was not changed, the marks are kept for retry()") from None
            self._deferred = []
            for rec in records:
                self._replay.ops[rec["id"]] = Op(rec, status="saved" if rec.get("noop") else None)
            self._unwritten += [r["id"] for r in chain]
            self._snap = new_snap
        for i, change in changes.items():
            results[i] = change
        return results  # type: ignore[return-value]

    def _noop_sentence(self, mark: Mark, prev: tuple[str, int | None]) -> str:
        said = word(mark.label) + (f" (grade {prev[1]})" if mark.label == "gold" and prev[1] is not None else "")
        if mark.label == "none":
            return f"{mark.chunk_id} has no label for {mark.query_id}; nothing to save"
        return f"{mark.chunk_id} is already {said} for {mark.query_id}; nothing to save"

    def _plan_many(self, snap: _Snapshot, todo: list[tuple[int, Mark]]) -> tuple[LabelDoc, dict]:
        """Each mark planned on the document as the marks before it left it: a round of marks on different
        queries as one edit (`group.plan_round`), else one mark after another by the single mark's path."""
        from ragdiff.core.labels.group import Planned, plan_round, rounds

        doc, out = snap.doc, {}
        for batch in rounds(todo):
            together = plan_round(doc, batch, self._parse, self._is_noop) if len(batch) > 1 else None
            if together is not None:
                doc, planned = together
                out.update(planned)
                continue
            singles = []
            for part in rounds(batch, per="query") if len(batch) > 1 else [batch]:
                together = plan_round(doc, part, self._parse, self._is_noop) if len(part) > 1 else None
                if together is not None:
                    doc, planned = together
                    out.update(planned)
                else:
                    singles += part
            for i, mark in sorted(singles):
                prev = doc.current(mark.query_id, mark.chunk_id)
                if self._is_noop(doc, mark):
                    out[i] = Planned(mark, prev)
                    continue
                one = _Snapshot(b"", "", snap.stat, snap.bom, doc.text, doc)
                try:
                    new_text, notes, new_doc = self._plan(one, mark)
                except (LabelFormatError, LabelConflictError) as err:
                    out[i] = err
                    continue
                out[i] = Planned(mark, prev, notes, _patch(doc.text, new_text))
                doc = new_doc
        return doc, out

    def flush(self, recovered: bool = False) -> int:
        """Write every decision journaled by `apply_many` and not yet in the label file: ONE rewrite (temp
        file, fsync, rename) with the same byte-preserving edits, then one journal line per decision saying
        it is saved (one append, one fsync). Returns how many. LabelWriteError when the file cannot be
        written: the decisions stay in the journal (a crash now replays them on the next open) and a later
        `flush` saves them. When someone else changed the file meanwhile, the decisions are applied to
        their version; one whose chunk they set otherwise is named in `conflicts` and kept for retry()
        (LabelConflictError after the rest is written)."""
        if not self._unwritten:
            return 0
        self.conflicts = []
        written = 0
        with file_lock(self.path):
            for _attempt in range(3):
                cur = self._read()
                if cur.sha != self._disk[0]:
                    self._rebase(cur)
                    if not self._unwritten:
                        break
                done = atomic_write(self.path, self._snap.raw, cur.stat)
                if not done:
                    continue
                self._snap.stat = done
                ids, self._unwritten = self._unwritten, []
                now = utc_now()
                extra = {"recovered": True} if recovered else {}
                self._journal_quiet_many([{"type": "saved", "id": i, "when": now, **extra} for i in ids])
                for i in ids:
                    self._replay.ops[i].status = "saved"
                    self._replay.ops[i].recovered = recovered
                written = len(ids)
                break
            else:
                raise LabelConflictError(f"{self.name} keeps changing on disk; the decisions stay in its journal")
        if self.conflicts:
            raise LabelConflictError("; ".join(self.conflicts))
        return written

    def _catch_up(self, marks: list[Mark], results: list, index: list[int]) -> None:
        """Before a batch: the file as it is on disk. Unchanged since this writer's last read or write: nothing
        to do. Changed by someone else: the decisions not yet written are applied to their version
        (`_rebase`), and a mark of the batch whose chunk they changed is refused (their edit is never
        overwritten unseen)."""
        cur = self._read()
        if cur.sha == (self._disk[0] if self._unwritten else self._snap.sha):
            if self._unwritten:
                self._disk = (cur.sha, cur.stat)
            else:
                self._snap.stat = cur.stat
            return
        before = self._snap.doc
        self._rebase(cur)
        now = self._snap.doc
        for i, mark in zip(index, marks):
            if mark.query_id in before.order and mark.query_id not in now.order:
                results[i] = LabelConflictError(
                    f"{self.name} changed on disk and no longer has query {mark.query_id!r}; the mark was not written")
            elif before.current(mark.query_id, mark.chunk_id) != now.current(mark.query_id, mark.chunk_id):
                was, theirs = before.current(mark.query_id, mark.chunk_id), now.current(mark.query_id, mark.chunk_id)
                results[i] = LabelConflictError(
                    f"{self.name} changed on disk: someone else set {mark.chunk_id} for {mark.query_id} to "
                    f"{word(theirs[0])} (it was {word(was[0])} here); the mark was not written, the file was re-read")

    def _rebase(self, cur: _Snapshot) -> None:
        """Someone else's version of the file (`cur`) becomes the base; each decision journaled here and not yet
        written is applied on top of it when their version still has what the decision replaced (or already
        says the same). One whose chunk they set to something else is a conflict: named in `conflicts`, kept
        for retry() (which then writes it over theirs) or discard_pending(); nothing of theirs is lost."""
        try:
            cur.doc = self._parse(cur.text)
        except LabelFormatError as err:
            raise LabelConflictError(
                f"{self.name} changed on disk and no longer reads as a label file ({err}); "
                f"{len(self._unwritten)} decisions wait in its journal") from None
        snap = cur
        keep = []
        for op_id in self._unwritten:
            op = self._replay.ops[op_id]
            mark = _mark_of(op.record)
            prev = (op.record.get("prev_label") or "none", op.record.get("prev_grade"))
            now = snap.doc.current(mark.query_id, mark.chunk_id)
            if mark.query_id in snap.doc.judg and _holds(now, mark):
                keep.append(op_id)
                continue
            if mark.query_id in snap.doc.judg and now == prev:
                try:
                    new_text, _notes, new_doc = self._plan(snap, mark)
                except (LabelFormatError, LabelConflictError):
                    pass
                else:
                    raw = self._encode(new_text, snap.bom)
                    snap = _Snapshot(raw, sha(raw), cur.stat, snap.bom, new_text, new_doc)
                    keep.append(op_id)
                    continue
            op.status = "failed"
            self._journal_quiet({"type": "failed", "id": op_id, "when": utc_now(),
                                 "error": "changed on disk by someone else"})
            self._pending.append((mark, op_id))
            self.conflicts.append(
                f"{self.name} changed on disk: someone else set {mark.chunk_id} for {mark.query_id} to "
                f"{word(now[0])}; your {word(mark.label)} is kept unsaved (r writes it over theirs, D drops it)")
        if snap is cur and keep:
            snap = _Snapshot(cur.raw, cur.sha, cur.stat, cur.bom, cur.text, cur.doc)
        self._snap = snap
        self._disk = (cur.sha, cur.stat)
        self._unwritten = keep

    def _check(self, mark: Mark) -> None:
        """A mark that can never be written is refused before anything is read, journaled or saved."""
        if mark.label not in LABELS:
            raise LabelFormatError(f"unknown label {mark.label!r}; expected one of {', '.join(LABELS)}")
        g = mark.grade
        if g is not None and (isinstance(g, bool) or not isinstance(g, int)):
            raise LabelFormatError(f"grade must be a whole number, not {g!r}")
        if g is not None and check_grade(g):
            raise LabelFormatError(f"{check_grade(g)}; nothing was written")
        if mark.label == "gold" and g is not None and g < 1:
            raise LabelFormatError(
                f"grade {g} is not gold (grade 0 means judged not relevant); mark {mark.chunk_id} not relevant instead"
            )
        if mark.label == "drafted" and g is not None and g < 0:
            raise LabelFormatError(f"a drafted grade is 0 or more, not {g}; nothing was written")
        if mark.label == "not_relevant" and g not in (None, 0):
            raise LabelFormatError(f"not relevant has grade 0, not {g}")
        if mark.label in ("evidence", "none") and g is not None:
            raise LabelFormatError(f"{word(mark.label)} takes no grade (got {g})")
        if not isinstance(mark.chunk_id, str) or not mark.chunk_id.strip():
            raise LabelFormatError(f"a chunk id must be a non-empty string, not {mark.chunk_id!r}; nothing was written")

    def _require_query(self, doc: LabelDoc, qid: str) -> None:
        if qid not in doc.judg:
            raise UnknownQueryError(
                f"{self.name} has no query {qid!r}; ragdiff does not add queries to a label file by itself"
            )

    def _is_noop(self, doc: LabelDoc, mark: Mark) -> bool:
        cur, cur_g = doc.current(mark.query_id, mark.chunk_id)
        if cur != mark.label:
            return False
        if mark.label == "gold" and mark.grade is None:
            return True  # gold without a grade keeps whatever grade it has
        return cur_g == map_grade(mark.label, mark.grade) or mark.label == "none"

    def _plan(self, snap: _Snapshot, mark: Mark) -> tuple[str, list[str], LabelDoc]:
        """The new text for this mark on this snapshot, verified; raises LabelFormatError."""
        doc = snap.doc
        qid, chunk, label, grade = mark.query_id, mark.chunk_id, mark.label, mark.grade
        if not doc.can_express(label):
            doc.plan(qid, chunk, label, grade)  # says why, in the format's own words
            raise LabelFormatError(f"{doc.shape} cannot say {word(label)}")  # pragma: no cover
        new_text, notes = doc.plan(qid, chunk, label, grade)
        notes = list(notes)
        if label == "gold" and grade is None and doc.graded(qid):
            notes.append("grade 1, the default for this graded set")
        return new_text, notes, self._verify(snap, new_text, mark)

    def _verify(self, snap: _Snapshot, new_text: str, mark: Mark) -> LabelDoc:
        """Re-read the edited text with the loader's own reader: it must hold exactly the old judgments
        with this one change, or nothing is written (what ragdiff writes, ragdiff reads back as written).
        Returns the document of the new text (the next snapshot's)."""
        old = snap.doc
        q = old.state_of(mark.query_id)
        q.pop(mark.chunk_id, None)
        if mark.label != "none":
            q[mark.chunk_id] = (mark.label, map_grade(mark.label, mark.grade))
        if not new_text.strip():  # the loader refuses an empty file
            raise LabelFormatError(f"removing {mark.chunk_id} would leave {self.name} empty, and an empty file is "
                                   "not a gold set; nothing was written")
        if "\x00" in new_text and "\x00" not in snap.text:  # the loader would call the file binary
            raise LabelFormatError(f"cannot write {mark.chunk_id!r} into {self.name}: a NUL character makes it "
                                   "a binary file; nothing was written")
        fast = old.reparse(new_text, mark.query_id) if hasattr(old, "reparse") else None
        if fast is not None:
            # only this query's entry was read again; every other entry is the same bytes, reused
            got_q = fast.state_of(mark.query_id)
            if got_q != q:
                raise LabelFormatError(
                    f"cannot write {mark.chunk_id} → {word(mark.label)} for {mark.query_id} into {self.name} "
                    "cleanly (the edited file would not say exactly that); nothing was written"
                )
            return fast
        expected = old.state()
        expected[mark.query_id] = q
        try:
            got_doc = self._parse(new_text)
            got = got_doc.state()
        except Exception as err:  # noqa: BLE001 - whatever the reader says, it is a refusal, not a save
            raise LabelFormatError(f"cannot write this mark into {self.name} cleanly ({err}); nothing was written") from None
        if isinstance(snap.doc, QrelsDoc):
            # a qrels query exists only through its lines: removing its last one drops it
            expected = {q: d for q, d in expected.items() if d}
            got = {q: d for q, d in got.items() if d}
            order_ok = sorted(got) == sorted(expected)
        else:
            order_ok = list(got) == list(expected)
        if got != expected or not order_ok:
            raise LabelFormatError(
                f"cannot write {mark.chunk_id} → {word(mark.label)} for {mark.query_id} into {self.name} "
                "cleanly (the edited file would not say exactly that); nothing was written"
            )
        return got_doc

    def _sentence(self, mark: Mark, prev: tuple[str, int | None], notes: list[str], saved: bool) -> str:
        what = word(mark.label)
        if mark.label == "gold" and mark.grade is not None:
            what += f" (grade {mark.grade})"
        elif mark.label == "drafted":
            what = vocab.word(mark.label, map_grade(mark.label, mark.grade))
        if mark.label == "none":
            head = f"{mark.chunk_id}: label removed for {mark.query_id}"
        else:
            head = f"{mark.chunk_id} → {what} for {mark.query_id}"
        extras = []
        if prev[0] == "drafted" and mark.label != "drafted":
            extras.append(f"was {vocab.word(prev[0], prev[1])}")  # the model's proposal, with its grade
        elif prev[0] != "none" and prev[0] != mark.label:
            extras.append(f"was {word(prev[0])}")
        elif prev[0] == "gold" and mark.label == "gold" and prev[1] != mark.grade:
            extras.append(f"was grade {1 if prev[1] is None else prev[1]}")
        extras += notes
        if extras:
            head += f" ({'; '.join(extras)})"
        return head + (f", saved to {self.name}" if saved else "")

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
                said = word(mark.label) + (f" (grade {prev[1]})" if mark.label == "gold" and prev[1] is not None else "")
                if mark.label == "none":
                    sentence = f"{mark.chunk_id} has no label for {mark.query_id}; nothing to save"
                else:
                    sentence = f"{mark.chunk_id} is already {said} for {mark.query_id}; nothing to save"
                before = judgment(*prev)
                return Change(mark.query_id, mark.chunk_id, before, before, sentence, saved=False)
            new_text = None
            notes: list[str] = []
            if unpatch is not None:
                cand = _unpatch(snap.text, unpatch)
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
                "patch": _patch(snap.text, new_text),
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
            self._snap = _Snapshot(new_raw, new_sha, done, snap.bom, new_text, new_doc)
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

    def _refresh(self, mark: Mark, check: bool = True) -> _Snapshot:
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

    # ------------------------------------------------------------------ writing

    # ------------------------------------------------------------------ the journal

    def _journal(self, rec: dict, mark: Mark, retry_of: str | None) -> None:
        try:
            for d in self._deferred:
                self.journal.append(d)
            self._deferred = []
            self.journal.append(rec)
        except OSError as err:
            if retry_of is None and not any(m == mark for m, _ in self._pending):
                self._pending.append((mark, None))
            raise LabelWriteError(
                f"cannot save {self.path}: cannot write the journal {self.journal.path} "
                f"({err.strerror or err}); the file was not changed, the mark is kept for retry()"
            ) from None
        self._replay.ops[rec["id"]] = Op(rec)
        if retry_of in self._replay.ops:
            self._replay.ops[retry_of].retried_by = rec["id"]

    def _journal_quiet(self, rec: dict) -> bool:
        try:
            self.journal.append(rec)
            return True
        except OSError:
            return False

    def _journal_quiet_many(self, records: list[dict]) -> bool:
        try:
            self.journal.append_many(records)
            return True
        except OSError:
            return False

    def _journal_noop(self, mark: Mark, prev, retry_of) -> None:
        rec = {
            "type": "mark", "id": uuid.uuid4().hex, "file": self.name, "query": mark.query_id,
            "chunk": mark.chunk_id, "label": mark.label, "grade": mark.grade, "prev_label": prev[0],
            "prev_grade": prev[1], "who": self.reviewer, "when": utc_now(), "run": mark.run, "rank": mark.rank,
            "noop": True,
        }
        if retry_of is not None:
            rec["retry_of"] = retry_of
        if self._journal_quiet(rec):
            op = Op(rec, status="saved")
            self._replay.ops[rec["id"]] = op
            if retry_of in self._replay.ops:
                self._replay.ops[retry_of].retried_by = rec["id"]
        if retry_of is not None:
            self._pending = [(m, i) for m, i in self._pending if i != retry_of]

    def _fail(self, rec: dict, mark: Mark, err: Exception) -> None:
        self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": str(err)})
        op = self._replay.ops.get(rec["id"])
        if op is not None:
            op.status = "failed"
        if rec["type"] == "mark":
            retry_of = rec.get("retry_of")
            if retry_of is not None:
                # the retry failed again: the retry op is now the one to retry
                self._pending = [(m, rec["id"] if i == retry_of else i) for m, i in self._pending]
            else:
                self._pending.append((mark, rec["id"]))

    def _recover(self) -> None:
        """Resolve journal ops whose save was never confirmed, from what the file now says. A batch's ops are a
        chain (journal.py): the file's sha256 at a chain's end says every op up to it is in the file and none
        after it; where it matches no op (someone else's edit since), each op's chunk is read."""
        snap = self._snap
        self._replayed: list[Op] = []
        unconfirmed = self._replay.unconfirmed()
        chained = [op for op in unconfirmed if "edit" not in op.record]
        reached = max((n for n, op in enumerate(chained) if op.record.get("after_sha256") == snap.sha), default=None)
        if reached is None and chained and chained[0].record.get("before_sha256") == snap.sha:
            reached = -1  # the file is as it was before the first of them
        confirmed: list[str] = []  # in the file, only their "saved" lines lost
        for op in unconfirmed:
            r = op.record
            if "edit" in r:  # a query added or a snapshot recorded: the file's sha says which way it went
                applied = snap.sha == r.get("after_sha256")
                op.status, op.recovered = ("saved", True) if applied else ("failed", False)
                self._deferred.append({"type": op.status, "id": op.id, "when": utc_now(),
                                       **({"recovered": True} if applied else {"error": "not saved (found on restart)"})})
                if applied and op.kind == "undo" and r.get("undoes") in self._replay.ops:
                    self._replay.ops[r["undoes"]].undone_by = op.id
                self.recovery_notes.append(f"{'undo of ' if op.kind == 'undo' else ''}{r['edit']} (journaled "
                                           f"{r.get('when', '?')}) {'was saved' if applied else 'never reached'} "
                                           f"{self.name}")
                continue
            mark = _mark_of(r)
            if reached is not None:
                applied = chained.index(op) <= reached
            elif snap.sha == r.get("after_sha256"):
                applied = True
            elif snap.sha == r.get("before_sha256"):
                applied = False
            else:
                applied = _holds(snap.doc.current(mark.query_id, mark.chunk_id), mark)
            when = r.get("when", "?")
            desc = self._sentence(mark, (r.get("prev_label", "none"), r.get("prev_grade")), [], saved=False)
            if applied:
                op.status = "saved"
                op.recovered = True
                self._deferred.append({"type": "saved", "id": op.id, "when": utc_now(), "recovered": True})
                if op.kind == "undo":
                    target = self._replay.ops.get(r.get("undoes"))
                    if target is not None:
                        target.undone_by = op.id
                confirmed.append(f"{'undo: ' if op.kind == 'undo' else ''}{desc} (journaled {when}) was saved to "
                                 f"{self.name}, but the program stopped before confirming it; the file has it")
            elif op.kind == "mark" and r.get("who") == self.reviewer:
                self._replayed.append(op)  # durable in the journal, not yet in the file: written now
            elif op.kind == "mark":
                self._pending.append((mark, op.id))
                self.recovery_notes.append(
                    f"{desc} (journaled {when} by {r.get('who')}) is not in {self.name}: their program stopped "
                    "before saving it, or is saving it now; r writes it, D drops it, or leave it to them"
                )
            else:
                op.status = "failed"
                self._deferred.append({"type": "failed", "id": op.id, "when": utc_now(), "error": "not saved (found on restart)"})
                self.recovery_notes.append(
                    f"undo: {desc} (journaled {when}) never reached {self.name}; the mark it meant to undo is still there"
                )
        if len(confirmed) > 1:  # a batch cut short after the rename: one sentence, not one a decision
            confirmed = [f"{len(confirmed)} decisions were saved to {self.name}, but the program stopped before "
                         "confirming them; the file has them"]
        self.recovery_notes += confirmed
        for op in self._replay.failed():
            if op.id not in [i for _, i in self._pending]:
                mark = _mark_of(op.record)
                self._pending.append((mark, op.id))
                self.recovery_notes.append(
                    f"{self._sentence(mark, (op.record.get('prev_label', 'none'), op.record.get('prev_grade')), [], False)} "
                    f"could not be saved to {self.name} earlier; it is kept unsaved: r writes it again, D drops it"
                )

    def _write_recovered(self) -> None:
        """The decisions this reviewer's program journaled (durable: the screen counted them judged) and did not
        get into the file before it stopped: applied in journal order and written now, in one rewrite. One
        whose chunk has changed since is a conflict, kept unsaved (r writes it), never forced."""
        ops, self._replayed = self._replayed, []
        if not ops:
            return
        snap = self._snap
        doc, planned_ok, conflicts = snap.doc, [], []
        todo = []
        for n, op in enumerate(ops):
            r = op.record
            mark = _mark_of(r)
            prev = (r.get("prev_label") or "none", r.get("prev_grade"))
            todo.append((n, mark, prev, op))
        # each in order on the document the ones before it made (the planner's rounds keep a query's order)
        state = {}
        for n, mark, prev, op in todo:
            now = state.get((mark.query_id, mark.chunk_id)) or doc.current(mark.query_id, mark.chunk_id)
            if mark.query_id not in doc.judg or (now != prev and not _holds(now, mark)):
                conflicts.append((mark, op))
                continue
            state[(mark.query_id, mark.chunk_id)] = (mark.label, map_grade(mark.label, mark.grade))
            planned_ok.append((n, mark))
        new_doc, planned = self._plan_many(snap, planned_ok)
        ids = []
        for n, mark in planned_ok:
            p = planned[n]
            if isinstance(p, Exception):
                conflicts.append((mark, ops[n]))
            elif not p.noop:
                ids.append(ops[n].id)
                self.recovered.append(Change(mark.query_id, mark.chunk_id, judgment(*p.prev),
                                             judgment(mark.label, mark.grade), self._sentence(mark, p.prev, [], True),
                                             saved=True))
            else:  # already so (a later decision of the same chunk was in the file): nothing to write
                ops[n].status = "saved"
                self._deferred.append({"type": "saved", "id": ops[n].id, "when": utc_now(), "recovered": True})
        for mark, op in conflicts:
            self._pending.append((mark, op.id))
            self.recovery_notes.append(
                f"{self._sentence(mark, (op.record.get('prev_label', 'none'), op.record.get('prev_grade')), [], False)} "
                f"(decided {op.record.get('when', '?')}, before ragdiff stopped) was not written to {self.name}: "
                "that chunk has changed since; it is kept unsaved: r writes it over the change, D drops it")
        if not ids:
            return
        raw = self._encode(new_doc.text, snap.bom)
        self._disk = (snap.sha, snap.stat)
        self._snap = _Snapshot(raw, sha(raw), snap.stat, snap.bom, new_doc.text, new_doc)
        self._unwritten = ids
        n = len(ids)
        decisions = f"{n} decision{'s' if n != 1 else ''}"
        try:
            self.flush(recovered=True)
        except (LabelWriteError, LabelConflictError) as err:
            self.recovery_notes.append(
                f"{decisions} made before ragdiff stopped {'were' if n != 1 else 'was'} in its journal but not in "
                f"{self.name}, and cannot be written now ({err}); they are kept: r writes them")
            return
        self.recovery_notes.append(
            f"{decisions} made before ragdiff stopped {'were' if n != 1 else 'was'} in its journal but not yet in "
            f"{self.name}: written now")

    # ------------------------------------------------------------------ undo / retry

    def undo(self, edits: bool = False) -> Change | Edit | None:
        """Revert the last mark not yet undone (repeatable; survives restarts through the journal).

        Byte for byte when the file still holds that mark's lines as written; otherwise the previous label
        is set again with the same care as a mark. LabelConflictError when the chunk's label has changed
        since (someone else's edit is never undone). edits=True (`labels undo`): the last of this reviewer's
        marks and file-level edits (a query added, a snapshot recorded), whichever came last.
        """
        self.flush()
        # a mark that changed nothing stays in the journal as a record of what was looked at, but `u` means
        # "take back my last change": it goes to the last mark that changed the file
        # and only this reviewer's own: another person's mark is never taken back (the journal knows who)
        marks = {op.id for op in self._replay.undo_stack()
                 if not op.record.get("noop") and op.record.get("who") == self.reviewer}
        # keeping or dropping a drafted query is a decision like a mark (`u` takes it back); with `edits`
        # (`labels undo`) a query added or a snapshot recorded is one step back too, in journal order
        stack = [op for op in self._replay.ops.values()
                 if op.id in marks or (op.kind == "edit" and op.status == "saved" and op.undone_by is None
                                       and op.record.get("who") == self.reviewer
                                       and (edits or op.record.get("edit") in QUERY_DECISIONS))]
        if not stack:
            return None
        op = stack[-1]
        if op.kind == "edit":
            return self._undo_edit(op)
        dated = self._reviewed_by(op)
        if dated is not None:  # the decision finished its query: the date it set goes with it
            self._undo_edit(dated)
        r = op.record
        mark = _mark_of(r)
        prev_label = r.get("prev_label") or "none"
        back = Mark(mark.query_id, mark.chunk_id, prev_label,
                    r.get("prev_grade") if prev_label in ("gold", "drafted") else None, mark.run, mark.rank)
        snap = self._refresh(back, check=False)
        now = snap.doc.current(mark.query_id, mark.chunk_id)
        if not _holds(now, mark):
            raise LabelConflictError(
                f"cannot undo {mark.chunk_id} → {word(mark.label)} for {mark.query_id}: it is now "
                f"{word(now[0])} in {self.name} (changed since); nothing was written"
            )
        change = self._apply(back, kind="undo", undoes=op, unpatch=r.get("patch"))
        said = "undid: " + change.message + (f" (and {mark.query_id}'s reviewed: date)" if dated is not None else "")
        return dataclasses.replace(change, message=said)

    def _reviewed_by(self, op: Op) -> Op | None:
        """The `reviewed:` date the mark `op` set by finishing its query (`ragdiff judge`): the edit journaled
        right after it, for its query, by this reviewer, saved and not taken back; else None."""
        ops = list(self._replay.ops.values())
        for later in ops[ops.index(op) + 1:]:
            if later.record.get("noop"):
                continue  # a mark that changed nothing wrote nothing between them
            r = later.record
            if (later.kind == "edit" and r.get("edit") == "reviewed" and r.get("query") == op.record.get("query")
                    and r.get("who") == self.reviewer and later.status == "saved" and later.undone_by is None):
                return later
            return None
        return None

    # ------------------------------------------------------------------ file-level edits

    def add_query(self, text: str, query_id: str | None = None, regression: bool = False,
                  tags: list[str] | tuple[str, ...] = (), extra: list[tuple[str, object]] = ()) -> Edit:
        """Append one query (`labels add`): atomic, journaled, undone by `undo(edits=True)`. Without an id
        the text is the query's id, as the label file reads it. `extra`: keys of the file's own written after
        the text (a query from a log: count, source, variants, context; yaml_doc.entry_fields)."""
        qid = query_id if query_id is not None else text
        if not isinstance(text, str) or not text.strip():
            raise LabelFormatError("a query needs its text; nothing was written")
        if not qid.strip():
            raise LabelFormatError("a query id must be a non-empty string; nothing was written")
        tags = list(dict.fromkeys(tags))
        if any(not t.strip() for t in tags):
            raise LabelFormatError("a tag must be a non-empty word; nothing was written")

        def plan(doc: LabelDoc) -> str:
            if qid in doc.judg:
                raise LabelFormatError(f"{self.name} already has query {qid!r}; nothing was written")
            same = [q for q in doc.order if doc.texts.get(q) in (text, qid) or q == text]
            if same:
                raise LabelFormatError(f"{self.name} already has a query with this text ({same[0]!r}); nothing was "
                                       "written")
            return doc.plan_add_query(query_id, text, regression, tags, extra)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            expected[qid] = {}
            return (new.state() == expected and new.order == [*old.order, qid] and new.texts.get(qid) == text
                    and new.regression.get(qid, False) == regression and new.tags.get(qid, []) == tags
                    and new.corpus == old.corpus)

        sentence = f"added query {qid!r}" + (f" ({text})" if query_id is not None else "")
        return self._edit({"edit": "add_query", "query": qid, "text": text, "regression": regression,
                           "tags": tags}, plan, check, sentence)

    def set_corpus(self, path: str, sha256: str) -> Edit:
        """Record the corpus snapshot (`labels snapshot`): `corpus: {path, sha256}`, nothing else changed."""
        def plan(doc: LabelDoc) -> str:
            if doc.corpus == (path, sha256):
                return doc.text
            return doc.plan_corpus(path, sha256)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and new.corpus == (path, sha256))

        prev = self._snap.doc.corpus
        return self._edit({"edit": "corpus", "query": None, "corpus": {"path": path, "sha256": sha256},
                           "prev_corpus": {"path": prev[0], "sha256": prev[1]}}, plan, check,
                          f"corpus snapshot {path} sha256 {sha256[:12]}… recorded")

    @property
    def records_reviewed(self) -> bool:
        """Can this file say `reviewed:` (the ragdiff label file, YAML or JSON)?"""
        return self._snap.doc.records_reviewed

    def set_reviewed(self, query_id: str, day: str) -> Edit:
        """`reviewed: DAY` for one query (a person has read its labels: `ragdiff judge` when the query's pool
        is all judged): atomic, journaled, taken back by `undo(edits=True)`; only that entry's line changes.
        LabelFormatError when the file has no place for it (see `records_reviewed`)."""
        from datetime import date

        date.fromisoformat(day)  # ValueError: not a date (a caller's mistake, not the file's)

        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            if doc.reviewed.get(query_id) == day:
                return doc.text
            return doc.plan_reviewed(query_id, day)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = dict(old.reviewed)
            expected[query_id] = day
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and new.reviewed == expected and new.corpus == old.corpus)

        prev = self._snap.doc.reviewed.get(query_id)
        return self._edit({"edit": "reviewed", "query": query_id, "reviewed": day, "prev_reviewed": prev},
                          plan, check, f"{query_id} reviewed {day}", reparse=query_id)

    def add_drafts(self, drafts: list[tuple[str, str, int]], source: str | None = None) -> Edit:
        """Many drafts (query, chunk, grade) as ONE journaled, atomic edit (`labels import`): one write, one
        `labels undo` takes the whole import back. A chunk a person has judged must not be among them (the
        caller leaves those out); each draft is planned by the document class like a mark."""
        drafts = [(q, c, g) for q, c, g in drafts]
        for q, c, g in drafts:
            self._check(Mark(q, c, "drafted", g))

        def plan(doc: LabelDoc) -> str:
            for q, c, g in drafts:
                self._require_query(doc, q)
                if doc.current(q, c)[0] in vocab.MARKABLE:
                    raise LabelConflictError(f"{c} is judged for {q} in {self.name} now; a draft never replaces a "
                                             "person's judgment (nothing was written)")
                text, _notes = doc.plan(q, c, "drafted", g)
                doc = (doc.reparse(text, q) if hasattr(doc, "reparse") else None) or self._parse(text)
            return doc.text

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            for q, c, g in drafts:
                expected[q][c] = ("drafted", g)
            return new.state() == expected and new.order == old.order and new.corpus == old.corpus

        prev = [[q, c, *self._snap.doc.current(q, c)] for q, c, _g in drafts]  # what each chunk was
        n = len(drafts)
        return self._edit({"edit": "drafts", "query": None, "source": source, "count": n,
                           "drafts": [[q, c, g] for q, c, g in drafts], "prev": prev}, plan, check,
                          f"{n} draft{'s' if n != 1 else ''} written" + (f" from {source}" if source else ""))

    def add_drafted_queries(self, queries: list[tuple[str, str, dict[str, int]]], source: str | None = None) -> Edit:
        """Queries a model drafted (`labels add --from DRAFTED.jsonl`), each (id, text, {chunk: grade}), as ONE
        journaled, atomic edit after the last query: each entry says `proposed: true` (the query itself waits for
        a person to keep or drop it) and holds its chunks under `drafted:` (never scored as gold). One `labels
        undo` takes them all back."""
        queries = [(q, t, dict(d)) for q, t, d in queries]
        ids = [q for q, _t, _d in queries]
        if len(set(ids)) != len(ids):
            raise LabelFormatError("two drafted queries would share an id; nothing was written")
        for q, t, drafts in queries:
            if not t.strip() or not q.strip():
                raise LabelFormatError("a drafted query needs its text and id; nothing was written")
            for c, g in drafts.items():
                self._check(Mark(q, c, vocab.DRAFTED, g))

        def plan(doc: LabelDoc) -> str:
            for q, t, _d in queries:
                same = [o for o in doc.order if o == q or doc.texts.get(o) == t]
                if same:
                    raise LabelFormatError(f"{self.name} already has query {same[0]!r}; nothing was written")
            return doc.plan_add_queries([(q, t, False, [], [(PROPOSED, True), (vocab.DRAFTED, d)]
                                          + ([("source", source)] if source else [])) for q, t, d in queries])

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            for q, _t, d in queries:
                expected[q] = {c: (vocab.DRAFTED, g) for c, g in d.items()}
            return (new.state() == expected and new.order == [*old.order, *ids] and new.corpus == old.corpus
                    and all(new.texts.get(q) == t and new.proposed.get(q) is True for q, t, _d in queries))

        n = len(queries)
        return self._edit({"edit": "add_drafted", "query": None, "source": source, "count": n,
                           "queries": [[q, t, d] for q, t, d in queries]}, plan, check,
                          f"{n} drafted quer{'y' if n == 1 else 'ies'} added" + (f" from {source}" if source else ""))

    def keep_query(self, query_id: str) -> Edit:
        """A person kept a drafted query: its `proposed: true` goes (nothing else changes; `u` brings it back)."""
        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            return doc.plan_keep_query(query_id) if doc.proposed.get(query_id) else doc.text

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = dict(old.proposed)
            expected.pop(query_id, None)
            now = {q: v for q, v in new.proposed.items() if v or q != query_id}
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and now == expected and new.corpus == old.corpus)

        return self._edit({"edit": "keep_query", "query": query_id, "text": self._snap.doc.texts.get(query_id)},
                          plan, check, f"kept the drafted query {query_id!r}", reparse=query_id)

    def drop_query(self, query_id: str) -> Edit:
        """A person dropped a drafted query: its entry leaves the label file, its drafts with it. Only a query
        still `proposed:` and with no person's judgment (LabelConflictError otherwise); `u` brings it back byte
        for byte."""
        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            if not doc.proposed.get(query_id):
                raise LabelConflictError(f"{query_id!r} is not a drafted query waiting in {self.name} (kept, or "
                                         "never drafted); only those are dropped (nothing was written)")
            if doc.judg.get(query_id):
                raise LabelConflictError(f"{query_id!r} has judged chunks in {self.name}; take those back before "
                                         "dropping it (nothing was written)")
            return doc.plan_drop_query(query_id)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            expected.pop(query_id, None)
            return (new.state() == expected and new.order == [q for q in old.order if q != query_id]
                    and new.corpus == old.corpus)

        doc = self._snap.doc
        state = {c: g for c, (g, _line) in doc.drafts.get(query_id, {}).items()}
        return self._edit({"edit": "drop_query", "query": query_id, "text": doc.texts.get(query_id),
                           "drafts": state},
                          plan, check, f"dropped the drafted query {query_id!r}")

    def _edit(self, what: dict, plan, check, sentence: str, undoes: Op | None = None,
              reparse: str | None = None) -> Edit:
        """One change beyond a chunk's judgment, written like a mark: under the lock, re-read, planned by the
        document class, re-read and checked, journaled before the rename, confirmed after it. `reparse`: the
        one query whose entry the edit changes (only that entry is read again when the rest is the same)."""
        self.flush()
        with file_lock(self.path):
            for _attempt in range(3):
                snap = self._refresh(_NO_MARK, check=False)
                new_text = plan(snap.doc)
                if new_text == snap.text:
                    return Edit(what["edit"], what.get("query"), f"{sentence}: already so, nothing to save", False)
                try:
                    new_doc = (snap.doc.reparse(new_text, reparse) if reparse is not None
                               and hasattr(snap.doc, "reparse") else None) or self._parse(new_text)
                    ok = check(snap.doc, new_doc)
                except LabelFormatError:
                    ok = False
                if not ok:
                    raise LabelFormatError(f"cannot write this into {self.name} cleanly (the edited file would "
                                           "not say exactly that); nothing was written")
                new_raw = self._encode(new_text, snap.bom)
                rec = {"type": "undo" if undoes is not None else "edit", **what, "id": uuid.uuid4().hex,
                       "file": self.name, "who": self.reviewer, "when": utc_now(), "before_sha256": snap.sha,
                       "after_sha256": sha(new_raw), "patch": _patch(snap.text, new_text)}
                if undoes is not None:
                    rec["undoes"] = undoes.id
                try:
                    self._journal(rec, _NO_MARK, None)
                finally:  # an edit is not a mark to retry(): a failed one is simply not made
                    self._pending = [(m, i) for m, i in self._pending if m is not _NO_MARK]
                try:
                    done = atomic_write(self.path, new_raw, snap.stat)
                except LabelWriteError:
                    self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": "write failed"})
                    self._replay.ops[rec["id"]].status = "failed"
                    raise
                if not done:
                    self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(),
                                         "error": "changed on disk; re-applied"})
                    self._replay.ops[rec["id"]].status = "failed"
                    self._replay.ops[rec["id"]].retried_by = "-"
                    continue
                self._snap = _Snapshot(new_raw, sha(new_raw), done, snap.bom, new_text, new_doc)
                self._journal_quiet({"type": "saved", "id": rec["id"], "when": utc_now()})
                self._replay.ops[rec["id"]].status = "saved"
                if undoes is not None:
                    undoes.undone_by = rec["id"]
                return Edit(what["edit"], what.get("query"), f"{sentence}, saved to {self.name}", True)
        raise LabelConflictError(f"{self.name} keeps changing on disk; nothing was written")

    def _undo_edit(self, op: Op) -> Edit:
        """Take back a file-level edit: its lines as written, byte for byte, or a conflict (never a guess)."""
        r = op.record
        qid = r.get("query")

        def plan(doc: LabelDoc) -> str:
            if r["edit"] == "add_query" and (doc.judg.get(qid) or doc.drafts.get(qid)):
                raise LabelConflictError(f"cannot undo adding query {qid!r}: it has labels since; take those back "
                                         "first (nothing was written)")
            back = _unpatch(doc.text, r["patch"])
            if back is None:
                raise LabelConflictError(f"cannot undo {r['edit']} in {self.name}: its lines have changed since; "
                                         "nothing was written")
            return back

        if r["edit"] == "add_drafted":
            added = [q for q, _t, _d in r["queries"]]

            def check(old: LabelDoc, new: LabelDoc) -> bool:
                expected = old.state()
                for q in added:  # a person's judgment there since: taking it back would lose it
                    if any(kind != vocab.DRAFTED for kind, _g in expected.pop(q, {}).values()):
                        return False
                return new.state() == expected and new.order == [q for q in old.order if q not in added]
            sentence = f"undid: {len(added)} drafted quer{'y' if len(added) == 1 else 'ies'} added"
        elif r["edit"] == "keep_query":
            def check(old: LabelDoc, new: LabelDoc) -> bool:
                return (new.state() == old.state() and new.order == old.order
                        and new.proposed.get(qid) is True)
            sentence = f"undid: kept the drafted query {qid!r}: it waits to be kept or dropped again"
        elif r["edit"] == "drop_query":
            def check(old: LabelDoc, new: LabelDoc) -> bool:
                expected = old.state()
                expected[qid] = {c: (vocab.DRAFTED, g) for c, g in r["drafts"].items()}
                return (new.state() == expected and [q for q in new.order if q != qid] == old.order
                        and qid in new.order and new.proposed.get(qid) is True)
            sentence = f"undid: dropped the drafted query {qid!r}: it is back"
        elif r["edit"] == "add_query":
            def check(old: LabelDoc, new: LabelDoc) -> bool:
                expected = old.state()
                if expected.pop(qid, None):  # judged since it was added: taking it back would lose judgments
                    return False
                return new.state() == expected and new.order == [q for q in old.order if q != qid]
            sentence = f"undid: added query {qid!r}"
        elif r["edit"] == "drafts":
            def check(old: LabelDoc, new: LabelDoc) -> bool:
                expected = old.state()
                for q, c, kind, grade in r["prev"]:  # each chunk back to what it was before the import
                    if kind == "none":
                        expected[q].pop(c, None)
                    else:
                        expected[q][c] = (kind, grade)
                return new.state() == expected and new.order == old.order
            sentence = f"undid: {r.get('count')} drafts" + (f" from {r['source']}" if r.get("source") else "")
        elif r["edit"] == "reviewed":
            def check(old: LabelDoc, new: LabelDoc) -> bool:
                expected = dict(old.reviewed)
                expected.pop(qid, None)
                if r.get("prev_reviewed") is not None:
                    expected[qid] = r["prev_reviewed"]
                return new.state() == old.state() and new.order == old.order and new.reviewed == expected
            sentence = f"undid: {qid} reviewed {r.get('reviewed')}"
        else:
            prev = r.get("prev_corpus") or {}

            def check(old: LabelDoc, new: LabelDoc) -> bool:
                return new.state() == old.state() and new.corpus == (prev.get("path"), prev.get("sha256"))
            sentence = "undid: corpus snapshot"
        what = {k: v for k, v in r.items() if k in ("edit", "query", "text", "corpus", "prev_corpus", "source",
                                                      "count", "drafts", "prev", "reviewed", "prev_reviewed",
                                                      "queries")}
        return self._edit(what, plan, check, sentence, undoes=op)

    def retry(self) -> list[Change]:
        """Write what waits: the decisions journaled and not yet in the file (`flush`), and again every mark
        whose write failed. Returns one Change each of the latter."""
        self.flush()
        out = []
        for mark, op_id in list(self._pending):
            if op_id is None:
                self._pending = [(m, i) for m, i in self._pending if not (m == mark and i is None)]
                out.append(self._apply(mark, kind="mark"))
            else:
                out.append(self._apply(mark, kind="mark", retry_of=op_id))
        return out

    def discard_pending(self) -> int:
        """Give up every mark kept unsaved (a failed save, a conflict): the journal says each was dropped."""
        n = 0
        for _mark, op_id in self._pending:
            if op_id is not None:
                self._journal_quiet({"type": "dropped", "id": op_id, "when": utc_now()})
                if op_id in self._replay.ops:
                    self._replay.ops[op_id].status = "dropped"
            n += 1
        self._pending = []
        return n


# keeping or dropping a drafted query: decisions of the judging queue, which `u` takes back like a mark
QUERY_DECISIONS = ("keep_query", "drop_query")

_NO_MARK = Mark("", "", "none")  # what a file-level edit passes where the journal helpers take a mark


@dataclass(frozen=True)
class Edit:
    """What a file-level edit did (a query added, the corpus snapshot recorded, or one taken back)."""

    kind: str  # "add_query" | "corpus" | "drafts" | "reviewed" | "add_drafted" | "keep_query" | "drop_query"
    query_id: str | None
    message: str
    saved: bool

    def __str__(self) -> str:
        return self.message


def _mark_of(r: dict) -> Mark:
    return Mark(r["query"], r["chunk"], r["label"], r.get("grade"), r.get("run"), r.get("rank"))


def _holds(now: tuple[str, int | None], mark: Mark) -> bool:
    """Does a chunk's current (label, grade) say what `mark` set?"""
    if now[0] != mark.label:
        return False
    if mark.label in ("gold", "drafted") and mark.grade is not None:
        return (1 if now[1] is None else now[1]) == mark.grade
    return True
