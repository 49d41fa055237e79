"""The committed sample_runs/ are what the demo, the screenshots and the review-screen tests run on.

These checks read the files only (json, hashlib, PyYAML): no bm25s, no torch, no network.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
RUNS = ("bm25", "dense", "rrf")
DEPTH = 50
K = 5


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def corpus() -> dict[str, dict]:
    rows = _jsonl(SAMPLE / "corpus.jsonl")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate chunk ids in corpus.jsonl"
    return {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def gold() -> dict:
    with (SAMPLE / "gold.yaml").open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, list[str]]]:
    out = {}
    for name in RUNS:
        out[name] = {r["query_id"]: [x["id"] for x in r["results"]] for r in _jsonl(SAMPLE / f"{name}.jsonl")}
    return out


def _grades(entry: dict) -> dict[str, int]:
    g = entry.get("gold") or {}
    if isinstance(g, list):
        return {str(c): 1 for c in g}
    return {str(c): int(v) for c, v in g.items()}


def _judged(entry: dict) -> set[str]:
    return (set(_grades(entry)) | {str(c) for c in entry.get("evidence") or []}
            | {str(c) for c in entry.get("not_relevant") or []})


def test_corpus_shape(corpus):
    assert 1000 <= len(corpus) <= 3000
    assert (SAMPLE / "corpus.jsonl").stat().st_size < 5 * 1024 * 1024
    for cid, row in corpus.items():
        assert re.fullmatch(r"[A-Za-z_][\w.]*#\d+", cid), cid
        assert row["title"] == cid.split("#")[0]
        assert row["text"].strip()
        assert not re.search(r"0x[0-9a-fA-F]{6,}", row["text"]), f"memory address left in {cid}"


def test_gold_records_the_corpus_snapshot(gold):
    assert gold["corpus"]["path"] == "corpus.jsonl"
    assert gold["corpus"]["sha256"] == hashlib.sha256((SAMPLE / "corpus.jsonl").read_bytes()).hexdigest()


def test_gold_queries(gold):
    queries = gold["queries"]
    ids = [q["id"] for q in queries]
    assert len(queries) >= 50
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"q\d\d", i) for i in ids)
    unanswerable = [q["id"] for q in queries if not _grades(q)]
    assert len(unanswerable) >= 5
    regressions = [q["id"] for q in queries if q.get("regression") is True]
    assert 2 <= len(regressions) <= 3
    for q in queries:
        assert all(v in (1, 2, 3) for v in _grades(q).values()), q["id"]
        levels = [set(_grades(q)), {str(c) for c in q.get("evidence") or []},
                  {str(c) for c in q.get("not_relevant") or []}]
        assert not (levels[0] & levels[1] or levels[0] & levels[2] or levels[1] & levels[2]), q["id"]


def test_every_labelled_id_is_in_the_corpus(gold, corpus):
    missing = {q["id"]: sorted(_judged(q) - set(corpus)) for q in gold["queries"]}
    assert not {k: v for k, v in missing.items() if v}


def test_runs_have_depth_50_and_known_ids(gold, runs, corpus):
    query_ids = [q["id"] for q in gold["queries"]]
    texts = {q["id"]: q["text"] for q in gold["queries"]}
    for name in RUNS:
        rows = _jsonl(SAMPLE / f"{name}.jsonl")
        assert [r["query_id"] for r in rows] == query_ids, name
        for r in rows:
            assert r["query"] == texts[r["query_id"]]
            ids = [x["id"] for x in r["results"]]
            scores = [x["score"] for x in r["results"]]
            assert len(ids) == DEPTH, (name, r["query_id"])
            assert len(set(ids)) == DEPTH, (name, r["query_id"])
            assert set(ids) <= set(corpus), (name, r["query_id"])
            assert scores == sorted(scores, reverse=True), (name, r["query_id"])


def test_the_pool_was_read(gold, runs):
    """Every chunk in the merged top 10 of bm25 and dense carries a judgment (judged@10 = 1 for both)."""
    for q in gold["queries"]:
        pool = set(runs["bm25"][q["id"]][:10]) | set(runs["dense"][q["id"]][:10])
        assert pool <= _judged(q), (q["id"], sorted(pool - _judged(q)))


def test_bm25_and_dense_disagree_both_ways_at_k5(gold, runs):
    def hit(run, q):
        grades = _grades(q)
        return any(grades.get(c, 0) >= 1 for c in run[q["id"]][:K])

    answerable = [q for q in gold["queries"] if _grades(q)]
    a, b = runs["bm25"], runs["dense"]
    hit_to_miss = [q["id"] for q in answerable if hit(a, q) and not hit(b, q)]
    miss_to_hit = [q["id"] for q in answerable if not hit(a, q) and hit(b, q)]
    assert len(hit_to_miss) >= 5, hit_to_miss
    assert len(miss_to_hit) >= 5, miss_to_hit
