"""The label writer's planning of one mark: refused before anything is read when it can never be written,
planned by the file's document class, re-read with the loader's own reader and verified (`_verify`), and said
in a sentence; a batch planned on the document as the marks before it left it (`_plan_many`).

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

from ragdiff.core import vocab
from ragdiff.core.labels.atomic import line_patch
from ragdiff.core.labels.document import LabelDoc, check_grade
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, UnknownQueryError
from ragdiff.core.labels.marks import LABELS, Mark, word
from ragdiff.core.labels.qrels_doc import QrelsDoc
from ragdiff.core.labels.snapshot import Snapshot
from ragdiff.core.labels.yaml_edits import map_grade


class Planning:
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

    def _plan(self, snap: Snapshot, mark: Mark) -> tuple[str, list[str], LabelDoc]:
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

    def _verify(self, snap: Snapshot, new_text: str, mark: Mark) -> LabelDoc:
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

    def _noop_sentence(self, mark: Mark, prev: tuple[str, int | None]) -> str:
        said = word(mark.label) + (f" (grade {prev[1]})" if mark.label == "gold" and prev[1] is not None else "")
        if mark.label == "none":
            return f"{mark.chunk_id} has no label for {mark.query_id}; nothing to save"
        return f"{mark.chunk_id} is already {said} for {mark.query_id}; nothing to save"

    def _plan_many(self, snap: Snapshot, todo: list[tuple[int, Mark]]) -> tuple[LabelDoc, dict]:
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
                one = Snapshot(b"", "", snap.stat, snap.bom, doc.text, doc)
                try:
                    new_text, notes, new_doc = self._plan(one, mark)
                except (LabelFormatError, LabelConflictError) as err:
                    out[i] = err
                    continue
                out[i] = Planned(mark, prev, notes, line_patch(doc.text, new_text))
                doc = new_doc
        return doc, out
