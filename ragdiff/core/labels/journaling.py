"""The label writer's journal lines: every mark and edit journaled before the rename, its outcome after it;
a failed one kept for retry().

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

import uuid

from ragdiff.core.labels.journal import Op, first_problem, utc_now
from ragdiff.core.labels.errors import LabelFormatError, LabelWriteError
from ragdiff.core.labels.marks import Mark


class Journaling:
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
