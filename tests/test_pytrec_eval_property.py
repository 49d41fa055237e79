"""Random graded qrels and runs (tie-free, and with ties): every per-query value equals pytrec_eval's (trec_eval's
C code), and with --unanswerable-as-zero every mean is trec_eval -c's."""

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.run_order import _order
from ragdiff.core.io.runs import Run
from counts import count

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
CHUNKS = [f"d{i}" for i in range(30)]


def trec_names() -> dict[str, str]:
    """trec_eval's measure (as pytrec_eval prints it) -> the ragdiff metric it is."""
    names = {}
    for k in KS:
        names.update({f"P_{k}": f"precision@{k}", f"recall_{k}": f"recall_frac@{k}", f"success_{k}": f"recall@{k}",
                      f"ndcg_cut_{k}": f"ndcg@{k}", f"map_cut_{k}": f"map@{k}"})
    names.update({"recip_rank": "mrr", "map": "map", "Rprec": "rprec", "ndcg": "ndcg", "bpref": "bpref"})
    return names


def trec_measures() -> set[str]:
    cutoffs = ",".join(map(str, KS))
    return {f"P.{cutoffs}", f"recall.{cutoffs}", f"success.{cutoffs}", f"ndcg_cut.{cutoffs}", f"map_cut.{cutoffs}",
            "recip_rank", "map", "Rprec", "ndcg"}


def pytrec_values(qrels, run, threshold, judged_only=False):
    """pytrec_eval's per-query values. bpref apart: trec_eval's m_bpref.c reads rel_levels[0 .. threshold-1],
    past the end of the array for a topic whose best grade is below threshold - 1 (it crashes pytrec_eval now
    and then); such a topic has nothing relevant, so its bpref is the loop's starting 0.0 — asked of trec_eval
    only for topics with something relevant."""
    theirs = pytrec_eval.RelevanceEvaluator(qrels, trec_measures(), relevance_level=threshold,
                                            judged_docs_only_flag=judged_only).evaluate(run)
    answerable = {q: d for q, d in qrels.items() if max(d.values()) >= threshold}
    bpref = (pytrec_eval.RelevanceEvaluator(answerable, {"bpref"}, relevance_level=threshold,
                                            judged_docs_only_flag=judged_only).evaluate(run)
             if answerable else {})
    for qid, values in theirs.items():
        values["bpref"] = bpref[qid]["bpref"] if qid in bpref else 0.0
    return theirs


@st.composite
def collections(draw, ties: bool = False):
    n_queries = draw(st.integers(1, 6))
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(CHUNKS), min_size=1, max_size=12, unique=True))
        qrels[qid] = {c: draw(st.integers(-1, 3)) for c in judged}
        # a topic whose every judgment is negative makes trec_eval's C code read past its rel_levels array
        # (pytrec_eval hangs or crashes); ragdiff calls it unanswerable. Keep one judgment of grade >= 0.
        if max(qrels[qid].values()) < 0:
            qrels[qid][judged[0]] = draw(st.integers(0, 3))
        returned = draw(st.lists(st.sampled_from(CHUNKS), min_size=0, max_size=20, unique=True))
        if ties:  # few distinct scores: ties broken by chunk id, descending, in both
            scores = draw(st.lists(st.integers(0, 3), min_size=len(returned), max_size=len(returned)))
        else:  # distinct scores that a 32-bit float holds exactly
            scores = draw(st.lists(st.integers(0, 10_000), min_size=len(returned), max_size=len(returned),
                                   unique=True))
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


def check_per_query(data, unanswerable_as_zero=False, judged_only=False):
    qrels, run, threshold = data
    gold, ragdiff_run = as_ragdiff(qrels, run)
    names = trec_names()
    ev = evaluate(ragdiff_run, gold, EvalSettings(threshold=threshold, unanswerable_as_zero=unanswerable_as_zero,
                                                  judged_only=judged_only),
                  [parse_metric(m) for m in names.values()])
    ours = {row["query_id"]: row for row in ev.per_query.iter_rows(named=True)}
    theirs = pytrec_values(qrels, run, threshold, judged_only)
    for qid, values in theirs.items():
        if qid not in ours:  # no relevant chunk: ragdiff leaves it out of the means on purpose
            assert not unanswerable_as_zero
            assert not any(g >= threshold for g in qrels[qid].values())
            continue
        for trec_name, name in names.items():
            assert abs(ours[qid][name] - values[trec_name]) <= 1e-9, (qid, trec_name, ours[qid][name],
                                                                      values[trec_name])
    # queries the run lacks score 0 in ragdiff (trec_eval -c); pytrec_eval does not list them
    for qid in set(ours) - set(theirs):
        assert all(ours[qid][n] == 0 for n in names.values())
    return ev, theirs, names


@settings(max_examples=count("RAGDIFF_PROPERTY_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_per_query_values_equal_pytrec_eval(data):
    check_per_query(data)


@settings(max_examples=count("RAGDIFF_PROPERTY_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(ties=True))
def test_per_query_values_equal_pytrec_eval_with_ties(data):
    check_per_query(data)


@settings(max_examples=count("RAGDIFF_PROPERTY_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(ties=True))
def test_judged_only_equals_trec_eval_J(data):
    """--judged-only: every per-query value is trec_eval -J's (unjudged chunks dropped, ranks closed up)."""
    check_per_query(data, judged_only=True)


def test_judged_only_closes_up_the_ranks():
    """One query by hand: an unjudged chunk above the only relevant one costs MRR 1/2, and nothing with
    --judged-only; a chunk judged 0 still counts as a miss (it is judged)."""
    qrels = {"q": {"rel": 1, "zero": 0}}
    for returned, plain, condensed in ((["new", "rel"], 0.5, 1.0), (["zero", "rel"], 0.5, 0.5),
                                       (["new", "zero", "new2", "rel"], 0.25, 0.5)):
        run = {"q": {c: float(len(returned) - i) for i, c in enumerate(returned)}}
        gold, ragdiff_run = as_ragdiff(qrels, run)
        for judged_only, expected in ((False, plain), (True, condensed)):
            ev = evaluate(ragdiff_run, gold, EvalSettings(judged_only=judged_only), [parse_metric("mrr")])
            assert ev.means["mrr"] == expected, (returned, judged_only)


@settings(max_examples=count("RAGDIFF_PROPERTY_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(ties=True))
def test_unanswerable_as_zero_means_equal_trec_eval_c(data):
    """trec_eval -c: the mean over every query the qrels know, a query the run lacks scoring 0 — and a query
    with no relevant chunk scored as trec_eval scores it (0, or nDCG from grades under the threshold)."""
    qrels, run, threshold = data
    ev, theirs, names = check_per_query(data, unanswerable_as_zero=True)
    assert ev.queries.scored == list(qrels)
    for trec_name, name in names.items():
        expected = sum(values[trec_name] for values in theirs.values()) / len(qrels)
        assert abs(ev.means[name] - expected) <= 1e-9, (trec_name, ev.means[name], expected)


def random_collection(seed: int, n_queries: int = 40):
    """A fixed random graded collection, tie-free runs, every topic with something judged >= 0."""
    import random

    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        judged = rng.sample(CHUNKS, rng.randint(1, 12))
        qrels[f"q{q}"] = {c: rng.randint(0, 3) for c in judged}
        returned = rng.sample(CHUNKS, rng.randint(1, 25))
        scores = rng.sample(range(10_000), len(returned))
        run[f"q{q}"] = {c: float(s) for c, s in zip(returned, scores)}
    return qrels, run


def ir_measures_judged(qrels, run, k):
    """ir_measures' Judged@k (providers/judged_provider.py): judged in the top k / min(k, returned)."""
    out = {}
    for qid, scores in run.items():
        top = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]
        out[qid] = sum(doc in qrels.get(qid, {}) for doc, _ in top) / min(k, len(top))
    return out


# (alias, the ragdiff metric it means, pytrec_eval's measure and key for it: trec_eval's own names, and
# ir_measures' names by the trec_eval measure ir_measures' pytrec_eval provider runs for them)
ALIASES = [
    ("P_5", "precision@5", "P.5", "P_5"), ("P@5", "precision@5", "P.5", "P_5"),
    ("recall_5", "recall_frac@5", "recall.5", "recall_5"), ("R@5", "recall_frac@5", "recall.5", "recall_5"),
    ("R@100", "recall_frac@100", "recall.100", "recall_100"),
    ("success_5", "recall@5", "success.5", "success_5"), ("Success@5", "recall@5", "success.5", "success_5"),
    ("recip_rank", "mrr", "recip_rank", "recip_rank"), ("RR", "mrr", "recip_rank", "recip_rank"),
    ("ndcg_cut_10", "ndcg@10", "ndcg_cut.10", "ndcg_cut_10"), ("nDCG@10", "ndcg@10", "ndcg_cut.10", "ndcg_cut_10"),
    ("ndcg", "ndcg", "ndcg", "ndcg"), ("nDCG", "ndcg", "ndcg", "ndcg"),
    ("map", "map", "map", "map"), ("AP", "map", "map", "map"), ("MAP", "map", "map", "map"),
    ("map_cut_100", "map@100", "map_cut.100", "map_cut_100"), ("AP@100", "map@100", "map_cut.100", "map_cut_100"),
    ("Rprec", "rprec", "Rprec", "Rprec"), ("bpref", "bpref", "bpref", "bpref"), ("Bpref", "bpref", "bpref", "bpref"),
    ("Judged@10", "judged@10", None, None),
]


@pytest.mark.parametrize("alias,meaning,measure,key", ALIASES, ids=[a[0] for a in ALIASES])
@pytest.mark.parametrize("threshold", [1, 2])
def test_alias_gives_its_own_meaning(alias, meaning, measure, key, threshold):
    assert parse_metric(alias) == parse_metric(meaning)
    qrels, run = random_collection(seed=14)
    gold, ragdiff_run = as_ragdiff(qrels, run)
    metric = parse_metric(alias)
    ev = evaluate(ragdiff_run, gold, EvalSettings(threshold=threshold, unanswerable_as_zero=True), [metric])
    ours = dict(ev.per_query.select("query_id", metric.name).iter_rows())
    if measure is None:
        theirs = ir_measures_judged(qrels, run, metric.k)
    else:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=threshold)
        theirs = {q: v[key] for q, v in evaluator.evaluate(run).items()}
    assert set(ours) == set(theirs)
    assert any(v > 0 for v in theirs.values()) and len(set(theirs.values())) > 1  # a test that can fail
    for qid, value in theirs.items():
        assert abs(ours[qid] - value) <= 1e-9, (alias, qid, ours[qid], value)


def test_recall_underscore_is_trec_eval_recall_not_success():
    """The issue's trap: `recall_5` read as recall@5 gives a plausible wrong number (0.509 vs trec_eval 0.075)."""
    assert parse_metric("recall_5").name == "recall_frac@5"
    assert parse_metric("recall@5").name == "recall@5"
    assert parse_metric("success_5").name == "recall@5"
    assert parse_metric("R@5").name == "recall_frac@5"
