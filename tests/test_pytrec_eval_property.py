"""Random graded qrels and tie-free runs: every per-query value equals pytrec_eval's (trec_eval's C code)."""

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.gold import Gold
from ragdiff.core.metrics import EvalSettings, evaluate, parse_metric
from ragdiff.core.runs import Run, _order

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
CHUNKS = [f"d{i}" for i in range(30)]


@st.composite
def collections(draw):
    n_queries = draw(st.integers(1, 6))
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(CHUNKS), min_size=1, max_size=12, unique=True))
        qrels[qid] = {c: draw(st.integers(-1, 3)) for c in judged}
        returned = draw(st.lists(st.sampled_from(CHUNKS), min_size=0, max_size=20, unique=True))
        # distinct scores that a 32-bit float holds exactly: no ties, so both orderings agree
        scores = draw(st.lists(st.integers(0, 10_000), min_size=len(returned), max_size=len(returned), unique=True))
        if returned:
            run[qid] = {c: float(s) for c, s in zip(returned, scores)}
    threshold = draw(st.integers(1, 2))
    return qrels, run, threshold


def as_ragdiff(qrels, run):
    judgments = pl.DataFrame(
        [(q, c, g, "gold" if g > 0 else "not_relevant", None) for q, d in qrels.items() for c, g in d.items()],
        schema={"query_id": pl.String, "chunk_id": pl.String, "grade": pl.Int64, "level": pl.String,
                "line": pl.UInt32}, orient="row")
    queries = pl.DataFrame({"query_id": list(qrels), "text": list(qrels), "regression": [False] * len(qrels),
                            "position": list(range(len(qrels)))},
                           schema={"query_id": pl.String, "text": pl.String, "regression": pl.Boolean,
                                   "position": pl.UInt32})
    frame = pl.DataFrame(
        [(q, c, s, 0, i) for q, d in run.items() for i, (c, s) in enumerate(d.items())],
        schema={"query_id": pl.String, "chunk_id": pl.String, "score": pl.Float64, "rank": pl.UInt32,
                "line": pl.UInt32}, orient="row")
    return Gold(path=None, format="qrels", queries=queries, judgments=judgments), Run(
        name="r", path=None, format="trec", frame=_order(frame, True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_per_query_values_equal_pytrec_eval(data):
    qrels, run, threshold = data
    gold, ragdiff_run = as_ragdiff(qrels, run)
    names = {}
    for k in KS:
        names.update({f"P_{k}": f"precision@{k}", f"recall_{k}": f"recall_frac@{k}", f"success_{k}": f"recall@{k}",
                      f"ndcg_cut_{k}": f"ndcg@{k}"})
    names["recip_rank"] = "mrr"
    ev = evaluate(ragdiff_run, gold, EvalSettings(threshold=threshold), [parse_metric(m) for m in names.values()])
    ours = {row["query_id"]: row for row in ev.per_query.iter_rows(named=True)}
    cutoffs = ",".join(map(str, KS))
    measures = {f"P.{cutoffs}", f"recall.{cutoffs}", f"success.{cutoffs}", "recip_rank", f"ndcg_cut.{cutoffs}"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold)
    theirs = evaluator.evaluate(run)
    for qid, values in theirs.items():
        if qid not in ours:  # no relevant chunk: ragdiff leaves it out of the means on purpose
            assert not any(g >= threshold for g in qrels[qid].values())
            continue
        for trec_name, name in names.items():
            assert abs(ours[qid][name] - values[trec_name]) <= 1e-9, (qid, trec_name, ours[qid][name],
                                                                      values[trec_name])
    # queries the run lacks score 0 in ragdiff (trec_eval -c); pytrec_eval does not list them
    for qid in set(ours) - set(theirs):
        assert all(ours[qid][n] == 0 for n in names.values())
