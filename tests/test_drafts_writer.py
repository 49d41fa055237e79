"""Drafts through the label writer: `labels import` adds them without touching judged chunks, a person's mark
on a drafted chunk moves it from `drafted:` to its judgment (every other byte kept), undo brings the draft back,
and the overturn report counts a scripted session's decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, Mark

GOLD = """\
# drafts from a model, waiting for a person
queries:
  - id: q1   # the lesson's first query
    text: refund window for ebooks
    gold: {policy-14: 3}
    drafted: {policy-7: 2, policy-8: 0, policy-9: 3}
  - id: q2
    text: return an unopened blender
    gold: [policy-15]
    not_relevant: [policy-1]
    drafted:
      policy-2: 1
      policy-3: 2
  - id: q3
    text: who approves expenses over 5k
    gold: [finance-3]
"""


@pytest.fixture
def gold(tmp_path) -> Path:
    path = tmp_path / "gold.yaml"
    path.write_text(GOLD)
    return path


def _state(path: Path) -> tuple[dict, dict]:
    g = load_gold(path)
    judged = {(q, c): (lv, gr) for q, c, gr, lv in g.judgments.select("query_id", "chunk_id", "grade", "level").iter_rows()}
    drafted = {(q, c): gr for q, c, gr in g.drafts.select("query_id", "chunk_id", "grade").iter_rows()}
    return judged, drafted


def test_a_mark_on_a_draft_moves_it_to_the_judgment_and_keeps_every_other_byte(gold):
    labels = LabelFile(gold, reviewer="ann")
    change = labels.apply(Mark("q1", "policy-7", "gold", 2))  # accept: the draft's grade
    assert (change.before.kind, change.before.grade, change.after.kind, change.after.grade) == ("drafted", 2, "gold", 2)
    assert "was drafted ☆2" in change.message
    text = gold.read_text()
    assert text == GOLD.replace("gold: {policy-14: 3}", "gold: {policy-14: 3, policy-7: 2}", 1).replace(
        "drafted: {policy-7: 2, policy-8: 0, policy-9: 3}", "drafted: {policy-8: 0, policy-9: 3}")
    labels.apply(Mark("q2", "policy-3", "not_relevant"))  # override
    assert gold.read_text() == text.replace("not_relevant: [policy-1]", "not_relevant: [policy-1, policy-3]").replace(
        "      policy-3: 2\n", "")
    judged, drafted = _state(gold)
    assert judged[("q1", "policy-7")] == ("gold", 2) and judged[("q2", "policy-3")] == ("not_relevant", 0)
    assert drafted == {("q1", "policy-8"): 0, ("q1", "policy-9"): 3, ("q2", "policy-2"): 1}
    # undo brings each draft back with its grade, and the file back byte for byte
    assert labels.undo().after.kind == "drafted"
    change = labels.undo()
    assert (change.after.kind, change.after.grade) == ("drafted", 2)
    assert gold.read_text() == GOLD


def test_import_adds_drafts_and_never_touches_a_judged_chunk(gold, tmp_path, capsys):
    drafts = tmp_path / "drafts.jsonl"
    rows = [
        {"query_id": "q1", "chunk_id": "policy-14", "grade": 1},  # judged gold: left alone
        {"query_id": "q2", "chunk_id": "policy-1", "grade": 3},  # judged not relevant: left alone
        {"query_id": "q3", "chunk_id": "finance-9", "grade": 2},  # new
        {"query_id": "q3", "chunk_id": "hr-1", "grade": 0},  # new, proposing not relevant
        {"query_id": "q2", "chunk_id": "policy-2", "grade": 1},  # already drafted so
        {"query_id": "q1", "chunk_id": "policy-9", "grade": 1},  # a draft regraded
    ]
    drafts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before_judged, _ = _state(gold)
    assert main(["labels", "import", str(gold), str(drafts), "--reviewer", "bot"]) == 0
    assert "2 drafts added, 1 regraded, 1 already drafted, 2 skipped: a person has judged the chunk" in capsys.readouterr().out
    judged, drafted = _state(gold)
    assert judged == before_judged
    assert drafted == {("q1", "policy-7"): 2, ("q1", "policy-8"): 0, ("q1", "policy-9"): 1, ("q2", "policy-2"): 1,
                       ("q2", "policy-3"): 2, ("q3", "finance-9"): 2, ("q3", "hr-1"): 0}
    assert gold.read_text() == GOLD.replace("policy-9: 3}", "policy-9: 1}").replace(
        "    gold: [finance-3]\n", "    gold: [finance-3]\n    drafted: {finance-9: 2, hr-1: 0}\n")
    assert main(["labels", "log", str(gold), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["entries"]  # one journaled edit for the whole import
    assert (entry["who"], entry["edit"], entry["summary"]) == ("bot", "drafts", "3 drafts written from drafts.jsonl")
    # and one undo takes the whole import back, byte for byte
    assert main(["labels", "undo", str(gold), "--reviewer", "bot"]) == 0
    assert "undid: 3 drafts from drafts.jsonl" in capsys.readouterr().out
    assert gold.read_text() == GOLD


@pytest.mark.parametrize("line, expected", [
    ('{"query_id": "q9", "chunk_id": "c", "grade": 1}', "query 'q9' is not in the label file"),
    ('{"query_id": "q1", "chunk_id": "c", "grade": -1}', "expected a whole number >= 0"),
    ('{"query_id": "q1", "chunk_id": "c", "grade": "2"}', "expected a whole number >= 0"),
    ('{"query_id": "q1", "chunk_id": 7, "grade": 2}', "chunk_id 7: expected a non-empty string"),
    ('{"query_id": "q1", "chunk_id": "c", ', "invalid JSON"),
    ('{"query_id": "q1", "chunk_id": "policy-5", "grade": 2}', "drafted twice (lines 1 and 2)"),
])
def test_bad_drafts_name_the_line_and_write_nothing(gold, tmp_path, capsys, line, expected):
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text('{"query_id": "q1", "chunk_id": "policy-5", "grade": 2}\n' + line + "\n")
    assert main(["labels", "import", str(gold), str(drafts)]) == 2
    err = capsys.readouterr().err
    assert f"{drafts}:2:" in err and expected in err and "Traceback" not in err
    assert gold.read_text() == GOLD


def test_import_into_qrels_says_the_format_has_no_place_for_drafts(tmp_path, capsys):
    qrels = tmp_path / "gold.qrels"
    qrels.write_text("q1 0 c1 1\n")
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text('{"query_id": "q1", "chunk_id": "c2", "grade": 2}\n')
    assert main(["labels", "import", str(qrels), str(drafts)]) == 2
    assert "has no place for drafted labels" in capsys.readouterr().err
    assert qrels.read_text() == "q1 0 c1 1\n"


def test_overturn_report_of_a_scripted_session(gold, capsys):
    """Five drafts decided by two people, one decision taken back and made again: per proposed grade."""
    ann, bob = LabelFile(gold, reviewer="ann"), LabelFile(gold, reviewer="bob")
    ann.apply(Mark("q1", "policy-7", "gold", 2))  # ☆2 accepted
    ann.apply(Mark("q1", "policy-8", "not_relevant"))  # ☆0 accepted (not relevant)
    ann.apply(Mark("q1", "policy-9", "gold", 1))  # ☆3 regraded
    bob.apply(Mark("q2", "policy-2", "evidence"))  # ☆1 overturned to evidence
    bob.apply(Mark("q2", "policy-3", "gold", 2))  # ☆2 accepted ... then taken back
    bob.undo()
    bob.apply(Mark("q2", "policy-3", "not_relevant"))  # ... and overturned
    ann.apply(Mark("q1", "policy-7", "gold", 3))  # a later regrade of a judged chunk is not a draft decision

    assert main(["labels", "log", str(gold), "--drafts", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["drafts"]
    rows = {r["grade"]: (r["decided"], r["accepted"], r["regraded"], r["evidence"], r["not_relevant"], r["overturned"])
            for r in doc["by_proposed_grade"]}
    assert rows == {0: (1, 1, 0, 0, 0, 0), 1: (1, 0, 0, 1, 0, 1), 2: (2, 1, 0, 0, 1, 1), 3: (1, 0, 1, 0, 0, 1)}
    assert (doc["decided"], doc["accepted"], doc["overturned"]) == (5, 2, 3)
    assert main(["labels", "log", str(gold), "--drafts"]) == 0
    assert "drafts decided: 5 · accepted 2 · overturned 3 (60%)" in capsys.readouterr().out


LAST_DRAFTS = """\
queries:
  - id: q1
    text: refund window for ebooks
    gold: {policy-14: 3}
    drafted: {policy-7: 2}
    tags: [ebooks]
  - id: q2
    text: return an unopened blender
    drafted:
      policy-2: 1
  - {id: q3, text: who approves expenses, drafted: {finance-3: 1}, tags: [hr]}
  - {id: q4, text: travel policy, drafted: {travel-1: 2}}
  - id: q5
    text: a draft with a word on it
    drafted: {hr-1: 1}  # from the March model
  - id: q6
    text: the other sections stay when emptied
    evidence: [hr-4]
"""


@pytest.mark.parametrize("mark, line_gone, line_added", [
    (Mark("q1", "policy-7", "gold", 2), "    drafted: {policy-7: 2}\n", ("{policy-14: 3}", "{policy-14: 3, policy-7: 2}")),
    (Mark("q2", "policy-2", "not_relevant"), "    drafted:\n      policy-2: 1\n",
     ("    text: return an unopened blender\n", "    text: return an unopened blender\n    not_relevant: [policy-2]\n")),
    (Mark("q3", "finance-3", "evidence"), "drafted: {finance-3: 1}, ", ("tags: [hr]}", "tags: [hr], evidence: [finance-3]}")),
    (Mark("q4", "travel-1", "gold"), ", drafted: {travel-1: 2}", ("travel policy}", "travel policy, gold: [travel-1]}")),
])
def test_the_last_draft_decided_takes_its_section_key_with_it(tmp_path, mark, line_gone, line_added):
    """Accepting or overriding a query's only draft leaves the entry as a person would: no `drafted: {}`,
    every other byte as it was (block, block-map and flow entries; the key last or in the middle); undo brings
    the file back byte for byte."""
    path = tmp_path / "gold.yaml"
    path.write_text(LAST_DRAFTS)
    labels = LabelFile(path, reviewer="ann")
    labels.apply(mark)
    assert path.read_text() == LAST_DRAFTS.replace(line_gone, "", 1).replace(*line_added, 1)
    assert "drafted: {}" not in path.read_text()
    judged, drafted = _state(path)
    assert judged[(mark.query_id, mark.chunk_id)][0] == mark.label and (mark.query_id, mark.chunk_id) not in drafted
    labels.undo()
    assert path.read_text() == LAST_DRAFTS


def test_a_last_draft_with_a_comment_on_its_line_leaves_the_section_empty(tmp_path):
    """The comment is a person's: the key stays (empty) rather than take it along."""
    path = tmp_path / "gold.yaml"
    path.write_text(LAST_DRAFTS)
    LabelFile(path, reviewer="ann").apply(Mark("q5", "hr-1", "gold"))
    assert path.read_text() == LAST_DRAFTS.replace(
        "    drafted: {hr-1: 1}  # from the March model\n",
        "    gold: [hr-1]\n    drafted: {}  # from the March model\n")


def test_an_emptied_judgment_section_stays(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text(LAST_DRAFTS)
    LabelFile(path, reviewer="ann").apply(Mark("q6", "hr-4", "none"))
    assert path.read_text() == LAST_DRAFTS.replace("    evidence: [hr-4]\n", "    evidence: []\n")


def test_the_last_draft_in_a_json_label_file(tmp_path):
    text = ('{"queries": [\n  {"id": "q1", "text": "refund window", "gold": {"policy-14": 3}, '
            '"drafted": {"policy-7": 2}},\n  {"id": "q2", "text": "blender", "drafted": {"policy-2": 1}, '
            '"tags": ["x"]}\n]}\n')
    path = tmp_path / "gold.json"
    path.write_text(text)
    labels = LabelFile(path, reviewer="ann")
    labels.apply(Mark("q1", "policy-7", "gold", 2))
    labels.apply(Mark("q2", "policy-2", "not_relevant"))
    assert path.read_text() == text.replace(', "drafted": {"policy-7": 2}', "").replace(
        '"gold": {"policy-14": 3}', '"gold": {"policy-14": 3, "policy-7": 2}').replace(
        '"drafted": {"policy-2": 1}, "tags": ["x"]', '"tags": ["x"], "not_relevant": ["policy-2"]')
    assert json.loads(path.read_text())["queries"][1] == {"id": "q2", "text": "blender", "tags": ["x"],
                                                          "not_relevant": ["policy-2"]}
