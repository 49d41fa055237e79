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


async def test_a_ranked_line_is_drawn_from_its_cache_key_alone(sample_runs, settled):
    """RankedList caches a line by what it shows (`row_key`: the item and the column widths), which is right only
    while `render_key` reads nothing outside that key: `id_class` and `label_cell` read the row's own
    relevant, level and grade (a row that records what is read says so), and a key drawn again with the list
    showing another query, another k and other rows gives the same line."""
    from ragdiff.app.widgets.ranked_list import RankedList, id_class, label_cell
    from ragdiff.core import vocab

    reads: set[str] = set()

    class Row:
        def __init__(self, **fields):
            self._fields = fields

        def __getattr__(self, name):
            reads.add(name)
            return self._fields[name]

    for level in (vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.DRAFTED, None):
        for grade in (None, -1, 0, 1, 3):
            for relevant in (False, True):
                row = Row(level=level, grade=grade, relevant=relevant)
                id_class(row)
                label_cell(row.level, row.grade, row.relevant)
    assert reads == {"level", "grade", "relevant"}

    from test_app_pilot import sample_app

    app = sample_app(sample_runs, k=5)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        ranked = app.query_one("#list-a", RankedList)
        width = ranked.scrollable_content_region.width
        keys = [ranked.row_key(i) for i in range(ranked.line_count())]
        drawn = [ranked.render_key(key, width) for key in keys]
        app.model.set_k(9)
        ranked.show(app.model, app.model.visible()[-1])
        await settled(pilot)
        assert [ranked.row_key(i) for i in range(ranked.line_count())] != keys
        again = [ranked.render_key(key, width) for key in keys]
        assert [(t.plain, t.spans, t.style) for t in again] == [(t.plain, t.spans, t.style) for t in drawn]
