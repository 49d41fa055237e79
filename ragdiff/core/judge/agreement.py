"""Agreement between two label files (`ragdiff labels agree A B`): on the (query, chunk) pairs both judged,
raw agreement, Cohen's kappa on gold / not gold, weighted kappa on the grades, the confusion table and the
disagreements (DESIGN.md, "Drafted labels, provenance, growing the set"; the lesson: read drafted labels).

A judgment's grade is the one it is scored with at the gold level (`Gold.qrels("gold")`): gold its grade
(1 when none is given), evidence and not relevant 0; a draft or a negative qrels grade is no judgment. The
weighted kappa's categories are every grade from 0 to the highest either file uses, weighted by how far apart
two grades are: linearly (|i - j|) and quadratically ((i - j)^2), Cohen 1968; scikit-learn's
`cohen_kappa_score(a, b, labels=range(top + 1), weights=...)` computes the same (tests/test_agreement.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from ragdiff.core import vocab
from ragdiff.core.labels.gold import Gold


@dataclass(frozen=True)
class Disagreement:
    query_id: str
    chunk_id: str
    a: str  # A's judgment in words, as vocab.word says it (gold ★2, evidence)
    b: str
    grade_a: int
    grade_b: int


@dataclass
class Agreement:
    overlap: int  # pairs both files judged
    only_a: int  # pairs only A judged
    only_b: int
    queries_both: int  # queries both files hold
    agreement: float | None  # share of the overlap with the same grade
    agreement_relevant: float | None  # share with the same gold / not gold
    kappa: float | None  # Cohen's kappa on gold / not gold; None where chance agreement is total
    weighted_kappa: dict[str, float | None]  # "linear", "quadratic" on the grades
    grades: list[int]  # the categories of the confusion table, 0..top
    confusion: list[list[int]]  # rows A's grade, columns B's
    disagreements: list[Disagreement]
    threshold: int

    def document(self) -> dict:
        return {
            "overlap": self.overlap, "only_a": self.only_a, "only_b": self.only_b, "queries_both": self.queries_both,
            "agreement": _round(self.agreement), "agreement_relevant": _round(self.agreement_relevant),
            "kappa": _round(self.kappa),
            "weighted_kappa": {k: _round(v) for k, v in self.weighted_kappa.items()},
            "threshold": self.threshold,
            "confusion": {"grades": self.grades, "rows_a_columns_b": self.confusion},
            "disagreements": [{"query_id": d.query_id, "chunk_id": d.chunk_id, "a": d.a, "b": d.b,
                               "grade_a": d.grade_a, "grade_b": d.grade_b} for d in self.disagreements],
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def judged(gold: Gold) -> pl.DataFrame:
    """query_id, chunk_id, grade (as scored at the gold level), word: every person's judgment in the file."""
    judgments = gold.judgments.filter(vocab.judged_rows())
    words = [vocab.word(level, grade) for level, grade in judgments.select("level", "grade").iter_rows()]
    grade = (pl.when(pl.col("level") == vocab.GOLD).then(pl.col("grade").fill_null(1)).otherwise(0)
             .cast(pl.Int64))
    return judgments.select("query_id", "chunk_id", grade.alias("grade")).with_columns(
        word=pl.Series(words, dtype=pl.String))


def kappa_from(confusion: np.ndarray, weights: np.ndarray) -> float | None:
    """Cohen's (weighted) kappa of a confusion table: 1 - sum(w * observed) / sum(w * expected), the expected
    table from the two margins; None when the expected disagreement is 0 (every pair in one category)."""
    total = confusion.sum()
    if total == 0:
        return None
    observed = confusion / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    denominator = (weights * expected).sum()
    if denominator <= 1e-15:
        return None
    return float(1.0 - (weights * observed).sum() / denominator)


def agree(a: Gold, b: Gold, threshold: int = 1) -> Agreement:
    ja, jb = judged(a), judged(b)
    both = ja.join(jb, on=["query_id", "chunk_id"], how="inner", suffix="_b")
    keys = ["query_id", "chunk_id"]
    only_a = ja.join(jb, on=keys, how="anti").height
    only_b = jb.join(ja, on=keys, how="anti").height
    queries_both = len(set(a.queries.get_column("query_id").to_list()) & set(b.queries.get_column("query_id").to_list()))
    ga, gb = both.get_column("grade").to_numpy(), both.get_column("grade_b").to_numpy()
    top = int(max(ga.max(initial=0), gb.max(initial=0), threshold))
    grades = list(range(top + 1))
    confusion = np.zeros((top + 1, top + 1), dtype=np.int64)
    np.add.at(confusion, (ga, gb), 1)
    relevant = np.zeros((2, 2), dtype=np.int64)
    np.add.at(relevant, ((ga >= threshold).astype(int), (gb >= threshold).astype(int)), 1)
    distance = np.abs(np.subtract.outer(np.arange(top + 1), np.arange(top + 1))).astype(float)
    n = len(ga)
    # in gold order: the first file's query order, then chunk id
    order = {q: i for i, q in enumerate(a.queries.sort("position").get_column("query_id").to_list())}
    differ = both.filter(pl.col("grade") != pl.col("grade_b")).with_columns(
        pos=pl.col("query_id").replace_strict(order, default=len(order), return_dtype=pl.Int64)
    ).sort("pos", "chunk_id")
    disagreements = [Disagreement(q, c, wa, wb, g1, g2) for q, c, g1, wa, g2, wb in
                     differ.select("query_id", "chunk_id", "grade", "word", "grade_b", "word_b").iter_rows()]
    return Agreement(
        overlap=n, only_a=only_a, only_b=only_b, queries_both=queries_both,
        agreement=float((ga == gb).mean()) if n else None,
        agreement_relevant=float(((ga >= threshold) == (gb >= threshold)).mean()) if n else None,
        kappa=kappa_from(relevant, 1.0 - np.eye(2)),
        weighted_kappa={"linear": kappa_from(confusion, distance), "quadratic": kappa_from(confusion, distance ** 2)},
        grades=grades, confusion=confusion.tolist(), disagreements=disagreements, threshold=threshold,
    )


def verdicts(run_a, run_b, golds: list[Gold], settings) -> tuple[list[dict], dict[str, bool]]:
    """`ragdiff diff RUN_A RUN_B`'s verdicts under each label file (the same metrics, settings and seeded test),
    and per metric whether they agree: the same verdict (gain, drop, inside the noise, same, by hand) with the
    change in the same direction."""
    from ragdiff.core.metrics.diff import compare
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import default_metrics

    metrics = default_metrics(settings.k, settings.depth, "diff")
    out = []
    for gold in golds:
        diff = compare(evaluate(run_a, gold, settings, metrics), evaluate(run_b, gold, settings, metrics), gold=gold,
                       detectable=False)
        out.append({m.name: {"a": _round(m.a), "b": _round(m.b), "delta": _round(m.delta),
                             "p_value": None if np.isnan(m.p_value) else _round(m.p_value), "verdict": m.verdict}
                    for m in diff.metrics})
    holds = {name: bool(out[0][name]["verdict"] == out[1][name]["verdict"]
                        and np.sign(out[0][name]["delta"] or 0) == np.sign(out[1][name]["delta"] or 0))
             for name in out[0] if name in out[1]}
    return out, holds
