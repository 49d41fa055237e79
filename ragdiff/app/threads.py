"""Work on daemon threads for the apps' workers: nothing a quit waits for (the review's load, the judging queue's
build, `ragdiff judge`'s load). A module of its own, light to import: the review's load awaits `detached` first
thing, on the screen's thread, and importing it from ragdiff.app.judge (the pool, its widgets) took ~24 ms there
before the files began to be read."""

from __future__ import annotations

import threading
from collections.abc import Callable


async def detached(work: Callable[[], object], name: str) -> object:
    """`work()` on a daemon thread, awaited by the calling (async) Textual worker: what it returned or the exception
    it raised. The app cancels its workers as it ends, and a quit must not wait for a build or a load (1-2 s at
    10,000 queries): cancelling the worker ends this await at once (CancelledError), nothing is polled, and no
    thread waits for the work — neither asyncio.run's executor shutdown (it joins a thread worker's thread: with the
    work on it, the screen left at once but the process waited for the work to end) nor the interpreter's exit
    joins a daemon thread. Only for work that reads: a label write runs on the label writer's thread, which the app
    waits for (LabelSession.close)."""
    import asyncio

    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(outcome: object) -> None:
        if not future.done():  # not cancelled meanwhile
            future.set_result(outcome)

    def run() -> None:
        try:
            outcome = work()
        except BaseException as err:  # noqa: BLE001 - handed to the worker, which says it
            outcome = err
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:  # the loop is closed: the app has ended, nobody reads it
            pass

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future


def side_by_side(*jobs):
    """Each job on a daemon thread of its own, all at once; what they returned, in order, or the first job's
    exception in that order. Daemon threads, not a ThreadPoolExecutor: the interpreter's exit joins an
    executor's threads, so quitting during the load waited for the reads to end."""
    out: list = [None] * len(jobs)

    def run(index: int, job) -> None:
        try:
            out[index] = (True, job())
        except BaseException as err:  # noqa: BLE001 - raised again on the caller's thread
            out[index] = (False, err)

    threads = [threading.Thread(target=run, args=(i, job), name=f"ragdiff-read-{i}", daemon=True)
               for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for ok, value in out:
        if not ok:
            raise value
    return [value for _, value in out]
