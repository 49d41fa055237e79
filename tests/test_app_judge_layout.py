"""The judging queue's layout at every common size: the pool list as wide as its ids need, within bounds that
keep the chunk text (the thing being judged) readable."""

from __future__ import annotations

import json

import pytest

from ragdiff.app.judge import POOL_MIN, TEXT_MIN, JudgeScreen
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.pool_list import PoolList

from conftest import settle, widget_lines
from test_app_keys import demo_copy
from test_judge import judge_app, opened


def pooled_ids(folder, depth=10) -> set[str]:
    ids = set()
    for name in ("bm25.jsonl", "dense.jsonl"):
        for line in (folder / name).read_text().splitlines():
            results = json.loads(line)["results"][:depth]
            ids.update(r["id"] if isinstance(r, dict) else r for r in results)
    return ids


def pool_rows(app) -> list[str]:
    return [line[1:-1] for line in widget_lines(app, app.screen.query_one(PoolList))[1:-1]]


async def walk_queries(pilot, screen: JudgeScreen, presses: int, key: str = "right_square_bracket") -> list[str]:
    """The pool rows of every query passed on the way (] moves to the next query, [ back)."""
    seen = []
    for _ in range(presses):
        seen += pool_rows(pilot.app)
        await pilot.press(key)
    return seen + pool_rows(pilot.app)


@pytest.mark.parametrize("size", [(200, 50), (170, 40)])
async def test_wide_screens_show_every_pooled_id_whole(size, sample_runs, tmp_path):
    """At 200 columns the pool list was 38 columns beside a 160-column text: http.server.BaseHTTPR… was cut."""
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot)
        rows = await walk_queries(pilot, screen, 12)
        cut = [row for row in rows if "…" in row]
        assert not cut
        pooled = pooled_ids(folder)
        shown = {row.split()[1] for row in rows if row.strip()}
        assert "http.server.BaseHTTPRequestHandler#4" in shown and shown <= pooled
        text = app.screen.query_one(ChunkView)
        assert text.size.width + 2 >= TEXT_MIN  # its border outside the size


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (140, 40), (200, 50)])
async def test_the_chunk_text_keeps_its_room_and_the_pool_its_floor(size, sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder)
    async with app.run_test(size=size) as pilot:
        await opened(pilot)
        pool = app.screen.query_one(PoolList).outer_size.width
        text = app.screen.query_one(ChunkView).outer_size.width
        width = size[0]
        assert pool + text == width
        assert pool >= min(POOL_MIN, int(width * 0.4))  # never narrower than before (38, at most 42%)
        assert pool <= width * 0.42 + 1
        if width - POOL_MIN >= TEXT_MIN:
            assert text >= TEXT_MIN


async def test_the_pool_widens_when_the_terminal_does(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        assert any("…" in row for row in await walk_queries(pilot, screen, 12))
        narrow = app.screen.query_one(PoolList).outer_size.width
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        await pilot.pause()
        assert app.screen.query_one(PoolList).outer_size.width > narrow
        assert not any("…" in row for row in await walk_queries(pilot, screen, 12, "left_square_bracket"))


async def test_each_pool_row_draws_its_label_in_the_labels_colour(sample_runs, tmp_path):
    """The mark cell keeps its label's style (★ gold, · not relevant, ? unjudged), the rank cells theirs."""
    from ragdiff.app.widgets.ranked_list import label_cell

    from test_judge import strip_judgments

    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 1)
    app = judge_app(folder)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        await pilot.press("3", "x")
        await settle(pilot)
        pool = screen.query_one(PoolList)
        qid = screen.queue.queries[screen.position.query]
        kinds = set()
        for index, entry in enumerate(screen.queue.entries[qid]):
            level, grade = screen.queue.label_of(qid, entry.chunk_id)
            shown = level if screen.queue.is_judged(qid, entry.chunk_id) else None
            mark, css = label_cell(shown, grade)
            row = pool.render_row(index, 60)
            assert row.plain.startswith(mark)
            assert [span.style for span in row.spans if span.start == 0] == [pool.get_component_rich_style(css)]
            kinds.add(css)
        assert {"rank--gold", "rank--notrel", "rank--unjudged"} <= kinds
