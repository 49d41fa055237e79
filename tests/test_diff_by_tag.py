"""`diff --by-tag`: each slice tested as diff tests the whole set (DESIGN.md, "Exports and reports"): the same
paired test and interval over the tag's queries, p-values Holm-adjusted across the tags, no verdict under thirty."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ragdiff.cli.main import main
from ragdiff.core.metrics.stats import EXACT_MAX, bootstrap_ci, exact_sign_flip_p, sign_flip_p
from ragdiff.core.io.choices import DEFAULT_FLIPS, DEFAULT_SEED

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
RUNS = [str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl")]


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    """sample_runs/gold.yaml with tags: `short` on q01–q40 (a slice of 40 queries, 37 scored or so), `few` on
    q05 and q06 (two queries: the -0.500 the issue saw), `odd` on the odd-numbered ones."""
    text = (SAMPLE / "gold.yaml").read_text()
    folder = tmp_path_factory.mktemp("tagged")
    (folder / "corpus.jsonl").symlink_to(SAMPLE / "corpus.jsonl")

    def tags(match: re.Match) -> str:
        n = int(match.group(1))
        found = [t for t, keep in (("short", n <= 40), ("few", n in (5, 6)), ("odd", n % 2 == 1)) if keep]
        return match.group(0) + (f"\n    tags: [{', '.join(found)}]" if found else "")

    out = folder / "gold.yaml"
    out.write_text(re.sub(r"  - id: q(\d+)[^\n]*", tags, text))
    return out


def _doc(capsys, gold: Path, *extra: str) -> dict:
    assert main(["diff", *RUNS, "--gold", str(gold), "--metrics", "recall@5,mrr", "--json", "--by-tag", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_tag_has_the_paired_test_of_its_queries_holm_adjusted(tagged, capsys):
    doc = _doc(capsys, tagged)
    tests = doc["by_tag_tests"]
    assert tests["p_adjustment"].startswith("Holm across the tags")
    per_tag = tests["runs"]["dense"]
    assert list(per_tag) == ["short", "odd", "few"]  # first seen in the file
    raw = {}
    for tag in per_tag:
        queries = doc["by_tag"]["bm25"][tag]["queries"]
        for metric in ("recall@5", "mrr"):
            a = doc["by_tag"]["bm25"][tag]["metrics"][metric]
            b = doc["by_tag"]["dense"][tag]["metrics"][metric]
            got = per_tag[tag][metric]
            assert got["n"] == len(queries)
            assert got["delta"] == pytest.approx(b - a, abs=1e-9)
            raw[(tag, metric)] = got["p_value"]
    # the test itself, from the per-query values of `eval --per-query`, by stats' functions as diff calls them
    assert main(["eval", *RUNS, "--gold", str(tagged), "--metrics", "recall@5,mrr", "--per-query", "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    values = {run["name"]: run["per_query"] for run in ev["runs"]}
    for tag in per_tag:
        queries = doc["by_tag"]["bm25"][tag]["queries"]
        for metric in ("recall@5", "mrr"):
            d = np.array([values["dense"][q][metric] - values["bm25"][q][metric] for q in queries])
            p = exact_sign_flip_p(d[None, :])[0] if len(d) <= EXACT_MAX else sign_flip_p(d[None, :], DEFAULT_FLIPS, DEFAULT_SEED)[0]
            assert per_tag[tag][metric]["p_value"] == pytest.approx(p, abs=1e-9)
            low, high = bootstrap_ci(d[None, :], DEFAULT_FLIPS, DEFAULT_SEED)[0]
            assert per_tag[tag][metric]["ci95"] == pytest.approx([low, high], abs=1e-9)
    # Holm across the three tags, metric by metric
    for metric in ("recall@5", "mrr"):
        ps = sorted((raw[(t, metric)], t) for t in per_tag)
        running = 0.0
        for i, (p, tag) in enumerate(ps):
            running = max(running, min(1.0, (3 - i) * p))
            assert per_tag[tag][metric]["p_adjusted"] == pytest.approx(running, abs=1e-9)


def test_under_thirty_queries_a_slice_gets_no_verdict(tagged, capsys):
    per_tag = _doc(capsys, tagged)["by_tag_tests"]["runs"]["dense"]
    assert per_tag["few"]["recall@5"]["n"] == 2
    assert {m["verdict"] for m in per_tag["few"].values()} == {"by hand"}
    assert "no verdict under 30 queries" in per_tag["few"]["mrr"]["sentence"]
    assert per_tag["short"]["mrr"]["n"] >= 30
    assert per_tag["short"]["mrr"]["verdict"] in ("gain", "drop", "noise", "same")


def test_text_shows_p_interval_and_verdict_per_tag(tagged, capsys):
    assert main(["diff", *RUNS, "--gold", str(tagged), "--metrics", "recall@5,mrr", "--by-tag"]) == 0
    out = capsys.readouterr().out
    assert "p Holm-adjusted across the tags" in out
    few = [line for line in out.splitlines() if line.lstrip().startswith("few") and "by hand" in line]
    assert few and "[" in few[0]


def test_default_output_unchanged_without_by_tag(tagged, capsys):
    doc = json.loads((lambda: (main(["diff", *RUNS, "--gold", str(tagged), "--json"]), capsys.readouterr().out))()[1])
    assert "by_tag_tests" not in doc and "by_tag" not in doc
