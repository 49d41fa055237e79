"""The review's first J builds the judging queue in a worker (1-2 s at 10,000 queries, which froze the screen
when it was built on the UI thread). Keys typed meanwhile wait and then act on the queue's screen, in order,
as if it had opened at once; outcomes of marks that arrive meanwhile reach the queue; a failure is said."""

from __future__ import annotations

import threading

import pytest

from ragdiff.app.judge import JudgeScreen
from ragdiff.app.session import LabelSession
from ragdiff.core.judge.pool import JudgeQueue

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
    app = lesson_app(lesson, reviewer="tester", order="rank")  # the walk the expected marks are read from
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
        await until(pilot, lambda: app.store.generation > app._judge_from, "the save came back while the queue was built")
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
    build is still held. With the build on the worker's own thread (not threads.detached) it waited for the build,
    and so did the process; Pilot's run_test alone never shuts the executor down, so the app leaving showed
    nothing of it."""
    import asyncio

    from ragdiff.core.labels.gold import load_gold
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


@pytest.mark.parametrize("close", ["q", "escape"])
async def test_q_first_while_the_queue_is_built_closes_it_at_once(lesson, settled, monkeypatch, gates, close):
    """J, then q (or esc: the queue's "back"), then keys for the review, at machine speed, the build still held:
    q is not held. It closes the queue before it opens, at once, and the keys after it act on the review at
    once, as they would after the queue had opened and closed (q was held with them until the queue was built;
    then it opened the queue and closed it: the review's keys waited 1-2 s, and the queue flashed up). The queue,
    once built, is not opened; the next J opens it without building it again."""
    from ragdiff.app.widgets.query_list import QueryList

    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "J", close, "right_square_bracket", "tab", "x")  # q2, list A's first row: policy-2
        await keys_taken(pilot, start + 5)  # every key acted, the build still held
        assert not release.is_set() and app._judge_queue is None and app.screen is app.screen_stack[0]
        assert app.selected_query == "q2" and app.query_one(QueryList).selected == "q2"
        await until(pilot, lambda: journal(lesson["gold"]), "x marked the review's chunk")
        assert [(r["query"], r["chunk"]) for r in journal(lesson["gold"]) if r["type"] == "mark"] == \
            [("q2", "policy-2")]
        release.set()
        await until(pilot, lambda: app._judge_queue is not None, "the queue was built")
        await settle(pilot)
        assert app.screen is app.screen_stack[0] and app.is_running  # built, not opened
        await type_fast(pilot, "J")
        assert isinstance(app.screen, JudgeScreen) and len(builds) == 1
        assert app.screen.queue.queries[app.screen.position.query] == "q2"  # at the query on screen


async def test_j_again_after_the_queue_was_closed_before_it_opened(lesson, settled, monkeypatch, gates):
    """J q ] J at machine speed, the build held: the second J asks again for the queue being built; it opens once
    built, at the second J's query, with the keys typed after that J."""
    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "J", "q", "right_square_bracket", "J", "x")
        await keys_taken(pilot, start + 4)  # J q ] J; x waits for the queue
        await until(pilot, lambda: builds, "the worker started building")
        await pilot.pause(0.05)
        assert app.keys_done == start + 4 and journal(lesson["gold"]) == []
        release.set()
        await keys_taken(pilot, start + 5)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and len(builds) == 1
        order = [p for p in pool_order(lesson["gold"].parent, ["q2"]) if p != ("q2", "policy-15")]
        assert [(r["query"], r["chunk"]) for r in journal(lesson["gold"]) if r["type"] == "mark"] == order[:1]


@pytest.mark.parametrize("keys, after", [(["x", "q"], "back"), (["slash", "q"], "typed")])
async def test_a_q_after_a_key_held_for_the_queue_is_the_queues(lesson, settled, monkeypatch, gates, keys, after):
    """Once a key is held for the queue, a q after it is the queue's, in its place: after x it comes back to the
    review (x marked the queue's first chunk), after `/` it is a letter of the queue's search line. Only a q
    with nothing held before it is the review's quit."""
    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        post_keys(app, "J", *keys)
        await keys_taken(pilot, start + 1)
        await until(pilot, lambda: builds, "the worker started building")
        await pilot.pause(0.05)
        assert app.is_running and app.keys_done == start + 1
        release.set()
        await keys_taken(pilot, start + 1 + len(keys))
        await settle(pilot)
        assert app.is_running
        marks = [(r["query"], r["chunk"]) for r in journal(lesson["gold"]) if r["type"] == "mark"]
        if after == "back":
            order = [p for p in pool_order(lesson["gold"].parent, ["q1"])
                     if p not in {("q1", "policy-14"), ("q1", "policy-9")}]  # LESSON_GOLD's judgments of q1
            assert app.screen is app.screen_stack[0] and marks == order[:1]
        else:
            screen = app.screen
            assert isinstance(screen, JudgeScreen) and screen.searching and marks == []
            assert screen.search == screen.queue.texts["q1"] + "q"


async def test_no_thread_waits_for_the_build_while_it_runs(lesson, settled, monkeypatch, gates):
    """While the queue is built, the only thread in the queue's code (judge.py, judging.py) or threads.detached's is
    the build's own (a daemon): the worker awaits it on the event loop, so the app's cancelling it as it ends is
    seen at once and nothing polls for it. Before, a thread worker sat in detached (then in judge.py), waking every 50 ms to look
    for a cancel, and the end of the process waited for its next look."""
    import sys

    from ragdiff.app import judge, judging, threads

    app, release, builds = held_review(lesson, monkeypatch, gates)
    watched = {judge.__file__, judging.__file__, threads.__file__}

    def in_judge(frame) -> bool:  # a frame of the queue's or threads.py's own code on this thread's stack
        while frame is not None:
            if frame.f_code.co_filename in watched:
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


def post_click(app, widget, y: int) -> None:
    """A click on the widget's content row y as a terminal sends it (press, release: the app makes the Click),
    handed to the driver at once, among keys posted the same way (post_keys)."""
    from textual import events

    region = widget.content_region
    x, y = region.x + 1, region.y + y
    for kind in (events.MouseDown, events.MouseUp):
        event = kind(None, x, y, 0, 0, 1, False, False, False, screen_x=x, screen_y=y)
        event.set_sender(app)
        app._driver.send_message(event)


async def test_a_click_while_the_queue_is_built_is_dropped(lesson, settled, monkeypatch, gates):
    """A click on the review while the queue is built would act on the review under the queue about to open
    (here: move the query cursor), out of order with the keys held for the queue; replayed on the queue's screen
    it would land on whatever is drawn there. It is dropped; the keys around it act on the queue."""
    from ragdiff.app.widgets.query_list import QueryList

    app, release, builds = held_review(lesson, monkeypatch, gates)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        queries = app.query_one(QueryList)
        rows = {qid: i for i, qid in enumerate(queries.ids)}
        post_click(app, queries, rows["q2"])  # without a build the click acts: the cursor on q2
        await until(pilot, lambda: app.selected_query == "q2", "the click moved the cursor")
        start = app.keys_done
        post_keys(app, "J")
        post_click(app, queries, rows["q3"])
        post_keys(app, "x")
        await keys_taken(pilot, start + 1)
        await until(pilot, lambda: builds, "the worker started building")
        await pilot.pause(0.05)
        release.set()
        await keys_taken(pilot, start + 2)
        await settle(pilot)
        assert isinstance(app.screen, JudgeScreen)
        marks = [(r["query"], r["chunk"]) for r in journal(lesson["gold"]) if r["type"] == "mark"]
        order = [p for p in pool_order(lesson["gold"].parent, ["q2"]) if p != ("q2", "policy-15")]
        assert marks == order[:1]  # x on the queue J opened at q2
        await type_fast(pilot, "escape")
        assert app.screen is app.screen_stack[0] and app.selected_query == "q2"


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
    from ragdiff.core.judge import pool

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
        await until(pilot, lambda: app.store.is_flagged("q1", "policy-2"), "the flag's outcome came back while the queue was built")
        release.set()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and screen.queue.is_flagged("q1", "policy-2")
        assert pool.read_flags(lesson["gold"]) == {("q1", "policy-2")}
        assert not screen.queue.is_judged("q1", "policy-2")  # a flag leaves it unjudged
