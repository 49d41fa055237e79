"""Malformed inputs: exit code 2 and one message naming the file, the line, and what was expected."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdiff.cli.main import main

GOOD_GOLD = "queries:\n  - id: q1\n    text: refund window\n    gold: [c1]\n  - id: q2\n    text: blender\n    gold: [c2]\n"
GOOD_RUN = '{"query_id": "q1", "results": ["c1", "c2"]}\n{"query_id": "q2", "results": ["c2"]}\n'

# name: (file name, content, which argument it is, line expected in the message or None, words expected)
CASES = {
    "trec wrong column count": ("run.trec", "q1 Q0 c1 1 0.9 tag\nq1 Q0 c2 2 0.8\n", "run", 2, "expected 6 columns"),
    "trec non-numeric score": ("run.trec", "q1 Q0 c1 1 0.9 t\nq1 Q0 c2 2 high t\n", "run", 2, "not a finite number"),
    "trec nan score": ("run.trec", "q1 Q0 c1 1 nan t\n", "run", 1, "not a finite number"),
    "trec infinite score": ("run.trec", "q1 Q0 c1 1 0.5 t\nq1 Q0 c2 2 inf t\n", "run", 2, "not a finite number"),
    "trec negative rank": ("run.trec", "q1 Q0 c1 -1 0.5 t\n", "run", 1, "rank"),
    "trec duplicate chunk": ("run.trec", "q1 Q0 c1 1 0.9 t\nq2 Q0 c2 1 0.9 t\nq1 Q0 c1 2 0.8 t\n", "run", 3,
                             "lines 1 and 3"),
    "empty run": ("run.trec", "", "run", None, "empty"),
    "binary garbage": ("run.trec", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "run", 3, "binary"),
    "invalid utf-8": ("run.jsonl", b'{"query_id": "q1", "results": ["c1"]}\n{"query_id": "q\xff"}\n', "run", 2,
                      "UTF-8"),
    "jsonl truncated last line": ("run.jsonl", '{"query_id": "q1", "results": ["c1"]}\n{"query_id": "q2", "resu',
                                  "run", 2, "invalid JSON"),
    "jsonl missing results": ("run.jsonl", '{"query_id": "q1"}\n', "run", 1, "results"),
    "jsonl duplicate chunk": ("run.jsonl", '{"query_id": "q1", "results": ["c1", "c1"]}\n', "run", 1, "twice"),
    "jsonl chunk repeated within one line": ("run.jsonl", '{"query_id": "q1", "results": ["c2"]}\n'
                                             '{"query_id": "q2", "results": ["c1", "c2", "c1"]}\n', "run", 2,
                                             "'c1' appears twice for query 'q2' within its results on line 2;"),
    "json list where a map belongs": ("run.json", '["c1", "c2"]', "run", None, "expected"),
    "json duplicate query keys": ("run.json", '{\n "q1": ["c1"],\n "q1": ["c2"]\n}', "run", 3, "twice"),
    "csv missing columns": ("run.csv", "query_id,doc\nq1,c1\n", "run", 1, "expected query_id, chunk_id"),
    "csv non-numeric rank": ("run.csv", "query_id,chunk_id,rank\nq1,c1,1\nq1,c2,two\n", "run", 3, "rank"),
    "unknown extension": ("run.xyz", "this is not a run\n", "run", None, "--format"),
    "qrels wrong column count": ("gold.qrels", "q1 0 c1 1\nq1 0 c2\n", "gold", 2, "expected 4 columns"),
    "qrels non-numeric grade": ("gold.qrels", "q1 0 c1 1\nq1 0 c2 yes\n", "gold", 2, "not a whole number"),
    "yaml list where a map belongs": ("gold.yaml", "- q1\n- q2\n", "gold", 1, "expected a map"),
    "yaml duplicate query keys": ("gold.yaml", "q1: [c1]\nq2: [c2]\nq1: [c3]\n", "gold", 3, "duplicate key"),
    "yaml duplicate query ids": ("gold.yaml", "queries:\n  - id: q1\n    gold: [c1]\n  - id: q1\n    gold: [c2]\n",
                                 "gold", 4, "appears twice"),
    "yaml non-numeric grade": ("gold.yaml", "queries:\n  - id: q1\n    gold: {c1: high}\n", "gold", 3,
                               "not a whole number"),
    "yaml bad syntax": ("gold.yaml", "queries:\n  - id: q1\n    gold: [c1\n", "gold", None, "invalid YAML"),
    "yaml alias bomb": ("gold.yaml", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "gold", 2, "alias"),
    "yaml query that is not a map": ("gold.yaml", "queries:\n  - id: q1\n    gold: [a]\n  - just text\n", "gold", 4,
                                     "expected a map"),
    "yaml query id that is a list": ("gold.yaml", "queries:\n  - id: q1\n    gold: [a]\n  - id: [q2]\n    gold: [b]\n",
                                     "gold", 4, "id must be a string"),
    "yaml query id that is empty": ("gold.yaml", "queries:\n  - id: q1\n    gold: [a]\n  - id: ''\n    text: x\n",
                                    "gold", 4, "id is empty"),
    "yaml gold grade 0": ("gold.yaml", "queries:\n  - id: q1\n    gold:\n      c1: 2\n      c2: 0\n", "gold", 5,
                          "grade 0 is not gold"),
    "json label file gold grade below 0": ("gold.json", '{"queries": [{"id": "q1", "gold": {"c1": -1}}]}', "gold", 1,
                                           "grade -1 is not gold"),
    "json gold NaN": ("gold.json", '{"q1": ["c1"],\n "q2": {"c2": NaN}}', "gold", 2, "invalid JSON"),
    "json gold nesting bomb": ("gold.json", "[" * 100000 + "]" * 100000, "gold", None, "nested too deeply"),
}


def write(path: Path, content) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_gives_one_clear_message(case, tmp_path, capsys):
    name, content, role, line, words = CASES[case]
    bad = write(tmp_path / name, content)
    gold = write(tmp_path / "good_gold.yaml", GOOD_GOLD)
    run = write(tmp_path / "good_run.jsonl", GOOD_RUN)
    args = ["eval", str(bad if role == "run" else run), "--gold", str(bad if role == "gold" else gold)]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert str(bad) in lines[0]
    if line is not None:
        assert f"{bad}:{line}:" in lines[0], lines[0]
    assert words in lines[0], lines[0]


def test_missing_file(tmp_path, capsys):
    gold = write(tmp_path / "gold.yaml", GOOD_GOLD)
    assert main(["eval", str(tmp_path / "nope.jsonl"), "--gold", str(gold)]) == 2
    assert "nope.jsonl: no such file" in capsys.readouterr().err


def test_directory_given_as_run(tmp_path, capsys):
    gold = write(tmp_path / "gold.yaml", GOOD_GOLD)
    assert main(["eval", str(tmp_path), "--gold", str(gold)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_beir_folder_without_qrels(tmp_path, capsys):
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n')
    run = write(tmp_path / "run.jsonl", GOOD_RUN)
    assert main(["eval", str(run), "--gold", str(beir)]) == 2
    err = capsys.readouterr().err
    assert "qrels" in err and str(beir) in err


def test_keep_first_accepts_duplicates(tmp_path, capsys):
    gold = write(tmp_path / "gold.yaml", GOOD_GOLD)
    run = write(tmp_path / "run.jsonl", '{"query_id": "q1", "results": ["c9", "c1", "c9"]}\n')
    assert main(["eval", str(run), "--gold", str(gold), "--keep-first", "--metrics", "mrr", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["metrics"]["mrr"] == 0.25


def test_usage_error_exits_2(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ragdiff", "eval", "x.jsonl"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "--gold" in result.stderr and "Traceback" not in result.stderr


def test_unknown_metric_is_a_usage_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ragdiff", "eval", "x.jsonl", "--gold", "g.yaml", "--metrics",
                             "bogus@5"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "unknown metric 'bogus@5'" in result.stderr
