"""Keys typed right after closing a screen on top of the review (?, w, v, J) act on the review, in order.

The help, which-k and searches screens closed on a non-priority binding, which Textual runs only after the key
has bubbled through the DOM — after the keys already queued behind it had been offered to a screen still
showing the help, where the review's keys are refused: `? esc x` typed fast lost the x (and `? esc ] x` the
] and the x) without a word."""

from __future__ import annotations

import json

import pytest

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.core.metrics.specs import EvalSettings

from test_app_keys import demo_copy, ops, results, type_fast
from test_app_pilot import sample_app


@pytest.mark.parametrize("opener", ["question_mark", "w", "J"])
@pytest.mark.parametrize("closer", ["escape", "q"])
async def test_keys_after_a_closed_screen_act_on_the_review(opener, closer, sample_runs, tmp_path, settled):
    folder = demo_copy(sample_runs, tmp_path)
    app = sample_app(folder)
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        listed = list(app.query_one("#queries").ids)
        await type_fast(pilot, "tab", opener, closer, "x", "right_square_bracket", "j", "e")
        assert app.screen is app.screen_stack[0]
        run_a = results(folder / "bm25.jsonl")
        assert ops(folder / "gold.yaml") == [
            ("mark", listed[0], run_a[listed[0]][0], "not_relevant", None),
            ("mark", listed[1], run_a[listed[1]][1], "evidence", None)]
        assert app.selected_query == listed[1]


async def test_keys_after_the_searches_screen_act_on_the_review(tmp_path, settled):
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    text: refund window\n    gold: {c3: 2}\n")
    (tmp_path / "agent.jsonl").write_text(json.dumps({"query_id": "q1", "searches": [
        {"query": "refund", "results": ["c1", "c2"]}, {"query": "window", "results": ["c2", "c3"]}]}) + "\n")
    (tmp_path / "plain.jsonl").write_text(json.dumps({"query_id": "q1", "results": ["c3"]}) + "\n")
    app = ReviewApp(ReviewInputs(run_a=tmp_path / "agent.jsonl", run_b=tmp_path / "plain.jsonl",
                                 gold=tmp_path / "gold.yaml", settings=EvalSettings(k=2, depth=50)))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await type_fast(pilot, "tab", "v", "escape", "j", "x")
        assert app.screen is app.screen_stack[0]
        assert ops(tmp_path / "gold.yaml") == [("mark", "q1", "c2", "not_relevant", None)]
