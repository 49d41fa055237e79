"""The review screen's views of an agent run: `v` lists each search of the selected query."""

from __future__ import annotations

import json

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.core.metrics.specs import EvalSettings

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


async def test_a_ranked_line_is_drawn_from_its_cache_key_alone(sample_runs, settled, monkeypatch):
    """RankedList caches a line by what it shows (`row_key`: the item and the column widths), which is right only
    while `render_key` draws from nothing outside that key. Checked through the drawing itself: a row that records
    what is read of it is read for its own fields only and draws the line its RankedRow (or MissedGold) draws;
    `label_cell`, wherever the drawing calls it, is given the key's row's level, grade and relevance; each of
    those three reaches the line; and keys drawn again with the list on another query and k give the same lines.
    (The check before read row.level, row.grade and row.relevant itself to call label_cell: what the drawing
    hands label_cell was never looked at.)"""
    import inspect
    from dataclasses import asdict, fields, replace
    from itertools import product

    import ragdiff.app.widgets.ranked_list as ranked_module
    from ragdiff.app.model import MissedGold, RankedRow
    from ragdiff.app.widgets.ranked_list import Item, RankedList
    from ragdiff.core import vocab

    reads: set[str] = set()

    class Row:
        def __init__(self, **values):
            self._values = values

        def __getattr__(self, name):
            if name not in self._values:
                raise AttributeError(name)
            reads.add(name)
            return self._values[name]

    given: list[tuple] = []
    real_label_cell = ranked_module.label_cell
    signature = inspect.signature(real_label_cell)

    def label_cell(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given.append(tuple(bound.arguments.values()))
        return real_label_cell(*args, **kwargs)

    monkeypatch.setattr(ranked_module, "label_cell", label_cell)

    from test_app_pilot import sample_app

    app = sample_app(sample_runs, k=5)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        ranked = app.query_one("#list-a", RankedList)
        columns = ranked.columns
        # wide enough for every id of the query and the score (the score is left out where an id would be cut)
        width = max(ranked.scrollable_content_region.width, columns.fixed() + columns.widest_id + columns.scores[0] + 1)

        def line(item: Item) -> tuple:
            text = ranked.render_key((item, columns), width)
            return text.plain, text.spans, text.style

        labels = list(product((vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.DRAFTED, None),
                              (None, -1, 0, 1, 3), (False, True)))
        shown = RankedRow(rank=3, chunk_id="policy-14", score=2.5, level=None, grade=None, relevant=False,
                          other_rank=7)
        for level, grade, relevant in labels:
            row = replace(shown, level=level, grade=grade, relevant=relevant)
            given.clear()
            assert line(Item("row", Row(**asdict(row)))) == line(Item("row", row))
            assert given and set(given) == {(level, grade, relevant)}
        assert reads == {f.name for f in fields(RankedRow)}
        reads.clear()
        missed = MissedGold(chunk_id="policy-9", level=vocab.GOLD, grade=2, rank=12)
        for level, grade, rank in product((vocab.GOLD, vocab.EVIDENCE), (1, 3), (12, None)):
            row = replace(missed, level=level, grade=grade, rank=rank)
            given.clear()
            assert (line(Item("missed", Row(**asdict(row)), other_rank=4))
                    == line(Item("missed", row, other_rank=4)))
            assert given and {g[:2] for g in given} == {(level, grade)}
        assert reads == {f.name for f in fields(MissedGold)}

        # each of the label's three reaches the line: a row that differs in it alone is drawn otherwise
        gold = replace(shown, level=vocab.GOLD, grade=2, relevant=True)
        for change in ({"level": vocab.EVIDENCE}, {"grade": 3}, {"relevant": False}):
            assert line(Item("row", replace(gold, **change))) != line(Item("row", gold)), change

        keys = [ranked.row_key(i) for i in range(ranked.line_count())]
        drawn = [ranked.render_key(key, width) for key in keys]
        app.model.set_k(9)
        ranked.show(app.model, app.model.visible()[-1])
        await settled(pilot)
        assert [ranked.row_key(i) for i in range(ranked.line_count())] != keys
        again = [ranked.render_key(key, width) for key in keys]
        assert [(t.plain, t.spans, t.style) for t in again] == [(t.plain, t.spans, t.style) for t in drawn]
