"""`ragdiff bm25 GOLD --corpus C -o RUN.jsonl` (issue 31): a second retriever built in. On the sample set it gives
the shipped sample_runs/bm25.jsonl again (made by scripts/build_sample_runs.py with bm25s directly), less the
zero-score chunks that run padded with; its settings are written beside it."""

from __future__ import annotations

import json
from pathlib import Path

from ragdiff.cli.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_sample_run_again_and_its_settings(tmp_path, capsys):
    out = tmp_path / "bm25.jsonl"
    assert main(["bm25", str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "1,148 chunks for 72 queries" in said and "index" in said and "retrieve" in said
    mine, shipped = _lines(out), _lines(SAMPLE / "bm25.jsonl")
    assert [m["query_id"] for m in mine] == [s["query_id"] for s in shipped]
    for m, s in zip(mine, shipped):
        assert m["query"] == s["query"]
        assert m["results"] == [r for r in s["results"] if r["score"] > 0], m["query_id"]
    assert any(len(m["results"]) < 50 for m in mine)  # a query with few matching chunks is not padded
    settings = json.loads((tmp_path / "bm25.jsonl.settings.json").read_text())
    assert (settings["library"], settings["method"], settings["k1"], settings["b"], settings["stopwords"]) == \
        ("bm25s", "lucene", 1.5, 0.75, "en")
    assert "lower case" in settings["tokeniser"] and settings["stemmer"] is None and settings["depth"] == 50
    assert settings["corpus"]["sha256"] == "6d2428c41bd8054bf76a4a2bef55b55a3b608f2f9777560706e397172dab81ad"
    # the run is a run like any other: eval scores it
    assert main(["eval", str(out), "--gold", str(SAMPLE / "gold.yaml"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"][0]["metrics"]


def test_depth_and_bad_input(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["bm25", str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"), "--depth", "3",
                 "-o", str(out)]) == 0
    assert max(len(m["results"]) for m in _lines(out)) == 3
    capsys.readouterr()
    assert main(["bm25", str(SAMPLE / "gold.yaml"), "--corpus", str(SAMPLE / "corpus.jsonl"), "-o",
                 str(tmp_path / "run.trec")]) == 2
    assert "ending in .jsonl" in capsys.readouterr().err
    assert main(["bm25", str(SAMPLE / "gold.yaml"), "--corpus", str(tmp_path / "missing.jsonl"), "-o",
                 str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "Traceback" not in err
    qrels = tmp_path / "gold.qrels"
    qrels.write_text("q1 0 json#0 1\n")
    assert main(["bm25", str(qrels), "--corpus", str(SAMPLE / "corpus.jsonl"), "-o", str(tmp_path / "y.jsonl")]) == 2
    assert "no query has a text" in capsys.readouterr().err
    assert not (tmp_path / "y.jsonl").exists() and not (tmp_path / "x.jsonl").exists()


async def test_judge_bm25_pools_the_built_in_run_beside_the_runs_given(sample_runs, tmp_path):
    """`judge RUN --corpus C --bm25`: the team's one run plus BM25, pooled with no file step."""
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    from test_app_keys import demo_copy
    from test_app_pilot import SIZE
    from test_judge import opened

    folder = demo_copy(sample_runs, tmp_path)
    app = JudgeApp(JudgeInputs(runs=[folder / "dense.jsonl"], gold=folder / "gold.yaml", corpus=folder / "corpus.jsonl",
                               reviewer="tester", bm25=True))
    async with app.run_test(size=SIZE) as pilot:
        queue = (await opened(pilot)).queue
        assert queue.run_names == ("dense", "bm25")
        shipped = {r["query_id"]: [x["id"] for x in r["results"] if x["score"] > 0][:10]
                   for r in _lines(folder / "bm25.jsonl")}
        dense = {r["query_id"]: [x["id"] if isinstance(x, str) else x["id"] for x in r["results"]][:10]
                 for r in _lines(folder / "dense.jsonl")}
        for qid in ("q01", "q09", "q72"):
            pooled = {e.chunk_id for e in queue.entries[qid] if e.pooled}
            assert pooled == set(shipped[qid]) | set(dense[qid]), qid
    assert not list(folder.glob("*bm25*.settings.json"))  # no file made


def test_judge_bm25_needs_the_corpus(capsys):
    assert main(["judge", str(SAMPLE / "dense.jsonl"), "--gold", str(SAMPLE / "gold.yaml"), "--bm25"]) == 2
    assert "--corpus" in capsys.readouterr().err
