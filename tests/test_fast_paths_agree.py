"""Fast paths held to the plain ones on small random inputs and on edge cases the fixtures do not reach:
`ByK` (every k at once) against `metrics.score`, and the review model on a run with no judged row at all."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import score
from ragdiff.core.metrics.prepared import prepare
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.metrics.by_k import ByK
from ragdiff.core.io.runs import load_run
from tests.test_metrics_by_k import every_metric, same

HEADER = ("recall", "mrr", "ndcg", "precision", "judged")  # the review header's families (no rprec/bpref join)


def assert_by_k_is_score(run, gold, settings_: EvalSettings, ks) -> None:
    prepared = prepare(run, gold, settings_, unjudged_depth=0)
    by_k = ByK(prepared, settings_)
    for k in ks:
        at = replace(settings_, k=k)
        for metrics in (every_metric(k), [m for m in every_metric(k) if m.family in HEADER]):
            mine, theirs = by_k.score(at, metrics), score(prepared, at, metrics)
            assert mine.per_query.columns == theirs.per_query.columns
            for column in theirs.per_query.columns:
                assert mine.per_query.get_column(column).equals(theirs.per_query.get_column(column),
                                                                check_dtypes=True), (k, column)
            for m in metrics:
                assert same(mine.means[m.name], theirs.means[m.name]), (k, m.name)


def test_a_run_with_no_judged_row_in_any_scored_query_scores_at_every_k(tmp_path):
    """Every chunk run A returned is unlabelled (a retriever on a new chunking, or another id scheme): ByK has
    no judged row to run down and gives what metrics.score gives (0 everywhere, judged@k 0) — it raised a
    numpy broadcast error, and with it the review screen would not open; a run of only unscored queries too."""
    from ragdiff.app.model import ReviewModel

    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: q1\n    text: one\n    gold: [c0]\n  - id: q2\n    text: two\n    gold: [c1]\n")
    (tmp_path / "a.trec").write_text("q1 Q0 x1 1 0.9 a\nq2 Q0 x2 1 0.9 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 c0 1 0.9 b\nq2 Q0 y 1 0.9 b\n")
    (tmp_path / "c.trec").write_text("q9 Q0 c0 1 0.9 c\n")  # no query of the gold set at all
    labels = load_gold(gold)
    runs = {side: load_run(tmp_path / f"{side}.trec") for side in "abc"}
    for run in runs.values():
        assert_by_k_is_score(run, labels, EvalSettings(k=1, depth=5), range(1, 7))
    model = ReviewModel(runs["a"], runs["b"], labels, EvalSettings(k=5, depth=50))
    assert model.filter_counts()["miss_to_hit"] == 1 and model.filter_counts()["unjudged"] == 2
    assert model.visible("miss_to_hit") == ["q1"]


@st.composite
def small_sets(draw):
    """A qrels text and a TREC run: graded, judged not-relevant, negative (unjudged) and no labels, queries the
    run lacks, a run query the gold set lacks, tied scores, queries shorter and longer than the depth."""
    qrels, run = [], []
    for q in range(draw(st.integers(1, 6))):
        pool = draw(st.integers(1, 12))
        for c in range(pool):
            grade = draw(st.sampled_from([None, None, -1, 0, 1, 2, 3, 7]))
            if grade is not None:
                qrels.append(f"q{q} 0 c{c} {grade}")
        if q == 0 or draw(st.booleans()):
            chunks = draw(st.permutations(list(range(pool))))[: draw(st.integers(0, pool))]
            run += [f"q{q} Q0 c{c} {r} {draw(st.sampled_from([1.0, 0.5, 0.25, 0.1 * r]))} t"
                    for r, c in enumerate(chunks, 1)]
    if draw(st.booleans()):
        run.append("stray Q0 x 1 1 t")
    extra = draw(st.sampled_from([{}, {"judged_only": True}, {"unanswerable_as_zero": True}, {"gain": "exp"},
                                  {"threshold": 2}, {"threshold": 0},
                                  {"threshold": 3, "gain": "exp", "judged_only": True}]))
    return ("\n".join(qrels or ["q0 0 c0 1"]) + "\n", "\n".join(run or ["q0 Q0 c0 1 1 t"]) + "\n", extra,
            draw(st.integers(1, 15)))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=small_sets())
def test_by_k_is_score_on_small_random_sets(tmp_path_factory, case):
    qrels, run, extra, depth = case
    folder = tmp_path_factory.mktemp("by_k")
    (folder / "qrels.txt").write_text(qrels)
    (folder / "run.trec").write_text(run)
    assert_by_k_is_score(load_run(folder / "run.trec", "trec"), load_gold(folder / "qrels.txt", "qrels"),
                         EvalSettings(k=1, depth=depth, **extra), range(1, 18))
