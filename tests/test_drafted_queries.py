"""`ragdiff labels add GOLD --from DRAFTED.jsonl` (issue 31, part 4): queries a model drafted from chunks, each
added as `proposed: true` with its chunks under `drafted:`; kept or dropped through the label writer, every
step journaled and undone byte for byte, in every ragdiff label format (YAML, JSON, an empty start)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelConflictError, LabelFile

SAMPLE_GOLD = Path(__file__).parent.parent / "ragdiff" / "sample_runs" / "gold.yaml"

DRAFTED = [
    {"query": "how do I pretty print a dict as JSON", "chunk_id": "json.dumps#0", "grade": 3},
    {"query": "parse command line flags", "chunk_id": "argparse#0"},  # grade 1 when none is given
    {"query": "How do I pretty-print a dict as JSON?", "chunk_id": "json#0", "grade": 2},  # the first, again
    {"query": "[bold]markup[/bold] and a tab\there", "chunk_id": "csv#0", "grade": 0},
]


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _sample(tmp_path: Path) -> Path:
    gold = tmp_path / "gold.yaml"
    shutil.copy(SAMPLE_GOLD, gold)
    return gold


def test_drafted_queries_are_added_as_proposed_with_their_chunks_drafted_and_undone_byte_for_byte(tmp_path, capsys):
    gold = _sample(tmp_path)
    before = gold.read_bytes()
    drafted = _write(tmp_path / "drafted.jsonl", DRAFTED)
    code, out, err = _run(capsys, "labels", "add", gold, "--from", drafted, "--reviewer", "ann")
    assert code == 0, err
    assert "3 drafted queries added" in out and "(4 drafted chunks)" in out
    after = gold.read_bytes()
    assert after.startswith(before)  # appended after the last query, nothing else touched
    loaded = load_gold(gold)
    assert loaded.queries.height == 75
    new = loaded.queries.tail(3)
    assert new["text"].to_list() == [DRAFTED[0]["query"], DRAFTED[1]["query"], DRAFTED[3]["query"]]
    assert list(loaded.proposed) == new["query_id"].to_list()
    drafts = {(q, c): g for q, c, g in loaded.drafts.select("query_id", "chunk_id", "grade").iter_rows()}
    ids = new["query_id"].to_list()
    assert drafts == {(ids[0], "json.dumps#0"): 3, (ids[0], "json#0"): 2, (ids[1], "argparse#0"): 1,
                      (ids[2], "csv#0"): 0}
    assert loaded.judgments.filter(loaded.judgments["query_id"].is_in(ids)).height == 0  # nothing is gold yet
    entries = yaml.load(gold.read_text(), Loader=yaml.BaseLoader)["queries"][-3:]
    assert [e["proposed"] for e in entries] == ["true"] * 3 and {e["source"] for e in entries} == {"drafted.jsonl"}
    # the same file again adds nothing, and says so
    code, _, err = _run(capsys, "labels", "add", gold, "--from", drafted)
    assert code == 2 and "nothing to add" in err and err.count("\n") == 1
    assert gold.read_bytes() == after
    assert _run(capsys, "labels", "undo", gold, "--reviewer", "ann")[0] == 0
    assert gold.read_bytes() == before


def test_the_json_label_file_and_an_empty_start_take_drafted_queries(tmp_path, capsys):
    drafted = _write(tmp_path / "drafted.jsonl", DRAFTED[:2])
    as_json = tmp_path / "gold.json"
    as_json.write_text('{"queries": [\n  {"id": "q1", "text": "refund window", "gold": ["p1"]}\n]}\n')
    empty = tmp_path / "empty.yaml"
    empty.write_text("# a label file to be\nqueries: []\n")
    for gold in (as_json, empty):
        before = gold.read_bytes()
        code, _, err = _run(capsys, "labels", "add", gold, "--from", drafted, "--reviewer", "ann")
        assert code == 0, err
        if gold is empty:  # `queries: []` became a block list
            assert gold.read_text().startswith("# a label file to be\nqueries:\n  - id: q")
        loaded = load_gold(gold)
        assert len(loaded.proposed) == 2 and loaded.drafts.height == 2
        assert loaded.queries["text"].to_list()[-2:] == [DRAFTED[0]["query"], DRAFTED[1]["query"]]
        labels = LabelFile(gold, reviewer="ann")
        first, second = loaded.proposed
        kept = labels.keep_query(first)
        assert kept.saved and load_gold(gold).proposed == (second,)
        labels.drop_query(second)
        assert second not in load_gold(gold).queries["query_id"].to_list()
        for _ in range(3):  # the drop, the keep, the whole addition
            labels.undo(edits=True)
        assert gold.read_bytes() == before


def test_keep_and_drop_change_only_their_own_lines_and_come_back_with_undo(tmp_path, capsys):
    gold = _sample(tmp_path)
    drafted = _write(tmp_path / "drafted.jsonl", DRAFTED[:2])
    assert _run(capsys, "labels", "add", gold, "--from", drafted, "--reviewer", "ann")[0] == 0
    added = gold.read_text()
    keep, drop = load_gold(gold).proposed
    labels = LabelFile(gold, reviewer="ann")
    labels.keep_query(keep)
    kept = gold.read_text()
    import difflib

    changed = [d for d in difflib.ndiff(added.splitlines(), kept.splitlines()) if d[:1] in "+-"]
    assert changed == ["-     proposed: true"]  # one line out, nothing else
    labels.drop_query(drop)
    dropped = gold.read_text()
    assert drop not in dropped and keep in dropped and dropped == kept[: kept.index(f"  - id: {drop}")]
    assert labels.undo().message.startswith("undid: dropped")  # `u` takes a keep or drop back like a mark
    assert gold.read_text() == kept
    assert labels.undo().message.startswith("undid: kept")
    assert gold.read_text() == added
    # a query a person has judged is not dropped (its judgments would go with it); one not drafted neither
    from ragdiff.core.labels import Mark

    labels.apply(Mark(drop, "argparse#0", "gold", 2))
    with pytest.raises(LabelConflictError, match="judged chunks"):
        labels.drop_query(drop)
    with pytest.raises(LabelConflictError, match="not a drafted query"):
        labels.drop_query("q01")


def test_bad_drafted_files_are_one_message_each_and_write_nothing(tmp_path, capsys):
    gold = _sample(tmp_path)
    before = gold.read_bytes()
    good = json.dumps(DRAFTED[0])
    cases = {
        "not_json.jsonl": ([good, '{"query": "x", "chunk_id": '], ":2: invalid JSON"),
        "no_chunk.jsonl": ([good, {"query": "x", "chunk_id": ""}], ":2: chunk_id ''"),
        "no_query.jsonl": ([good, {"query": None, "chunk_id": "c"}], ":2: query None"),
        "grade.jsonl": ([good, {"query": "x", "chunk_id": "c", "grade": -1}], ":2: grade -1"),
        "true_grade.jsonl": ([good, {"query": "x", "chunk_id": "c", "grade": True}], ":2: grade True"),
        "twice.jsonl": ([good, {"query": "how do I PRETTY print a dict as json", "chunk_id": "json.dumps#0"}],
                        "(lines 1 and 2)"),
        "list.jsonl": ([good, "[1, 2]"], ":2: a JSON list"),
        "existing.jsonl": ([{"query_id": "q01", "chunk_id": "c"}], "ragdiff labels import"),
    }
    for name, (rows, words) in cases.items():
        path = _write(tmp_path / name, rows)
        code, out, err = _run(capsys, "labels", "add", gold, "--from", path)
        assert code == 2 and words in err and name in err and err.count("\n") == 1, (name, err)
        assert gold.read_bytes() == before
    code, _, err = _run(capsys, "labels", "add", gold, "--from", _write(tmp_path / "d.jsonl", DRAFTED), "--sample", 2)
    assert code == 2 and "--column and --sample go with a query log" in err
    qrels = tmp_path / "gold.qrels"
    qrels.write_text("q1 0 c1 1\n")
    code, _, err = _run(capsys, "labels", "add", qrels, "--from", tmp_path / "d.jsonl")
    assert code == 2 and "no place for drafted queries" in err
    assert list(tmp_path.glob(".gold.yaml*")) == []  # no temporary file left behind


def test_the_overturn_report_counts_drafted_queries_kept_and_dropped(tmp_path, capsys):
    gold = _sample(tmp_path)
    drafted = _write(tmp_path / "drafted.jsonl", DRAFTED)
    assert _run(capsys, "labels", "add", gold, "--from", drafted, "--reviewer", "model")[0] == 0
    a, b, c = load_gold(gold).proposed
    labels = LabelFile(gold, reviewer="ann")
    labels.keep_query(a)
    labels.drop_query(b)
    labels.drop_query(c)
    labels.undo()  # the last drop taken back: it counts for nothing
    code, out, _ = _run(capsys, "labels", "log", gold, "--drafts", "--json")
    assert code == 0
    assert json.loads(out)["drafts"]["queries"] == {"decided": 2, "kept": 1, "dropped": 1}
    code, out, _ = _run(capsys, "labels", "log", gold, "--drafts")
    assert "drafted queries decided: 2 · kept 1 · dropped 1 (50% overturned)" in out
    code, out, _ = _run(capsys, "labels", "log", gold)
    assert "drafted query kept: how do I pretty print a dict as JSON" in out
