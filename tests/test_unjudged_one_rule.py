"""One notion of "unjudged", read by the core and the review screen alike.

- A chunk is unjudged when it carries no judgment of grade >= 0: a negative qrels grade is unjudged, as in
  trec_eval (metrics.judged_pairs for frames, vocab.kind_of(level, grade) for one judgment). The review's ranked
  list drew such a row's id dimmed as "judged not relevant" beside its unjudged `?`, the HTML report gave it
  the not-relevant class; both now take the kind from vocab.kind_of.
- A query is in the review's unjudged@k filter when a scored query's top k holds an unjudged chunk in either
  run: the queries diff's unjudged check and the bounds count (metrics.unjudged_in), those judged@k < 1 is
  about. An unanswerable query is left out of every score (DESIGN), so its unjudged chunks move no number; it
  has its own filter. The review listed it under unjudged@k too, while the header's judged@k and the core
  left it out; with --unanswerable-as-zero it is scored, and listed by both.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragdiff.app.model import ReviewModel
from ragdiff.core import vocab
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, Mark
from ragdiff.core.metrics.bounds import unjudged_in
from ragdiff.core.metrics.prepared import prepare
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run

GOLD = """queries:
  - id: q1
    text: one
    gold: [c1]
    evidence: [c3]
    not_relevant: [c2]
  - id: q2
    text: two
    gold: []
    not_relevant: [x]
  - id: q3
    text: three
    gold: [d1]
  - id: q4
    text: four
    gold: [e1]
"""
RUN_A = ("q1 Q0 c1 1 0.9 a\nq1 Q0 c2 2 0.8 a\nq1 Q0 c3 3 0.7 a\nq2 Q0 u2 1 0.9 a\nq2 Q0 u3 2 0.85 a\n"
         "q2 Q0 x 3 0.8 a\nq3 Q0 d1 1 0.9 a\nq3 Q0 d2 2 0.5 a\nq4 Q0 e1 1 0.9 a\n")
RUN_B = "q1 Q0 c1 1 0.9 b\nq2 Q0 x 1 0.9 b\nq3 Q0 d1 1 0.9 b\nq4 Q0 e1 1 0.9 b\nq4 Q0 e9 2 0.8 b\n"
NEGATIVE = "q1 0 c1 1\nq1 0 c2 -1\nq3 0 d1 1\nq3 0 d2 -1\nq4 0 e1 1\nq2 0 x -1\n"


def core_unjudged(run_a, run_b, gold, settings) -> list[str]:
    """The core's queries with an unjudged chunk in the top k of either run, in gold order."""
    found = set()
    for run in (run_a, run_b):
        found |= set(unjudged_in(prepare(run, gold, settings), settings.k).get_column("query_id").to_list())
    return [q for q in gold.queries.sort("position").get_column("query_id").to_list() if q in found]


def review_unjudged(run_a, run_b, gold, settings) -> list[str]:
    model = ReviewModel(run_a, run_b, gold, settings)
    model.set_k(settings.k)
    return model.visible("unjudged")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "gold.yaml").write_text(GOLD)
    (tmp_path / "neg.qrels").write_text(NEGATIVE)
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    return tmp_path


@pytest.mark.parametrize("gold_file", ["gold.yaml", "neg.qrels"])
@pytest.mark.parametrize("extra", [{}, {"unanswerable_as_zero": True}, {"level": "evidence"}, {"threshold": 2}],
                         ids=["default", "unanswerable-as-zero", "evidence", "threshold-2"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_the_review_unjudged_filter_lists_the_queries_the_core_counts(files, gold_file, extra, k):
    gold = load_gold(files / gold_file)
    settings = EvalSettings(k=k, depth=50, **extra)
    run_a, run_b = load_run(files / "a.trec"), load_run(files / "b.trec")
    assert review_unjudged(run_a, run_b, gold, settings) == core_unjudged(run_a, run_b, gold, settings)


def test_an_unanswerable_query_is_listed_once_a_mark_makes_it_scored(files):
    """q2 is unanswerable (gold: []) with u2, u3 unjudged in A's top 2: not in unjudged@k; u2 marked gold makes
    it answerable, so scored, and u3 is then an unjudged chunk that counts: listed, as the core says."""
    path = files / "gold.yaml"
    settings = EvalSettings(k=2, depth=50)
    run_a, run_b = load_run(files / "a.trec"), load_run(files / "b.trec")
    model = ReviewModel(run_a, run_b, load_gold(path), settings)
    model.set_k(2)
    assert "q2" not in model.visible("unjudged") and "q2" in model.visible("unanswerable")
    change = LabelFile(path).apply(Mark("q2", "u2", "gold", 2))
    model.apply_change(change)
    model.set_k(2)
    assert "q2" in model.visible("unjudged")
    assert model.visible("unjudged") == core_unjudged(run_a, run_b, load_gold(path), settings)


def test_a_negative_grade_is_unjudged_in_every_place_that_draws_or_counts_it(files):
    from ragdiff.app.widgets.ranked_list import id_class, label_cell
    from ragdiff.core.report.html_page import _row
    from ragdiff.core.judge.pool import JudgeQueue

    assert vocab.kind_of(vocab.NOT_RELEVANT, -1).name == vocab.UNJUDGED
    assert vocab.kind_of(vocab.NOT_RELEVANT, 0).name == vocab.NOT_RELEVANT
    assert vocab.kind_of(vocab.GOLD, 2).name == vocab.GOLD and vocab.kind_of(None).name == vocab.UNJUDGED
    gold = load_gold(files / "neg.qrels")
    run_a, run_b = load_run(files / "a.trec"), load_run(files / "b.trec")
    model = ReviewModel(run_a, run_b, gold, EvalSettings(k=5, depth=50))
    rows = {row.chunk_id: row for row in model.ranked("q3", "a")}
    minus = rows["d2"]
    assert (minus.level, minus.grade) == (vocab.NOT_RELEVANT, -1)  # as labelled: the qrels line's grade
    # the list: glyph and id drawn as an unjudged row's, not as a judged-not-relevant one's
    assert label_cell(minus.level, minus.grade, minus.relevant) == label_cell(None, None, False)
    assert id_class(minus) == id_class(replace(minus, level=None, grade=None)) != id_class(replace(minus, grade=0))
    assert vocab.word(minus.level, minus.grade) == "unjudged (grade -1)"
    # the report page: the unjudged class
    html = _row({"level": minus.level, "grade": minus.grade, "relevant": False, "rank": 2, "chunk_id": "d2",
                 "score": 0.5}, "B", None, {})
    assert html.startswith('<li class="unjudged">')
    # the judging queue: still to judge
    queue = JudgeQueue.build([run_a, run_b], gold, depth=10)
    assert not queue.is_judged("q3", "d2") and queue.is_judged("q3", "d1")
