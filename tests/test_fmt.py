"""The one number formatter's styles, the one JSON rounding rule, and the one table of default metrics."""

import math

import numpy as np

from ragdiff.core import fmt
from ragdiff.core.metrics.specs import default_metrics, parse_metric


def test_styles():
    assert [fmt.number(0.84751, s) for s in ("value", "eval", "short")] == ["0.848", "0.8475", "0.85"]
    assert [fmt.number(x, "delta") for x in (0.04, -0.02, 0.0004, -0.0004)] == ["+0.040", "-0.020", "0.000", "0.000"]
    assert fmt.number(0.866, "percent") == "87%" and fmt.number(-0.041, "points") == "-4 pts"
    assert [fmt.number(p, "p") for p in (0.0004, 0.0006, 0.0042, 0.012, 0.62)] == ["<0.001", "0.0006", "0.004",
                                                                                   "0.01", "0.62"]
    assert {fmt.number(v, s) for v in (None, math.nan) for s in fmt.STYLES} == {fmt.DASH}


def test_a_share_shows_as_a_percentage_and_its_change_in_points():
    judged, recall = parse_metric("judged@10"), parse_metric("recall@5")
    assert fmt.metric_number(judged, 0.94) == "94%" and fmt.metric_number(judged, 0.04, "delta") == "+4 pts"
    assert fmt.metric_number(recall, 0.94) == "0.940" and fmt.metric_number(recall, 0.04, "delta") == "+0.040"


def test_json_number():
    assert fmt.json_number(None) is None and fmt.json_number(math.nan) is None
    assert fmt.json_number(np.float64(1 / 3)) == 0.3333333333 and type(fmt.json_number(np.float32(0.5))) is float
    assert fmt.json_number(2) == 2.0


def test_default_metrics_per_command():
    names = {by: [m.name for m in default_metrics(5, 50, by)] for by in ("eval", "diff", "header")}
    assert names["eval"] == ["recall@5", "recall@50", "recall_frac@5", "precision@5", "mrr", "ndcg@5", "ndcg@50",
                             "judged@5"]
    assert names["diff"] == [n for n in names["eval"] if n != "ndcg@50"]
    assert names["header"] == ["recall@5", "mrr", "ndcg@5", "precision@5", "judged@5", "recall@50"]
    # depth == k: a metric at both is listed once
    assert [m.name for m in default_metrics(5, 5, "header")] == ["recall@5", "mrr", "ndcg@5", "precision@5",
                                                                 "judged@5"]
