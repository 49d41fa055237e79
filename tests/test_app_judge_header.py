"""The judging queue's query line: the id once when the gold set has no query text (qrels), id and text else."""

from __future__ import annotations

from ragdiff.app.judge import JudgeApp, JudgeInputs

from test_judge import opened


async def test_a_query_without_text_is_named_once(tmp_path):
    (tmp_path / "gold.qrels").write_text("q00012 0 d1 1\nq00012 0 d2 0\n")
    (tmp_path / "a.trec").write_text("q00012 Q0 d1 1 2.0 a\nq00012 Q0 d3 2 1.0 a\n")
    (tmp_path / "b.trec").write_text("q00012 Q0 d3 1 2.0 b\nq00012 Q0 d4 2 1.0 b\n")
    app = JudgeApp(JudgeInputs(runs=[tmp_path / "a.trec", tmp_path / "b.trec"], gold=tmp_path / "gold.qrels"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        line = str(screen.query_one("#judge-query").render())
        assert line.count("q00012") == 1, line
        assert "query 1/1  q00012  · this query" in line


async def test_a_query_with_text_shows_both(lesson):
    app = JudgeApp(JudgeInputs(runs=[lesson["a"], lesson["b"]], gold=lesson["gold"]))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        line = str(screen.query_one("#judge-query").render())
        assert "q1  refund window for ebooks  · this query" in line, line
