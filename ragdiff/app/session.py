"""The app's side of a label file: marks in, in the order the keys were pressed, what each did out.

Every write happens on one writer thread, one job after another in submission order (a `threading.Lock`
waited on by one thread per mark is not first-come first-served: `x` then `g` on the same chunk could be
written as `g` then `x`). A job's outcome comes back to the screen as a `MarkDone` message, through `post`.

A grade digit right after `g` on the same chunk refines that one mark: the plain gold is taken back (byte
for byte, through the journal) and the graded one written, so one `u` returns to what was there before `g`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ragdiff.app.messages import MarkDone
from ragdiff.core import vocab

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


class LabelSession:
    def __init__(self, path: Path, reviewer: str | None, post: Callable[[MarkDone], object],
                 track: Callable[[Future], object] | None = None) -> None:
        self.path = Path(path)
        self.reviewer = reviewer
        self._post = post
        self._track = track  # told of every job's future (the app waits on them as Textual workers)
        self._fmt: str | None = None
        self._file = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragdiff-labels")
        self._last_gold: Target | None = None  # the last job was a plain gold mark on this target, saved
        self.jobs_done = 0  # jobs finished (tests and benchmarks wait on it)
        self.jobs_submitted = 0

    # ---- what the screen calls (returns at once) ---------------------------------------------------------

    def open(self, fmt: str | None) -> None:
        """Open the label file on the writer thread (recovery notes from an earlier crash are posted)."""
        self._submit(self._open, fmt)

    def mark(self, target: Target, label: str, grade: int | None = None, refine: bool = False,
             reviewed: bool = False) -> None:
        """Write one mark. `refine`: a grade digit typed right after `g` on the same target. `reviewed`: this
        decision finishes the query (the judge queue: every pooled chunk judged), so once the mark is saved
        the query's `reviewed:` date becomes today (UTC, the journal's clock) where the file can say it."""
        self._submit(self._mark, target, label, grade, refine, reviewed, target=target)

    def flag(self, target: Target) -> None:
        """Ask for a second opinion on a chunk (kept beside the label file; no judgment is written)."""
        self._submit(self._flag, target, target=target)

    def undo(self) -> None:
        self._submit(self._undo)

    def retry(self) -> None:
        self._submit(self._retry)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=False)

    @property
    def idle(self) -> bool:
        return self.jobs_done == self.jobs_submitted

    # ---- the writer thread -------------------------------------------------------------------------------

    def _submit(self, job, *args, target: Target | None = None) -> None:
        self.jobs_submitted += 1
        future = self._executor.submit(self._run, job, args, target)
        if self._track is not None:
            self._track(future)

    def _run(self, job, args, target: Target | None) -> None:
        try:
            message = job(*args)
        except Exception as err:  # noqa: BLE001 - LabelFormatError/ConflictError/WriteError: said, not raised
            pending = len(self._file.pending) if self._file is not None else 0
            message = MarkDone(error_text(err, self.path, pending), error=True)
        finally:
            self.jobs_done += 1
        if message is not None:
            message.target = target
            self._post(message)

    def _open(self, fmt: str | None) -> MarkDone | None:
        self._fmt = fmt
        self._file = None
        labels = self._labels()
        del labels
        notes = self._file.recovery_notes
        return MarkDone(" ".join(str(n) for n in notes)) if notes else None

    def _labels(self):
        from ragdiff.core import labels

        if self._file is None:
            self._file = labels.LabelFile(self.path, self._fmt, self.reviewer)
        return labels

    def _mark(self, target: Target, label: str, grade: int | None, refine: bool, reviewed: bool = False) -> MarkDone:
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
        from ragdiff.core.pool import add_flag

        self._labels()
        path = add_flag(self.path, target.query_id, target.chunk_id, self._file.reviewer)
        return MarkDone(f"{target.chunk_id} for {target.query_id}: flagged for a second opinion (in {path.name}); "
                        "it stays unjudged", flagged=True)

    def _undo(self) -> MarkDone:
        self._labels()
        self._last_gold = None
        change = self._file.undo()
        if change is None:
            return MarkDone("nothing to undo")
        return MarkDone(change.message, changes=[change], undo=True)

    def _retry(self) -> MarkDone:
        self._last_gold = None
        if self._file is None or not self._file.pending:
            return MarkDone("no unsaved mark to retry")
        changes = self._file.retry()
        return MarkDone("; ".join(self.sentence(c) for c in changes), changes=changes)

