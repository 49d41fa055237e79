"""A k change repaints only the screen rows that change (the lists' lines are cached by what they show, and a
list repaints the rows whose line differs from the one drawn there): after `+`/`-` typed in a burst with no
pauses, every row, flip glyph, k cut, metric and the query list must be what a fresh app opened at that k
draws. The screen is read from the widgets' caches of drawn lines (the compositor's render), so a row that
should have been repainted and was not shows its old line here, as it would on a terminal."""

from __future__ import annotations

import pytest

from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList

from conftest import screen_lines, settle, widget_lines
from test_app_keys import demo_copy, send_keys
from test_app_pilot import sample_app

START = 5
KEY = {"+": "plus", "-": "minus", "]": "right_square_bracket", "[": "left_square_bracket", "s": "s",
       "f": "f", "tab": "tab", "j": "j", "o": "o"}


def _blank_status(app, lines: list[str]) -> list[str]:
    """The screen without the status line (it says what the last key did: not what a fresh app says)."""
    region = app.query_one("#status").region
    return ["" if region.y <= y < region.bottom else line for y, line in enumerate(lines)]


def _scrolls(app) -> dict[str, int]:
    return {f"#{w.id}": int(w.scroll_offset.y) for w in (app.query_one(QueryList), *app.query(RankedList),
                                                        app.query_one(ChunkView))}


async def after_keys(folder, size, keys: str, before: str = ""):
    """The screen after `before` (typed and settled) and then `keys` in one burst; and the k, query, focus,
    sort and filter, list A/B cursor rows and scroll offsets a fresh app needs to stand in the same place."""
    app = sample_app(folder, k=START)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if before:
            await send_keys(pilot, *[KEY[key] for key in before.split()])
            await settle(pilot)
        await send_keys(pilot, *[KEY[key] for key in keys.split()])
        await settle(pilot)
        place = {"k": app.model.k, "query": app.selected_query, "sort": app.sort_key, "filter": app.filter_key,
                 "focus": app.focused.id if app.focused else None, "scrolls": _scrolls(app), "active": app.active_side,
                 "cursors": {side: app.query_one(f"#list-{side}", RankedList).cursor for side in "ab"}}
        lines = _blank_status(app, screen_lines(app))
        status = "".join(widget_lines(app, app.query_one("#status")))
    return lines, place, status


async def fresh(folder, size, place):
    """A fresh app opened at `place["k"]`, put where the keyed app stands without changing k."""
    app = sample_app(folder, k=place["k"])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        while app.sort_key != place["sort"]:
            await send_keys(pilot, "s")
        while app.filter_key != place["filter"]:
            await send_keys(pilot, "f")
        await settle(pilot)
        queries = app.query_one(QueryList)
        queries.move_to(queries.ids.index(place["query"]))
        for side, cursor in place["cursors"].items():
            app.query_one(f"#list-{side}", RankedList).move_to(cursor)
        if app.active_side != place["active"]:
            app.action_other_run()
        if place["focus"]:
            app.focus_now(app.query_one(f"#{place['focus']}"))
        await settle(pilot)
        for selector, y in place["scrolls"].items():
            app.query_one(selector).scroll_to(y=y, animate=False, immediate=True)
        await settle(pilot)
        assert _scrolls(app) == place["scrolls"]
        return _blank_status(app, screen_lines(app))


PLANS = [
    ("", "+ + - +"),  # the brief's burst: k 5 -> 7, the query list re-sorted (flips first), the cut moved
    ("", "+ + + - - - - +"),  # down past the start and back
    ("s", "+ - - +"),  # sorted by Δ reciprocal rank: the delta column changes with k
    ("tab j j", "+ + ] - +"),  # list A focused with its cursor moved, a query change inside the burst
    ("] ] ] ]", "- - + [ -"),  # a query further down the list
    ("", "+ o + - o o +"),  # the run lists switched (below 100 columns they take turns: one is hidden)
]


@pytest.mark.parametrize("size", [(140, 40), (80, 24)])
@pytest.mark.parametrize("before,keys", PLANS)
async def test_keys_in_a_burst_leave_what_a_fresh_app_draws(sample_runs, tmp_path, size, before, keys):
    folder = demo_copy(sample_runs, tmp_path)
    lines, place, status = await after_keys(folder, size, keys, before)
    assert place["k"] == START + keys.count("+") - keys.count("-")
    if keys.split()[-1] in "+-":
        assert f"k={place['k']}:" in status
    assert lines == await fresh(folder, size, place)


async def test_the_comparison_sees_a_row_left_unpainted(sample_runs, tmp_path, monkeypatch):
    """The test above can fail: with the query list's line key missing the hit/miss marks (a cache that
    reuses a line whose marks changed, as a line cached by its query id alone would), the burst leaves old
    marks on screen and the screens differ; with the rows never repainted after a change, they differ too."""
    folder = demo_copy(sample_runs, tmp_path)
    size = (140, 40)
    # sorted by Δ reciprocal rank (uncut: the same at every k), the queries keep their rows and their marks change
    lines, place, _ = await after_keys(folder, size, "+ + + +", before="s")
    expected = await fresh(folder, size, place)
    assert lines == expected
    original, render = QueryList.row_key, QueryList.render_key

    def without_marks(self, index):
        query_id, text, unanswerable, hit_a, hit_b, in_a, in_b, delta, cuts = original(self, index)
        return (query_id, text, unanswerable, None, None, in_a, in_b, delta, cuts)

    with monkeypatch.context() as patch:
        patch.setattr(QueryList, "row_key", without_marks)
        patch.setattr(QueryList, "render_key", lambda self, key, width: render(
            self, original(self, self.ids.index(key[0])), width))
        stale, _, _ = await after_keys(folder, size, "+ + + +", before="s")
    assert stale != expected
    with monkeypatch.context() as patch:
        patch.setattr(RankedList, "_refresh_changed", lambda self: None)
        stale, _, _ = await after_keys(folder, size, "+ + + +", before="s")
    assert stale != expected


@pytest.mark.parametrize("size", [(140, 40), (80, 24)])
async def test_next_query_leaves_the_scroll_bars_of_unchanged_lists_alone(sample_runs, size, monkeypatch):
    """`]` typed in a burst lays the screen out (the chunk pane shows another text): a list whose size and line
    count did not change keeps its scroll bars as drawn (ScrollView updated and repainted them on every layout),
    and a list whose line count changed has bars that say so — its thumb reads the new count, as a fresh
    app's does."""
    from textual.scrollbar import ScrollBar

    repainted: dict[str, int] = {}
    real = ScrollBar.refresh

    def counted(self, *args, **kwargs):
        owner = getattr(self.parent, "id", None)
        repainted[owner] = repainted.get(owner, 0) + 1
        return real(self, *args, **kwargs)

    app = sample_app(sample_runs, k=START)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        monkeypatch.setattr(ScrollBar, "refresh", counted)
        await send_keys(pilot, *["right_square_bracket"] * 6)
        await settle(pilot)
        monkeypatch.setattr(ScrollBar, "refresh", real)
        assert app.query_one(QueryList).virtual_size.height == len(app.visible_ids)
        assert repainted.get("queries", 0) == 0
        for widget in (app.query_one(QueryList), *app.query(RankedList)):
            if widget.show_vertical_scrollbar:
                assert widget.vertical_scrollbar.window_virtual_size == widget.virtual_size.height
                assert widget.vertical_scrollbar.window_size == widget.scrollable_content_region.height
