"""`ragdiff export contexts`: the gold chunks' text per query (DESIGN.md, "Exports and reports").

The expected values are worked out from the files themselves (plain json and a YAML safe load), not from
ragdiff's loaders, so a loader bug cannot agree with itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ragdiff.cli.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


def _export(capsys, *args) -> list[dict]:
    assert main(["export", "contexts", *args]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def corpus_text() -> dict[str, str]:
    with (SAMPLE / "corpus.jsonl").open(encoding="utf-8") as fh:
        return {r["id"]: r["text"] for r in map(json.loads, fh)}


@pytest.fixture(scope="module")
def raw_gold() -> list[dict]:
    with (SAMPLE / "gold.yaml").open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)["queries"]


def _ids(value) -> dict[str, int]:
    if not value:
        return {}
    return {str(k): int(v) for k, v in value.items()} if isinstance(value, dict) else {str(c): 1 for c in value}


def test_sample_runs_one_line_per_query_with_the_corpus_text(capsys, corpus_text, raw_gold):
    lines = _export(capsys, str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"))
    assert [line["id"] for line in lines] == [str(q.get("id", q.get("text"))) for q in raw_gold]
    assert [line["text"] for line in lines] == [q["text"] for q in raw_gold]
    for line, query in zip(lines, raw_gold):
        gold = _ids(query.get("gold"))
        expected = [c for c, g in gold.items() if g >= 1]
        assert [c["id"] for c in line["chunks"]] == expected, line["id"]
        for chunk in line["chunks"]:
            assert chunk["text"] == corpus_text[chunk["id"]]
            assert chunk["grade"] == gold[chunk["id"]]
            assert chunk["level"] == "gold"
        assert line["unanswerable"] is (not expected)
        assert line["tags"] == [str(t) for t in query.get("tags", [])]
    unanswerable = [line["id"] for line in lines if line["unanswerable"]]
    assert unanswerable and len(unanswerable) < len(lines)


def test_evidence_level_adds_the_evidence_chunks(capsys, corpus_text, raw_gold):
    lines = _export(capsys, str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"), "--level", "evidence")
    with_evidence = 0
    for line, query in zip(lines, raw_gold):
        evidence = _ids(query.get("evidence"))
        got = {c["id"]: c["level"] for c in line["chunks"]}
        for chunk_id in evidence:
            assert got[chunk_id] == "evidence"
            with_evidence += 1
        assert set(got) == set(_ids(query.get("gold"))) | set(evidence)
        assert all(c["text"] == corpus_text[c["id"]] for c in line["chunks"])
    assert with_evidence >= 2


def test_output_file_holds_the_same_lines(tmp_path, capsys):
    target = tmp_path / "contexts.jsonl"
    args = [str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl")]
    assert main(["export", "contexts", *args, "-o", str(target)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {target} (72 queries, ")  # says what it wrote, as report
    assert target.read_text(encoding="utf-8").splitlines() == [json.dumps(x, ensure_ascii=False) for x in _export(capsys, *args)]
    assert [p.name for p in tmp_path.iterdir()] == ["contexts.jsonl"]  # no temporary file left behind


def test_a_labelled_chunk_missing_from_the_corpus_names_the_label_line(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: a\n    text: one\n    gold: [c1]\n  - id: b\n    text: two\n    gold: [c9]\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "first"}\n')
    target = tmp_path / "out.jsonl"
    assert main(["export", "contexts", str(gold), "--corpus", str(corpus), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"{gold}:7:" in err and "'c9'" in err and "not in the corpus" in err
    assert "Traceback" not in err
    assert not target.exists()


def test_text_is_data_and_ids_stay_strings(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: '007'\n    text: '[bold]x'\n    gold: {no: 2}\n  - text: none here\n    gold: []\n"
                    "    tags: [a, b]\n    retrieval: false\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "no", "text": "[red]literal\\u001b[0m", "title": "T"}\n')
    lines = _export(capsys, str(gold), "--corpus", str(corpus))
    assert lines == [
        {"id": "007", "text": "[bold]x", "unanswerable": False, "tags": [], "retrieval": True,
         "chunks": [{"id": "no", "grade": 2, "level": "gold", "text": "[red]literal\x1b[0m", "title": "T"}]},
        {"id": "none here", "text": "none here", "unanswerable": True, "tags": ["a", "b"], "retrieval": False,
         "chunks": []},
    ]


def test_help_loads_no_heavy_library():
    from tests.test_startup import probe

    got = probe("export", "contexts", "--help")
    assert got["code"] == 0 and got["loaded"] == []


def test_threshold_below_one_is_a_usage_error(capsys):
    assert main(["export", "contexts", str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"),
                 "--threshold", "0"]) == 2
    assert "--threshold 0" in capsys.readouterr().err


def test_files_written_get_the_mode_a_plain_write_gives(tmp_path, capsys):
    """The export, the HTML report and the history are files to share: written through a temporary file,
    they must not come out private (mkstemp's 0600), and a file that is overwritten keeps its own mode."""
    import os
    import stat

    mask = os.umask(0o022)
    try:
        new = tmp_path / "contexts.jsonl"
        args = [str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"), "-o", str(new)]
        assert main(["export", "contexts", *args]) == 0
        assert stat.S_IMODE(new.stat().st_mode) == 0o644
        new.chmod(0o664)
        assert main(["export", "contexts", *args]) == 0
        assert stat.S_IMODE(new.stat().st_mode) == 0o664
    finally:
        os.umask(mask)
    capsys.readouterr()
