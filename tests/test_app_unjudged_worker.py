"""The review screen's unjudged rows come from a worker after the first screen (app.model.unjudged_job). Keys
typed at machine speed while that worker is still running — marks, undo, k changes, the unjudged@k filter —
act on what was on screen at each key, and once the worker is done the screen is a fresh model's on the
written file (the worker's result, made from the labels before a mark, is dropped). Two things it caught: the
unjudged@k list chosen before a mark found the rows stayed empty (the worker's dropped result refreshed
nothing, and a mark keeps the list as it is), and that list's title said 0 while nothing was counted."""

from __future__ import annotations

import threading

import pytest

from ragdiff.app import model as model_module
from ragdiff.app.model import ReviewModel
from ragdiff.app.session import LabelSession
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run

from conftest import settle
from test_app_keys import demo_copy, ops, results, send_keys
from test_app_pilot import SIZE, sample_app


@pytest.fixture
def held(monkeypatch):
    """The unjudged worker, held until `release` is set (it tells when it has started); a mark that finds the
    rows itself, on the screen's thread, is not held."""
    started, release = threading.Event(), threading.Event()
    real = model_module.unjudged_tables

    def slow(*args):
        if threading.current_thread() is not threading.main_thread():
            started.set()
            assert release.wait(60)
        return real(*args)

    monkeypatch.setattr(model_module, "unjudged_tables", slow)
    # the label writes, held too until the keys are all taken: the unjudged@k filter is chosen before a mark lands
    writes = threading.Event()
    mark = LabelSession._mark

    def held_mark(self, *args):
        assert writes.wait(60)
        return mark(self, *args)

    monkeypatch.setattr(LabelSession, "_mark", held_mark)
    taken = []  # what each apply_unjudged said: True, the worker's rows were used; False, dropped
    apply = ReviewModel.apply_unjudged
    monkeypatch.setattr(ReviewModel, "apply_unjudged", lambda self, *a: taken.append(apply(self, *a)) or taken[-1])
    return started, release, writes, taken


async def wait_for(pilot, event) -> None:
    for _ in range(3000):
        if event.is_set():
            return
        await pilot.pause(0.01)
    raise AssertionError("the unjudged worker did not start")


def fresh_model(folder, k: int) -> ReviewModel:
    return ReviewModel(load_run(folder / "bm25.jsonl"), load_run(folder / "dense.jsonl"),
                       load_gold(folder / "gold.yaml"), EvalSettings(k=k, depth=50))


def assert_screen_is_a_fresh_model(app, folder, listed: bool = True) -> None:
    """`listed`: the query list shown is the model's list too (False after marks that moved a flip: the list
    keeps the order it had, DESIGN's "lists never re-sort under the reviewer")."""
    model, fresh = app.model, fresh_model(folder, app.model.k)
    assert model.filter_counts() == fresh.filter_counts()
    counts = {q: (model.rows[q].unjudged_a, model.rows[q].unjudged_b) for q in model.visible("all")}
    assert counts == {q: (fresh.rows[q].unjudged_a, fresh.rows[q].unjudged_b) for q in fresh.visible("all")}
    for key in ("unjudged", "all", "hit_to_miss", "miss_to_hit"):
        assert model.visible(key) == fresh.visible(key), key
    assert [(m.name, m.a, m.b) for m in model.header.metrics] == [(m.name, m.a, m.b) for m in fresh.header.metrics]
    shown = app.query_one(QueryList).ids
    assert not listed or list(shown) == model.visible(app.filter_key, app.sort_key, app.search)


K = 42  # deep enough that the sample's unjudged chunks are inside it


@pytest.mark.parametrize("plan", ["marks", "k only"])
async def test_keys_while_the_unjudged_worker_runs(sample_runs, tmp_path, held, plan):
    started, release, writes, taken = held
    folder = demo_copy(sample_runs, tmp_path)
    run_a = results(folder / "bm25.jsonl")
    app = sample_app(folder, k=K)
    app.inputs.reviewer = "tester"
    async with app.run_test(size=SIZE) as pilot:
        try:
            await wait_for(pilot, started)
        except AssertionError:
            writes.set()
            release.set()
            raise
        assert app.model.filter_counts()["unjudged"] is None  # not counted yet: no count, never 0
        order = list(app.query_one(QueryList).ids)

        def unjudged_in_top(qid, n):
            return [c for c in run_a.get(qid, [])[:n] if app.model.label_of(qid, c)[0] is None]

        # a query with two unjudged chunks in run A's top 40 (the sample's top 5s are all judged): each mark
        # changes unjudged@k at every k shown
        at = next(i for i, q in enumerate(order) if len(unjudged_in_top(q, 40)) >= 2)
        q0 = order[at]
        unjudged = unjudged_in_top(q0, 40)
        rows = [run_a[q0].index(c) for c in unjudged[:2]]
        keys = ["right_square_bracket"] * at + ["tab"]
        expected = []
        if plan == "marks":
            # list A: down to the first unjudged chunk, x; k up (the query and chunk stay); down to the second, x; u
            keys += ["j"] * rows[0] + ["x", "plus"] + ["j"] * (rows[1] - rows[0]) + ["x", "u", "minus"]
            expected = [("mark", q0, unjudged[0], "not_relevant", None),
                        ("mark", q0, unjudged[1], "not_relevant", None),
                        ("undo", q0, unjudged[1], "none", None)]
        else:
            keys += ["plus", "plus", "minus", "plus"]
        keys += ["f"] * 5  # to unjudged@k
        try:
            await send_keys(pilot, *keys)
            if plan != "marks":  # unjudged@k chosen before its rows are found: no count yet, not 0
                assert app.query_one(QueryList).border_title.endswith(f"unjudged@{K + 2} …]")
            writes.set()
            if plan == "marks":  # the first mark's change has landed (it found the rows itself) before the worker ends
                for _ in range(3000):
                    if taken:
                        break
                    await pilot.pause(0.01)
        finally:
            writes.set()
            release.set()
        await settle(pilot)
        assert app.filter_key == "unjudged"
        # with marks, the first one found the rows itself and the worker's (older labels) were dropped
        assert taken == ([True, False] if plan == "marks" else [True])
        assert ops(folder / "gold.yaml") == expected
        assert app.model.k == (K if plan == "marks" else K + 2)
        assert_screen_is_a_fresh_model(app, folder)
        # the k's beside, scored after the worker: each the fresh model's
        for key, k in (("plus", app.model.k + 1), ("minus", app.model.k), ("minus", app.model.k - 1)):
            await send_keys(pilot, key)
            await settle(pilot)
            assert app.model.k == k
            assert_screen_is_a_fresh_model(app, folder)
