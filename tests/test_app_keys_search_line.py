"""The search lines (the review's `/`, the judging queue's `/`) at 80 columns: the hint was cut at the right
edge ('enter keeps it · esc clears it · tab goes on to th…'); it now fits whole, with the text typed so far
and the cursor, and a text too long for the line shows its end."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from ragdiff.app.widgets.search_bar import HINT, SHORT_HINT, SearchBar, tail

from conftest import widget_lines
from test_app_keys import send_keys, type_fast
from test_app_pilot import lesson_app
from test_judge import judge_app_of, opened


def bar_line(app, selector: str) -> str:
    return widget_lines(app, app.screen.query_one(selector, SearchBar))[0]


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
@pytest.mark.parametrize("typed", ["q2", "refund window for ebooks", "a very long search " * 6])
async def test_the_review_search_line_keeps_its_hint_whole(size, typed, lesson, settled):
    app = lesson_app(lesson)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        await send_keys(pilot, "slash", *[" " if c == " " else c for c in typed])
        await pilot.pause()
        line = bar_line(app, "#search").rstrip()
        assert "…" not in line or line.index("…") < line.index("esc"), line  # only the text is ever cut
        assert line.endswith(HINT) or line.endswith(SHORT_HINT), line  # whole, at the end
        assert typed.split()[-1] in line, line  # the end of what was typed, where the cursor is
        assert cell_len(line) <= size[0]


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_the_judging_queues_search_line_keeps_its_hint_whole(size, lesson, settled):
    app = judge_app_of(lesson)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot)
        await send_keys(pilot, "slash", *"and then some more words to search the corpus for")
        await pilot.pause()
        line = widget_lines(app, screen.query_one("#judge-search", SearchBar))[0].rstrip()
        assert "enter" in line and "esc" in line and line.endswith(("esc", "esc cancels")), line
        assert "corpus for" in line, line
        await type_fast(pilot, "escape")


def test_parts_at_every_width():
    bar = SearchBar()
    bar.show("refund window for ebooks", active=True)
    for width in range(20, 140):
        label, text, hint = bar.parts(width)
        assert cell_len(f" {label}: {text}") + 1 + (3 + cell_len(hint) if hint else 0) <= width, width
        assert text.endswith("ebooks")
        # the hint is dropped only where even its short form leaves the text fewer than 12 cells
        assert bool(hint) == (width >= cell_len(" search: ") + 1 + 3 + cell_len(SHORT_HINT) + 12), width


def test_tail_counts_cells():
    assert tail("abc", 3) == "abc" and tail("abcdef", 4) == "…def"
    assert tail("日本語のテキスト", 7) == "…キスト" and cell_len(tail("日本語のテキスト", 8)) <= 8
