"""trec_eval's own fixtures (tests/conformance/, copied unchanged): ragdiff prints the same 4 decimals."""

from pathlib import Path

import pytest

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run

HERE = Path(__file__).parent / "conformance"

TREC_TO_RAGDIFF = {
    "P_5": "precision@5", "P_10": "precision@10",
    "recall_5": "recall_frac@5", "recall_10": "recall_frac@10",
    "success_1": "recall@1", "success_5": "recall@5", "success_10": "recall@10",
    "recip_rank": "mrr",
    "ndcg_cut_5": "ndcg@5", "ndcg_cut_10": "ndcg@10", "ndcg_cut_100": "ndcg@100", "ndcg_cut_1000": "ndcg@1000",
    "unj_5": "judged@5", "unj_10": "judged@10", "unj_20": "judged@20",
    "map": "map", "map_cut_5": "map@5", "map_cut_10": "map@10", "map_cut_100": "map@100", "map_cut_1000": "map@1000",
    "Rprec": "rprec", "ndcg": "ndcg", "bpref": "bpref",
}

# (expected output, qrels, run, threshold, topics whose unj differs by design: DESIGN.md's judged@k divides by
# what came back and leaves out queries with nothing returned; trec_eval's unj_k pads to k)
CASES = {
    "out.test.aq": ("qrels.test", "results.test", 1, set()),
    "out.test.aql": ("qrels.rel_level", "results.test", 2, set()),
    "out.test.aqc": ("qrels.test", "results.trunc", 1, {"302", "all"}),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", 1, set()),
}


def expected_values(name: str):
    for line in (HERE / name).read_text().splitlines():
        measure, topic, value = line.split()
        if measure in TREC_TO_RAGDIFF:
            yield measure, topic, float(value)


@pytest.mark.parametrize("out_file", sorted(CASES))
def test_trec_eval_fixture(out_file):
    qrels, results, threshold, unj_exempt = CASES[out_file]
    # out.comment.test's mean counts a topic with no relevant document as 0: trec_eval's convention, which
    # ragdiff offers as --unanswerable-as-zero (by default such a query is left out of the means and listed)
    settings = EvalSettings(threshold=threshold, unanswerable_as_zero=out_file == "out.comment.test")
    metrics = [parse_metric(m) for m in dict.fromkeys(TREC_TO_RAGDIFF.values())]
    ev = evaluate(load_run(HERE / results, fmt="trec"), load_gold(HERE / qrels, fmt="qrels"), settings, metrics)
    per_query = {row["query_id"]: row for row in ev.per_query.iter_rows(named=True)}
    checked = 0
    for measure, topic, value in expected_values(out_file):
        name = TREC_TO_RAGDIFF[measure]
        if measure.startswith("unj_"):
            if topic in unj_exempt:
                continue
            value = 1 - value
        got = ev.means[name] if topic == "all" else per_query[topic][name]
        assert f"{got:.4f}" == f"{value:.4f}", f"{out_file} {measure} {topic}: trec_eval {value:.4f}, ragdiff {got}"
        checked += 1
    assert checked >= 3


def test_fixture_counts_are_what_trec_eval_printed():
    """The query sets: -c keeps the topic missing from results.trunc; comment lines are skipped."""
    gold = load_gold(HERE / "qrels.test", fmt="qrels")
    ev = evaluate(load_run(HERE / "results.trunc", fmt="trec"), gold, EvalSettings())
    assert ev.queries.missing_from_run == ["302"]
    assert ev.per_query.filter(ev.per_query["query_id"] == "302")["mrr"].item() == 0.0
    run = load_run(HERE / "results.comment.test", fmt="trec")
    judged_topics = load_gold(HERE / "qrels.comment.test", fmt="qrels").queries["query_id"]
    # out.comment.test: num_ret 3100 over the topics the qrels know
    assert run.frame.filter(run.frame["query_id"].is_in(judged_topics.implode())).height == 3100


def test_unanswerable_left_out_by_default():
    gold = load_gold(HERE / "qrels.comment.test", fmt="qrels")
    ev = evaluate(load_run(HERE / "results.comment.test", fmt="trec"), gold, EvalSettings())
    assert ev.queries.unanswerable == ["2024-36302"]
    assert "2024-36302" not in ev.per_query["query_id"].to_list()
    assert len(ev.queries.scored) == 30
    # trec_eval's 0.8595 over 31 topics is 30/31 of ragdiff's mean over the 30 answerable ones
    assert f"{ev.means['mrr'] * 30 / 31:.4f}" == "0.8595"
