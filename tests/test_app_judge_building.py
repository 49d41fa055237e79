"""The review's first J builds the judging queue in a worker (1-2 s at 10,000 queries, which froze the screen
when it was built on the UI thread). Keys typed meanwhile wait and then act on the queue's screen, in order,
as if it had opened at once; outcomes of marks that arrive meanwhile reach the queue; a failure is said."""

from __future__ import annotations

import threading

import pytest

from ragdiff.app.judge import JudgeScreen
from ragdiff.app.session import LabelSession
from ragdiff.core.pool import JudgeQueue

from conftest import settle
from test_app_keys import journal, keys_taken, post_keys, type_fast
from test_app_pilot import SIZE, lesson_app
from test_judge import pool_order

REAL_BUILD = JudgeQueue.build.__func__


@pytest.fixture
def gates():
    """Events a test opens when it is ready; all opened at its end, so a failing test leaves no thread waiting."""
    made: list[threading.Event] = []
    yield lambda: made.append(threading.Event()) or made[-1]
    for event in made:
        event.set()


def held_build(monkeypatch, release: threading.Event, builds: list):
    """JudgeQueue.build waits for `release` (the test types while the worker is still building)."""

    def build(cls, *args, **kwargs):
        builds.append(threading.current_thread().name)
        assert release.wait(30)
        return REAL_BUILD(cls, *args, **kwargs)

    monkeypatch.setattr(JudgeQueue, "build", classmethod(build))


async def until(pilot, ready, what: str) -> None:
    for _ in range(1000):
        if ready():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never: {what}")


async def test_keys_typed_while_the_queue_is_built_act_on_it_in_order(lesson, settled, monkeypatch, gates):
    release, builds = gates(), []
    held_build(monkeypatch, release, builds)
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "]", "]")  # q3
        start = app.keys_done
        post_keys(app, "J", "x", "x", "J", "s", "x")  # at machine speed, while the worker builds
        await keys_taken(pilot, start + 1)  # J ran: the rest wait for the queue
        await until(pilot, lambda: builds, "the worker started building")
        await pilot.pause(0.05)
        assert app.keys_done == start + 1 and app.screen is app.screen_stack[0]
        assert "building the judging queue" in str(app.query_one("#status").render())
        assert journal(lesson["gold"]) == []  # x did not mark the review's chunk
        assert builds and builds[0] != threading.main_thread().name  # built off the UI thread
        release.set()
        await keys_taken(pilot, start + 6)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and len(builds) == 1  # the second J did not build again
        # the pool's unjudged chunks in queue order from q3 (then q4, round to q1, q2), from the run files
        judged = {("q1", "policy-14"), ("q1", "policy-9"), ("q2", "policy-15"), ("q3", "finance-3"),
                  ("q3", "finance-4"), ("q3", "hr-1")}  # LESSON_GOLD's judgments
        order = [pair for pair in pool_order(lesson["gold"].parent, ["q3", "q4", "q1", "q2"]) if pair not in judged]
        marks = [(r["query"], r["chunk"], r["label"]) for r in journal(lesson["gold"]) if r["type"] == "mark"]
        # x, x, then J (nothing on this screen), s skips the third, x the fourth
        assert marks == [(*order[i], "not_relevant") for i in (0, 1, 3)]


async def test_a_mark_saved_while_the_queue_is_built_reaches_it(lesson, settled, monkeypatch, gates):
    """x in list A, then J at once; the save comes back after J (the queue is built from the gold set as it was
    at J, without it) and before the queue is done: the queue shows it."""
    release, builds = gates(), []
    held_build(monkeypatch, release, builds)
    written = gates()
    real_mark = LabelSession._mark

    def slow_mark(self, *args):
        assert written.wait(30)
        return real_mark(self, *args)

    monkeypatch.setattr(LabelSession, "_mark", slow_mark)
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "tab", "x", "J")  # list A's first row of q1: policy-14, gold ★3 → not relevant
        await keys_taken(pilot, start + 3)
        await until(pilot, lambda: builds, "the worker started building")
        assert app._judge_queue is None
        written.set()
        await until(pilot, lambda: app._judge_backlog, "the save came back while the queue was built")
        release.set()
        await settle(pilot)
        assert isinstance(app.screen, JudgeScreen)
        assert app.screen.queue.label_of("q1", "policy-14")[0] == "not_relevant"


async def test_a_queue_that_cannot_be_built_is_said_and_the_keys_typed_meanwhile_do_nothing(lesson, settled,
                                                                                          monkeypatch):
    def broken(cls, *args, **kwargs):
        raise MemoryError("out of memory")

    monkeypatch.setattr(JudgeQueue, "build", classmethod(broken))
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "tab", "J", "x")
        await settle(pilot)
        assert app.is_running and app.screen is app.screen_stack[0]
        status = str(app.query_one("#status").render())
        assert "cannot build the judging queue: MemoryError: out of memory" in status, status
        assert journal(lesson["gold"]) == []  # the x meant for the queue marked nothing in the review
        await type_fast(pilot, "x")  # the review's keys work again
        assert [r["chunk"] for r in journal(lesson["gold"]) if r["type"] == "mark"] == ["policy-14"]
