"""The review screen's views of an agent run: `v` lists each search of the selected query."""

from __future__ import annotations

import json

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.core.metrics import EvalSettings

SIZE = (140, 40)


async def test_v_lists_an_agent_runs_searches(tmp_path, screen, pane, settled):
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    text: refund window\n    gold: {c3: 2}\n"
                                        "    not_relevant: [c1]\n")
    (tmp_path / "agent.jsonl").write_text(json.dumps({"query_id": "q1", "searches": [
        {"query": "refund", "results": ["c1", "c2"]},
        {"query": "refund window [bold]ebook", "results": ["c2", "c3"]}]}) + "\n")
    (tmp_path / "plain.jsonl").write_text(json.dumps({"query_id": "q1", "results": ["c3"]}) + "\n")
    app = ReviewApp(ReviewInputs(run_a=tmp_path / "agent.jsonl", run_b=tmp_path / "plain.jsonl",
                                 gold=tmp_path / "gold.yaml", settings=EvalSettings(k=2, depth=50)))
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("v")
        await settled(pilot)
        text = "\n".join(screen(app))
        assert "search 1 «refund»  2 results, 2 new" in text
        assert "search 2 «refund window [bold]ebook»  2 results, 1 new" in text
        assert "c2  (seen in an earlier search)" in text
        assert "★2 c3" in text and "·  c1" in text and "?  c2" in text
        assert "plain  not an agent run" in text
        await pilot.press("escape")


async def test_v_without_an_agent_run_says_so(tmp_path, pane, settled):
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    gold: [c1]\n")
    (tmp_path / "run.jsonl").write_text(json.dumps({"query_id": "q1", "results": ["c1"]}) + "\n")
    app = ReviewApp(ReviewInputs(run_a=tmp_path / "run.jsonl", run_b=tmp_path / "run.jsonl",
                                 gold=tmp_path / "gold.yaml", settings=EvalSettings(k=1, depth=50)))
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("v")
        await settled(pilot)
        assert "neither run is an agent run" in "\n".join(pane(app, app.query_one("#status")))


async def test_corpus_named_by_the_label_file_and_its_snapshot(tmp_path, screen, pane, settled):
    """No --corpus: the corpus the gold file names is read; one that is not the recorded snapshot is said."""
    import hashlib

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "c1", "text": "refunds within fourteen days"}) + "\n")
    (tmp_path / "run.jsonl").write_text(json.dumps({"query_id": "q1", "results": ["c1"]}) + "\n")
    for sha, said in ((hashlib.sha256(corpus.read_bytes()).hexdigest(), False), ("0" * 64, True)):
        (tmp_path / "gold.yaml").write_text(
            f"corpus: {{path: corpus.jsonl, sha256: {sha}}}\nqueries:\n  - id: q1\n    text: refund\n    gold: [c1]\n")
        app = ReviewApp(ReviewInputs(run_a=tmp_path / "run.jsonl", run_b=tmp_path / "run.jsonl",
                                     gold=tmp_path / "gold.yaml", settings=EvalSettings(k=1, depth=50)))
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            assert "refunds within fourteen days" in "\n".join(screen(app))
            status = "\n".join(pane(app, app.query_one("#status")))
            assert ("is not the corpus snapshot gold.yaml records" in status) == said, status
