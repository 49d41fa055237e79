"""What the commands say is what they did: each sentence here was wrong or missing before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main

from test_cli_messages import GOLD as TWO_QUERIES, RUN

GOLD = TWO_QUERIES + "  - id: q3\n    text: ship to mars\n    gold: []\n"  # and one the corpus cannot answer
CORPUS = "".join(json.dumps({"id": c, "text": f"text of {c}"}) + "\n" for c in ("c1", "c2"))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    texts = {"gold.yaml": GOLD, "a.jsonl": RUN, "b.jsonl": RUN.replace('"c1", "c2"', '"c2", "c1"'), "corpus.jsonl": CORPUS}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return {name: tmp_path / name for name in texts}


def out_of(capsys, *args) -> str:
    assert main([str(a) for a in args]) == 0
    return capsys.readouterr().out


def test_unanswerable_as_zero_says_they_are_in_the_means(files, capsys):
    plain = out_of(capsys, "eval", files["a.jsonl"], "--gold", files["gold.yaml"])
    assert "2 scored · 1 unanswerable (left out of the means)" in plain
    zero = out_of(capsys, "eval", files["a.jsonl"], "--gold", files["gold.yaml"], "--unanswerable-as-zero")
    assert "left out of the means" not in zero and "3 scored · 1 unanswerable (scored 0, in the means)" in zero


def test_a_query_added_with_no_labels_is_unanswerable_not_missing(files, capsys):
    """`labels add` appends a query nobody has judged and no run has answered yet: eval said it twice, as
    unanswerable (left out) and as "1 gold query missing (scored 0)"."""
    out_of(capsys, "labels", "add", files["gold.yaml"], "a query from the log", "--id", "q4", "--reviewer", "ann")
    said = out_of(capsys, "eval", files["a.jsonl"], "--gold", files["gold.yaml"])
    assert "2 unanswerable (left out of the means)" in said
    assert "missing" not in said, said
    # a query with gold that the run lacks is still said to be missing
    (files["gold.yaml"]).write_text(files["gold.yaml"].read_text() + "  - id: q5\n    text: kettle\n    gold: [c9]\n")
    said = out_of(capsys, "eval", files["a.jsonl"], "--gold", files["gold.yaml"])
    assert "1 gold query missing (scored 0): q5" in said


def test_export_contexts_to_a_file_says_what_it_wrote(files, tmp_path, capsys):
    target = tmp_path / "contexts.jsonl"
    said = out_of(capsys, "export", "contexts", files["gold.yaml"], "--corpus", files["corpus.jsonl"], "-o", target)
    assert said.startswith(f"wrote {target} (3 queries, ") and target.is_file()
    assert len(target.read_text().splitlines()) == 3


def test_k_and_depth_beyond_what_the_runs_returned_is_said_once(files, capsys):
    said = out_of(capsys, "eval", files["a.jsonl"], files["b.jsonl"], "--gold", files["gold.yaml"],
                  "-k", "100", "--depth", "200")
    assert said.count("go past what") == 1, said
    assert ("k=100 and depth=200 go past what a (at most 2 a query) and b (at most 2 a query) returned" in
            " ".join(said.split()))
    # k within what was returned: nothing to say (a depth beyond it alone is the usual case: depth 50, top 10)
    assert "go past" not in out_of(capsys, "eval", files["a.jsonl"], "--gold", files["gold.yaml"], "-k", "2")


def test_labels_log_says_how_many_marks_are_in_the_file_now(files, capsys):
    """`labels log` ended with "0 stand" (after an added query, or a mark taken back): unclear."""
    out_of(capsys, "labels", "add", files["gold.yaml"], "a query from the log", "--id", "q4", "--reviewer", "ann")
    said = out_of(capsys, "labels", "log", files["gold.yaml"])
    assert "stand" not in said and "0 marks, 1 edit" in said
