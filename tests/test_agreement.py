"""`ragdiff labels agree A B` (core/judge/agreement.py): overlap, agreement, Cohen's kappa and weighted kappa, checked
against a plain reference and scikit-learn's cohen_kappa_score; the disagreements; diff's verdict under each."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from ragdiff.cli.main import main
from ragdiff.core.judge.agreement import agree
from ragdiff.core.labels.gold import load_gold


def write_labels(path, grades: dict[tuple[str, str], int | str]) -> None:
    """grades: (query, chunk) -> 0 (not relevant), 1-3 (gold) or "e" (evidence)."""
    queries: dict[str, dict] = {}
    for (q, c), g in grades.items():
        entry = queries.setdefault(q, {"id": q, "text": f"text of {q}"})
        if g == "e":
            entry.setdefault("evidence", []).append(c)
        elif g == 0:
            entry.setdefault("not_relevant", []).append(c)
        else:
            entry.setdefault("gold", {})[c] = g
    path.write_text(yaml.safe_dump({"queries": list(queries.values())}, sort_keys=False))


def reference_kappa(a, b, categories, weight) -> float:
    """Cohen (1968), written out: 1 - sum w_ij o_ij / sum w_ij e_ij over the categories."""
    n = len(a)
    observed = {(i, j): 0 for i in categories for j in categories}
    for x, y in zip(a, b):
        observed[x, y] += 1
    row = {i: sum(1 for x in a if x == i) for i in categories}
    col = {j: sum(1 for y in b if y == j) for j in categories}
    num = sum(weight(i, j) * observed[i, j] / n for i in categories for j in categories)
    den = sum(weight(i, j) * row[i] * col[j] / n / n for i in categories for j in categories)
    return 1 - num / den


@pytest.mark.parametrize("seed", range(8))
def test_kappas_equal_the_reference_and_scikit_learn_on_random_label_pairs(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    top = int(rng.integers(1, 4))
    truth = rng.integers(0, top + 1, size=n)
    noisy = np.where(rng.random(n) < 0.6, truth, rng.integers(0, top + 1, size=n))  # agree more than chance
    pairs = [(f"q{i % 13}", f"c{i}") for i in range(n)]
    write_labels(tmp_path / "a.yaml", {p: int(g) for p, g in zip(pairs, truth)} | {("q0", "only-a"): 1})
    write_labels(tmp_path / "b.yaml", {p: int(g) for p, g in zip(pairs, noisy)} | {("q1", "only-b"): 0})
    result = agree(load_gold(tmp_path / "a.yaml"), load_gold(tmp_path / "b.yaml"))
    assert (result.overlap, result.only_a, result.only_b) == (n, 1, 1)
    # the result is in its own order (joined): compare it as multisets through the confusion table
    confusion = np.array(result.confusion)
    expected = np.zeros_like(confusion)
    np.add.at(expected, (truth, noisy), 1)
    assert (confusion == expected).all()
    labels = list(range(top + 1))
    for name, weight, power in (("linear", "linear", 1), ("quadratic", "quadratic", 2)):
        ours = result.weighted_kappa[name]
        assert ours == pytest.approx(cohen_kappa_score(truth, noisy, labels=labels, weights=weight), abs=1e-12)
        assert ours == pytest.approx(reference_kappa(list(truth), list(noisy), labels,
                                                     lambda i, j: abs(i - j) ** power), abs=1e-12)
    assert result.kappa == pytest.approx(cohen_kappa_score(truth >= 1, noisy >= 1), abs=1e-12)
    assert result.kappa == pytest.approx(reference_kappa(list(truth >= 1), list(noisy >= 1), [False, True],
                                                         lambda i, j: float(i != j)), abs=1e-12)
    assert result.agreement == pytest.approx((truth == noisy).mean())
    assert len(result.disagreements) == int((truth != noisy).sum())


def test_evidence_counts_as_grade_0_and_disagreements_name_both_judgments(tmp_path, capsys):
    write_labels(tmp_path / "a.yaml", {("q1", "x"): 3, ("q1", "y"): "e", ("q2", "z"): 0, ("q2", "w"): 2})
    write_labels(tmp_path / "b.yaml", {("q1", "x"): 1, ("q1", "y"): 0, ("q2", "z"): 0, ("q2", "w"): 2})
    code = main(["labels", "agree", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"overlap", "agreement", "kappa", "weighted_kappa", "disagreements"} <= set(doc)
    assert doc["overlap"] == 4 and doc["agreement"] == 0.75  # evidence and not relevant are both grade 0
    assert doc["disagreements"] == [{"query_id": "q1", "chunk_id": "x", "a": "gold ★3", "b": "gold ★1",
                                     "grade_a": 3, "grade_b": 1}]
    assert doc["kappa"] == 1.0  # gold / not gold: all four agree
    assert "verdicts" not in doc


def test_text_output_lists_the_table_and_the_disagreements(tmp_path, capsys):
    write_labels(tmp_path / "a.yaml", {("q1", "x[red]"): 3, ("q1", "y"): 0})
    write_labels(tmp_path / "b.yaml", {("q1", "x[red]"): 0, ("q1", "y"): 0})
    assert main(["labels", "agree", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 0
    out = capsys.readouterr().out
    assert "2 pairs judged in both" in out and "x[red]" in out and "gold ★3" in out and "not relevant" in out
    assert "weighted kappa" in out


def test_zero_overlap_is_a_clear_message_and_exit_2(tmp_path, capsys):
    write_labels(tmp_path / "a.yaml", {("q1", "x"): 1})
    write_labels(tmp_path / "b.yaml", {("q2", "x"): 1})
    code = main(["labels", "agree", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "no (query, chunk) pair in common" in captured.err and "a.yaml" in captured.err


def test_runs_say_whether_the_verdict_holds_under_either_file(sample_runs, tmp_path, capsys):
    labels = yaml.safe_load((sample_runs / "gold.yaml").read_text())
    # B demotes every gold chunk dense ranks first to not relevant: dense loses under B, not under A
    dense = {}
    for line in (sample_runs / "dense.jsonl").read_text().splitlines():
        record = json.loads(line)
        dense[record["query_id"]] = [r["id"] if isinstance(r, dict) else r for r in record["results"]]
    for query in labels["queries"]:
        gold = query.get("gold") or {}
        if isinstance(gold, dict) and dense.get(query["id"]) and dense[query["id"]][0] in gold:
            chunk = dense[query["id"]][0]
            del gold[chunk]
            query.setdefault("not_relevant", []).append(chunk)
    b = tmp_path / "b.yaml"
    b.write_text(yaml.safe_dump(labels, sort_keys=False))
    runs = [str(sample_runs / "bm25.jsonl"), str(sample_runs / "dense.jsonl")]
    code = main(["labels", "agree", str(sample_runs / "gold.yaml"), str(b), "--runs", *runs, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and set(doc["verdicts"]) == {"a", "b"}
    assert doc["verdicts"]["a"]["mrr"]["verdict"] != "drop" and doc["verdicts"]["b"]["mrr"]["verdict"] == "drop"
    assert doc["verdict_holds"] is False and doc["verdict_holds_by_metric"]["mrr"] is False
    code = main(["labels", "agree", str(sample_runs / "gold.yaml"), str(sample_runs / "gold.yaml"), "--runs", *runs,
                 "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict_holds"] is True and doc["kappa"] == 1.0 and doc["disagreements"] == []
