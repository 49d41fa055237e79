"""Keys typed at machine speed act on what was on screen for each key (DESIGN: "Marks are bound to what the
reviewer saw").

`type_fast` hands every key to the terminal driver at once, with no pause for the app to catch up: the
keys queue exactly as they do when a person types faster than the screen redraws (or while a slow step
holds the screen's thread). Expected targets are worked out from the run files themselves, not from the app.
"""

from __future__ import annotations

import json
import shutil
import threading
import time

from textual import events
from textual.app import _character_to_key
from textual.worker import WorkerState, get_current_worker

from ragdiff.app.model import ReviewModel
from ragdiff.app.session import LabelSession
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core.labels.journal import journal_path

from conftest import settle
from test_app_pilot import SIZE, lesson_app, sample_app

DEMO = ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl")


async def type_fast(pilot, *keys: str) -> None:
    """Queue every key at once (no waiting between them), as a fast typist does; then wait until the app
    has taken them all and the writes they caused are done."""
    await send_keys(pilot, *keys)
    await settle(pilot)


async def send_keys(pilot, *keys: str) -> None:
    """Queue every key at once and wait until the app has taken them all (the writes may still be going)."""
    start = pilot.app.keys_done
    post_keys(pilot.app, *keys)
    await keys_taken(pilot, start + len(keys))


def post_keys(app, *keys: str) -> None:
    """Hand every key to the terminal driver at once and return at once (the app takes them when it can)."""
    for key in keys:
        character = key if len(key) == 1 else " " if key == "space" else None
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        event = events.Key(key, character)
        event.set_sender(app)
        app._driver.send_message(event)


async def keys_taken(pilot, count: int) -> None:
    """Wait until the app has taken `count` keys in all (their actions have run)."""
    app = pilot.app
    for _ in range(3000):  # 30 s: a loaded machine (several suites on two cores) is slow
        if app.keys_done >= count:
            break
        await pilot.pause(0.01)
    assert app.keys_done == count, "the app did not take every key"


def journal(gold) -> list[dict]:
    path = journal_path(gold)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ops(gold) -> list[tuple]:
    """(type, query, chunk, label, grade) of every mark and undo written, in order."""
    return [(r["type"], r["query"], r["chunk"], r["label"], r["grade"]) for r in journal(gold)
            if r["type"] in ("mark", "undo")]


def results(path) -> dict[str, list[str]]:
    """query id -> the chunk ids the run returned, best first, read straight from the JSONL file."""
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[record["query_id"]] = [r["id"] if isinstance(r, dict) else r for r in record["results"]]
    return out


def demo_copy(sample_runs, tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    for name in DEMO:
        shutil.copy2(sample_runs / name, folder / name)
    return folder


async def test_marks_typed_fast_land_on_the_query_and_chunk_on_screen(sample_runs, tmp_path, pane, settled):
    folder = demo_copy(sample_runs, tmp_path)
    run_a = results(folder / "bm25.jsonl")
    app = sample_app(folder)
    app.inputs.reviewer = "tester"
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        order = list(app.query_one(QueryList).ids)  # as displayed: flips first
        q0, q1, q2, q3 = order[:4]
        was_gold = app.model.label_of(q2, run_a[q2][0])[0] == "gold"  # then g itself changes nothing
        # list A; j x j x; ] x; ] g 2 ]; x; back to the query list: x (nothing selected); j; list A: x
        await type_fast(pilot, "tab", "j", "x", "j", "x", "]", "x", "]", "g", "2", "]", "x",
                  "shift+tab", "x", "j", "tab", "x")
        expected = [
            ("mark", q0, run_a[q0][1], "not_relevant", None),
            ("mark", q0, run_a[q0][2], "not_relevant", None),
            ("mark", q1, run_a[q1][0], "not_relevant", None),
            ("mark", q2, run_a[q2][0], "gold", None),
            # the digit refines the g: a g that changed the file is taken back, then written with its grade
            *([] if was_gold else [("undo", q2, run_a[q2][0], None, None)]),
            ("mark", q2, run_a[q2][0], "gold", 2),
            ("mark", q3, run_a[q3][0], "not_relevant", None),
            ("mark", order[4], run_a[order[4]][0], "not_relevant", None),
        ]
        got = ops(folder / "gold.yaml")
        # an undo's label is whatever was there before; compare it by target only
        assert [(t, q, c) for t, q, c, *_ in got] == [(t, q, c) for t, q, c, *_ in expected]
        assert [g for g in got if g[0] == "mark"] == [e for e in expected if e[0] == "mark"]
        for _, query, chunk, *_ in got:  # none on a chunk the query's runs did not return
            assert chunk in run_a[query]
        # the x with the query list focused wrote nothing and said so
        assert app.selected_query == order[4]


async def test_nothing_selected_says_so_and_writes_nothing(lesson, pane, settled):
    app = lesson_app(lesson, reviewer="tester")
    original = lesson["gold"].read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "x", "g", "2", "j", "e")  # the query list has the focus throughout
        assert lesson["gold"].read_bytes() == original and ops(lesson["gold"]) == []
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "nothing marked: no chunk is selected" in status


async def test_search_enter_tab_x_typed_fast_marks_the_found_query(sample_runs, tmp_path, settled):
    folder = demo_copy(sample_runs, tmp_path)
    run_a = results(folder / "bm25.jsonl")
    app = sample_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.selected_query != "q29"
        await type_fast(pilot, "/", "q", "2", "9", "enter", "tab", "x", "j", "x")
        assert app.query_one(QueryList).ids == ["q29"] and app.search == "q29"
        assert isinstance(app.focused, RankedList) and app.focused.side == "a"
        assert ops(folder / "gold.yaml") == [("mark", "q29", run_a["q29"][0], "not_relevant", None),
                                             ("mark", "q29", run_a["q29"][1], "not_relevant", None)]
        assert app.is_running  # the q of "q29" went into the search, it did not quit


async def test_a_mark_that_changes_a_flip_keeps_order_and_cursor(lesson, pane, settled):
    # at k=3 only q1 flips (hit→miss); q3's one gold chunk in B's top 3 is finance-4 at rank 1: marking it
    # not relevant makes q3 a hit→miss flip too, which "flips first" would sort to the top
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        queries = app.query_one(QueryList)
        order = list(queries.ids)
        assert order == ["q1", "q2", "q3", "q4"]
        await type_fast(pilot, "]", "]", "tab", "tab", "x")
        assert ops(lesson["gold"]) == [("mark", "q3", "finance-4", "not_relevant", None)]
        assert app.model.filter_counts()["hit_to_miss"] == 2  # the flip is counted ...
        assert queries.ids == order and app.selected_query == "q3"  # ... and nothing moved
        assert app.query_one("#list-b", RankedList).selected_chunk == "finance-4"
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "finance-4 for q3: was gold ★1, now not relevant" in status
        await type_fast(pilot, "]")
        assert app.selected_query == "q4"  # the next query as displayed
        # order changes when the reviewer asks: f (hit→miss) then back round to all
        await type_fast(pilot, "f")
        assert queries.ids == ["q1", "q3"]


async def test_a_mark_that_replaces_a_graded_judgment_says_what_it_was(lesson, pane, settled):
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "tab", "x")  # list A of q1: policy-14, gold ★3
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "policy-14 for q1: was gold ★3, now not relevant" in status


async def test_g_then_a_digit_is_one_mark_one_u(lesson, settled):
    app = lesson_app(lesson, reviewer="tester")
    original = lesson["gold"].read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "tab", "tab", "g", "2")  # list B of q1: policy-31, unjudged
        assert "policy-31: 2" in lesson["gold"].read_text()
        assert app.model.label_of("q1", "policy-31") == ("gold", 2)
        await type_fast(pilot, "u")
        assert lesson["gold"].read_bytes() == original
        assert app.model.label_of("q1", "policy-31") == (None, None)
        # a digit that does not follow g directly is a mark of its own
        await type_fast(pilot, "g", "j", "k", "2")
        await type_fast(pilot, "u")
        assert app.model.label_of("q1", "policy-31")[0] == "gold"  # one u took back only the grade mark


async def test_the_header_keeps_its_height_while_p_values_are_recomputed(sample_runs, tmp_path, screen, settled):
    """A mark makes the p-values stale; until they are back the header says p=… — on the same lines, so
    every pane stays where it was."""
    folder = demo_copy(sample_runs, tmp_path)
    app = sample_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        header, panes = app.query_one("#header"), app.query_one("#panes")
        before = (header.region, panes.region)
        assert app.model.header.verdicts_ready and "p=…" not in "\n".join(screen(app)[:4])
        held = []
        app._start_verdicts = lambda delay=0.0: held.append(delay)  # the p-values do not come back yet
        await type_fast(pilot, "tab", "x")
        assert held and not app.model.header.verdicts_ready
        assert "p=…" in "\n".join(screen(app)[:4])
        assert (header.region, panes.region) == before
        del app._start_verdicts
        app._start_verdicts()
        await settled(pilot)
        assert app.model.header.verdicts_ready and (header.region, panes.region) == before


async def test_waiting_for_the_writes_outlasts_a_p_value_job_replaced_by_a_newer_one(lesson, monkeypatch):
    """The typed-fast tests read the journal once `settle` says the writes are done. On a loaded machine a
    mark's p-values (started 0.25 s after it) may still be computing when the next mark's start: the newer
    job replaces the older one (an exclusive worker group), and the older one ends cancelled. That is not
    the app exiting: the wait must go on until the mark still being written is in the journal."""
    replaced = threading.Event()
    original_job, original_mark = ReviewModel.verdict_job, LabelSession._mark
    calls = {"verdicts": 0, "marks": 0}

    def verdict_job(model):  # the first p-values after a mark run until a newer job replaces them
        key, function, args = original_job(model)
        calls["verdicts"] += 1
        if calls["verdicts"] > 1:
            return key, function, args

        def until_replaced(*args):
            worker = get_current_worker()
            while not worker.is_cancelled:
                time.sleep(0.01)
            replaced.set()
            return ({}, False)
        return key, until_replaced, args

    def mark(session, *args):  # a slow disk: the third mark is written 0.5 s after the p-values were replaced
        calls["marks"] += 1
        if calls["marks"] == 3:
            assert replaced.wait(30), "the second mark's p-values never replaced the first's"
            time.sleep(0.5)
        return original_mark(session, *args)

    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # the first p-values (at load) are computed the ordinary way
        monkeypatch.setattr(ReviewModel, "verdict_job", verdict_job)
        monkeypatch.setattr(LabelSession, "_mark", mark)
        await send_keys(pilot, "tab", "e")  # list A of q1: policy-14
        for _ in range(3000):  # until the p-values after that mark are being computed
            if any(w.group == "verdicts" and w.state == WorkerState.RUNNING for w in app.workers):
                break
            await pilot.pause(0.01)
        await send_keys(pilot, "j", "e", "j", "e")  # policy-2 (its p-values replace the first), policy-9
        await settle(pilot)
        assert ops(lesson["gold"]) == [("mark", "q1", chunk, "evidence", None)
                                       for chunk in ("policy-14", "policy-2", "policy-9")]
        assert app.session.idle and replaced.is_set()


async def test_k_held_down_with_next_and_marks_typed_fast(sample_runs, tmp_path, settled):
    """`+` and `-` held down (faster than the worker scores the k's beside the one shown), `]` and marks in
    between, every key queued at once: each mark lands on the query and chunk on screen at its key, and at
    the end the header, the flips and the cursor are what the core says at the final k on the written file.

    The expected screen is worked out from the files: the query order at each k is the core's flips first
    (`evaluate` + `flips` on a copy of the label file the same marks are applied to), the chunk is the run
    file's row under list A's cursor. The marks are `x` on unjudged chunks: each changes judged@k, none moves a
    flip, so the order the app shows at a k does not depend on when a mark's write comes back."""
    import math

    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.metrics.diff import flips
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.labels import LabelFile, Mark
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    folder = demo_copy(sample_runs, tmp_path)
    oracle = tmp_path / "oracle"
    oracle.mkdir()
    shutil.copy2(folder / "gold.yaml", oracle / "gold.yaml")
    run_a = results(folder / "bm25.jsonl")
    runs = [load_run(folder / name) for name in ("bm25.jsonl", "dense.jsonl")]
    oracle_file = LabelFile(oracle / "gold.yaml", reviewer="oracle")
    depth = 50

    def order_at(k):
        gold = load_gold(oracle / "gold.yaml")
        evals = [evaluate(run, gold, EvalSettings(k=k, depth=depth)) for run in runs]
        h2m, m2h = flips(*evals, k)
        return h2m + m2h + [q for q in gold.queries.get_column("query_id").to_list() if q not in h2m + m2h]

    def judged(qid, chunk):
        gold = load_gold(oracle / "gold.yaml")
        return (qid, chunk) in set(gold.judgments.select("query_id", "chunk_id").iter_rows())

    def header_is_the_core_at(k):
        gold = load_gold(folder / "gold.yaml")
        settings = EvalSettings(k=k, depth=depth)
        evals = [evaluate(run, gold, settings, default_metrics(k, depth, "header")) for run in runs]
        assert app.model.k == k
        for line in app.model.header.metrics:
            for got, ev in ((line.a, evals[0]), (line.b, evals[1])):
                want = ev.means[line.name]
                assert got == want or (math.isnan(got) and math.isnan(want)), (k, line.name, got, want)
        h2m, m2h = flips(*evals, k)
        counts = app.model.filter_counts()
        assert (counts["hit_to_miss"], counts["miss_to_hit"]) == (len(h2m), len(m2h))
        return True

    app = sample_app(folder, k=5)
    app.inputs.reviewer = "tester"
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        k, order = 5, order_at(5)
        assert list(app.query_one(QueryList).ids) == order
        cursor, row = 0, 0  # the query list's cursor; list A's cursor (a row of run A's results)
        keys, expected = ["tab"], []
        plan = "+++jx]++jx-x]x++j++]]jjx---x]+jx+++x]-jx-jx++++]jx"
        for step in plan:
            qid = order[cursor]
            if step in "+-":
                k += 1 if step == "+" else -1
                order = order_at(k)
                cursor = order.index(qid)  # the query stays selected, and its chunk
                keys.append("plus" if step == "+" else "minus")
            elif step == "]":
                cursor, row = min(cursor + 1, len(order) - 1), 0
                keys.append("right_square_bracket")
            elif step == "j":
                row = min(row + 1, len(run_a[qid]) - 1)
                keys.append("j")
            elif step == "x":
                chunk = run_a[qid][row]
                # mark only unjudged chunks: not relevant moves no flip, and each changes judged@k
                while judged(qid, chunk) and row + 1 < len(run_a[qid]):
                    row += 1
                    keys.append("j")
                    chunk = run_a[qid][row]
                if judged(qid, chunk):
                    continue
                keys.append("x")
                expected.append(("mark", qid, chunk, "not_relevant", None))
                oracle_file.apply(Mark(qid, chunk, "not_relevant"))
        await send_keys(pilot, *keys)
        await settle(pilot)
        # once the marks are in, back over k's the screen showed before them: each shows the marked numbers
        for key in ("minus", "minus", "plus", "minus", "minus", "minus", "plus"):
            await send_keys(pilot, key)
            k += 1 if key == "plus" else -1
            assert header_is_the_core_at(k)
        qid = order[cursor]
        order = order_at(k)
        cursor = order.index(qid)
        assert len(expected) >= 8
        assert ops(folder / "gold.yaml") == expected
        written, wanted = (load_gold(path).judgments.select("query_id", "chunk_id", "grade", "level")
                           .sort("query_id", "chunk_id") for path in (folder / "gold.yaml", oracle / "gold.yaml"))
        assert written.equals(wanted)
        # the screen at the final k: the selected query and chunk, the order, the header's numbers
        assert app.model.k == k and app.selected_query == order[cursor]
        assert app.query_one("#list-a", RankedList).selected_chunk == run_a[order[cursor]][row]
        assert list(app.query_one(QueryList).ids) == order
        assert header_is_the_core_at(k)
