"""The review's mark path: a key marks the chunk on screen (its query and chunk captured at the key), the label
writer makes it durable, and its outcome goes into the judgment store, once; the store's listeners follow — the
model rescores the one query, the judging queue keeps its counts, the screen redraws (`relabelled`).

Mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_mark_done` and `on_saved` on this class too).
"""

from __future__ import annotations

from rich.text import Text

from ragdiff.app.messages import MarkDone, Saved
from ragdiff.app.session import Target
from ragdiff.app.text import clean
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core import vocab

MARK_VERDICT_DELAY = 0.25  # seconds without a mark before the p-values are recomputed after one
NOTHING_SELECTED = "nothing marked: no chunk is selected (tab to list A or B and pick one)"


class MarkPath:
    # ---- a key: the mark on the chunk on screen -------------------------------------------------------------

    def _target_of(self, ranked: RankedList) -> Target | None:
        item = ranked.selected_item
        qid = ranked.query_id
        if qid is None or item is None or qid != self.selected_query:
            return None
        run = self.model.run_a if ranked.side == "a" else self.model.run_b
        return Target(qid, item.row.chunk_id, run.name, getattr(item.row, "rank", None))

    def mark_target(self) -> Target | None:
        """The chunk a mark applies to: the one selected in the focused ranked list, or the one the focused
        chunk pane shows; None with the query list (or nothing) focused."""
        focused = self.focused
        if isinstance(focused, RankedList):
            return self._target_of(focused)
        if isinstance(focused, ChunkView):
            return self._shown
        return None

    def action_mark(self, label: str, grade: int | None = None) -> None:
        if self.model is None:
            return
        target = self.mark_target()
        after_g, self._after_g = self._after_g, None
        if target is None:
            self.set_status(NOTHING_SELECTED)
            return
        if label != "gold":
            grade = None  # grades belong to gold; None = the file's own default for a gold entry
        refine = grade is not None and after_g == (target, self.keys_seen - 1)
        if label == "gold" and grade is None:
            self._after_g = (target, self.keys_seen)
        what = vocab.word(label, grade)
        self.set_status(Text(f"writing: {clean(target.chunk_id)} {what} for {clean(target.query_id)} …"))
        self.session.mark(target, label, grade, refine=refine)

    def action_undo(self) -> None:
        if self.model is not None:
            self.session.undo()

    def action_retry_marks(self) -> None:
        if self.model is not None:
            self.session.retry()

    def action_drop_marks(self) -> None:
        if self.model is not None:
            self.session.drop()

    def _track_job(self, future) -> None:
        """Each label job is also a Textual worker, so `workers.wait_for_complete()` waits for the writes."""
        self.run_worker(future.result, thread=True, group="labels", exit_on_error=False)

    # ---- the writer's outcome: into the store, once ----------------------------------------------------------

    def on_mark_done(self, message: MarkDone) -> None:
        if self.store is not None:  # its listeners follow: the model, the judging queue once built, the screen
            self.store.apply(message.changes)
            if message.flagged and not message.error:
                self.store.flag(message.target.query_id, message.target.chunk_id)
        if self._judge_queue is not None:  # J built it: a failed decision leaves its flight, a query kept/dropped
            from ragdiff.app.judging import apply_outcome

            apply_outcome(self._judge_queue, message, changes=False)
        judge = self._judge_screen()  # a decision made in the judging queue: it shows it (under ? too)
        if judge is not None:
            judge.mark_done(message)
        if self.on_review or judge is None:  # made on the review: said there (under ?, w or v too)
            self.set_status(Text(clean(message.status), style="bold red" if message.error else ""))

    def relabelled(self, changed: list) -> None:
        """The store's listener, after the model's (which rescored each query whose judgment changed): the
        review redraws its numbers, or does so on the way back when another screen is up."""
        if self.model is None or all(c.before == c.after for c in changed):
            return
        # the p-values once the marks rest a moment: a burst of keys asks once, and the test (numpy, which holds
        # the GIL) never competes with the repaint of the mark itself
        self._start_verdicts(delay=MARK_VERDICT_DELAY)
        # the k's beside this one again (the mark made the old ones stale), also once the marks rest
        if self._views_timer is not None:
            self._views_timer.stop()
        self._views_timer = self.set_timer(MARK_VERDICT_DELAY, self._prefetch_views)
        if self.on_review:
            self.show_numbers()
        else:
            self._stale = True

    def on_saved(self, message: Saved) -> None:
        """The label file rewritten with what the journal held: said only when it failed (in red, with r)."""
        judge = self._judge_screen()
        if judge is not None:
            judge.saved(message)
        elif message.error:
            self.set_status(Text(clean(message.status), style="bold red"))
