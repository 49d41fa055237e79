"""The judging queue's query line: the id once when the gold set has no query text (qrels), id and text else."""

from __future__ import annotations

from ragdiff.app.judge_app import JudgeApp, JudgeInputs

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


async def test_a_query_without_text_has_no_text_to_mark_or_search_with(tmp_path):
    """The queue stood the id in for a missing text: the chunk text marked the id wherever it occurred, and `/`
    opened with the id typed in as the search. No text is "" (and a text equal to its id is still shown)."""
    import json

    from ragdiff.app.widgets.chunk_view import ChunkText
    from ragdiff.app.widgets.search_bar import SearchBar

    (tmp_path / "gold.qrels").write_text("q00012 0 d1 1\n")
    (tmp_path / "a.trec").write_text("q00012 Q0 d3 1 2.0 a\n")
    (tmp_path / "b.trec").write_text("q00012 Q0 d3 1 2.0 b\n")
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "d3", "text": "see q00012 for the answer"}) + "\n")
    app = JudgeApp(JudgeInputs(runs=[tmp_path / "a.trec", tmp_path / "b.trec"], gold=tmp_path / "gold.qrels",
                               corpus=tmp_path / "corpus.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        assert screen.queue.texts == {"q00012": ""}
        body = screen.query_one(ChunkText).render()
        assert "see q00012 for the answer" in str(body) and not body.spans, body.spans  # nothing marked
        await pilot.press("slash")
        assert screen.query_one(SearchBar).text == ""


async def test_a_query_whose_text_is_its_id_shows_it(tmp_path):
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: refunds\n    text: refunds\n")
    (tmp_path / "a.jsonl").write_text('{"query_id": "refunds", "results": ["d1"]}\n')
    app = JudgeApp(JudgeInputs(runs=[tmp_path / "a.jsonl"], gold=tmp_path / "gold.yaml"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        line = str(screen.query_one("#judge-query").render())
        assert "query 1/1  refunds  refunds  · this query" in line, line
