"""`w` at k = depth: there is no gap between k and depth, so no reranker's opportunity to count. It said
"0 of 1 queries have gold in the top 1 but not the top 1"; now it says why there is nothing to measure, what
would show it, and what the depth alone tells (the queries with no gold in the top depth)."""

from __future__ import annotations

import json

import pytest

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.app.widgets.which_k import legend, no_gap
from ragdiff.core.metrics.specs import EvalSettings

from conftest import screen_lines

GOLD = "queries:\n  - id: q1\n    text: one\n    gold: [g1]\n  - id: q2\n    text: two\n    gold: [g2]\n" \
       "  - id: q3\n    text: three\n    gold: [g3]\n"
RUN_A = {"q1": ["g1", "x1", "y1"], "q2": ["x2", "y2", "g2"], "q3": ["x3", "y3", "z3"]}  # q3: no gold in the top 3
RUN_B = {"q1": ["x1", "g1", "y1"], "q2": ["x2", "y2", "z2"], "q3": ["x3", "y3", "z3"]}  # q2, q3: none


def app_at(tmp_path, k: int, depth: int) -> ReviewApp:
    (tmp_path / "gold.yaml").write_text(GOLD)
    for name, run in (("a.jsonl", RUN_A), ("b.jsonl", RUN_B)):
        (tmp_path / name).write_text("".join(json.dumps({"query_id": q, "results": r}) + "\n" for q, r in run.items()))
    return ReviewApp(ReviewInputs(run_a=tmp_path / "a.jsonl", run_b=tmp_path / "b.jsonl", gold=tmp_path / "gold.yaml",
                                  settings=EvalSettings(k=k, depth=depth)))


def said(app) -> str:
    """The screen's words, borders and line breaks gone (the legend wraps), runs of spaces as one."""
    return " ".join(" ".join(line.strip(" │╭╮╰╯─") for line in screen_lines(app)).split())


def without_gold(run: dict, depth: int) -> int:
    return sum(f"g{q[1:]}" not in chunks[:depth] for q, chunks in run.items())


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_k_at_the_depth_says_there_is_no_gap_and_what_the_depth_shows(size, tmp_path, settled):
    app = app_at(tmp_path, k=3, depth=3)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("w")
        await settled(pilot)
        text = said(app)
        assert "but not the top 3" not in text
        assert "k is the depth (3): no rank below k for a reranker to bring up" in text, text
        assert "--depth above k" in text
        for name, run in (("a", RUN_A), ("b", RUN_B)):
            assert f"{name} recall@3 {1 - without_gold(run, 3) / 3:.3f} {without_gold(run, 3)} of 3 queries have " \
                   "no gold in the top 3" in text, text
        assert "k=depth=3" in text


async def test_below_the_depth_it_counts_the_opportunity(tmp_path, settled):
    app = app_at(tmp_path, k=1, depth=3)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("w")
        await settled(pilot)
        text = said(app)
        # A: q2's gold at rank 3 is in the top 3, not the top 1
        assert "a recall@1 0.333 → recall@3 0.667 1 of 3 queries have gold in the top 3 but not the top 1" in text
        assert "k is the depth" not in text and "k=1" in text and "depth=3" in text


def test_no_scored_query_says_so():
    line = str(legend("a", "●", "", [float("nan")] * 3, 3, 0))
    assert "no scored query" in line
    assert no_gap(5, 5).startswith("k is the depth (5)")


async def test_w_with_no_scored_query_opens(tmp_path, settled):
    """Every query unanswerable: no query is scored and recall@j is NaN; the legend's count raised ValueError
    (round(nan)) and `w` took the app down."""
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    text: one\n    gold: []\n")
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(json.dumps({"query_id": "q1", "results": ["x1", "y1"]}) + "\n")
    app = ReviewApp(ReviewInputs(run_a=tmp_path / "a.jsonl", run_b=tmp_path / "b.jsonl", gold=tmp_path / "gold.yaml",
                                 settings=EvalSettings(k=1, depth=2)))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("w")
        await settled(pilot)
        assert app.is_running and "no scored query" in said(app)
