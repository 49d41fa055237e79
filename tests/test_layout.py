"""The review screen at every common size (DESIGN: usable from 80x24 up): what a reader sees is checked against
the model — chunk ids keep at least 12 cells, the other run's rank is whole, k=… is never cut, the help screen
is never clipped — and the narrow layout shows one run at a time with keys to switch."""

from __future__ import annotations

import re
import shutil

import pytest

from ragdiff.app.app import THREE_PANES, ReviewApp, ReviewInputs
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import MIN_ID, RankedList
from ragdiff.core.metrics.specs import EvalSettings

SIZES = [(80, 24), (100, 30), (140, 40), (200, 50)]
FILES = ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl")


def sample_app(sample_runs, tmp_path, k=5):
    for name in FILES:
        shutil.copy2(sample_runs / name, tmp_path / name)
    return ReviewApp(ReviewInputs(run_a=tmp_path / "bm25.jsonl", run_b=tmp_path / "dense.jsonl",
                                  gold=tmp_path / "gold.yaml", settings=EvalSettings(k=k, depth=50),
                                  corpus=tmp_path / "corpus.jsonl"))


def drawn_rows(app, widget: RankedList, lines: list[str]) -> list[tuple[object, str]]:
    """(item, the characters drawn for it) for each ranked row of the list that is on screen."""
    region = widget.content_region
    top = int(widget.scroll_offset.y)
    width = widget.scrollable_content_region.width
    out = []
    for y in range(region.height):
        index = top + y
        if index < len(widget.items) and widget.items[index].kind in ("row", "missed"):
            out.append((widget.items[index], lines[region.y + y][region.x:region.x + width]))
    return out


def check_rows(app, widget: RankedList, lines: list[str]) -> int:
    other = "B" if widget.side == "a" else "A"
    rows = drawn_rows(app, widget, lines)
    for item, text in rows:
        chunk = item.row.chunk_id
        if item.kind == "row":
            rank = str(item.row.rank)
            assert text[:widget.columns.rank].strip() == rank, (rank, text)
            shown = text[widget.columns.rank + 1:].split(" ")[0]
            expected = f"{other}#{item.row.other_rank}" if item.row.other_rank is not None else f"{other} —"
        else:
            shown = text.lstrip()[2:].lstrip().split(" ")[0]
            r = app.model.rank_in(widget.query_id, "b" if widget.side == "a" else "a", chunk)
            expected = f"{other}#{r}" if r is not None else f"{other} —"
        # the id is whole, or cut in the middle to no fewer than MIN_ID cells, its start and its end kept
        head, _, tail = shown.partition("…")
        assert shown == chunk or (len(shown) >= MIN_ID and chunk.startswith(head) and chunk.endswith(tail)), \
            (chunk, shown, text)
        # the other run's rank is whole: the exact token, not a prefix of it
        assert re.search(rf"(?<!\S){re.escape(expected)}(?!\S)", text), (expected, text)
    return len(rows)


async def check_size(app, pilot, size, screen) -> None:
    lines = screen(app)
    text = "\n".join(lines)
    header = app.query_one("#header")
    head = "\n".join(lines[header.region.y:header.region.bottom])
    assert "k=5 depth=50" in head, size
    assert not re.search(r"\d…", head), head  # no number is cut
    for metric in app.model.header.metrics:  # every metric of the header is there at every size
        assert metric.label + " " in head, (size, metric.label, head)
    filters = app.query_one("#filters")
    bar = "\n".join(lines[filters.region.y:filters.region.bottom])
    for key, count in app.model.filter_counts().items():
        assert re.search(rf" {count} ", bar + " "), (size, key, count, bar)
    shown = [w for w in app.query(RankedList) if w.display]
    assert len(shown) == (2 if size[0] >= THREE_PANES else 1), size
    checked = 0
    for widget in shown:
        checked += check_rows(app, widget, lines)
        for y in range(widget.content_region.y, widget.content_region.bottom):
            assert not re.search(r"[#\d]…", lines[y][widget.region.x:widget.region.right]), (size, lines[y])
    assert checked >= 5, size  # rows were on screen to check
    assert "? help" in lines[-1] and "q quit" in lines[-1] and "…" not in lines[-1], size

    # the help screen: inside the screen, its right border drawn on every line, no binding ids
    await pilot.press("question_mark")
    await pilot.pause()
    lines = screen(app)
    box = app.screen.query_one("#help-box")
    assert box.region.right <= size[0] and box.region.bottom <= size[1], size
    for y in range(box.region.y + 1, box.region.bottom - 1):
        assert lines[y][box.region.right - 1] == "│", (size, y, lines[y])
    assert "label.gold" not in "\n".join(lines) and "app.help" not in "\n".join(lines)
    box.scroll_end(animate=False)
    await pilot.pause()
    assert "the k the header is at" in "\n".join(screen(app)), size  # the legend's last line is reachable
    await pilot.press("escape")
    await pilot.pause()


async def test_ids_ranks_and_header_are_whole_at_every_size(sample_runs, tmp_path, screen, settled):
    """One review, the terminal resized through 80x24, 100x30, 140x40 and 200x50 (and back to 80x24)."""
    app = sample_app(sample_runs, tmp_path)
    async with app.run_test(size=SIZES[0]) as pilot:
        await settled(pilot)
        for size in [*SIZES, SIZES[0]]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert app.size == size
            await check_size(app, pilot, size, screen)


async def test_narrow_terminal_shows_one_run_and_switches(sample_runs, tmp_path, settled):
    app = sample_app(sample_runs, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        a, b = app.query_one("#list-a", RankedList), app.query_one("#list-b", RankedList)
        assert a.display and not b.display and "o: B" in str(a.border_subtitle)
        await pilot.press("tab")  # queries -> A
        assert app.focused is a
        await pilot.press("tab")  # A -> B: B takes A's place
        assert app.focused is b and b.display and not a.display and app.active_side == "b"
        await pilot.press("o")
        assert app.focused is a and a.display and not b.display
        await pilot.press("o", "shift+tab")  # B, then back to A
        assert app.focused is a and a.display
        await pilot.resize_terminal(140, 40)  # wide again: both lists, side by side
        await pilot.pause()
        assert a.display and b.display and "o:" not in str(a.border_subtitle)


async def test_search_escape_long_status_and_unjudged_look(sample_runs, tmp_path, screen, settled):
    """At 140x40: after `/gzip enter esc` the query found stays selected and on screen; a long status
    message wraps whole; · (judged not relevant) and ? (unjudged) differ in more than glyph and colour (a
    reversed ? and an italic id for unjudged, a dimmed id for not relevant — visible without colour)."""
    app = sample_app(sample_runs, tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("slash", *"gzip", "enter", "escape")
        await pilot.pause()
        queries = app.query_one(QueryList)
        assert len(queries.ids) == 72 and "gzip" in app.model.query_text(queries.selected)
        top = int(queries.scroll_offset.y)
        assert top <= queries.cursor < top + queries.scrollable_content_region.height

        message = ("q01: json.dumps#0 is now gold ★3; the query's gold list became a graded map so the grade "
                   "could be written; saved to /a/rather/long/folder/name/that/goes/on/gold.yaml (journal beside it)")
        app.set_status(message)
        await pilot.pause()
        status = app.query_one("#status")
        drawn = " ".join(line[status.region.x:status.region.right].strip()
                         for line in screen(app)[status.region.y:status.region.bottom])
        assert " ".join(drawn.split()) == message

        widget = app.query_one("#list-a", RankedList)
        styles = {}
        for index, item in enumerate(widget.items):
            if item.kind == "row" and item.row.level in ("not_relevant", None) and item.row.level not in styles:
                line = widget.render_row(index, 60)
                mark = next(span for span in line.spans if line.plain[span.start:span.end].strip() in ("·", "?"))
                chunk = next(span for span in line.spans if item.row.chunk_id in line.plain[span.start:span.end])
                styles[item.row.level] = (mark.style, chunk.style)
        (nr_mark, nr_id), (un_mark, un_id) = styles["not_relevant"], styles[None]
        assert un_mark.reverse and not nr_mark.reverse
        assert un_id.italic and not nr_id.italic


async def test_judge_is_whole_at_every_size(sample_runs, tmp_path, screen):
    """`ragdiff judge` resized through the four sizes: the header and the query line wrap rather than lose
    their ends (top 10 each, this query 0/12 judged), and no rank in the pool is cut."""
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    from test_judge import opened, strip_judgments

    for name in FILES:
        shutil.copy2(sample_runs / name, tmp_path / name)
    strip_judgments(tmp_path / "gold.yaml", 1)
    app = JudgeApp(JudgeInputs(runs=[tmp_path / "bm25.jsonl", tmp_path / "dense.jsonl"], gold=tmp_path / "gold.yaml",
                               corpus=tmp_path / "corpus.jsonl", reviewer="tester"))
    async with app.run_test(size=SIZES[0]) as pilot:
        await opened(pilot)
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            lines = screen(app)
            top = " ".join(" ".join(line.split()) for line in lines[:4])
            assert "top 10 each · gold.yaml" in top and "this query 0/12 judged" in top, (size, top)
            pool = app.screen.query_one("#judge-pool")
            for y in range(pool.region.y, pool.region.bottom):
                assert not re.search(r"[AB]\d*…", lines[y][pool.region.x:pool.region.right]), (size, lines[y])
