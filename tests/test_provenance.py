"""`ragdiff labels log`: the journal read back as who judged what, when, from which run and rank, and what it
was before; `--drafts`: how often people overturned drafts, per proposed grade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.labels.journal import Journal, journal_path
from ragdiff.core.labels import LabelFile, Mark

GOLD = """\
# two queries
queries:
  - id: q1
    text: refund window for ebooks
    gold: {policy-14: 3}
  - id: q2
    text: return an unopened blender
    gold: [policy-15]
"""


@pytest.fixture
def gold(tmp_path) -> Path:
    path = tmp_path / "gold.yaml"
    path.write_text(GOLD)
    return path


def _log(capsys, *args) -> tuple[int, str, str]:
    code = main(["labels", "log", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_marks_and_an_undo_read_back_in_order(gold, capsys):
    alice = LabelFile(gold, reviewer="alice")
    alice.apply(Mark("q1", "policy-31", "gold", 2, run="dense.jsonl", rank=1))
    alice.apply(Mark("q1", "policy-14", "not_relevant", run="bm25.jsonl", rank=4))
    bob = LabelFile(gold, reviewer="bob")
    bob.apply(Mark("q2", "policy-9", "evidence", run="bm25.jsonl", rank=2))
    bob.apply(Mark("q2", "policy-9", "evidence", run="bm25.jsonl", rank=2))  # already so: nothing written
    alice.undo()  # takes back alice's last mark (policy-14)

    code, out, _ = _log(capsys, gold, "--json")
    assert code == 0
    doc = json.loads(out)
    rows = [(e["action"], e["who"], e["query_id"], e["chunk_id"], e["before"]["word"], e["after"]["word"], e["run"],
             e["rank"], e["status"], e["undone_by"] is not None) for e in doc["entries"]]
    assert rows == [
        ("mark", "alice", "q1", "policy-31", "unjudged", "gold ★2", "dense.jsonl", 1, "saved", False),
        ("mark", "alice", "q1", "policy-14", "gold ★3", "not relevant", "bm25.jsonl", 4, "saved", True),
        ("mark", "bob", "q2", "policy-9", "unjudged", "evidence", "bm25.jsonl", 2, "saved", False),
        ("mark", "bob", "q2", "policy-9", "evidence", "evidence", "bm25.jsonl", 2, "no change", False),
        ("undo", "alice", "q1", "policy-14", "not relevant", "gold ★3", "bm25.jsonl", 4, "saved", False),
    ]
    entries = doc["entries"]
    assert entries[1]["undone_by"] == entries[4]["id"]
    assert entries[4]["undoes"] == entries[1]["id"]
    assert [e["when"] for e in entries] == sorted(e["when"] for e in entries)

    code, out, _ = _log(capsys, gold, "--query", "q2", "--json")
    assert [e["chunk_id"] for e in json.loads(out)["entries"]] == ["policy-9", "policy-9"]
    # by the query's text too
    code, out, _ = _log(capsys, gold, "--query", "refund window for ebooks", "--json")
    assert {e["query_id"] for e in json.loads(out)["entries"]} == {"q1"}

    code, out, _ = _log(capsys, gold)
    lines = out.splitlines()
    assert "4 marks, 1 undo by 2 people (alice, bob)" in lines[0] and "2 of the marks are in the file now" in lines[0]
    body = [line.split() for line in lines[2:]]
    assert body[1][2:] == ["alice", "q1", "policy-14", "gold", "★3", "not", "relevant", "bm25.jsonl", "#4", "taken",
                           "back"]
    assert body[3][-2:] == ["no", "change"]
    assert body[4][-1] == "undo"


def test_no_journal_says_so(gold, capsys):
    code, out, _ = _log(capsys, gold)
    assert code == 0 and "no marks" in out
    code, out, _ = _log(capsys, gold, "--json")
    assert json.loads(out)["entries"] == []


def test_an_unknown_query_or_file_is_bad_input(gold, tmp_path, capsys):
    code, _, err = _log(capsys, gold, "--query", "q9")
    assert code == 2 and str(gold) in err and "'q9'" in err
    code, _, err = _log(capsys, tmp_path / "nope.yaml")
    assert code == 2 and "nope.yaml" in err and "Traceback" not in err


def test_a_link_reads_the_journal_beside_its_target(gold, tmp_path, capsys):
    LabelFile(gold, reviewer="alice").apply(Mark("q1", "policy-31", "gold", 2))
    link = tmp_path / "link.yaml"
    link.symlink_to(gold)
    code, out, _ = _log(capsys, link, "--json")
    assert [e["chunk_id"] for e in json.loads(out)["entries"]] == ["policy-31"]


def _decision(i: int, proposed: int, label: str, grade: int | None, who: str = "ann") -> list[dict]:
    op = {"type": "mark", "id": f"op{i}", "file": "gold.yaml", "query": "q1", "chunk": f"c{i}", "label": label,
          "grade": grade, "prev_label": "drafted", "prev_grade": proposed, "who": who,
          "when": f"2026-12-01T08:{i:02d}:00.000000+00:00", "run": "bm25.jsonl", "rank": i}
    return [op, {"type": "saved", "id": f"op{i}", "when": op["when"]}]


def test_overturn_report_counts_each_standing_decision_per_proposed_grade(gold, capsys):
    journal = Journal(journal_path(gold))
    script = [
        (3, "gold", 3), (3, "gold", 3), (3, "gold", 2), (3, "not_relevant", None),  # ☆3: 2 kept, 2 overturned
        (1, "gold", 1), (1, "evidence", None), (1, "not_relevant", None), (1, "not_relevant", None),
        (2, "gold", 2),
    ]
    records = [r for i, s in enumerate(script) for r in _decision(i, *s)]
    # a decision taken back and made again counts once, as the second decision
    records += _decision(20, 2, "not_relevant", None)
    records += [{"type": "undo", "id": "u20", "query": "q1", "chunk": "c20", "label": "drafted", "grade": 2,
                 "prev_label": "not_relevant", "prev_grade": None, "who": "ann", "undoes": "op20",
                 "when": "2026-12-01T08:40:00.000000+00:00"},
                {"type": "saved", "id": "u20", "when": "2026-12-01T08:40:00.000000+00:00"}]
    records += _decision(21, 2, "gold", 2)
    # a write that failed changed nothing and is not a decision
    records += [_decision(22, 1, "gold", 1)[0], {"type": "failed", "id": "op22", "when": "x", "error": "disk full"}]
    for record in records:
        journal.append(record)

    code, out, _ = _log(capsys, gold, "--drafts", "--json")
    assert code == 0
    doc = json.loads(out)["drafts"]
    by_grade = {row["grade"]: row for row in doc["by_proposed_grade"]}
    assert list(by_grade) == [1, 2, 3]
    assert {k: by_grade[3][k] for k in ("decided", "accepted", "regraded", "not_relevant", "overturned")} == \
        {"decided": 4, "accepted": 2, "regraded": 1, "not_relevant": 1, "overturned": 2}
    assert {k: by_grade[1][k] for k in ("decided", "accepted", "evidence", "not_relevant", "overturned")} == \
        {"decided": 4, "accepted": 1, "evidence": 1, "not_relevant": 2, "overturned": 3}
    assert (by_grade[2]["decided"], by_grade[2]["accepted"], by_grade[2]["not_relevant"]) == (2, 2, 0)
    assert (doc["decided"], doc["accepted"], doc["overturned"]) == (10, 5, 5)

    code, out, _ = _log(capsys, gold, "--drafts")
    assert "drafts decided: 10 · accepted 5 · overturned 5 (50%)" in out
    row = next(line.split() for line in out.splitlines() if line.lstrip().startswith("drafted ☆1"))
    assert row[2:] == ["4", "1", "0", "1", "2", "0", "75%"]


@pytest.mark.parametrize("fault, words", [
    ("folder", "is a folder"),
    ('{"type": "mark", "id": "a", "query": "q1", "chunk": "c", "label": "gold", "when": "yesterday"}', "when"),
    ('{"type": "mark", "id": "a", "query": "q1", "chunk": "c", "label": "weird", "when": "2026-01-01T00:00:00+00:00"}',
     "label"),
    ('{"type": "mark", "id": "a", "query": "q1", "chunk": "c", "label": "gold", "grade": "x", '
     '"when": "2026-01-01T00:00:00+00:00"}', "grade"),
])
@pytest.mark.parametrize("command", ["log", "stale"])
def test_a_journal_ragdiff_did_not_write_is_bad_input_naming_it(gold, capsys, fault, words, command):
    """The journal sits in the repository beside the label file, where a hand edit or a merge can reach it: a
    record that is not what ragdiff writes is one message naming the journal (and its line), never a traceback."""
    journal = journal_path(gold)
    if fault == "folder":
        journal.mkdir()
    else:
        journal.write_text('{"type": "note", "id": "n"}\n' + fault + '\n{"type": "saved", "id": "a"}\n')
    code = main(["labels", command, str(gold)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and str(journal) in err and words in err, err
    if fault != "folder":
        assert f"{journal}:2:" in err


@pytest.mark.parametrize("record", [
    '{"type": "mark", "id": ["a"]}',
    '{"type": "mark", "id": "a", "when": "2026-01-01T00:00:00+00:00"}',
    '{"type": "mark", "id": "a", "query": "q1", "chunk": "c", "label": "weird", "when": "2026-01-01T00:00:00+00:00"}',
    '{"type": "undo", "id": "b", "undoes": ["a"], "query": "q1", "chunk": "c", "label": "none", '
    '"when": "2026-01-01T00:00:00+00:00"}',
])
def test_the_writer_refuses_a_journal_it_did_not_write_naming_the_line(gold, capsys, record):
    """labels undo / add (and the review screen) open the label file with its journal: a foreign record is
    one message naming the journal's line, never a KeyError or TypeError traceback."""
    journal = journal_path(gold)
    journal.write_text('{"type": "note", "id": "n"}\n' + record + "\n")
    before = gold.read_text()
    for argv in (["labels", "undo", str(gold)], ["labels", "add", str(gold), "a new query"]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and f"{journal}:2:" in err, err
    assert gold.read_text() == before
