"""The metric registry: every name and alias, trec_eval -c for unanswerable queries, and the CLI reading it."""

import json

import pytest

from ragdiff.cli.main import main
from ragdiff.core.metrics import SPECS, Metric, parse_metric


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def issue_repro(tmp_path):
    """The issue's repro: query a answerable and found, query b with nothing relevant."""
    qrels = write(tmp_path / "qrels.txt", "a 0 d1 1\nb 0 d1 0\n")
    run = write(tmp_path / "run.txt", "a Q0 d1 1 1.0 r\nb Q0 d1 1 1.0 r\n")
    return qrels, run


def eval_json(capsys, *argv):
    assert main(["eval", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("metric", ["recall_frac@5", "recall@5", "precision@1", "mrr", "ndcg@5", "ndcg", "map",
                                    "map@5", "rprec", "bpref"])
def test_unanswerable_as_zero_counts_the_query_as_zero(capsys, issue_repro, metric):
    """trec_eval -c on the repro gives 0.5 for every metric: query a scores 1, query b (nothing relevant) 0."""
    qrels, run = issue_repro
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", metric, "--unanswerable-as-zero")
    name = parse_metric(metric).name
    assert doc["runs"][0]["metrics"][name] == 0.5
    # without the flag, b is left out and listed
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", metric)
    assert doc["runs"][0]["metrics"][name] == 1.0
    assert doc["queries"]["unanswerable"] == ["b"]


def test_judged_is_measured_on_unanswerable_queries(capsys, issue_repro):
    qrels, run = issue_repro
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", "judged@5", "--unanswerable-as-zero", "--per-query")
    assert doc["runs"][0]["per_query"]["b"]["judged@5"] == 1.0


def test_cli_accepts_trec_eval_and_ir_measures_names(capsys, issue_repro):
    qrels, run = issue_repro
    names = "P_5,P@5,ndcg_cut_10,nDCG@10,recip_rank,RR,map,AP@100,Rprec,R@100,Judged@10,success_5,recall_5,bpref"
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", names)
    assert list(doc["runs"][0]["metrics"]) == list(dict.fromkeys(parse_metric(n).name for n in names.split(",")))
    assert "recall_frac@5" in doc["runs"][0]["metrics"] and "recall@5" in doc["runs"][0]["metrics"]


@pytest.mark.parametrize("text,message", [
    ("bogus@5", "unknown metric"), ("recall", "needs a cutoff"), ("P", "needs a cutoff"),
    ("rprec@5", "takes no cutoff"), ("bpref_10", "takes no cutoff"), ("map@0", "positive"),
])
def test_bad_metric_names_say_what_is_known(text, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(text)


def test_every_spec_round_trips_its_name_and_aliases():
    for family, spec in SPECS.items():
        ks = {"required": [7], "optional": [None, 7], "none": [None]}[spec.cutoff]
        for k in ks:
            metric = Metric(family, k)
            assert parse_metric(metric.name) == metric
            assert metric.label.startswith(spec.title)
        for alias in spec.aliases:
            if "{k}" in alias:
                assert parse_metric(alias.format(k=7)) == Metric(family, 7)
            else:
                assert parse_metric(alias) == Metric(family, None)
