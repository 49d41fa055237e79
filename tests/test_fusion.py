"""`ragdiff fuse` (core/retrieval/fusion.py): every method x normalisation against ranx's definitions, re-implemented here
plainly from ranx 0.3's source (ranx/normalization/*.py, ranx/fusion/*.py: dicts and loops, numpy's mean and std
as ranx's numba code calls them); bench/fusion_vs_ranx.py compares against ranx itself. Then the shipped
sample rrf.jsonl, --optimize's cross-validation, and the bad inputs."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ragdiff.cli.main import main
from ragdiff.core.retrieval import fusion
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


# -------------------------------------------------------------------------------------------------------------
# ranx's definitions, plainly


def ranking(lines: list[tuple[str, str, float]]) -> dict[str, list[tuple[str, float]]]:
    """A TREC run's lines -> per query [(chunk, score)] best first: score descending, ties by chunk id
    descending (trec_eval's rule, which the ranx Run is sorted by here)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for qid, chunk, score in lines:
        out.setdefault(qid, []).append((chunk, score))
    return {q: sorted(sorted(r, key=lambda x: x[0], reverse=True), key=lambda x: -x[1]) for q, r in out.items()}


def ranx_norm(results: list[tuple[str, float]], norm: str) -> dict[str, float]:
    scores = np.array([s for _, s in results])
    if norm == "none":
        return dict(results)
    if norm == "minmax":
        low, high = scores.min(), scores.max()
        return {d: (s - low) / max(high - low, 1e-9) for d, s in results}
    if norm == "zscore":
        mean, std = np.mean(scores), np.std(scores)
        return {d: (s - mean) / max(std, 1e-9) for d, s in results}
    if norm == "rank":
        return {d: 1 - (i / len(results)) for i, (d, _) in enumerate(results)}
    raise AssertionError(norm)


def ranx_fuse(runs: list[dict], method: str, norm: str, weights: list[float], k: float) -> dict[str, dict[str, float]]:
    out = {}
    for qid in sorted(set().union(*runs)):
        present = [run.get(qid, []) for run in runs]
        if method == "rrf":
            normed = [{d: 1 / (k + i + 1) for i, (d, _) in enumerate(r)} for r in present]
        else:
            normed = [ranx_norm(r, norm) if r else {} for r in present]
        fused = {}
        for res in normed:
            for doc in res:
                if doc in fused:
                    continue
                if method in ("rrf", "combsum"):
                    fused[doc] = sum([r.get(doc, 0.0) for r in normed])
                elif method == "combmnz":
                    got = np.array([r[doc] for r in normed if doc in r])
                    fused[doc] = sum(got) * len(got)
                else:
                    fused[doc] = sum([weights[i] * r.get(doc, 0.0) for i, r in enumerate(normed)])
        out[qid] = fused
    return out


def random_runs(tmp_path: Path, seed: int) -> tuple[list[Path], list[list[tuple[str, str, float]]]]:
    rng = random.Random(seed)
    chunks = [f"d{i:02d}" for i in range(25)]
    paths, lines = [], []
    for r in range(3):
        rows = []
        for q in range(6):
            if r == 2 and q == 4:
                continue  # a query one run lacks: fused from the runs that have it
            for chunk in rng.sample(chunks, rng.randint(1, 15)):
                # some equal scores within a query (ties for the chunk id), some negative
                score = rng.choice([rng.uniform(-3, 10), float(rng.randint(0, 3))])
                rows.append((f"q{q}", chunk, score))
        path = tmp_path / f"run{r}.trec"
        path.write_text("".join(f"{q} Q0 {c} 0 {s!r} r{r}\n" for q, c, s in rows))
        paths.append(path)
        lines.append(rows)
    return paths, lines


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("norm", ["none", "minmax", "zscore", "rank"])
@pytest.mark.parametrize("method", ["rrf", "combsum", "combmnz", "wsum"])
def test_fusion_equals_ranx_definitions(tmp_path, method, norm, seed):
    paths, lines = random_runs(tmp_path, seed)
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    runs = [load_run(p) for p in paths]
    got = fusion.fuse(runs, method, norm, weights, rrf_k=60).frame
    theirs = ranx_fuse([ranking(rows) for rows in lines], method, norm, weights or [1.0] * 3, 60)
    assert sorted(set(got.get_column("query_id"))) == sorted(theirs)
    for qid, expected in theirs.items():
        mine = got.filter(pl.col("query_id") == qid)
        assert mine.get_column("rank").to_list() == list(range(1, len(expected) + 1))
        ids, scores = mine.get_column("chunk_id").to_list(), mine.get_column("score").to_list()
        assert sorted(ids) == sorted(expected)
        assert scores == pytest.approx([expected[d] for d in ids], rel=1e-12, abs=1e-12)
        # the order: ranx's scores descending, equal ones by chunk id descending
        for (d1, d2) in zip(ids, ids[1:]):
            s1, s2 = expected[d1], expected[d2]
            assert s1 > s2 or (s1 == s2 and d1 > d2), (qid, d1, s1, d2, s2)


def test_depth_cuts_the_inputs_and_the_output(tmp_path):
    paths, lines = random_runs(tmp_path, 7)
    runs = [load_run(p) for p in paths]
    cut = fusion.fuse(runs, "combsum", "minmax", depth=3).frame
    theirs = ranx_fuse([{q: r[:3] for q, r in ranking(rows).items()} for rows in lines], "combsum", "minmax",
                       [1.0] * 3, 60)
    for qid, expected in theirs.items():
        mine = cut.filter(pl.col("query_id") == qid)
        assert mine.height == min(3, len(expected))
        top = sorted(expected.values(), reverse=True)[:3]
        assert mine.get_column("score").to_list() == pytest.approx(top, rel=1e-12)


def test_rrf_of_the_sample_runs_is_the_shipped_rrf_up_to_its_tie_rule(tmp_path):
    """scripts/build_sample_runs.py's run_rrf: the same RRF (k = 60) of bm25 and dense, scores rounded to 6
    decimals, ties (after rounding) broken by chunk id ascending, top 50. ragdiff breaks ties by chunk id
    descending, so the orders differ inside ties only: re-sorted by the script's rule, equal."""
    out = tmp_path / "rrf.jsonl"
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--method", "rrf",
                 "-o", str(out)]) == 0
    ours = {r["query_id"]: r["results"] for r in map(json.loads, out.read_text().splitlines())}
    shipped = {r["query_id"]: r["results"] for r in map(json.loads, (SAMPLE / "rrf.jsonl").read_text().splitlines())}
    assert list(ours) == list(shipped)
    differ_in_ties = 0
    for qid, results in shipped.items():
        as_script = sorted(ours[qid], key=lambda r: (-round(r["score"], 6), r["id"]))[:50]
        assert [(r["id"], round(r["score"], 6)) for r in as_script] == [(r["id"], r["score"]) for r in results]
        differ_in_ties += [r["id"] for r in ours[qid][:50]] != [r["id"] for r in results]
    assert differ_in_ties > 0  # the tie rules do differ on this data: the re-sort above is doing work


# -------------------------------------------------------------------------------------------------------------
# --optimize


def test_optimize_cross_validates(tmp_path):
    gold = load_gold(SAMPLE / "gold.yaml")
    runs = [load_run(SAMPLE / "bm25.jsonl"), load_run(SAMPLE / "dense.jsonl")]
    metric = parse_metric("ndcg@10")
    result = fusion.optimize(runs, gold, metric, "wsum", "minmax", folds=5, seed=3)
    assert len(result.settings) == 11 and result.settings[0].weights == [0.0, 1.0]
    # every setting scored on its own, through fuse and evaluate
    values = np.vstack([
        evaluate(fusion.as_run(fusion.fuse(runs, "wsum", "minmax", s.weights), "f", Path("f")), gold,
                 EvalSettings(), [metric]).per_query.get_column(metric.name).to_numpy()
        for s in result.settings])
    assert result.in_sample == pytest.approx(values.mean(axis=1).max())
    assert result.chosen == result.settings[int(values.mean(axis=1).argmax())]
    held = np.empty(values.shape[1])
    for f in range(5):
        train = result.fold_of != f
        assert 0 < (~train).sum() < values.shape[1]
        best = int(values[:, train].mean(axis=1).argmax())
        assert result.fold_settings[f] == result.settings[best]
        held[~train] = values[best, ~train]
    assert result.cross_validated == pytest.approx(held.mean())
    assert result.single["bm25"] == pytest.approx(evaluate(runs[0], gold, EvalSettings(), [metric]).means["ndcg@10"])
    assert result.cross_validated <= result.in_sample + 1e-12


def test_optimize_cli_writes_the_run_chosen_on_all_queries(tmp_path, capsys):
    out = tmp_path / "fused.trec"
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--method", "rrf", "--optimize",
                 "--gold", str(SAMPLE / "gold.yaml"), "--folds", "4", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "in-sample" in text and "cross-validated" in text and "best" in text and "p = " in text
    chosen = float(text.split("the run written uses k ")[1].split(" ")[0])
    expected = fusion.fuse([load_run(SAMPLE / "bm25.jsonl"), load_run(SAMPLE / "dense.jsonl")], "rrf",
                           rrf_k=chosen).frame
    assert load_run(out).frame.select("query_id", "chunk_id", "rank").equals(
        expected.select("query_id", "chunk_id", "rank"))


def test_optimize_says_when_the_gain_is_inside_the_noise(tmp_path, capsys):
    """The same run twice: nothing to gain, every fused setting equals the single run."""
    out = tmp_path / "f.jsonl"
    copy = tmp_path / "bm25b.jsonl"
    copy.write_text((SAMPLE / "bm25.jsonl").read_text())
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(copy), "--method", "wsum", "--norm", "rank", "--optimize",
                 "--gold", str(SAMPLE / "gold.yaml"), "-o", str(out)]) == 0
    assert "inside the noise" in capsys.readouterr().out


# -------------------------------------------------------------------------------------------------------------
# bad input: one message, exit 2, nothing written


def _two() -> list[str]:
    return [str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl")]


@pytest.mark.parametrize("args, words", [
    (["--method", "wsum", "--weights", "0.5"], "--weights gives 1 weight for 2 runs"),
    (["--method", "wsum", "--weights", "0.5,nan"], "weight 2 is nan; expected a finite number >= 0"),
    (["--method", "wsum", "--weights", "inf,1"], "weight 1 is inf"),
    (["--method", "wsum", "--weights", "0.5,-1"], "weight 2 is -1.0; expected a finite number >= 0"),
    (["--method", "wsum", "--weights", "0,0"], "all 0"),
    (["--method", "rrf", "--weights", "1,1"], "--weights apply to --method wsum"),
    (["--optimize"], "--optimize chooses the weights on a gold set; expected --gold GOLD"),
    (["--optimize", "--method", "combsum", "--gold", str(SAMPLE / "gold.yaml")], "nothing to search"),
    (["--metric", "ndcg@10", "--gold", str(SAMPLE / "gold.yaml")], "--gold is read by --optimize only"),
])
def test_bad_options(tmp_path, capsys, args, words):
    out = tmp_path / "f.jsonl"
    assert main(["fuse", *_two(), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.count("\n") == 1
    assert not out.exists()


def test_fewer_queries_than_folds(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - {id: q01, text: a, gold: [json#0]}\n  - {id: q02, text: b, gold: [csv.reader#0]}\n")
    out = tmp_path / "f.jsonl"
    assert main(["fuse", *_two(), "--optimize", "--gold", str(gold), "--folds", "3", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--folds 3 with 2 scored queries; expected at least as many scored queries as folds" in err
    assert not out.exists()


def test_one_run_and_unknown_extension(tmp_path, capsys):
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), "-o", str(tmp_path / "f.jsonl")]) == 2
    assert "expected two or more runs" in capsys.readouterr().err
    assert main(["fuse", *_two(), "-o", str(tmp_path / "f.txt")]) == 2
    assert "cannot tell the format to write from the extension '.txt'" in capsys.readouterr().err


def test_runs_for_different_queries_are_fused_and_said(tmp_path, capsys):
    part = tmp_path / "dense_part.jsonl"
    part.write_text("".join(line + "\n" for line in (SAMPLE / "dense.jsonl").read_text().splitlines()
                            if json.loads(line)["query_id"] not in ("q03", "q07")))
    out = tmp_path / "f.jsonl"
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(part), "--method", "combsum", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "dense_part lacks 2 queries the other runs have (q03, q07): fused from the runs that have them" in err
    fused = load_run(out).frame
    bm25 = load_run(SAMPLE / "bm25.jsonl").frame
    # a query only bm25 has: its min-max normalised scores alone
    only = bm25.filter(pl.col("query_id") == "q03")
    low, high = only.get_column("score").min(), only.get_column("score").max()
    expected = {c: (s - low) / (high - low) for c, s in only.select("chunk_id", "score").iter_rows()}
    got = dict(fused.filter(pl.col("query_id") == "q03").select("chunk_id", "score").iter_rows())
    assert got == pytest.approx(expected)


def test_score_fusion_of_a_run_without_scores(tmp_path, capsys):
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"query_id": "q01", "results": ["json#0", "json.dumps#0"]}\n')
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(plain), "--method", "combsum", "-o",
                 str(tmp_path / "f.jsonl")]) == 2
    assert "has no score; expected scores for a score fusion" in capsys.readouterr().err
    # rank normalisation reads the order only
    assert main(["fuse", str(SAMPLE / "bm25.jsonl"), str(plain), "--method", "combsum", "--norm", "rank", "-o",
                 str(tmp_path / "f.jsonl")]) == 0
    assert math.isfinite(load_run(tmp_path / "f.jsonl").frame.get_column("score").sum())


def test_contributions_are_added_in_the_runs_order(tmp_path):
    """Rank normalisation makes sums equal in exact arithmetic common (0.8 + 0.65 + 0.33 = 0.82 + 0.96); added
    in another order than ranx's (run after run) they differ in the last bit and two chunks swap places."""
    rng = random.Random(32)
    paths, lines = [], []
    for r in range(3):
        rows = [(f"q{q}", f"d{c}", rng.uniform(-5, 20)) for q in range(60) for c in rng.sample(range(210), 70)]
        path = tmp_path / f"r{r}.trec"
        path.write_text("".join(f"{q} Q0 {c} 0 {s!r} r\n" for q, c, s in rows))
        paths.append(path)
        lines.append(rows)
    got = fusion.fuse([load_run(p) for p in paths], "combsum", "rank").frame
    theirs = ranx_fuse([ranking(rows) for rows in lines], "combsum", "rank", [1.0] * 3, 60)
    for qid, expected in theirs.items():
        mine = got.filter(pl.col("query_id") == qid)
        assert mine.get_column("score").to_list() == [expected[c] for c in mine.get_column("chunk_id")]
        assert mine.get_column("chunk_id").to_list() == [c for c, _ in sorted(
            sorted(expected.items(), reverse=True), key=lambda x: -x[1])]
