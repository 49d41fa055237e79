"""The judging queue opened from the review (J): it shows every mark made in the review, before and after it
was first opened, drafts included, and it is built once."""

from __future__ import annotations

from ragdiff.app.judge import JudgeScreen
from ragdiff.core import vocab
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.judge.pool import JudgeQueue

from test_app_keys import journal, type_fast
from test_app_pilot import SIZE, lesson_app

DRAFTED = "    not_relevant: [policy-9]\n    drafted: {policy-31: 2}\n"


def with_a_draft(lesson):
    gold = lesson["gold"]
    text = gold.read_text()
    assert "    not_relevant: [policy-9]\n" in text
    gold.write_text(text.replace("    not_relevant: [policy-9]\n", DRAFTED, 1))
    return lesson


def drafts(gold) -> list[tuple]:
    return sorted(gold.drafts.select("query_id", "chunk_id", "grade").iter_rows())


async def judge_here(pilot) -> JudgeScreen:
    await type_fast(pilot, "J")
    assert isinstance(pilot.app.screen, JudgeScreen)
    return pilot.app.screen


async def test_a_draft_decided_in_the_review_is_judged_in_the_queue(lesson, settled):
    """q1's policy-31 is drafted ☆2; `g` on it in list B accepts it. The queue built at J from the review's
    model read the draft from the gold set as loaded (the model's judgments changed with the mark, its drafts
    did not): policy-31 came back as 'drafted ☆2 · a accepts', to be judged a second time."""
    app = lesson_app(with_a_draft(lesson), reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.selected_query == "q1" and app.model.label_of("q1", "policy-31")[0] == vocab.DRAFTED
        await type_fast(pilot, "tab", "tab", "g")  # list B, its first row: policy-31
        assert [(r["query"], r["chunk"], r["label"]) for r in journal(lesson["gold"]) if r["type"] == "mark"] == \
            [("q1", "policy-31", "gold")]
        assert "policy-31: 2" not in lesson["gold"].read_text()  # the draft left the file, its emptied drafted: key too
        assert drafts(app.model.gold) == drafts(load_gold(lesson["gold"])) == []  # the model's gold set as written
        screen = await judge_here(pilot)
        queue = screen.queue
        assert queue.is_judged("q1", "policy-31") and queue.label_of("q1", "policy-31")[0] == vocab.GOLD
        assert "a accepts" not in str(screen.query_one("#judge-text").border_title)


async def test_marks_in_the_review_reach_the_queue_opened_again(lesson, settled, monkeypatch):
    builds = []
    real = JudgeQueue.build.__func__
    monkeypatch.setattr(JudgeQueue, "build", classmethod(lambda cls, *a, **k: (builds.append(1), real(cls, *a, **k))[1]))
    app = lesson_app(with_a_draft(lesson), reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = await judge_here(pilot)
        assert not screen.queue.is_judged("q1", "policy-31")
        await type_fast(pilot, "escape", "tab", "tab", "x")  # back; policy-31 not relevant in the review
        screen = await judge_here(pilot)
        assert screen.queue.label_of("q1", "policy-31") == (vocab.NOT_RELEVANT, 0)
        await type_fast(pilot, "escape", "question_mark", "escape", "u")  # undo it, the help shown between
        assert "drafted: {policy-31: 2}" in lesson["gold"].read_text()
        assert drafts(app.model.gold) == drafts(load_gold(lesson["gold"])) == [("q1", "policy-31", 2)]
        screen = await judge_here(pilot)
        assert screen.queue.label_of("q1", "policy-31") == (vocab.DRAFTED, 2)
        assert not screen.queue.is_judged("q1", "policy-31")
        assert len(builds) == 1  # built at the first J; 1-3 s each at 10,000 queries


async def test_the_review_status_says_what_happened_at_each_step_of_the_first_j(lesson, settled):
    """While the queue is built the review says so; once it is open it no longer does (it kept "building the
    judging queue … keys typed now go to it" under the queue after a successful J); back from it, it says so."""
    from test_app_keys import post_keys

    from conftest import settle

    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        status = lambda: str(app.screen_stack[0].query_one("#status").render())  # noqa: E731
        post_keys(app, "J")
        await settle(pilot)
        assert isinstance(app.screen, JudgeScreen)
        assert "building the judging queue" not in status() and "judging queue is open" in status()
        await type_fast(pilot, "q")
        assert app.screen is app.screen_stack[0] and "back from the judging queue" in status()
        await type_fast(pilot, "J", "q")  # the queue kept: opened again at once, nothing built
        assert "back from the judging queue" in status()


async def test_a_mark_outcome_goes_to_the_judging_queue_screen_only(lesson, settled):
    """The outcome of a label job is shown by the judging queue's screen J opened, and by no other screen that
    happens to have a `mark_done` (the app found it by hasattr over the screen stack)."""
    from textual.screen import ModalScreen

    from ragdiff.app.session import Target

    class Other(ModalScreen):
        def __init__(self):
            super().__init__()
            self.told = []

        def mark_done(self, message):
            self.told.append(message)

    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        other = Other()
        await app.push_screen(other)
        app.session.mark(Target("q1", "policy-2", None, None), "not_relevant")
        await settled(pilot)
        assert other.told == [] and app.model.label_of("q1", "policy-2")[0] == vocab.NOT_RELEVANT
        app.pop_screen()
        screen = await judge_here(pilot)
        told = []
        screen.mark_done = told.append  # the queue's screen is told
        app.session.mark(Target("q1", "policy-31", None, None), "not_relevant")
        await settled(pilot)
        assert [m.target.chunk_id for m in told] == ["policy-31"]


async def test_the_corpus_indexed_after_j_reaches_the_queue_under_help(lesson, monkeypatch):
    """J and `?` over the queue at machine speed while the corpus is still being indexed; then the index is
    done: once `?` closes, the queue shows its chunk's text. The queue was opened without the corpus when it
    was not indexed yet ("no corpus given" for good), and the index's arrival went to whatever screen was on top
    that had a corpus_ready (under `?`, none)."""
    import threading

    from ragdiff.app.corpus import CorpusIndex
    from ragdiff.app.text import clean
    from ragdiff.app.widgets.help_screen import HelpScreen

    from conftest import LESSON_CORPUS, settle
    from test_app_judge_building import until
    from test_app_keys import keys_taken, post_keys

    indexed = threading.Event()
    real_build = CorpusIndex.build

    def held(self):
        assert indexed.wait(30)
        return real_build(self)

    monkeypatch.setattr(CorpusIndex, "build", held)
    app = lesson_app(lesson, reviewer="tester")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.model is not None and app.selected_query == "q1", "the review is up")
            start = app.keys_done
            post_keys(app, "J", "question_mark")
            await keys_taken(pilot, start + 2)
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "? is over the queue")
            judge = app.screen_stack[-2]
            assert isinstance(judge, JudgeScreen) and not app.corpus.ready
            text = lambda: str(judge.query_one("#chunk-text").render())  # noqa: E731
            assert "indexing corpus.jsonl" in text()
            indexed.set()
            await settle(pilot)
            assert app.corpus.ready and isinstance(app.screen, HelpScreen)
            await send(pilot, "escape")
            assert app.screen is judge
            chunk = judge.queue.entry_at(judge.position)[1].chunk_id
            record = next(c for c in LESSON_CORPUS if c["id"] == chunk)
            assert text() == f"{clean(record['title'])}\n{clean(record['text'])}"  # as the queue's screen shows it
    finally:
        indexed.set()


async def send(pilot, *keys: str) -> None:
    from test_app_keys import send_keys

    await send_keys(pilot, *keys)
    await pilot.pause()
