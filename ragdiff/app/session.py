"""The app's side of a label file: decisions in, in the order the keys were pressed, what each did out.

One writer thread takes every job queued since it last looked and works through them in submission order (a
`threading.Lock` waited on by one thread per mark is not first-come first-served: `x` then `g` on the same chunk
could be written as `g` then `x`). Consecutive marks are one group commit (`LabelFile.apply_many`: one journal
append and one fsync for all of them); each mark's `MarkDone` is posted once it is durable, so the screen counts
a decision judged only then. The label file is rewritten once for many decisions (`LabelFile.flush`): when the
queue goes idle, at least every `FLUSH_EVERY` seconds during a flood, and on close (quit), which takes what is
still queued as one batch.

A grade digit right after `g` on the same chunk refines that one mark: the plain gold is taken back (byte
for byte, through the journal) and the graded one written, so one `u` returns to what was there before `g`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from ragdiff.app.messages import MarkDone, Saved
from ragdiff.core import vocab

FLUSH_EVERY = 0.5  # seconds: during a flood the label file is rewritten at least this often (the journal holds all)


@dataclass(frozen=True)
class Target:
    """What a mark applies to, captured when its key was pressed: the query and chunk on screen."""

    query_id: str
    chunk_id: str
    run: str | None  # the run and rank it was marked from (for the journal)
    rank: int | None


def error_text(err: Exception, label_path: Path, pending: int = 0) -> str:
    """One status line: what happened first (it is cut at the screen's edge), the file by its name."""
    name = type(err).__name__
    words = {"LabelFormatError": "not written", "UnknownQueryError": "not written",
             "LabelConflictError": "not written (the file changed)", "LabelWriteError": "not written"}
    head = words.get(name, "not written: " + name)
    if pending:
        head += f" ({pending} unsaved, r retries)"
    text = str(err).replace(str(label_path), label_path.name)
    if label_path.parent.name:  # a bare file name's parent is "." : replacing "." would drop every dot
        text = text.replace(str(label_path.parent), label_path.parent.name)
    return f"{head}: {text}"


@dataclass
class _Job:
    kind: str  # "open" | "mark" | "flag" | "undo" | "retry" | "drop" | "keep_query" | "drop_query"
    args: tuple
    target: Target | None
    future: Future


class LabelSession:
    def __init__(self, path: Path, reviewer: str | None, post: Callable[[object], object],
                 track: Callable[[Future], object] | None = None) -> None:
        self.path = Path(path)
        self.reviewer = reviewer
        self._post = post
        self._track = track  # told of every job's future (the app waits on them as Textual workers)
        self._fmt: str | None = None
        self._file = None
        self._jobs: deque[_Job] = deque()
        self._wake = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._last_gold: Target | None = None  # the last job was a plain gold mark on this target, saved
        self._flushed_at = time.monotonic()
        self._stuck = False  # the last rewrite failed: the next is tried with the next job (r, a decision, quit)
        self.jobs_done = 0  # jobs finished (tests and benchmarks wait on it)
        self.jobs_submitted = 0
        self.saving = 0  # decisions sent and not yet durable: the screen's "· saving n"
        self.unwritten = 0  # decisions durable in the journal, not yet in the label file

    # ---- what the screen calls (returns at once) ---------------------------------------------------------

    def open(self, fmt: str | None) -> None:
        """Open the label file on the writer thread (recovery notes from an earlier crash are posted)."""
        self._submit("open", fmt)

    def mark(self, target: Target, label: str, grade: int | None = None, refine: bool = False,
             reviewed: bool = False) -> None:
        """Write one mark. `refine`: a grade digit typed right after `g` on the same target. `reviewed`: this
        decision finishes the query (the judge queue: every pooled chunk judged), so once the mark is saved
        the query's `reviewed:` date becomes today (UTC, the journal's clock) where the file can say it."""
        self.saving += 1
        self._submit("mark", target, label, grade, refine, reviewed, target=target)

    def flag(self, target: Target) -> None:
        """Ask for a second opinion on a chunk (kept beside the label file; no judgment is written)."""
        self._submit("flag", target, target=target)

    def keep_query(self, target) -> None:
        """A drafted query kept (`target`: app.drafted_query.QueryDecision): its `proposed:` goes."""
        self._submit("keep_query", target.query_id, target=target)

    def drop_query(self, target) -> None:
        """A drafted query dropped: its entry leaves the label file."""
        self._submit("drop_query", target.query_id, target=target)

    def undo(self) -> None:
        self._submit("undo")

    def retry(self) -> None:
        self._submit("retry")

    def drop(self) -> None:
        self._submit("drop")

    def close(self) -> None:
        """Everything queued is written before this returns: the marks still queued as one batch, then the
        label file once."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join()

    @property
    def idle(self) -> bool:
        return self.jobs_done == self.jobs_submitted

    # ---- the writer thread -------------------------------------------------------------------------------

    def _submit(self, kind: str, *args, target: Target | None = None) -> None:
        self.jobs_submitted += 1
        job = _Job(kind, args, target, Future())
        with self._wake:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="ragdiff-labels", daemon=True)
                self._thread.start()
            self._jobs.append(job)
            self._wake.notify()
        if self._track is not None:
            self._track(job.future)

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._jobs and not self._closing:
                    if self.unwritten and not self._stuck:  # idle with decisions not yet in the file: written now
                        break
                    self._wake.wait()
                jobs, closing = list(self._jobs), self._closing
                self._jobs.clear()
                self._stuck = self._stuck and not jobs and not closing
            self._work(jobs)
            if self.unwritten and (closing or not self._jobs or time.monotonic() - self._flushed_at >= FLUSH_EVERY):
                self._flush()
            if closing and not self._jobs:
                return

    def _work(self, jobs: list[_Job]) -> None:
        """The jobs in order; each run of plain marks (no digit refining a g, not finishing a query) is one
        group commit."""
        i = 0
        while i < len(jobs):
            job = jobs[i]
            if job.kind == "mark" and not job.args[3] and not job.args[4]:
                j = i
                while j < len(jobs) and jobs[j].kind == "mark" and not jobs[j].args[3] and not jobs[j].args[4]:
                    j += 1
                self._run(self._mark, jobs[i:j])
                i = j
            else:
                self._run(getattr(self, "_" + job.kind), [job])
                i += 1

    def _run(self, work, jobs: list[_Job]) -> None:
        try:
            messages = work(*[job.args for job in jobs]) if work == self._mark else [work(*jobs[0].args)]
        except Exception as err:  # noqa: BLE001 - LabelFormatError/ConflictError/WriteError: said, not raised
            pending = len(self._file.pending) if self._file is not None else 0
            messages = [MarkDone(error_text(err, self.path, pending), error=True) for _ in jobs]
        self._done(jobs, messages)

    def _done(self, jobs: list[_Job], messages: list) -> None:
        for job, message in zip(jobs, messages):
            self.jobs_done += 1
            if job.kind == "mark":
                self.saving -= 1
            if self._file is not None:
                self.unwritten = self._file.unwritten
            if message is not None:
                message.target = job.target
                self._post(message)
            job.future.set_result(None)

    def _flush(self) -> None:
        from ragdiff.core.labels import LabelConflictError, LabelWriteError

        self._flushed_at = time.monotonic()
        try:
            n = self._file.flush()
        except (LabelConflictError, LabelWriteError) as err:
            self._stuck = True
            self.unwritten = self._file.unwritten
            self._post(Saved(error_text(err, self.path, len(self._file.pending) + self._file.unwritten), 0,
                             self.unwritten, error=True))
            return
        self._stuck = False
        self.unwritten = self._file.unwritten
        self._post(Saved(f"{n} decision{'s' if n != 1 else ''} written to {self.path.name}", n, self.unwritten))

    def _open(self, fmt: str | None) -> MarkDone | None:
        self._fmt = fmt
        self._file = None
        labels = self._labels()
        del labels
        notes = self._file.recovery_notes
        changes = list(self._file.recovered)
        return MarkDone(" ".join(str(n) for n in notes), changes=changes) if notes or changes else None

    def _labels(self):
        from ragdiff.core import labels

        if self._file is None:
            self._file = labels.LabelFile(self.path, self._fmt, self.reviewer)
        return labels

    def _mark(self, *jobs: tuple) -> list[MarkDone]:
        """Marks as one group commit: one MarkDone each, posted once all of them are durable. A single job
        may refine the g before it or finish its query (`mark`'s `refine`, `reviewed`)."""
        labels = self._labels()
        file = self._file
        if len(jobs) == 1 and (jobs[0][3] or jobs[0][4]):
            return [self._one(*jobs[0])]
        self._last_gold = None
        marks = [labels.Mark(query_id=target.query_id, chunk_id=target.chunk_id, label=label, grade=grade,
                             run=target.run, rank=target.rank) for target, label, grade, _refine, _rev in jobs]
        out = []
        for (target, label, grade, _refine, _reviewed), result in zip(jobs, file.apply_many(marks)):
            if isinstance(result, Exception):
                out.append(MarkDone(error_text(result, self.path, len(file.pending)), error=True))
                self._last_gold = None
                continue
            self._last_gold = target if label == "gold" and grade is None and result.saved else None
            out.append(MarkDone(self.sentence(result), changes=[result]))
        return out

    def _one(self, target: Target, label: str, grade: int | None, refine: bool, reviewed: bool = False) -> MarkDone:
        labels = self._labels()
        file = self._file
        last, self._last_gold = self._last_gold, None
        mark = labels.Mark(query_id=target.query_id, chunk_id=target.chunk_id, label=label, grade=grade,
                           run=target.run, rank=target.rank)
        changes = []
        if refine and last == target:
            # the plain gold this digit refines is taken back first: one `u` then undoes the graded mark
            changes.append(file.undo())
        change = file.apply(mark)
        changes.append(change)
        if label == "gold" and grade is None and change.saved:
            self._last_gold = target  # a digit next refines this mark (a `g` that changed nothing is not one)
        said = self.sentence(change, refined=len(changes) > 1)
        if reviewed and file.records_reviewed:
            said += self._reviewed(file, target.query_id)
        return MarkDone(said, changes=changes)
    def _reviewed(self, file, query_id: str) -> str:
        """Set the query's reviewed: date after the mark that finished it; the mark is saved whatever this
        says (a failure here is told, never turned into a failed mark)."""
        from datetime import datetime, timezone

        from ragdiff.core.labels import LabelConflictError, LabelFormatError, LabelWriteError

        day = datetime.now(timezone.utc).date().isoformat()
        try:
            edit = file.set_reviewed(query_id, day)
        except (LabelConflictError, LabelFormatError, LabelWriteError) as err:
            return f" · the reviewed: date was {error_text(err, self.path)}"
        return f" · {query_id} reviewed {day}" if edit.saved else ""

    def sentence(self, change, refined: bool = False) -> str:
        """The status line for a mark: what the chunk was and is now ("was gold ★3, now not relevant")."""
        if not change.saved:
            return change.message  # "… is already gold for q1; nothing to save"
        head = f"{change.chunk_id} for {change.query_id}: "
        if change.before.kind != vocab.UNJUDGED:
            head += f"was {change.before.word}, now {change.after.word}"
        else:
            head += change.after.word
        if refined:
            head += " (the grade refines the g: one u takes it back)"
        return f"{head} · saved to {self.path.name}"

    def _flag(self, target: Target) -> MarkDone:
        from ragdiff.core.judge.pool import add_flag

        self._labels()
        path = add_flag(self.path, target.query_id, target.chunk_id, self._file.reviewer)
        return MarkDone(f"{target.chunk_id} for {target.query_id}: flagged for a second opinion (in {path.name}); "
                        "it stays unjudged", flagged=True)

    def _keep_query(self, query_id: str) -> MarkDone:
        self._labels()
        self._last_gold = None
        edit = self._file.keep_query(query_id)
        return MarkDone(edit.message, query_edit=edit)

    def _drop_query(self, query_id: str) -> MarkDone:
        self._labels()
        self._last_gold = None
        edit = self._file.drop_query(query_id)
        return MarkDone(edit.message, query_edit=edit)

    def _undo(self) -> MarkDone:
        self._labels()
        self._last_gold = None
        change = self._file.undo()
        if change is None:
            return MarkDone("nothing to undo")
        if not hasattr(change, "chunk_id"):  # a drafted query's keep or drop taken back (a core.labels.Edit)
            return MarkDone(change.message, undo=True, query_edit=change)
        return MarkDone(change.message, changes=[change], undo=True)

    def _drop(self) -> MarkDone:
        self._last_gold = None
        if self._file is None or not self._file.pending:
            return MarkDone("no unsaved mark to drop")
        n = self._file.discard_pending()
        return MarkDone(f"dropped {n} unsaved mark{'s' if n != 1 else ''}: {'they stay' if n != 1 else 'it stays'} "
                        f"out of {self.path.name}")

    def _retry(self) -> MarkDone:
        self._last_gold = None
        if self._file is None or not (self._file.pending or self._file.unwritten):
            return MarkDone("no unsaved mark to retry")
        waiting = self._file.unwritten
        changes = self._file.retry()
        self.unwritten = self._file.unwritten
        said = [self.sentence(c) for c in changes]
        if waiting:
            said.insert(0, f"{waiting} decision{'s' if waiting != 1 else ''} written to {self.path.name}")
        return MarkDone("; ".join(said), changes=changes)

