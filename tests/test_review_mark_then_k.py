"""After one mark, a k the model had not shown yet scores as a model built afresh on the same labels (found by
tests/test_app_model.py::test_random_marks_give_a_fresh_models_numbers): the mark gave q08 a ninth
relevant chunk, so the ideal rankings' deepest rank moved from 8 to 9, and ByK.with_query kept the plain sums
asked for at k=8 (which kept every row before the mark) and read them at k=9: ndcg@9 0.68609 against 0.68560."""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from ragdiff.app.model import ReviewModel
from ragdiff.core import vocab
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.marks import UNJUDGED, Change, Judgment
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run


def test_a_mark_at_k_8_then_k_9_scores_as_a_fresh_model(sample_runs):
    settings = EvalSettings(k=8, depth=30)
    run_a, run_b = load_run(sample_runs / "bm25.jsonl"), load_run(sample_runs / "dense.jsonl")
    gold = load_gold(sample_runs / "gold.yaml")
    model = ReviewModel(run_a, run_b, gold, settings)
    qid, chunk, after = "q08", "logging.captureWarnings#0", Judgment(vocab.GOLD, 1)
    kept = gold.judgments.filter(~((pl.col("query_id") == qid) & (pl.col("chunk_id") == chunk)))
    row = pl.DataFrame({"query_id": [qid], "chunk_id": [chunk], "grade": [after.grade], "level": [after.kind]})
    gold = replace(gold, judgments=pl.concat([kept, row.cast({c: gold.judgments.schema[c] for c in row.columns})],
                                             how="diagonal_relaxed"))
    model.apply_change(Change(qid, chunk, UNJUDGED, after, "", True))
    fresh = ReviewModel(run_a, run_b, gold, settings)
    for k in (8, 9):
        model.set_k(k)
        fresh.set_k(k)
        assert [(m.name, m.a, m.b) for m in model.header.metrics] == [(m.name, m.a, m.b) for m in fresh.header.metrics], k
