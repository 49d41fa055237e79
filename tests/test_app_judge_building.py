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


def held_review(lesson, monkeypatch, gates):
    """The lesson's review whose first J's build waits for the returned `release` (builds: who built)."""
    release, builds = gates(), []
    held_build(monkeypatch, release, builds)
    return lesson_app(lesson, reviewer="tester"), release, builds


def post_paste(app, text: str) -> None:
    """A bracketed paste handed to the driver at once, among keys posted the same way (post_keys)."""
    from textual import events

    event = events.Paste(text)
    event.set_sender(app)
    app._driver.send_message(event)


async def test_a_paste_while_the_queue_is_built_waits_with_the_keys_and_lands_in_its_search_line(
        lesson, settled, monkeypatch, gates):
    """J, then `/` (the queue's corpus search, its line filled with the query's text) and a paste, at machine
    speed while the worker builds: the paste goes where it was typed, after the `/`, into the queue's search line
    — not into the review (it went there at once, ahead of the `/` held for the queue, and was lost)."""
    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "J", "slash")
        post_paste(app, " CFO\nover 5k")
        post_keys(app, "space")
        await keys_taken(pilot, start + 1)
        await until(pilot, lambda: builds, "the worker started building")
        await pilot.pause(0.05)
        assert app.screen is app.screen_stack[0] and app.search == "" and not app.searching
        release.set()
        await keys_taken(pilot, start + 3)  # J, / and space: the paste is no key
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and screen.searching
        text = screen.queue.texts["q1"]  # J at q1: the search line starts with its text
        assert screen.search == text + " CFO over 5k "  # the paste's white space kept as one space each
        assert journal(lesson["gold"]) == []


async def test_quitting_while_the_queue_is_built_acts_at_once_and_every_file_is_whole(
        lesson, settled, monkeypatch, gates):
    """A mark in the review, then J and a key for the queue, then ctrl+q, at machine speed: ctrl+q is never held
    (the x before it is, for the queue): the app leaves while the build is still held, the review's mark saved
    whole, the key meant for the queue never acting on the review. The build ran on a daemon thread and nothing
    of the app waits for it: asyncio.run's executor shutdown (which the process's end runs) returns while the
    build is still held. With the build on the worker's own thread (not judge.detached) it waited for the build,
    and so did the process; Pilot's run_test alone never shuts the executor down, so the app leaving showed
    nothing of it."""
    import asyncio

    from ragdiff.core.gold import load_gold
    from ragdiff.core.labels import TEMP_SUFFIX

    app, release, builds = held_review(lesson, monkeypatch, gates)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            post_keys(app, "tab", "x", "J", "x")  # list A's first row of q1: policy-14; J; x for the queue
            await until(pilot, lambda: builds, "the worker started building")
            post_keys(app, "ctrl+q")  # while the worker is held inside the build
            await until(pilot, lambda: app.return_code is not None, "the app quit while the queue was built")
        building = [t for t in threading.enumerate() if t.name == builds[0]]
        assert [t.daemon for t in building] == [True]  # still held in the build, on a daemon thread
        await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), 10)
        assert not release.is_set() and app._judge_queue is None
    finally:
        release.set()
    marks = [(r["query"], r["chunk"], r["label"]) for r in journal(lesson["gold"]) if r["type"] == "mark"]
    assert marks == [("q1", "policy-14", "not_relevant")]
    assert load_gold(lesson["gold"]).judgments.filter(chunk_id="policy-14")["level"].to_list() == ["not_relevant"]
    assert not list(lesson["gold"].parent.glob("*" + TEMP_SUFFIX + "*"))


async def test_no_thread_waits_for_the_build_while_it_runs(lesson, settled, monkeypatch, gates):
    """While the queue is built, the only thread in judge's code is the build's own (a daemon): the worker awaits
    it on the event loop, so the app's cancelling it as it ends is seen at once and nothing polls for it. Before,
    a thread worker sat in judge.detached, waking every 50 ms to look for a cancel, and the end of the process
    waited for its next look."""
    import sys

    from ragdiff.app import judge

    app, release, builds = held_review(lesson, monkeypatch, gates)
    def in_judge(frame) -> bool:  # a frame of judge.py's own code on this thread's stack
        while frame is not None:
            if frame.f_code.co_filename == judge.__file__:
                return True
            frame = frame.f_back
        return False

    try:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            post_keys(app, "J")
            await until(pilot, lambda: builds, "the worker started building")
            names = {t.ident: t.name for t in threading.enumerate()}
            waiting = [names.get(ident) for ident, frame in sys._current_frames().items() if in_judge(frame)]
            assert waiting == [builds[0]], waiting  # the build's thread (inside detached's run), no other
            release.set()
            await settle(pilot)
            assert isinstance(app.screen, JudgeScreen)
    finally:
        release.set()


async def test_ctrl_c_while_the_queue_is_built_is_answered_at_once(lesson, settled, monkeypatch, gates):
    """ctrl+c does not quit a Textual 8 app: it says which key does (Textual's "Press ctrl+q to quit"). During
    the build it is not held for the queue's screen either: the notice comes at once, the build still held."""
    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "J")
        await until(pilot, lambda: builds, "the worker started building")
        post_keys(app, "ctrl+c")
        await keys_taken(pilot, start + 2)
        assert not release.is_set() and app._judge_queue is None and app.is_running
        assert any("ctrl+q" in str(n.message) for n in app._notifications)
        release.set()
        await settle(pilot)
        assert isinstance(app.screen, JudgeScreen)


async def test_a_flag_written_while_the_queue_is_built_reaches_it(lesson, settled, monkeypatch, gates):
    """A flag sent to the label writer just before J (the writer the queue's screen shares), its write held until
    the worker has read the flags file and is building: the queue, built without it, still shows it flagged —
    the flag's MarkDone carries it (before, apply took only Changes: the flag was missed until a restart)."""
    from ragdiff.app.session import Target
    from ragdiff.core import pool

    release, builds = gates(), []
    held_build(monkeypatch, release, builds)
    written = gates()
    real_add_flag = pool.add_flag

    def slow_add_flag(*args):
        assert written.wait(30)
        return real_add_flag(*args)

    monkeypatch.setattr(pool, "add_flag", slow_add_flag)
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        app.session.flag(Target("q1", "policy-2", None, None))
        post_keys(app, "J")
        await until(pilot, lambda: builds, "the worker read the flags file and started building")
        assert pool.read_flags(lesson["gold"]) == set()  # the flag is not in the file the worker read
        written.set()
        await until(pilot, lambda: app._judge_backlog, "the flag's outcome came back while the queue was built")
        release.set()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and screen.queue.is_flagged("q1", "policy-2")
        assert pool.read_flags(lesson["gold"]) == {("q1", "policy-2")}
        assert not screen.queue.is_judged("q1", "policy-2")  # a flag leaves it unjudged
