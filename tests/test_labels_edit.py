"""Growing and keeping the label file: `labels add` (a production failure as a new query), `labels snapshot`
(the corpus sha256), `labels undo` (either of them, or a mark) and `labels stale` (DESIGN.md, "Drafted labels,
provenance, growing the set")."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.journal import journal_path
from ragdiff.core.labels import LabelFile, Mark

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


@pytest.fixture
def sample(tmp_path) -> Path:
    shutil.copy(SAMPLE / "gold.yaml", tmp_path / "gold.yaml")
    shutil.copy(SAMPLE / "corpus.jsonl", tmp_path / "corpus.jsonl")
    return tmp_path / "gold.yaml"


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_then_log_then_undo_returns_the_file_byte_identical(sample, capsys):
    before = sample.read_bytes()
    code, out, _ = _run(capsys, "labels", "add", sample, "refund for ebooks bought on ios", "--id", "q73",
                        "--regression", "--tag", "typo", "--tag", "ios", "--reviewer", "ann")
    assert code == 0 and "added query 'q73'" in out
    after = sample.read_bytes()
    assert after.startswith(before)  # appended: every earlier byte as it was
    assert after[len(before):].decode() == ("  - id: q73\n    text: refund for ebooks bought on ios\n"
                                            "    regression: true\n    tags: [typo, ios]\n")
    gold = load_gold(sample)
    row = gold.queries.filter(gold.queries["query_id"] == "q73").row(0, named=True)
    assert (row["text"], row["regression"], row["tags"]) == ("refund for ebooks bought on ios", True, ["typo", "ios"])
    code, out, _ = _run(capsys, "eval", SAMPLE / "bm25.jsonl", "--gold", sample, "--json")
    assert "q73" in json.loads(out)["queries"]["unanswerable"]  # no labels yet

    code, out, _ = _run(capsys, "labels", "log", sample, "--json")
    (entry,) = json.loads(out)["entries"]
    assert (entry["action"], entry["edit"], entry["who"], entry["query_id"], entry["status"]) == \
        ("edit", "add_query", "ann", "q73", "saved")
    code, out, _ = _run(capsys, "labels", "log", sample)
    assert "query added: refund for ebooks bought on ios (regression; tags: typo, ios)" in out

    code, out, _ = _run(capsys, "labels", "undo", sample, "--reviewer", "ann")
    assert code == 0 and "undid: added query 'q73'" in out
    assert sample.read_bytes() == before
    code, out, err = _run(capsys, "labels", "undo", sample, "--reviewer", "ann")
    assert (code, out) == (2, "") and "nothing of yours to undo" in err  # asked for, not done: said, exit 2
    assert sample.read_bytes() == before


def test_a_mark_on_the_new_query_is_taken_back_first(sample, capsys):
    before = sample.read_bytes()
    assert _run(capsys, "labels", "add", sample, "key: value # not a comment", "--reviewer", "ann")[0] == 0
    assert load_gold(sample).queries["text"].to_list()[-1] == "key: value # not a comment"
    LabelFile(sample, reviewer="ann").apply(Mark("key: value # not a comment", "json#0", "gold", 2))
    code, _, err = _run(capsys, "labels", "undo", sample, "--reviewer", "bob")  # not bob's to take back
    assert sample.read_bytes() != before
    assert _run(capsys, "labels", "undo", sample, "--reviewer", "ann")[0] == 0  # the mark
    assert _run(capsys, "labels", "undo", sample, "--reviewer", "ann")[0] == 0  # the query
    assert sample.read_bytes() == before


@pytest.mark.parametrize("args, expected", [
    (["q01 text", "--id", "q01"], "already has query 'q01'"),
    (["json pretty print indent"], "already has a query with this text ('q01')"),
    (["another", "--id", "json pretty print indent"], "already has a query with this text ('q01')"),
    (["  "], "a query needs its text"),
])
def test_add_refuses_what_it_cannot_write_and_writes_nothing(sample, capsys, args, expected):
    before = sample.read_bytes()
    code, _, err = _run(capsys, "labels", "add", sample, *args)
    assert code == 2 and expected in err and str(sample) in err and "Traceback" not in err
    assert sample.read_bytes() == before


def test_add_to_qrels_says_it_needs_the_label_file(tmp_path, capsys):
    qrels = tmp_path / "gold.qrels"
    qrels.write_text("q1 0 c1 1\n")
    code, _, err = _run(capsys, "labels", "add", qrels, "new query")
    assert code == 2 and "cannot take a new query" in err
    assert qrels.read_text() == "q1 0 c1 1\n"


def test_snapshot_adds_exactly_the_corpus_entry(sample, capsys):
    text = sample.read_text()
    lines = text.splitlines(keepends=True)
    without = "".join(line for line in lines if not line.startswith("corpus:"))
    assert without != text
    sample.write_text(without)
    code, out, _ = _run(capsys, "labels", "snapshot", sample, "--corpus", sample.parent / "corpus.jsonl",
                        "--reviewer", "ann")
    assert code == 0 and "corpus snapshot corpus.jsonl" in out
    sha = hashlib.sha256((sample.parent / "corpus.jsonl").read_bytes()).hexdigest()
    new_lines = sample.read_text().splitlines(keepends=True)
    added = [line for line in new_lines if line not in lines or line.startswith("corpus:")]
    assert added == [f"corpus: {{path: corpus.jsonl, sha256: {sha}}}\n"]
    assert [line for line in new_lines if line != added[0]] == [line for line in without.splitlines(keepends=True)]
    gold = load_gold(sample)
    assert (gold.corpus_path, gold.corpus_sha256) == ("corpus.jsonl", sha)
    code, out, _ = _run(capsys, "labels", "log", sample, "--json")
    assert [e["edit"] for e in json.loads(out)["entries"]] == ["corpus"]
    # the same snapshot again changes nothing; undo takes the entry back out
    assert "already so" in _run(capsys, "labels", "snapshot", sample, "--corpus", sample.parent / "corpus.jsonl")[1]
    assert _run(capsys, "labels", "undo", sample, "--reviewer", "ann")[0] == 0
    assert sample.read_text() == without


def test_snapshot_then_a_changed_judged_chunk_fails_strict_eval_naming_it(sample, capsys):
    corpus = sample.parent / "corpus.jsonl"
    assert _run(capsys, "labels", "snapshot", sample, "--corpus", corpus)[0] == 0
    with corpus.open("a") as fh:  # a chunk nobody judged: not a reason to stop
        fh.write('{"id": "new#0", "text": "added later"}\n')
    code, _, err = _run(capsys, "eval", SAMPLE / "bm25.jsonl", "--gold", sample, "--corpus", corpus, "--strict-corpus")
    assert code == 0 and err == ""
    corpus.write_text(corpus.read_text().replace("Serialize ``obj`` to a JSON formatted ``str``",
                                                 "Serialize ``obj`` to JSON", 1))
    code, _, err = _run(capsys, "eval", SAMPLE / "bm25.jsonl", "--gold", sample, "--corpus", corpus, "--strict-corpus")
    assert code == 2 and "1 judged chunk changed text" in err and "q01" in err


def _days_ago(n: int) -> str:
    return (datetime.now(timezone.utc).date() - timedelta(days=n)).isoformat()


def _stale(capsys, gold: Path, *extra) -> list[str]:
    code, out, _ = _run(capsys, "labels", "stale", gold, "--json", *extra)
    assert code == 0
    return [q["query_id"] for q in json.loads(out)["stale"]]


def test_stale_lists_old_never_read_and_other_snapshot_queries(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "one"}\n{"id": "c2", "text": "two"}\n')
    gold = tmp_path / "gold.yaml"
    gold.write_text(
        "queries:\n"
        f"  - id: a\n    text: fresh\n    gold: [c1]\n    reviewed: {_days_ago(10)}\n"
        f"  - id: b\n    text: old\n    gold: [c1]\n    reviewed: {_days_ago(200)}\n"
        "  - id: c\n    text: never read\n    gold: [c2]\n"
        f"  - id: d\n    text: old but marked today\n    gold: [c2]\n    reviewed: {_days_ago(200)}\n"
        f"  - id: e\n    text: fresh too\n    gold: []\n    reviewed: {_days_ago(89)}\n"
    )
    assert _run(capsys, "labels", "snapshot", gold, "--corpus", corpus)[0] == 0
    LabelFile(gold, reviewer="ann").apply(Mark("d", "c1", "not_relevant"))
    assert _stale(capsys, gold) == ["b", "c"]
    assert _stale(capsys, gold, "--older-than", "12w") == ["b", "c", "e"]  # 84 days
    code, out, _ = _run(capsys, "labels", "stale", gold)
    assert "2 of 5 queries due for a re-read" in out and "never reviewed" in out and "200 days ago" in out

    with corpus.open("a") as fh:  # a chunk arrives: no judged chunk changed, nothing more to re-read
        fh.write('{"id": "c3", "text": "three"}\n')
    assert _stale(capsys, gold) == ["b", "c"]
    other = tmp_path / "v1.jsonl"
    other.write_text('{"id": "c1", "text": "one!"}\n{"id": "c2", "text": "two"}\n')
    assert _stale(capsys, gold, "--corpus", other) == ["a", "b", "c", "d"]  # c1 changed text: its queries
    (tmp_path / "gold.yaml.ragdiff-snapshot.json").unlink()  # without the fingerprints: the whole corpus's sha
    assert _stale(capsys, gold) == ["a", "b", "c", "d", "e"]

    # the new corpus recorded today: what was looked at before today was labelled against the old one
    assert _run(capsys, "labels", "snapshot", gold, "--corpus", corpus)[0] == 0
    LabelFile(gold, reviewer="ann").apply(Mark("e", "c3", "gold"))
    code, out, _ = _run(capsys, "labels", "stale", gold, "--json")
    stale = {q["query_id"]: q["reasons"] for q in json.loads(out)["stale"]}
    assert list(stale) == ["a", "b", "c"]
    assert any("before the corpus snapshot changed" in r for r in stale["a"])


def test_stale_age_is_checked(sample, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["labels", "stale", str(sample), "--older-than", "soon"])
    assert stop.value.code == 2 and "expected an age like 90d" in capsys.readouterr().err


# a pure-ASCII file stays ASCII: the é of the new text is written \u00e9
NEW_Q = '{"id": "007", "text": "refund \\"ebook\\" \\u00e9", "regression": true, "tags": ["ios"]}'
SNAP = '"corpus": {"path": "corpus.jsonl", "sha256": "SHA"}'
# (before, after labels add, after labels snapshot)
JSON_CASES = {
    "one line": ('{"queries": [{"id": "q1", "text": "a", "gold": ["c1"]}]}',
                 '{"queries": [{"id": "q1", "text": "a", "gold": ["c1"]}, NEW]}',
                 '{SNAP, "queries": [{"id": "q1", "text": "a", "gold": ["c1"]}, NEW]}'),
    "pretty": ('{\n  "queries": [\n    {\n      "id": "q1",\n      "gold": ["c1"]\n    },\n    {"id": "q2"}\n  ]\n}\n',
               '{\n  "queries": [\n    {\n      "id": "q1",\n      "gold": ["c1"]\n    },\n    {"id": "q2"},\n    NEW\n  ]\n}\n',
               '{\n  SNAP,\n  "queries": [\n    {\n      "id": "q1",\n      "gold": ["c1"]\n    },\n    {"id": "q2"},\n'
               '    NEW\n  ]\n}\n'),
    "empty list": ('{"queries": []}\n', '{"queries": [NEW]}\n', '{SNAP, "queries": [NEW]}\n'),
    "a corpus already": ('{"corpus": {"path": "old.jsonl", "sha256": "00"}, "queries": []}\n',
                         '{"corpus": {"path": "old.jsonl", "sha256": "00"}, "queries": [NEW]}\n',
                         '{SNAP, "queries": [NEW]}\n'),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_add_and_snapshot_write_a_json_label_file_surgically(tmp_path, capsys, case):
    """The JSON label file is read as the YAML one is: `labels add` and `labels snapshot` write it too, in JSON,
    every other byte of the file as it was; labels undo takes each back exactly."""
    gold = tmp_path / "gold.json"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "x"}\n')
    sha = hashlib.sha256(corpus.read_bytes()).hexdigest()
    before, added, snapped = (t.replace("NEW", NEW_Q).replace("SNAP", SNAP).replace("SHA", sha)
                              for t in JSON_CASES[case])
    gold.write_text(before)
    old = load_gold(gold)
    code, _out, err = _run(capsys, "labels", "add", gold, 'refund "ebook" é', "--id", "007", "--regression",
                           "--tag", "ios")
    assert code == 0, err
    assert gold.read_text() == added
    loaded = load_gold(gold)
    row = loaded.queries.filter(loaded.queries["query_id"] == "007").row(0, named=True)
    assert row["text"] == 'refund "ebook" é' and row["regression"] is True and row["tags"] == ["ios"]
    assert loaded.queries["query_id"].to_list() == [*old.queries["query_id"].to_list(), "007"]
    code, _out, err = _run(capsys, "labels", "snapshot", gold, "--corpus", corpus)
    assert code == 0, err
    assert gold.read_text() == snapped
    assert load_gold(gold).corpus_sha256 == sha
    _run(capsys, "labels", "undo", gold)
    assert gold.read_text() == added
    _run(capsys, "labels", "undo", gold)
    assert gold.read_text() == before


@pytest.mark.parametrize("name, content, shape", [
    ("short.yaml", "q1: [c1]\n", "short form"),
    ("short.json", '{"q1": ["c1"]}\n', "short form"),
    ("gold.qrels", "q1 0 c1 1\n", "TREC qrels"),
    ("beir", None, "BEIR qrels"),
])
@pytest.mark.parametrize("command", [["add", "a new query"], ["snapshot", "--corpus", "CORPUS"]])
def test_add_and_snapshot_refuse_a_format_without_a_place_for_it(tmp_path, capsys, name, content, shape, command):
    """One message naming the file, what it is and what is supported; exit 2; not a byte written."""
    gold = tmp_path / name
    if content is None:
        (gold / "qrels").mkdir(parents=True)
        (gold / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n')
        (gold / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tc1\t1\n")
    else:
        gold.write_text(content)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "x"}\n')
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    argv = ["labels", command[0], str(gold), *(str(corpus) if a == "CORPUS" else a for a in command[1:])]
    code, _out, err = _run(capsys, *argv)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert str(gold) in err and f"a {shape}" in err and "expected the ragdiff label file (YAML or JSON" in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files


# ---- reviewed: (DESIGN: "when a person last read this query's labels"; `ragdiff judge` writes it) ----------

REVIEWED_CASES = {
    "block entry, no date yet": (
        "# labels\nqueries:\n  - id: q1   # first\n    text: a\n    gold: [c1]\n    tags: [x]  # keep\n"
        "  - id: q2\n    text: b\n",
        "# labels\nqueries:\n  - id: q1   # first\n    text: a\n    gold: [c1]\n    tags: [x]  # keep\n"
        "    reviewed: 2026-12-01\n  - id: q2\n    text: b\n"),
    "block entry ending in a block list": (
        "queries:\n  - id: q1\n    gold:\n      - c1\n      - c2\n\n  - id: q2\n",
        "queries:\n  - id: q1\n    gold:\n      - c1\n      - c2\n    reviewed: 2026-12-01\n\n  - id: q2\n"),
    "an older date, quoted": (
        "queries:\n- id: q1\n  reviewed: '2025-01-02'   # by ann\n  gold: [c1]\n",
        "queries:\n- id: q1\n  reviewed: '2026-12-01'   # by ann\n  gold: [c1]\n"),
    "flow entry": (
        "queries:\n  - {id: q1, gold: [c1]}\n",
        "queries:\n  - {id: q1, gold: [c1], reviewed: 2026-12-01}\n"),
    "JSON label file": (
        '{"queries": [\n  {"id": "q1", "gold": ["c1"]},\n  {"id": "q2", "gold": []}\n]}\n',
        '{"queries": [\n  {"id": "q1", "gold": ["c1"], "reviewed": "2026-12-01"},\n  {"id": "q2", "gold": []}\n]}\n'),
}


@pytest.mark.parametrize("case", list(REVIEWED_CASES))
def test_set_reviewed_changes_only_that_date_and_undo_returns_the_bytes(tmp_path, case):
    before, after = REVIEWED_CASES[case]
    gold = tmp_path / ("gold.json" if case.startswith("JSON") else "gold.yaml")
    gold.write_bytes(before.encode())
    qid = "q1"
    labels = LabelFile(gold, reviewer="ann")
    assert labels.records_reviewed
    edit = labels.set_reviewed(qid, "2026-12-01")
    assert edit.saved and gold.read_bytes() == after.encode()
    loaded = load_gold(gold)
    assert dict(loaded.queries.select("query_id", "reviewed").iter_rows())[qid] == "2026-12-01"
    assert not labels.set_reviewed(qid, "2026-12-01").saved  # already so: nothing written
    assert gold.read_bytes() == after.encode()
    labels.undo(edits=True)
    assert gold.read_bytes() == before.encode()


def test_set_reviewed_is_refused_where_the_format_has_no_place_and_nothing_is_written(tmp_path):
    from ragdiff.core.labels import LabelFormatError

    qrels = tmp_path / "gold.qrels"
    qrels.write_text("q1 0 c1 1\n")
    labels = LabelFile(qrels, reviewer="ann")
    assert not labels.records_reviewed
    with pytest.raises(LabelFormatError, match="no place for a reviewed: date"):
        labels.set_reviewed("q1", "2026-12-01")
    assert qrels.read_text() == "q1 0 c1 1\n"


def test_reviewed_edit_is_in_the_log(sample, capsys):
    labels = LabelFile(sample, reviewer="ann")
    qid = labels.queries[0]
    labels.set_reviewed(qid, "2026-12-01")
    code, out, _ = _run(capsys, "labels", "log", sample, "--query", qid)
    assert code == 0 and "reviewed: 2026-12-01" in out
