"""The group commit: a batch of marks made durable together (one journal append, one fsync: `apply_many`),
the label file rewritten once for many batches (`flush`), and someone else's version of the file taken as the
base for what is not yet written (`_catch_up`, `_rebase`).

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

import uuid

from ragdiff.core.labels.journal import Op, utc_now
from ragdiff.core.labels.atomic import atomic_write, file_lock
from ragdiff.core.labels.edits import sha
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, LabelWriteError, UnknownQueryError
from ragdiff.core.labels.marks import Change, Mark, judgment, normal_mark, word
from ragdiff.core.labels.snapshot import Snapshot, holds, mark_of


class GroupCommit:
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
                new_snap = Snapshot(new_raw, sha(new_raw), snap.stat, snap.bom, doc.text, doc)
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

    def _rebase(self, cur: Snapshot) -> None:
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
            mark = mark_of(op.record)
            prev = (op.record.get("prev_label") or "none", op.record.get("prev_grade"))
            now = snap.doc.current(mark.query_id, mark.chunk_id)
            if mark.query_id in snap.doc.judg and holds(now, mark):
                keep.append(op_id)
                continue
            if mark.query_id in snap.doc.judg and now == prev:
                try:
                    new_text, _notes, new_doc = self._plan(snap, mark)
                except (LabelFormatError, LabelConflictError):
                    pass
                else:
                    raw = self._encode(new_text, snap.bom)
                    snap = Snapshot(raw, sha(raw), cur.stat, snap.bom, new_text, new_doc)
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
            snap = Snapshot(cur.raw, cur.sha, cur.stat, cur.bom, cur.text, cur.doc)
        self._snap = snap
        self._disk = (cur.sha, cur.stat)
        self._unwritten = keep
