"""tests/bad_inputs/: every malformed file gives exit 2 and the message cases.json says (file, line, what was
expected); the few that are valid after all (BOM, CRLF, mixed whitespace) load. Never a traceback."""

import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main

HERE = Path(__file__).parent / "bad_inputs"
CASES = json.loads((HERE / "cases.json").read_text())

GOLD = "queries:\n  - id: q1\n    text: refund window\n    gold: [c1]\n  - id: q2\n    text: blender\n    gold: [c2]\n"
RUN = "q1 Q0 c1 1 0.9 t\nq2 Q0 c2 1 0.9 t\n"
CORPUS = '{"id": "c1", "text": "one"}\n{"id": "c2", "text": "two"}\n'


def test_there_are_at_least_40_cases():
    assert len([c for c in CASES.values() if c["exit"] == 2]) >= 40
    assert set(CASES) == {p.name for p in HERE.iterdir() if p.name != "cases.json"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name, tmp_path, capsys):
    case = CASES[name]
    bad = HERE / name
    gold, run, corpus = tmp_path / "gold.yaml", tmp_path / "run.trec", tmp_path / "corpus.jsonl"
    gold.write_text(GOLD)
    run.write_text(RUN)
    corpus.write_text(CORPUS)
    args = {"run": [str(bad), "--gold", str(gold)], "gold": [str(run), "--gold", str(bad)],
            "corpus": [str(run), "--gold", str(gold), "--corpus", str(bad)]}[case["role"]]
    code = main(["eval", *args])
    err = capsys.readouterr().err
    assert code == case["exit"], err
    if case["exit"] == 0:
        assert "Traceback" not in err
        return
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    # a run from another corpus is the run's fault: the message names the run, and the corpus beside it
    blamed = run if case.get("blames") == "run" else bad
    where = f"{blamed}:{case['line']}: " if case["line"] else f"{blamed}: "
    assert lines[0].startswith(f"ragdiff: {where}"), lines[0]
    assert case["message"] in lines[0], lines[0]


def test_a_50_mb_single_line(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text(GOLD)
    huge = tmp_path / "huge.trec"
    huge.write_bytes(b"q1 Q0 c1 1 0.9 t\nq1 Q0 " + b"x" * (50 * 1024 * 1024) + b"\n")
    assert main(["eval", str(huge), "--gold", str(gold)]) == 2
    assert f"{huge}:2: expected 6 columns" in capsys.readouterr().err


def test_a_directory_given_as_a_file(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text(GOLD)
    assert main(["eval", str(tmp_path), "--gold", str(gold)]) == 2
    assert f"{tmp_path}: is a folder; expected a file" in capsys.readouterr().err
