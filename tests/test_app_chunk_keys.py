"""The chunk pane says how to read on, and what it says works from where the reader is."""

from __future__ import annotations

import re

import pytest

from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.help_screen import HelpScreen
from ragdiff.app.widgets.query_list import QueryList

from test_app_keys import demo_copy, send_keys
from test_app_pilot import sample_app


def where(view: ChunkView) -> tuple[int, int, int]:
    match = re.match(r"lines (\d+)–(\d+) of (\d+)", str(view.border_subtitle))
    assert match, view.border_subtitle
    return tuple(int(n) for n in match.groups())


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_space_reads_the_chunk_on_from_the_query_list(size, sample_runs, tmp_path, settled):
    """The border said 'more below: j/↓ or space' with the query list focused, where j moves to the next
    query and space did nothing: the chunk could be read on only after tabbing three panes to it."""
    app = sample_app(demo_copy(sample_runs, tmp_path))
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        view = app.query_one(ChunkView)
        assert isinstance(app.focused, QueryList)
        first, last, total = where(view)
        assert first == 1 and last < total
        assert str(view.border_subtitle).endswith("more below: space")  # j would move the query list
        query = app.selected_query
        pages = 0
        while where(view)[1] < total:
            await send_keys(pilot, "space")
            await pilot.pause()
            pages += 1
            assert pages < 50
        assert where(view)[1] == total and "the end · space: from the top" in str(view.border_subtitle)
        assert app.selected_query == query and isinstance(app.focused, QueryList)  # nothing else moved
        await send_keys(pilot, "space")
        await pilot.pause()
        assert where(view)[0] == 1
        # a burst with no pauses: the same pages
        await send_keys(pilot, *["space"] * pages)
        await pilot.pause()
        assert where(view)[1] == total


async def test_the_focused_chunk_pane_names_its_own_keys(sample_runs, tmp_path, settled):
    app = sample_app(demo_copy(sample_runs, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        view = app.query_one(ChunkView)
        await send_keys(pilot, "shift+tab")  # queries → (back round) the chunk text
        await pilot.pause()
        assert app.focused is view
        assert str(view.border_subtitle).endswith("more below: j/↓ or space")
        await send_keys(pilot, "j", "j")
        await pilot.pause()
        assert where(view)[0] == 3
        await send_keys(pilot, "tab")
        await pilot.pause()
        assert str(view.border_subtitle).endswith("more below: space")


async def test_help_lists_the_chunk_texts_keys(sample_runs, tmp_path, settled):
    app = sample_app(demo_copy(sample_runs, tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        from rich.console import Console

        console = Console(width=160, record=True, file=open("/dev/null", "w"))
        console.print(app.screen.query_one("#help-keys").content)
        text = console.export_text()
        assert "space" in text and "the chunk text a page on, from any pane" in text


def test_every_key_of_the_chunk_pane_is_its_own_in_the_review():
    """ChunkView bound space, which the review's priority `space` (read on, from any pane) always took first:
    a binding that could never run. Each of its keys now reaches it when it is focused."""
    from ragdiff.app.app import ReviewApp

    taken = {k.strip() for b in ReviewApp.BINDINGS if b.priority for k in b.key.split(",")}
    own = {k.strip() for b in ChunkView.BINDINGS for k in b.key.split(",")}
    assert own and not own & taken, own & taken


async def test_help_lists_the_chunk_panes_own_keys(sample_runs, tmp_path, settled):
    """`?` in the review listed the review's keys and a list's, not the ones that scroll the focused chunk
    text (PgUp/PgDn, Home/End)."""
    from rich.console import Console

    app = sample_app(demo_copy(sample_runs, tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await send_keys(pilot, "question_mark")
        await pilot.pause()
        console = Console(width=160, record=True, file=open("/dev/null", "w"))
        console.print(app.screen.query_one("#help-keys").content)
        text = console.export_text()
        chunk = next(line for line in text.splitlines() if line.startswith("chunk "))  # the pane's title
        for name in ("PgDn", "PgUp", "Home", "End"):
            assert name in chunk, chunk
