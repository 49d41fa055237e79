"""Undo, retry and giving up: the last of this reviewer's decisions taken back (through the journal, across
restarts), a file-level edit taken back byte for byte, the marks kept unsaved written again or dropped.

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

import dataclasses

from ragdiff.core import vocab
from ragdiff.core.labels.journal import Op, utc_now
from ragdiff.core.labels.atomic import line_unpatch
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.errors import LabelConflictError
from ragdiff.core.labels.file_edits import QUERY_DECISIONS, Edit
from ragdiff.core.labels.marks import Change, Mark, word
from ragdiff.core.labels.snapshot import holds, mark_of


class Undo:
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
        mark = mark_of(r)
        prev_label = r.get("prev_label") or "none"
        back = Mark(mark.query_id, mark.chunk_id, prev_label,
                    r.get("prev_grade") if prev_label in ("gold", "drafted") else None, mark.run, mark.rank)
        snap = self._refresh(back, check=False)
        now = snap.doc.current(mark.query_id, mark.chunk_id)
        if not holds(now, mark):
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

    def _undo_edit(self, op: Op) -> Edit:
        """Take back a file-level edit: its lines as written, byte for byte, or a conflict (never a guess)."""
        r = op.record
        qid = r.get("query")

        def plan(doc: LabelDoc) -> str:
            if r["edit"] == "add_query" and (doc.judg.get(qid) or doc.drafts.get(qid)):
                raise LabelConflictError(f"cannot undo adding query {qid!r}: it has labels since; take those back "
                                         "first (nothing was written)")
            back = line_unpatch(doc.text, r["patch"])
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
