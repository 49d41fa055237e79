"""The chunk-level snapshot (issue 31): `labels snapshot` fingerprints every chunk the labels name, `labels stale`
names the queries whose judged chunks changed text or vanished, and `eval` / `diff` warn (with --strict-corpus
refuse) only then — on a copy of the sample set, where one unrelated new chunk used to flag all 72 queries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
CHUNK = "json.dumps#0"


@pytest.fixture
def copy(tmp_path, capsys) -> Path:
    for name in ("gold.yaml", "corpus.jsonl"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    assert main(["labels", "snapshot", str(tmp_path / "gold.yaml"), "--corpus", str(tmp_path / "corpus.jsonl")]) == 0
    assert "fingerprints of the" in capsys.readouterr().out
    return tmp_path


def _flagged(capsys, copy: Path) -> tuple[list[str], dict]:
    """The queries `labels stale` flags for the corpus (their judged chunks changed or vanished)."""
    assert main(["labels", "stale", str(copy / "gold.yaml"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return [q["query_id"] for q in doc["stale"] if q["changed"] or q["vanished"]], doc["corpus"]["chunks"]


def _rewrite(corpus: Path, edit) -> None:
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in edit(rows)))


def _judging(copy: Path, chunk: str) -> list[str]:
    j = load_gold(copy / "gold.yaml").judgments
    return sorted(set(j.filter(j["chunk_id"] == chunk)["query_id"].to_list()))


def _eval(capsys, copy: Path, *extra) -> tuple[int, str]:
    code = main(["eval", str(SAMPLE / "bm25.jsonl"), "--gold", str(copy / "gold.yaml"), *map(str, extra)])
    return code, capsys.readouterr().err


def test_an_unrelated_new_chunk_flags_no_query(copy, capsys):
    with (copy / "corpus.jsonl").open("a") as fh:
        fh.write('{"id": "zz-unrelated#0", "title": "zz", "text": "a chunk nobody has judged"}\n')
    flagged, chunks = _flagged(capsys, copy)
    assert flagged == []
    assert chunks["new_chunks"] == 1 and chunks["size_then"] == 1148 and chunks["size_now"] == 1149
    assert _eval(capsys, copy, "--strict-corpus") == (0, "")  # no warning either
    assert main(["diff", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--gold", str(copy / "gold.yaml"),
                 "--strict-corpus"]) in (0, 1)
    assert "judged chunk" not in capsys.readouterr().err


def test_a_judged_chunk_whose_text_changed_flags_exactly_its_queries(copy, capsys):
    expected = _judging(copy, CHUNK)
    assert len(expected) >= 2
    _rewrite(copy / "corpus.jsonl", lambda rows: [{**r, "text": r["text"] + " (edited)"} if r["id"] == CHUNK else r
                                                  for r in rows])
    flagged, chunks = _flagged(capsys, copy)
    assert flagged == expected and chunks["changed"] == [CHUNK] and chunks["vanished"] == []
    code, err = _eval(capsys, copy, "--corpus", copy / "corpus.jsonl")
    assert code == 0 and "1 judged chunk changed text" in err and all(q in err for q in expected)
    code, err = _eval(capsys, copy, "--strict-corpus")
    assert code == 2 and "--strict-corpus" in err and err.count("\n") == 1
    assert main(["diff", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--gold", str(copy / "gold.yaml"),
                 "--strict-corpus"]) == 2


def test_a_judged_chunk_that_vanished_flags_the_same_queries(copy, capsys):
    expected = _judging(copy, CHUNK)
    _rewrite(copy / "corpus.jsonl", lambda rows: [r for r in rows if r["id"] != CHUNK])
    flagged, chunks = _flagged(capsys, copy)
    assert flagged == expected and chunks["vanished"] == [CHUNK] and chunks["changed"] == []
    code, err = _eval(capsys, copy, "--strict-corpus")
    assert code == 2 and "1 vanished" in err


def test_the_sidecar_is_found_from_the_label_file_and_a_stale_one_is_left_out(copy, capsys):
    sidecar = copy / "gold.yaml.ragdiff-snapshot.json"
    doc = json.loads(sidecar.read_text())
    named = set(load_gold(copy / "gold.yaml").judgments["chunk_id"].to_list())
    assert set(doc["chunks"]) == named and doc["corpus"]["chunks"] == 1148
    # a snapshot taken back leaves the sidecar of a sha the file no longer records: the whole corpus's sha rules
    gold = copy / "gold.yaml"
    gold.write_text(gold.read_text().replace("sha256: 6d2428c4", "sha256: 0d2428c4"))
    with (copy / "corpus.jsonl").open("a") as fh:
        fh.write('{"id": "zz-unrelated#0", "text": "x"}\n')
    code, err = _eval(capsys, copy, "--strict-corpus")
    assert code == 2 and "is not the snapshot" in err


def test_a_broken_sidecar_is_one_message(copy, capsys):
    (copy / "gold.yaml.ragdiff-snapshot.json").write_text("{not json")
    with (copy / "corpus.jsonl").open("a") as fh:
        fh.write('{"id": "zz-unrelated#0", "text": "x"}\n')
    code, err = _eval(capsys, copy, "--corpus", copy / "corpus.jsonl")
    assert code == 2 and "not a ragdiff chunk snapshot" in err and err.count("\n") == 1
