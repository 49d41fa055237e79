"""Drafted queries in the judging queue, at machine speed (Pilot): a query a model drafted (`proposed: true`) asks
one key before its chunks — `a` keeps it, `d` drops it from the label file — and every key lands on what was on
screen when it was pressed; the file then holds what the screen said, and `u` takes a keep or a drop back."""

from __future__ import annotations

import json

from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold

from test_app_keys import demo_copy, journal, type_fast
from test_app_pilot import SIZE
from test_judge import judge_app, opened

DRAFTED = [
    {"query": "how do I pretty print a dict as JSON", "chunk_id": "json.dumps#0", "grade": 3},
    {"query": "How do I pretty-print a dict as JSON?", "chunk_id": "json#0", "grade": 2},
    {"query": "parse command line flags", "chunk_id": "argparse#0"},
    {"query": "write rows to a csv file", "chunk_id": "csv#0", "grade": 0},
]


def _with_drafted(sample_runs, tmp_path, capsys):
    """A copy of the sample set (every pooled chunk judged) with three drafted queries after its 72."""
    folder = demo_copy(sample_runs, tmp_path)
    drafted = folder / "drafted.jsonl"
    drafted.write_text("".join(json.dumps(r) + "\n" for r in DRAFTED))
    assert main(["labels", "add", str(folder / "gold.yaml"), "--from", str(drafted), "--reviewer", "model"]) == 0
    capsys.readouterr()
    return folder, load_gold(folder / "gold.yaml").proposed


async def test_keep_and_drop_typed_fast_land_on_the_query_on_screen(sample_runs, tmp_path, capsys):
    folder, (first, second, third) = _with_drafted(sample_runs, tmp_path, capsys)
    gold_path = folder / "gold.yaml"
    before = load_gold(gold_path)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        queue = screen.queue
        # the sample's pool is all judged: the queue opens on the first drafted query, asking keep or drop
        assert queue.queries[screen.position.query] == first
        view = screen.query_one(ChunkView)
        assert "drafted query" in str(view.border_title) and "a keeps it · d drops it" in str(view.border_title)
        judged, total = queue.progress()
        # keep the first; accept ☆2 on json#0 (its chunks by id: json#0, json.dumps#0); override ☆3 with x;
        # drop the second; on the third a grade digit is refused (the query waits), then keep it, gold 1
        await type_fast(pilot, "a", "a", "x", "d", "2", "a", "1")
        assert queue.progress() == (judged + 3, total - 1)  # the dropped query's chunk left the count
        await type_fast(pilot, "q")

    gold = load_gold(gold_path)
    assert gold.proposed == ()
    ids = gold.queries["query_id"].to_list()
    assert second not in ids and ids == [q for q in before.queries["query_id"].to_list() if q != second]
    judged = {(q, c): (lv, g) for q, c, lv, g in
              gold.judgments.select("query_id", "chunk_id", "level", "grade").iter_rows() if q in (first, third)}
    assert judged == {(first, "json#0"): ("gold", 2), (first, "json.dumps#0"): ("not_relevant", 0),
                      (third, "csv#0"): ("gold", 1)}
    # the journal holds the decisions in the order of the keys, the refused digit not among them
    steps = [(r.get("edit") or r["label"], r["query"]) for r in journal(gold_path)
             if r["type"] in ("mark", "edit") and r.get("edit") != "reviewed" and r.get("who") == "tester"]
    assert steps == [("keep_query", first), ("gold", first), ("not_relevant", first), ("drop_query", second),
                     ("keep_query", third), ("gold", third)]


async def test_u_takes_a_drop_back_and_the_query_waits_again(sample_runs, tmp_path, capsys):
    folder, (first, _second, _third) = _with_drafted(sample_runs, tmp_path, capsys)
    gold_path = folder / "gold.yaml"
    before = gold_path.read_bytes()
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        queue = screen.queue
        total = queue.progress()[1]
        await type_fast(pilot, "d")
        assert first not in load_gold(gold_path).queries["query_id"].to_list()
        assert queue.is_dropped(first) and queue.progress()[1] == total - 2  # its two drafted chunks
        await type_fast(pilot, "u")
        assert gold_path.read_bytes() == before  # byte for byte
        assert not queue.is_dropped(first) and queue.progress()[1] == total
        assert queue.queries[screen.position.query] == first  # back on it, asking again
        assert "drafted query" in str(screen.query_one(ChunkView).border_title)
        await type_fast(pilot, "a", "u")  # a keep, taken back: the query waits once more
        assert gold_path.read_bytes() == before and first in queue.proposed
        await type_fast(pilot, "q")


async def test_a_drop_the_writer_refuses_is_put_back_and_said(sample_runs, tmp_path, capsys, monkeypatch):
    from ragdiff.core.labels import LabelConflictError, LabelFile

    folder, (first, _second, _third) = _with_drafted(sample_runs, tmp_path, capsys)
    before = (folder / "gold.yaml").read_bytes()

    def refuse(self, query_id):
        raise LabelConflictError(f"{query_id!r} has judged chunks in gold.yaml; take those back first")

    monkeypatch.setattr(LabelFile, "drop_query", refuse)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await type_fast(pilot, "d")
        assert not screen.queue.is_dropped(first)  # back in the walk
        assert "not written" in str(screen.query_one("#judge-status").render())
        await type_fast(pilot, "q")
    assert (folder / "gold.yaml").read_bytes() == before
