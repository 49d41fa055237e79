"""The review screen driven by keys (Textual Pilot), checked on what is on the screen."""

from __future__ import annotations

import pytest

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.app.widgets.header import short, signed
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core.metrics.diff import flips
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run

SIZE = (140, 40)


def lesson_app(lesson, k=3, corpus=True, **options):
    return ReviewApp(ReviewInputs(run_a=lesson["a"], run_b=lesson["b"], gold=lesson["gold"],
                                  settings=EvalSettings(k=k, depth=50),
                                  corpus=lesson["corpus"] if corpus else None, **options))


def sample_app(folder, k=5):
    app = ReviewApp(ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl",
                                 gold=folder / "gold.yaml", settings=EvalSettings(k=k, depth=50),
                                 corpus=folder / "corpus.jsonl"))
    app.verdict_delay = 0  # p-values right after a k change, so the test can read them
    return app


def listed(app) -> list[str]:
    return list(app.query_one(QueryList).ids)


def rows(app, side) -> list[str]:
    widget = app.query_one(f"#list-{side}", RankedList)
    return [item.row.chunk_id for item in widget.items if item.kind == "row"]


def core_numbers(paths, k, depth=50):
    gold = load_gold(paths["gold"])
    settings = EvalSettings(k=k, depth=depth)
    from ragdiff.core.metrics.specs import default_metrics

    metrics = default_metrics(k, depth, "header")
    ev_a = evaluate(load_run(paths["a"]), gold, settings, metrics)
    ev_b = evaluate(load_run(paths["b"]), gold, settings, metrics)
    return ev_a, ev_b


def header_text(lines) -> str:
    return "\n".join(lines[:4])


async def test_loads_and_shows_both_runs(lesson, screen, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        text = "\n".join(screen(app))
        assert "bm25.jsonl" in text and "dense.jsonl" in text and "gold.yaml" in text
        assert "4 queries (3 scored, 1 unanswerable)" in text and "k=3 depth=50" in text
        assert "recall@3" in text and "MRR" in text
        assert listed(app)[0] == "q1"  # the one hit→miss flip is first
        assert rows(app, "a") == ["policy-14", "policy-2", "policy-9"]
        assert rows(app, "b") == ["policy-31", "policy-2", "policy-9", "policy-14"]


async def test_hit_to_miss_filter_lists_exactly_the_flips(lesson, settled):
    app = lesson_app(lesson, k=1)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        ev_a, ev_b = core_numbers(lesson, 1)
        h2m, m2h = flips(ev_a, ev_b, 1)
        await pilot.press("f")
        assert app.filter_key == "hit_to_miss" and listed(app) == h2m == ["q1"]
        await pilot.press("f")
        assert listed(app) == m2h == ["q2", "q3"]
        await pilot.press("f", "f")
        assert listed(app) == ["q4"]  # unanswerable


async def test_next_query_updates_both_lists(lesson, screen, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        order = listed(app)
        before_a, before_b = rows(app, "a"), rows(app, "b")
        await pilot.press("right_square_bracket")
        assert app.selected_query == order[1]
        assert rows(app, "a") != before_a and rows(app, "b") != before_b
        assert rows(app, "a") == [r.chunk_id for r in app.model.rows_for(order[1], "a")]
        text = "\n".join(screen(app))
        assert app.model.rows_for(order[1], "b")[0].chunk_id in text
        await pilot.press("left_square_bracket")
        assert app.selected_query == order[0]
        # j/down in the focused query list moves too
        await pilot.press("j")
        assert app.selected_query == order[1]
        await pilot.press("k")
        assert app.selected_query == order[0]


@pytest.mark.parametrize("keys,k", [(["plus"], 4), (["minus"], 2), (["minus", "minus"], 1)])
async def test_changing_k_recomputes_the_header(lesson, screen, settled, keys, k):
    app = lesson_app(lesson, k=3)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        for key in keys:
            await pilot.press(key)
        await settled(pilot)
        ev_a, ev_b = core_numbers(lesson, k)
        head = header_text(screen(app))
        assert f"k={k} depth=50" in head
        recall = f"recall@{k}"
        assert f"{recall} A {short(ev_a.means[recall])} B {short(ev_b.means[recall])}" in head
        assert f"Δ{signed(ev_b.means[recall] - ev_a.means[recall])}" in head
        mrr = f"MRR {short(ev_a.means['mrr'])} {short(ev_b.means['mrr'])}"
        ndcg = f"nDCG@{k} {short(ev_a.means[f'ndcg@{k}'])} {short(ev_b.means[f'ndcg@{k}'])}"
        assert mrr in head and ndcg in head
        h2m, m2h = flips(ev_a, ev_b, k)
        assert app.model.visible("hit_to_miss") == h2m
        assert f"hit→miss {len(h2m)}" in screen(app)[4] or f"hit→miss {len(h2m)}" in "\n".join(screen(app))


async def test_markup_in_chunk_text_renders_literally(lesson, screen, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")  # queries → A → B; B's first row is policy-31
        await settled(pilot)
        assert app.focused is app.query_one("#list-b")
        text = "\n".join(screen(app))
        assert "[bold]x[/]" in text
        assert "\u241b[31m" in text  # ESC shown as ␛, not obeyed
        assert "[link=x]y[/link]" in text
        assert "App store [i]purchases[/i]" in text
        assert "policy-31 · unjudged · A —  B#1" in text


async def test_unjudged_and_not_relevant_look_different(lesson, pane, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        b_lines = pane(app, app.query_one("#list-b"))
        unjudged = next(line for line in b_lines if "policy-31" in line)
        not_relevant = next(line for line in b_lines if "policy-9 " in line)
        assert " ? " in unjudged and " · " in not_relevant
        # and in a different colour: read the style of the mark's cell on screen
        region = app.query_one("#list-b").region
        y_unjudged = region.y + b_lines.index(unjudged)
        y_notrel = region.y + b_lines.index(not_relevant)
        style_at = app.screen._compositor.get_style_at
        s_unjudged = style_at(region.x + unjudged.index(" ? ") + 1, y_unjudged)
        s_notrel = style_at(region.x + not_relevant.index(" · ") + 1, y_notrel)
        assert s_unjudged.color != s_notrel.color and s_unjudged.bold
        a_lines = "\n".join(pane(app, app.query_one("#list-a")))
        assert "★3" in a_lines  # policy-14 gold with its grade
        assert "B#4" in a_lines  # A's policy-14 is B's rank 4
        assert "A —" in unjudged  # policy-31 is absent from A
        b_text = "\n".join(b_lines)
        assert "relevant, not in the top 3" in b_text and "rank 4" in b_text
        assert "─ k=3 ─" in b_text


async def test_no_corpus_says_so(lesson, screen, settled):
    app = lesson_app(lesson, corpus=False)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert "no corpus given" in "\n".join(screen(app))


async def test_help_lists_every_binding(lesson, screen, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = "\n".join(screen(app))
        # the does column wraps beside the legend: read the keys table's region of the screen, line breaks gone
        region = app.screen.query_one("#help-keys").region
        drawn = [line[region.x:region.right] for line in screen(app)[region.y:region.bottom]]
        words = " ".join(" ".join(drawn).split())
        for binding in app.BINDINGS:
            assert " ".join(binding.tooltip.split()) in words, binding.id
            assert binding.id not in text, f"internal binding id {binding.id} shown"
        assert "1…9" in text
        assert "next query in the list" in text
        await pilot.press("escape")
        await pilot.pause()
        assert "next query in the list" not in "\n".join(screen(app))


@pytest.mark.parametrize("size", [(80, 24), (140, 40)], ids=["80x24", "140x40"])
async def test_help_scrolls_on_purpose_where_it_does_not_fit(lesson, settled, size):
    """Taller than the screen (80x24): the subtitle says which lines show of how many, and the keys it names
    scroll it to its last line; where it all fits (140x40) it says nothing about scrolling."""
    app = lesson_app(lesson)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one("#help-box")
        total, shown = box.virtual_size.height, box.scrollable_content_region.height
        if size == (140, 40):
            assert total <= shown and "scroll" not in str(box.border_subtitle)
            return
        assert total > shown
        assert str(box.border_subtitle).startswith(f"lines 1–{shown} of {total} ·")
        await pilot.press("j", "j")
        await pilot.pause()
        assert str(box.border_subtitle).startswith(f"lines 3–{shown + 2} of {total} ·")
        await pilot.press("space")
        await pilot.pause()
        assert box.scroll_y == 2 + shown
        await pilot.press("end")
        await pilot.pause()
        assert str(box.border_subtitle).startswith(f"lines {total - shown + 1}–{total} of {total} ·")


async def test_search_filters_by_text(lesson, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("slash", "b", "l", "e", "n")
        assert listed(app) == ["q2"]
        await pilot.press("enter")
        assert app.focused is app.query_one(QueryList)
        await pilot.press("escape")
        assert len(listed(app)) == 4


async def test_sort_by_delta_rr(lesson, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("s")
        assert app.sort_key == "delta_rr" and listed(app) == app.model.visible("all", "delta_rr")


async def test_q_quits_with_exit_code_0(lesson, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("q")
    assert app.return_code == 0


async def test_bad_input_fails_with_a_message(lesson, tmp_path, settled):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "results": [}\n')
    app = ReviewApp(ReviewInputs(run_a=bad, run_b=lesson["b"], gold=lesson["gold"], settings=EvalSettings()))
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
    assert app.return_code == 2 and "bad.jsonl:1:" in app.failure


# ---- the sample runs (skipped until sample_runs/gold.yaml exists) ------------------------------------------


async def test_sample_runs_flips_and_k(sample_runs, screen, settled):
    app = sample_app(sample_runs)
    paths = {"a": sample_runs / "bm25.jsonl", "b": sample_runs / "dense.jsonl", "gold": sample_runs / "gold.yaml"}
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        ev_a, ev_b = core_numbers(paths, 5)
        h2m, m2h = flips(ev_a, ev_b, 5)
        assert listed(app)[: len(h2m) + len(m2h)] == h2m + m2h
        await pilot.press("f")
        assert listed(app) == h2m
        first_a = rows(app, "a")
        await pilot.press("f", "f", "f", "f", "f")  # back to all
        assert app.filter_key == "all"
        await pilot.press("right_square_bracket")
        assert rows(app, "a") != first_a
        await pilot.press("plus")
        await settled(pilot)
        ev_a, ev_b = core_numbers(paths, 6)
        head = header_text(screen(app))
        assert f"recall@6 A {short(ev_a.means['recall@6'])} B {short(ev_b.means['recall@6'])}" in head
        assert app.model.visible("hit_to_miss") == flips(ev_a, ev_b, 6)[0]
        assert "inside the noise" in head or "a real" in head  # verdicts from diff.compare


async def test_sample_runs_chunk_text_from_corpus(sample_runs, screen, settled):
    app = sample_app(sample_runs)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        chunk = app.query_one("#list-a", RankedList).selected_chunk
        assert chunk is not None
        text = "\n".join(screen(app))
        assert f"{chunk} ·" in text
        assert "indexing" not in text and "no corpus" not in text


# ---- marking labels ----------------------------------------------------------------------------------------


async def test_mark_gold_writes_and_recomputes_then_undo(lesson, screen, pane, settled):
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.model.filter_counts()["hit_to_miss"] == 1
        await pilot.press("tab", "tab")  # list B: policy-31, unjudged, for q1
        assert app.query_one("#list-b", RankedList).selected_chunk == "policy-31"
        await pilot.press("3")  # gold with grade 3
        await settled(pilot)
        assert "policy-31" in lesson["gold"].read_text()
        # the chunk's look, the flip, the filter counts and the header changed at once
        b_line = next(line for line in pane(app, app.query_one("#list-b")) if "policy-31" in line)
        assert "★3" in b_line
        text = "\n".join(screen(app))
        assert "hit→miss 0" in text
        assert "recall@3 A 1.000 B 1.000" in text
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "policy-31" in status
        await pilot.press("u")
        await settled(pilot)
        assert "policy-31" not in lesson["gold"].read_text()
        assert "hit→miss 1" in "\n".join(screen(app))
        b_line = next(line for line in pane(app, app.query_one("#list-b")) if "policy-31" in line)
        assert " ? " in b_line


async def test_mark_not_relevant_and_evidence(lesson, pane, settled):
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab", "x")
        await settled(pilot)
        b_line = next(line for line in pane(app, app.query_one("#list-b")) if "policy-31" in line)
        assert " · " in b_line
        await pilot.press("j", "e")  # policy-2: evidence
        await settled(pilot)
        b_line = next(line for line in pane(app, app.query_one("#list-b")) if "policy-2 " in line)
        assert " ◆ " in b_line
        gold_text = lesson["gold"].read_text()
        assert "policy-31" in gold_text and "policy-2" in gold_text


async def test_unreadable_corpus_is_said_in_the_pane(lesson, screen, settled):
    lesson["corpus"].write_text("this is not JSONL\n")
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        text = "\n".join(screen(app))
        assert "cannot read the corpus" in text and app.is_running
        await pilot.press("right_square_bracket")
        assert app.selected_query == listed(app)[1]


async def test_no_cyclic_collection_until_the_first_screen_then_one_before_the_freeze(lesson, settled, monkeypatch):
    """The cyclic collector is off from the mount to the first screen — while the worker reads the files and
    builds the model (each collection walked every object made so far: ~75 ms of the first screen at 10,000
    queries) and on the screen's own thread as it handles the load (the switch is the process's) — and on again
    after: once the first screen is up (one collection, then what is loaded frozen), when loading fails, and
    when the app ends first. A cycle dropped just before the freeze is collected, not frozen for good (the
    freeze came with no collection before it); the model itself is frozen, out of every later collection's walk."""
    import gc
    import weakref

    import ragdiff.app.loading as app_module
    import ragdiff.core.labels.gold as gold_module
    import ragdiff.core.io.runs as runs_module

    seen: dict[str, list[bool]] = {}

    def watched(name, real):
        def call(*args, **kwargs):
            seen.setdefault(name, []).append(gc.isenabled())
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(gold_module, "load_gold", watched("gold", gold_module.load_gold))
    monkeypatch.setattr(runs_module, "load_run", watched("run", runs_module.load_run))
    real_model = app_module.ReviewModel
    monkeypatch.setattr(app_module, "ReviewModel", watched("model", real_model))

    class Node:
        pass

    dropped = []

    class Watched(ReviewApp):
        def on_loaded(self, message) -> None:  # Textual runs ReviewApp.on_loaded by itself after this one
            seen.setdefault("loaded", []).append(gc.isenabled())
            cycle = Node()
            cycle.me = cycle
            dropped.append(weakref.ref(cycle))

    assert gc.isenabled()
    app = Watched(ReviewInputs(run_a=lesson["a"], run_b=lesson["b"], gold=lesson["gold"],
                               settings=EvalSettings(k=3, depth=50)))
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert seen == {"gold": [False], "run": [False, False], "model": [False], "loaded": [False]}
        assert gc.isenabled()
        assert dropped[0]() is None, "a cycle dropped before the freeze was frozen, never collected"
        assert not any(o is app.model for o in gc.get_objects()), "the model was not frozen"

    def broken(*args, **kwargs):
        seen["model"].append(gc.isenabled())
        raise ValueError("no model")

    monkeypatch.setattr(app_module, "ReviewModel", broken)
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
    assert app.failure and "no model" in app.failure
    assert seen["model"] == [False, False]
    assert gc.isenabled()

    # the app ends while the model is still being built (held): the collector is on again once it has ended
    import threading

    hold = threading.Event()
    building = threading.Event()

    def held(*args, **kwargs):
        building.set()
        hold.wait(30)
        return real_model(*args, **kwargs)

    monkeypatch.setattr(app_module, "ReviewModel", held)
    app = lesson_app(lesson)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while not building.is_set():
                await pilot.pause(0.01)
            assert not gc.isenabled() and app.model is None
            app.exit()
        assert gc.isenabled(), "the app ended before its first screen and left the collector off"
    finally:
        hold.set()

    monkeypatch.setattr(app_module, "ReviewModel", real_model)
    gc.disable()  # someone else's choice before the app: left as it was
    try:
        app = lesson_app(lesson)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            assert app.model is not None and not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("over", ["question_mark", "w"])
async def test_a_mark_saved_under_help_or_which_k_is_drawn_when_it_closes(lesson, pane, settled, over):
    """`x` then `?` (or `w`) at machine speed: the mark is saved while the other screen is open; closing it
    shows the review with the mark drawn (the ranked list's row and the header), as a fresh app opened on the
    saved file shows it, and its status line says the mark was saved (it still said "writing: …": the outcome
    came under the other screen and was never said). The review caught up only when the judging queue closed."""
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")
        await settled(pilot)
        # x and the other screen's key in one go, as keys typed together arrive: the writer's answer comes
        # once the other screen is open
        app.action_mark("not_relevant")
        app.action_help() if over == "question_mark" else app.action_which_k()
        await settled(pilot)
        assert app.screen is not app.screen_stack[0]
        assert app._stale  # the mark was saved under the other screen
        await pilot.press("escape")
        await settled(pilot)
        assert app.screen is app.screen_stack[0]
        shown = pane(app, app.query_one("#list-b"))
        header = pane(app, app.query_one("#header"))
        status = " ".join(pane(app, app.query_one("#status")))
        assert "policy-31 for q1: not relevant · saved to gold.yaml" in status, status
    assert "policy-31" in lesson["gold"].read_text()
    fresh = lesson_app(lesson)
    async with fresh.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")
        await settled(pilot)
        assert shown == pane(fresh, fresh.query_one("#list-b"))
        assert header == pane(fresh, fresh.query_one("#header"))
    b_line = next(line for line in shown if "policy-31" in line)
    assert " · " in b_line
