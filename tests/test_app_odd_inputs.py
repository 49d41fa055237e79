"""The review screen on odd input: wide characters, markup and escapes in ids and queries, very long ids, an
empty run, a single query. Every number stays whole and every string shows literally."""

from __future__ import annotations

import json

import pytest
from rich.cells import cell_len

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.app.text import fit
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core.metrics.specs import EvalSettings

from conftest import widget_lines

WIDE = "日本語のチャンクID長い名前"  # 14 characters, 26 cells
LONG = "chunk-" + "x" * 150 + "-end"


def write(folder, name, records):
    path = folder / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def odd_app(tmp_path, run_a=None, run_b=None, gold=None, k=5):
    run_a = run_a if run_a is not None else [
        {"query_id": "q1", "query": "refund window", "results": [
            {"id": WIDE, "score": 1.5}, {"id": LONG, "score": 1.2}, {"id": "[red]markup[/red]", "score": 1.0},
            {"id": "p\x1b[2Jclear", "score": 0.5}]}]
    run_b = run_b if run_b is not None else [
        {"query_id": "q1", "query": "refund window", "results": [
            {"id": "[red]markup[/red]", "score": 0.9}, {"id": WIDE, "score": 0.8}]}]
    gold = gold if gold is not None else 'queries:\n  - id: q1\n    text: refund window\n    gold: ["[red]markup[/red]"]\n'
    (tmp_path / "gold.yaml").write_text(gold, encoding="utf-8")
    return ReviewApp(ReviewInputs(run_a=write(tmp_path, "a.jsonl", run_a), run_b=write(tmp_path, "b.jsonl", run_b),
                                  gold=tmp_path / "gold.yaml", settings=EvalSettings(k=k, depth=50)))


def test_fit_counts_cells():
    assert cell_len(WIDE) == 26
    assert fit(WIDE, 30, pad=True) == WIDE + " " * 4
    for width in range(1, 29):
        cut = fit(WIDE, width, pad=True)
        assert cell_len(cut) == width, width
        assert (cut == WIDE + " " * (width - 26)) if width >= 26 else cut.endswith("…")
    assert fit("abc", 2) == "a…" and fit("abc", 3) == "abc" and fit("abc", 0) == ""


@pytest.mark.parametrize("size", [(80, 24), (140, 40), (200, 50)])
async def test_wide_character_ids_keep_the_numbers_after_them_whole(size, tmp_path, settled):
    """An id of CJK characters was cut by length, not cells: at 140 columns its score, label and the other
    run's rank were pushed past the pane's edge ('1 日本語のチャンクID長い名前    1…'). (The score is left out
    here: the 160-character id beside it is cut at every size, and an id comes before a score.)"""
    app = odd_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        for side, other, rank in (("a", "B#2", "1.5000"), ("b", "A#1", "0.8000")):
            widget = app.query_one(f"#list-{side}", RankedList)
            if widget.has_class("-hidden"):
                await pilot.press("o")
            lines = widget_lines(app, widget)
            row = next(line for line in lines if "日本語" in line)
            assert row.rstrip("│ ▁▂▃▄▅▆▇█").endswith(other), row
            # the score is whole, or left out whole where an id of the query is cut (LONG always is)
            shown = widget.columns.score(widget.scrollable_content_region.width)[0] > 0
            assert (rank in row) == shown and not any(rank[:n] + "…" in row for n in range(1, len(rank))), row
            assert all(cell_len(line) == widget.outer_size.width for line in lines)


async def test_conftests_widget_lines_cut_by_cells(tmp_path, settled, pane):
    """conftest's widget_lines (the `pane` fixture) cut the screen's rows by characters: a row of list B beside
    list A's wide-character id started twelve columns late (14 characters of 26 cells); this file kept its own
    copy cut by cells. One helper now, by cells: every row of B starts and ends on B's border."""
    app = odd_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        widget = app.query_one("#list-b", RankedList)
        lines = pane(app, widget)
        assert any("日本語" in line for line in widget_lines(app, app.query_one("#list-a", RankedList)))
        assert len(lines) == widget.outer_size.height
        for line in lines:
            assert cell_len(line) == widget.outer_size.width, line
            assert line[0] in "╭│╰┌└▊▎" and line[-1] in "╮│╯┐┘▊▎▁▂▃▄▅▆▇█", line
