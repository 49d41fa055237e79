"""Recovery on opening a label file: the journal's ops whose save was never confirmed, resolved from what the
file says (`_recover`), and this reviewer's decisions durable in the journal but not in the file written now
(`_write_recovered`).

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

from ragdiff.core.labels.journal import Op, utc_now
from ragdiff.core.labels.edits import sha
from ragdiff.core.labels.errors import LabelConflictError, LabelWriteError
from ragdiff.core.labels.marks import Change, judgment
from ragdiff.core.labels.snapshot import Snapshot, holds, mark_of
from ragdiff.core.labels.yaml_edits import map_grade


class Recovery:
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
            mark = mark_of(r)
            if reached is not None:
                applied = chained.index(op) <= reached
            elif snap.sha == r.get("after_sha256"):
                applied = True
            elif snap.sha == r.get("before_sha256"):
                applied = False
            else:
                applied = holds(snap.doc.current(mark.query_id, mark.chunk_id), mark)
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
                mark = mark_of(op.record)
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
            mark = mark_of(r)
            prev = (r.get("prev_label") or "none", r.get("prev_grade"))
            todo.append((n, mark, prev, op))
        # each in order on the document the ones before it made (the planner's rounds keep a query's order)
        state = {}
        for n, mark, prev, op in todo:
            now = state.get((mark.query_id, mark.chunk_id)) or doc.current(mark.query_id, mark.chunk_id)
            if mark.query_id not in doc.judg or (now != prev and not holds(now, mark)):
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
        self._snap = Snapshot(raw, sha(raw), snap.stat, snap.bom, new_doc.text, new_doc)
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
