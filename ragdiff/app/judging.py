"""The judging queue's wiring: the queue built in a worker (`build_queue`) and the label writer's outcomes applied
to it (`apply_outcome`), for `ragdiff judge` and the review alike; and in the review (`J`, `JudgingQueue`): the
first J builds the queue from the store's gold frames while the keys typed meanwhile are held for it, hears what
the store took meanwhile once it is built (`Judgments.since`), and later J's open it at once at the query on
screen.

The review's queue walks the order `ragdiff judge` walks (`--order`, DEFAULT_POOL_ORDER; core/judge/pool_order.py):
it opens at the query on screen, whose unjudged chunks come first (JudgeScreen's `focus`), then the order offers
the next chunk anywhere in the pool. The order hears every change of the store while the queue exists — the
queue's decisions as their keys are pressed, and the review's own marks, undos and failed saves too — through
the queue (`JudgeQueue.changed`). The header shows the order's gold-left estimate; the status line's stopping
suggestion takes recall@10 as judged and its bound from the label file as it is at each J (`stopping_bounds`).

`JudgingQueue` is mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_queue_built` on this class too).
`ragdiff.app.judge` (the screen) is imported at the first J only.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rich.text import Text

from ragdiff.app.messages import QueueBuilt
from ragdiff.app.text import clean


async def build_queue(runs: list, gold, pool: int, label_path: Path, post, store=None, *, order: str) -> None:
    """The review's judging queue, an async Textual worker: `runs` and `gold` are the review model's as they
    were when J was pressed (a mark replaces the model's gold set, never changes it in place); its labels are
    the review's store (`store`), whose changes meanwhile reach it once it is built (on_queue_built); it walks
    `order` (`JudgeQueue.use_order`). Posts QueueBuilt.

    The build (1-2 s at 10,000 queries, and 1.7-2.1 s more for an order's statistics) is `detached`: quitting
    meanwhile does not wait for it. The flags file is read there too; a flag whose write is still under way then
    (its line torn or not yet there) reaches the queue as its MarkDone, which comes after J."""
    from ragdiff.app.threads import detached
    from ragdiff.core.judge.pool import JudgeQueue, read_flags

    def build() -> JudgeQueue:
        queue = JudgeQueue.build(runs, gold, pool, read_flags(label_path), store=store)
        queue.use_order(order)  # from the store as it is now: what it takes later reaches the order through the queue
        return queue

    built = await detached(build, "ragdiff-judge-queue")
    if isinstance(built, BaseException):  # said on the status line, never a traceback on screen
        post(QueueBuilt(None, f"cannot build the judging queue: {type(built).__name__}: {built}"))
        return
    post(QueueBuilt(built))


def apply_outcome(queue, message, changes: bool = True) -> None:
    """A label job's outcome applied to the judging queue: the one place it happens, called by the app that
    keeps the queue (`ragdiff judge`, or the review once J has built it) whichever screen is up — a decision
    whose save failed leaves the in-flight set even when its screen has closed. `changes`: its Changes go to the
    queue's store too (`ragdiff judge`, whose queue holds the store; the review applies them to its own)."""
    if queue is not None:
        from ragdiff.app import drafted_query

        drafted_query.apply_outcome(queue, message)
        flagged = message.target if message.flagged and not message.error else None
        queue.apply(message.changes if changes else [], failed=message.target if message.error else None,
                    flagged=None if flagged is None else (flagged.query_id, flagged.chunk_id))


JUDGE_POOL = 10  # the judging queue from the review pools each run's top 10 (`ragdiff judge --pool`'s default)


async def stopping_bounds(runs: list, gold) -> list | BaseException:
    """recall@10 of each run as judged and its bound if every unjudged chunk in its top 10 were relevant (the
    stopping suggestion's, core/judge/stopping.py), `detached`: 0.2 s at 10,000 queries."""
    from ragdiff.app.threads import detached
    from ragdiff.core.judge.stopping import bounds

    return await detached(lambda: bounds(runs, gold), "ragdiff-judge-bounds")


class JudgingQueue:
    # the stopping suggestion's numbers (stopping_bounds) for the queue's status line, from the label file as it
    # was at the last J; empty until they are computed (the line then says the estimate alone, never old bounds)
    bounds: tuple = ()

    def action_judge(self) -> None:
        """The judging queue (`ragdiff judge`) over both runs' pools, at the query on screen. The first J builds
        it in a worker (1-2 s at 10,000 queries); the keys typed meanwhile are held and then act on the queue's
        screen, in order, as if it had opened at once."""
        from ragdiff.app.judge import CLOSE_KEYS

        model = self.model
        if model is None:
            return
        if self._judge_queue is not None:
            self._open_judge(self._judge_queue, self.selected_query)
            return
        # the queue's close key (q, esc) before any other key closes it before it opens (keys.hold_keys)
        self._judge_wanted = self.selected_query
        self.hold_keys(CLOSE_KEYS, self._judge_called_off)
        self.set_status("building the judging queue (both runs' top 10) … keys typed now go to it")
        if self._judge_from is not None:  # already being built (J, q, J): it opens once built
            return
        # built from the store's gold frames as they are now; what the store takes meanwhile reaches it once built
        self._judge_from = self.store.generation
        self.run_worker(partial(build_queue, [model.run_a, model.run_b], model.gold, JUDGE_POOL, self.inputs.gold,
                                self.post_message, self.store, order=self.inputs.order),
                        group="judge-queue", exit_on_error=False)  # async: it awaits threads.detached

    async def on_queue_built(self, message: QueueBuilt) -> None:
        built_from, self._judge_from = self._judge_from, None
        if message.queue is None:
            dropped = self.drop_held_keys()
            self.set_status(Text(clean(message.error or "cannot build the judging queue") +
                                 (f" · {dropped} keys typed meanwhile not used" if dropped else ""), style="bold red"))
            return
        self._judge_queue = message.queue
        message.queue.changed(self.store.since(built_from))  # what the store took while it was built
        self.store.listen(message.queue.changed)  # and from now on, as it comes
        start, self._judge_wanted = self._judge_wanted, None
        if not self.holding_keys:  # J called off while it was built: kept for the next J, which opens it at once
            return
        self.set_status("the judging queue is open (q comes back here)")  # no longer "building …"
        await self._open_judge(message.queue, start)
        await self.release_keys()

    def _judge_called_off(self) -> None:
        self.set_status("back from the judging queue before it opened · J opens it")

    def _open_judge(self, queue, start_query: str | None):
        from ragdiff.app.judge import JudgeScreen

        # the corpus index even while it is built: the queue says "indexing …" until corpus_ready (it said "no
        # corpus given" for good when J came first)
        screen = JudgeScreen(queue, self.session, self.corpus, self.inputs.gold.name, start_query=start_query)
        self.bounds = ()  # those of the last J are old: the marks since moved them
        if queue.walk is not None and self.model is not None:
            model = self.model
            self.run_worker(partial(self._bounds_for, screen, [model.run_a, model.run_b], model.gold),
                            group="judge-bounds", exclusive=True, exit_on_error=False)
        return self.push_screen(screen, lambda _: self._back_from_judging())

    async def _bounds_for(self, screen, runs: list, gold) -> None:
        found = await stopping_bounds(runs, gold)
        if isinstance(found, BaseException):  # the status line keeps the estimate alone
            return
        self.bounds = tuple(found)
        if screen in self.screen_stack:  # still open (under ? too); closed, the next J computes them again
            screen.bounds_ready()

    def _judge_screen(self):
        """The judging queue's screen J opened, while it is in the screen stack (under ? too), else None."""
        if self._judge_queue is None:  # never built, so never opened (and ragdiff.app.judge not imported for it)
            return None
        from ragdiff.app.judge import JudgeScreen

        return next((screen for screen in self.screen_stack if isinstance(screen, JudgeScreen)), None)

    def _back_from_judging(self) -> None:
        # what the queue's marks changed is drawn by _screen_changed, as for every screen over the review
        saving = self.session.saving
        self.set_status("back from the judging queue" + (f" · saving {saving}" if saving else " · every decision is saved"))
