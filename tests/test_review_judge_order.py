"""The review's judging queue (J) walks the order `ragdiff judge` walks (`ragdiff review --order`): it opens at the
query on screen, whose unjudged chunks come first, then the order offers the next chunk anywhere in the pool;
keys at machine speed land on the chunk on screen when they were pressed, and the header and the status line
show the gold-left estimate and the stopping suggestion."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.app.judge import JudgeScreen
from ragdiff.core import fmt, vocab
from ragdiff.core.io.runs import load_run
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.judge.stopping import bounds
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.marks import Judgment
from ragdiff.core.labels.store import Changed
from ragdiff.core.metrics.specs import EvalSettings

from test_app_keys import demo_copy, journal, type_fast
from test_judge import header, strip_judgments
from test_judge_orders import DECISION

SIZE = (120, 40)
# a burst longer than the first query's pool: the order takes over within it; a skip and a flag in the query
# asked for (left for later), a skip after it; `u` last (its outcome moves the screen back to the chunk taken back)
BURST = ["x", "2", "s", "x", "exclamation_mark", "x", "x", "g", "x", "x", "3", "x", "x", "x", "e", "x", "x", "x",
         "x", "x", "1", "x", "x", "s", "x", "x", "0", "x", "u"]
AFTER = ["x", "2", "x", "x", "x"]  # then, from the chunk taken back


def review(folder, order: str | None) -> ReviewApp:
    options = {} if order is None else {"order": order}
    app = ReviewApp(ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl", gold=folder / "gold.yaml",
                                 settings=EvalSettings(k=5, depth=50), corpus=folder / "corpus.jsonl",
                                 reviewer="tester", **options))
    app.verdict_delay = 0
    return app


def queue_of(folder, order: str) -> JudgeQueue:
    runs = [load_run(folder / "bm25.jsonl"), load_run(folder / "dense.jsonl")]
    queue = JudgeQueue.build(runs, load_gold(folder / "gold.yaml"), 10)
    queue.use_order(order)
    return queue


class Replay:
    """The review's J walked without the app: the query asked for first (its unjudged chunks in queue order, a
    skipped or flagged one left for later), then wherever the order offers next; each key lands on the chunk
    the walk stands on when it comes."""

    def __init__(self, queue: JudgeQueue, start: str) -> None:
        self.queue = queue
        self.focus: str | None = start
        self.position = queue.first_of_query(queue.queries.index(start))
        self.passed: set[tuple[str, str]] = set()
        self.marks: list[tuple[str, str, str]] = []

    def keys(self, keys: list[str]) -> None:
        queue = self.queue
        for k in keys:
            qid, entry = queue.entry_at(self.position)
            if k == "u":  # the last decision taken back (its Change), and the screen back on its chunk
                q, chunk, _ = self.marks[-1]
                kind, grade = queue.label_of(q, chunk)
                queue.changed([Changed(q, chunk, Judgment(kind, grade), Judgment(None, None))])
                self.position = queue.add(q, chunk)
                continue
            if k in DECISION:
                queue.decide(qid, entry.chunk_id, *DECISION[k])
                self.marks.append((qid, entry.chunk_id, DECISION[k][0]))
            elif k == "s":
                queue.skip(qid, entry.chunk_id)
                self.passed.add((qid, entry.chunk_id))
            else:
                queue.flag(qid, entry.chunk_id)
                self.passed.add((qid, entry.chunk_id))
            self.position = self._next()

    def _next(self):
        queue = self.queue
        if self.focus is not None:
            qi = queue.queries.index(self.focus)
            for index, entry in enumerate(queue.entries[self.focus]):
                if not queue.is_done(self.focus, entry.chunk_id) and (self.focus, entry.chunk_id) not in self.passed:
                    return type(self.position)(qi, index)
            self.focus = None
        return queue.next_unjudged(self.position)


def marks_written(gold) -> list[tuple[str, str, str]]:
    return [(r["query"], r["chunk"], r["label"]) for r in journal(gold) if r["type"] == "mark"]


@asynccontextmanager
async def at_a_stripped_query(sample_runs, tmp_path, settled, order: str, size: tuple[int, int] = SIZE):
    """A copy of the sample set with ten queries' judgments removed, the review open on it under `order` and its
    cursor moved (]) to the first listed query of those: (app, pilot, folder, that query)."""
    folder = demo_copy(sample_runs, tmp_path)
    stripped = strip_judgments(folder / "gold.yaml", 10)
    app = review(folder, order)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        listed = list(app.query_one("#queries").ids)
        target = next(q for q in listed if q in stripped)
        await type_fast(pilot, *["right_square_bracket"] * listed.index(target))
        assert app.selected_query == target
        yield app, pilot, folder, target



@pytest.mark.parametrize("order", ["mtf", "bandit"])
async def test_keys_in_a_burst_land_on_the_chunks_the_order_offered(sample_runs, tmp_path, settled, order):
    async with at_a_stripped_query(sample_runs, tmp_path, settled, order) as (app, pilot, folder, start):
        replay = Replay(queue_of(folder, order), start)
        replay.keys(BURST)
        rank = Replay(queue_of(folder, "rank"), start)
        rank.keys(BURST)
        assert replay.marks != rank.marks  # the order chose other chunks than the queue's own walk would
        size = replay.queue.query_progress(start)[1]
        assert [q for q, _, _ in replay.marks[:size - 3]] == [start] * (size - 3)  # the query asked for first
        assert len({q for q, _, _ in replay.marks}) > 2  # then the order, across queries
        await type_fast(pilot, "J", *BURST)
        screen = app.screen
        assert isinstance(screen, JudgeScreen) and screen.queue.walk.name == order
        assert marks_written(folder / "gold.yaml") == replay.marks
        undone = [(r["query"], r["chunk"]) for r in journal(folder / "gold.yaml") if r["type"] == "undo"]
        assert undone == [replay.marks[-1][:2]]
        assert screen.position == replay.position  # back on the chunk taken back
        replay.keys(AFTER)
        await type_fast(pilot, *AFTER)
        assert marks_written(folder / "gold.yaml") == replay.marks
        assert screen.position == replay.position
        walk = screen.queue.walk
        assert f"about {fmt.number(walk.gold_left(), 'estimate')} gold left" in header(app)
        assert f"{order} order" in header(app)


async def test_the_default_order_is_judges(sample_runs, tmp_path, settled, monkeypatch):
    """No --order: the review's J walks DEFAULT_POOL_ORDER, the default of `ragdiff judge --order` (one home), and
    `ragdiff review --order` and `ragdiff demo --order` reach the queue."""
    from ragdiff.cli import review_cmd
    from ragdiff.cli.main import main
    from ragdiff.core.io.choices import DEFAULT_POOL_ORDER

    folder = demo_copy(sample_runs, tmp_path)
    app = review(folder, None)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "J")
        assert app.screen.queue.walk.name == DEFAULT_POOL_ORDER == "mtf"
    opened_with = []
    monkeypatch.setattr(review_cmd, "run_app", lambda app: opened_with.append(app.inputs.order) or 0)
    files = [str(folder / "bm25.jsonl"), str(folder / "dense.jsonl"), "--gold", str(folder / "gold.yaml")]
    assert main(["review", *files]) == 0
    assert main(["review", *files, "--order", "bandit"]) == 0
    assert main(["demo", "--order", "global"]) == 0
    assert opened_with == [DEFAULT_POOL_ORDER, "bandit", "global"]


def test_review_judge_and_demo_say_order_alike():
    """One --order option (cli.common.add_order): the same choices, default and help in judge, review and demo."""
    import argparse

    from ragdiff.cli.main import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    orders = {name: next(a for a in subparsers.choices[name]._actions if a.dest == "order")
              for name in ("judge", "review", "demo")}
    judge = orders["judge"]
    for name in ("review", "demo"):
        action = orders[name]
        assert (action.choices, action.default, action.metavar) == (judge.choices, judge.default, judge.metavar)
        assert action.help.startswith(judge.help)
        assert "J opens the queue at the query on screen" in action.help


async def test_the_header_estimates_the_gold_left_and_the_status_says_what_stopping_leaves(
        sample_runs, tmp_path, settled):
    """The header and the query line carry the order's estimate; the status line the stopping suggestion with
    recall@10's bounds from the label file as it is at each J: a review mark between two J's moves them."""
    async with at_a_stripped_query(sample_runs, tmp_path, settled, "mtf", (160, 40)) as (app, pilot, folder, start):
        runs = [load_run(folder / "bm25.jsonl"), load_run(folder / "dense.jsonl")]
        status = lambda: " ".join(str(app.screen.query_one("#judge-status").render()).split())  # noqa: E731
        await type_fast(pilot, "J")
        screen = app.screen
        walk = screen.queue.walk
        left, (judged, total) = walk.gold_left(), screen.queue.progress()
        estimate = fmt.number(left, "estimate")
        assert f"about {estimate} gold left" in header(app) and "mtf order" in header(app)
        line = str(screen.query_one("#judge-query").render())
        assert f"about {fmt.number(walk.gold_left(start), 'estimate')} gold left" in line
        first = bounds(runs, load_gold(folder / "gold.yaml"))
        said = " · ".join(f"{b:.3f} {name}" for name, _, b in first)
        unjudged = total - judged
        assert status() == f"about {estimate} gold in {unjudged} unjudged · stopping here: recall@10 ≤ {said} · ? every key"
        # list A's first row, in the review: the query's first gold, so it is scored (it had no judgment)
        await type_fast(pilot, "escape", "tab", "g")
        assert marks_written(folder / "gold.yaml")
        await type_fast(pilot, "J")
        now = bounds(runs, load_gold(folder / "gold.yaml"))
        assert now != first
        assert "recall@10 ≤ " + " · ".join(f"{b:.3f} {name}" for name, _, b in now) in status()


async def test_a_mark_in_the_review_teaches_the_order_and_its_undo_untaught(sample_runs, tmp_path, settled):
    """Marks made in the review while the queue exists reach it through the judgment store: the order counts the
    chunk as judged (no longer offered, out of the estimate); the review's undo puts it back."""
    async with at_a_stripped_query(sample_runs, tmp_path, settled, "bandit") as (app, pilot, folder, start):
        await type_fast(pilot, "J", "escape")
        walk = app._judge_queue.walk
        left = walk.gold_left()
        await type_fast(pilot, "tab", "3")  # list A's first row, unjudged: gold ★3, in the review
        (query, chunk, kind), = marks_written(folder / "gold.yaml")
        assert (query, kind) == (start, vocab.GOLD)
        i = walk.pool.index[(query, chunk)]
        assert walk.order.done[i] and walk.order.gold[i] and walk.model.judged[i]
        assert walk.gold_left() < left
        await type_fast(pilot, "u")
        assert not walk.order.done[i] and not walk.model.judged[i]
        assert walk.gold_left() == pytest.approx(left, abs=1e-9)


async def test_a_decision_whose_save_failed_is_offered_again(sample_runs, tmp_path, settled, monkeypatch):
    """The first decision's save fails (a full disk): the order forgets it, and the chunk comes back to be judged
    before the queue leaves the query asked for."""
    from ragdiff.app.session import LabelSession

    real, calls = LabelSession._mark, []

    def first_fails(self, *args):
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real(self, *args)

    monkeypatch.setattr(LabelSession, "_mark", first_fails)
    async with at_a_stripped_query(sample_runs, tmp_path, settled, "mtf") as (app, pilot, folder, start):
        await type_fast(pilot, "J", "x")
        screen = app.screen
        queue, walk = screen.queue, screen.queue.walk
        failed = queue.entries[start][0].chunk_id  # the first chunk offered: the query's best ranked
        i = walk.pool.index[(start, failed)]
        assert not queue.is_done(start, failed) and not walk.order.done[i] and not walk.model.judged[i]
        size = queue.query_progress(start)[1]
        await type_fast(pilot, *["x"] * (size - 1))  # the rest of the query
        assert queue.entry_at(screen.position) == (start, queue.entries[start][0])  # offered again
        await type_fast(pilot, "x")
        marks = marks_written(folder / "gold.yaml")
        assert [q for q, _, _ in marks] == [start] * size and marks[-1][1] == failed
        assert queue.query_progress(start) == (size, size)
