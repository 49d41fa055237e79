"""A mark updates the model in place (one query's stretch of each run's `ByK` and of the unjudged rows) when its
write comes back, while keys go on arriving. Marks, undo, k changes and `]`/`[` typed in one burst with no
pauses — and again with the label writes and the background workers (unjudged rows, the k's scored ahead) held
until every key is taken — each land on the query and chunk on screen at their key, and afterwards the label
file, the journal, and the header, flips, filters and rows are those of a fresh model on the written file.

The expected screen is worked out from the files alone: the query order at a k is the core's flips first on the
label file as it was when the burst began (a list never re-sorts under the reviewer; with the writes held no
mark has landed before the last key, and without holding them the burst's marks are `x`/`e` on unjudged
chunks, which move no flip), and the chunk is the run file's row under list A's cursor."""

from __future__ import annotations

import shutil
import threading

import pytest

from ragdiff.app import model as model_module
from ragdiff.app.session import LabelSession
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core.metrics.diff import flips
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, Mark
from ragdiff.core.labels.store import Judgments
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run

from conftest import settle
from test_app_keys import demo_copy, ops, results, send_keys
from test_app_pilot import SIZE, sample_app
from test_app_unjudged_worker import assert_screen_is_a_fresh_model

DEPTH = 50
KEY = {"+": "plus", "-": "minus", "]": "right_square_bracket", "[": "left_square_bracket"}


def plan_keys(folder, oracle, plan: str, k: int, cursor: int = 0):
    """The keys for `plan` (one character a key) and the journal they must write, found by applying each mark
    and undo to a copy of the label file (`oracle`); and the screen (k, query, list A's row) after them."""
    runs = [load_run(folder / name) for name in ("bm25.jsonl", "dense.jsonl")]
    run_a = results(folder / "bm25.jsonl")
    start = load_gold(oracle / "gold.yaml")
    orders = {}

    def order_at(k):
        if k not in orders:
            evals = [evaluate(run, start, EvalSettings(k=k, depth=DEPTH)) for run in runs]
            h2m, m2h = flips(*evals, k)
            orders[k] = h2m + m2h + [q for q in start.queries.get_column("query_id").to_list() if q not in h2m + m2h]
        return orders[k]

    file = LabelFile(oracle / "gold.yaml", reviewer="oracle")

    def judged(qid, chunk):
        gold = load_gold(oracle / "gold.yaml")
        return (qid, chunk) in set(gold.judgments.select("query_id", "chunk_id").iter_rows())

    order, row = order_at(k), 0
    keys, expected = ["tab"], []
    for step in plan:
        qid = order[cursor]
        if step in "+-":
            k += 1 if step == "+" else -1
            order = order_at(k)
            cursor = order.index(qid)  # the query stays selected, and list A's row with it
            keys.append(KEY[step])
        elif step in "[]":
            cursor, row = max(0, min(cursor + (1 if step == "]" else -1), len(order) - 1)), 0
            keys.append(KEY[step])
        elif step == "j":
            row = min(row + 1, len(run_a[qid]) - 1)
            keys.append("j")
        elif step == "u":
            change = file.undo()
            expected.append(("undo", change.query_id, change.chunk_id))
            keys.append("u")
        else:  # x, e, g: on an unjudged chunk (down the list to the next one), so each changes the file
            while judged(qid, run_a[qid][row]) and row + 1 < len(run_a[qid]):
                row += 1
                keys.append("j")
            chunk = run_a[qid][row]
            if judged(qid, chunk):
                continue
            label = {"x": "not_relevant", "e": "evidence", "g": "gold"}[step]
            keys.append(step)
            expected.append(("mark", qid, chunk, label, None))
            file.apply(Mark(qid, chunk, label))
    return keys, expected, (k, order[cursor], run_a[order[cursor]][row], order)


def check(app, folder, oracle, expected, screen) -> None:
    got = ops(folder / "gold.yaml")
    assert [g[:3] for g in got] == [e[:3] for e in expected]  # an undo's label is what was there before
    assert [g for g in got if g[0] == "mark"] == [e for e in expected if e[0] == "mark"]
    written, wanted = (load_gold(path).judgments.select("query_id", "chunk_id", "grade", "level")
                       .sort("query_id", "chunk_id") for path in (folder / "gold.yaml", oracle / "gold.yaml"))
    assert written.equals(wanted)
    # the gold frames the screen reads are the judgment store's, and the store holds what the file holds
    derived = app.model.gold.judgments.select("query_id", "chunk_id", "grade", "level").sort("query_id", "chunk_id")
    assert derived.equals(written) and app.model.gold is app.store.gold()
    assert dict(app.store) == dict(Judgments.of_gold(load_gold(folder / "gold.yaml")))
    k, qid, chunk, order = screen
    assert (app.model.k, app.selected_query) == (k, qid)
    assert app.query_one("#list-a", RankedList).selected_chunk == chunk
    assert list(app.query_one(QueryList).ids) == order  # listed at the last k change, not re-sorted since
    assert_screen_is_a_fresh_model(app, folder, listed=False)


def copies(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    oracle = tmp_path / "oracle"
    oracle.mkdir()
    shutil.copy2(folder / "gold.yaml", oracle / "gold.yaml")
    return folder, oracle


async def test_marks_undo_k_and_next_in_one_burst(sample_runs, tmp_path):
    """No pauses: the writes come back (and each mark's model update runs) while later keys are being taken."""
    folder, oracle = copies(sample_runs, tmp_path)
    app = sample_app(folder, k=20)
    app.inputs.reviewer = "tester"
    plan = "x+jx]e-u[jjx++]x]]e-x-u[x+]jjjex"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys, expected, screen = plan_keys(folder, oracle, plan, 20)
        assert len([e for e in expected if e[0] == "mark"]) >= 8 and any(e[0] == "undo" for e in expected)
        await send_keys(pilot, *keys)
        await settle(pilot)
        check(app, folder, oracle, expected, screen)


@pytest.fixture
def held(monkeypatch):
    """The label writes and the workers off the screen's thread (the unjudged rows; the k's scored ahead, once
    loading is done) each wait for their event: `writes` first, then `workers`."""
    writes, workers, loaded = threading.Event(), threading.Event(), threading.Event()
    for name, after_loading in (("unjudged_tables", False), ("view_at", True)):
        real = getattr(model_module, name)

        def slow(*args, real=real, after_loading=after_loading):
            if threading.current_thread() is not threading.main_thread() and (loaded.is_set() or not after_loading):
                assert workers.wait(60)
            return real(*args)

        monkeypatch.setattr(model_module, name, slow)
    mark = LabelSession._mark

    def held_mark(self, *args):
        assert writes.wait(60)
        return mark(self, *args)

    monkeypatch.setattr(LabelSession, "_mark", held_mark)
    return writes, workers, loaded


async def test_a_burst_with_the_writes_and_workers_held(sample_runs, tmp_path, held):
    """Every key taken before any write is done (gold marks too: they move flips once they land, but no list
    re-sorts after them); then the marks land while the workers are still held, then the workers end: their
    results, made from the labels before the marks, are dropped."""
    writes, workers, loaded = held
    folder, oracle = copies(sample_runs, tmp_path)
    app = sample_app(folder, k=20)
    app.inputs.reviewer = "tester"
    plan = "g+jx]e-u[jjg++]x]]e-g-u[x+]jjjgx"
    async with app.run_test(size=SIZE) as pilot:
        try:
            keys, expected, screen = plan_keys(folder, oracle, plan, 20)
            assert len([e for e in expected if e[0] == "mark" and e[3] == "gold"]) >= 3
            for _ in range(3000):
                if app.model is not None:
                    break
                await pilot.pause(0.01)
            loaded.set()
            await send_keys(pilot, *keys)
            assert ops(folder / "gold.yaml") == []  # nothing written yet
            writes.set()
            for _ in range(3000):
                if len(ops(folder / "gold.yaml")) == len(expected):
                    break
                await pilot.pause(0.01)
            await pilot.pause(0.1)
        finally:
            writes.set()
            workers.set()
        await settle(pilot)
        check(app, folder, oracle, expected, screen)
        assert app.model.filter_counts()["unjudged"] is not None
