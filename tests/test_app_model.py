"""The review screen's view-model and helpers, without Textual."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.model import FILTERS, ReviewModel
from ragdiff.app.query_labels import labels_frame
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.core.metrics.diff import flips
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run


def make_model(paths, k=3, depth=50):
    return ReviewModel(load_run(paths["a"]), load_run(paths["b"]), load_gold(paths["gold"]),
                       EvalSettings(k=k, depth=depth))


def test_lesson_numbers_in_the_header(tmp_path):
    """The lesson's own dicts, as JSON files: recall@1 .33, recall@3 1.00, MRR .56 (DESIGN.md)."""
    gold = {"refund window for ebooks": ["policy-14"], "return an unopened blender": ["policy-15"],
            "who approves expenses over 5k": ["finance-3", "finance-4"]}
    runs = {"refund window for ebooks": ["policy-14", "policy-2", "policy-9"],
            "return an unopened blender": ["policy-2", "policy-9", "policy-15"],
            "who approves expenses over 5k": ["hr-1", "finance-9", "finance-3"]}
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    (tmp_path / "run.json").write_text(json.dumps(runs))
    run = load_run(tmp_path / "run.json")
    model = ReviewModel(run, run, load_gold(tmp_path / "gold.json"), EvalSettings(k=1, depth=3))
    by_name = {m.name: m for m in model.header.metrics}
    assert round(by_name["recall@1"].a, 2) == 0.33
    assert round(by_name["mrr"].a, 2) == 0.56
    model.set_k(3)
    assert {m.name: m for m in model.header.metrics}["recall@3"].a == 1.0
    assert model.header.scored == 3 and model.header.unanswerable == 0


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_flips_and_filters_match_the_core(lesson, k):
    model = make_model(lesson, k=k)
    ev_a = evaluate(model.run_a, model.gold, model.settings, model.metrics)
    ev_b = evaluate(model.run_b, model.gold, model.settings, model.metrics)
    h2m, m2h = flips(ev_a, ev_b, k)
    assert model.visible("hit_to_miss") == h2m
    assert model.visible("miss_to_hit") == m2h
    assert model.visible("unanswerable") == ["q4"]
    # flipped first, then the rest in gold order
    assert model.visible("all") == h2m + m2h + [q for q in ["q1", "q2", "q3", "q4"] if q not in h2m + m2h]
    counts = model.filter_counts()
    assert set(counts) == {key for key, _ in FILTERS}
    assert counts["hit_to_miss"] == len(h2m) and counts["all"] == 4
    for metric in model.header.metrics:
        assert metric.a == pytest.approx(ev_a.means[metric.name], nan_ok=True)
        assert metric.b == pytest.approx(ev_b.means[metric.name], nan_ok=True)


def test_lesson_flips_at_k(lesson):
    model = make_model(lesson, k=3)
    assert model.visible("hit_to_miss") == ["q1"] and model.visible("miss_to_hit") == []
    model.set_k(1)
    assert model.visible("hit_to_miss") == ["q1"] and model.visible("miss_to_hit") == ["q2", "q3"]
    model.set_k(4)
    assert model.visible("hit_to_miss") == [] and model.visible("miss_to_hit") == []
    recall = model.header.metrics[0]
    assert recall.name == "recall@4" and recall.worth == 0


def test_rows_labels_and_other_rank(lesson):
    model = make_model(lesson, k=3)
    rows = model.rows_for("q1", "b")
    assert [r.chunk_id for r in rows] == ["policy-31", "policy-2", "policy-9", "policy-14"]
    assert [r.level for r in rows] == [None, None, "not_relevant", "gold"]  # unjudged, unjudged, judged 0, gold
    assert rows[3].grade == 3 and rows[3].relevant
    assert [r.other_rank for r in rows] == [None, 2, 3, 1]
    assert rows[0].score == pytest.approx(0.91)
    # A's lesson run has no scores
    assert all(r.score is None for r in model.rows_for("q1", "a"))
    missed = model.missed_gold("q1", "b")
    assert [(m.chunk_id, m.rank) for m in missed] == [("policy-14", 4)]
    missed_a = model.missed_gold("q3", "a")
    assert [(m.chunk_id, m.rank) for m in missed_a] == [("finance-4", None)]  # not retrieved
    assert model.missed_gold("q4", "a") == []
    assert model.rows["q4"].unanswerable and model.rows["q4"].hit_a is None


def test_unjudged_filter_and_depth(lesson):
    model = make_model(lesson, k=3, depth=2)
    assert "q1" in model.visible("unjudged")  # policy-31 and policy-2 are unjudged in B's top 3
    assert [r.rank for r in model.rows_for("q1", "b")] == [1, 2]  # rows shown down to depth only
    assert model.rows["q1"].unjudged_b == 2


def test_sort_and_search(lesson):
    model = make_model(lesson, k=3)
    by_rr = model.visible("all", "delta_rr")
    assert by_rr[0] == "q1"  # B lost the most reciprocal rank on q1 (1 → 1/4)
    assert by_rr[-1] == "q4"  # unanswerable: no value, last
    assert model.visible("all", "flips", "BLENDER") == ["q2"]
    assert model.visible("all", "flips", "q3") == ["q3"]


def test_set_gold_recomputes(lesson):
    model = make_model(lesson, k=3)
    text = lesson["gold"].read_text().replace("gold: {policy-14: 3}", "gold: {policy-14: 3, policy-31: 2}")
    lesson["gold"].write_text(text)
    model.set_gold(load_gold(lesson["gold"]))
    assert model.visible("hit_to_miss") == []
    row = model.rows_for("q1", "b")[0]
    assert row.level == "gold" and row.grade == 2


def test_verdicts_under_30_queries_are_by_hand(lesson):
    model = make_model(lesson)
    assert not model.header.verdicts_ready
    model.compute_verdicts()
    assert model.header.verdicts_ready and model.header.by_hand


def test_clean_makes_control_characters_visible():
    assert clean("a\x1b[31mb") == "a\u241b[31mb"
    assert clean("x\ny") == "x\u240ay"
    assert clean("x\ny", multiline=True) == "x\ny"
    assert clean("\x9b") == "\\x9b"
    text = literal("[bold]x[/] \x1b[31m")
    assert text.plain == "[bold]x[/] \u241b[31m" and not text.spans


def test_query_words_marked():
    words = query_words("Who approves the expenses over 5k?")
    assert "the" not in words and "approves" in words and "5k" in words
    text = mark_words(literal("The CFO approves expenses."), words, "bold")
    marked = {text.plain[s.start:s.end] for s in text.spans}
    assert marked == {"approves", "expenses"}


def test_query_words_marked_on_the_texts_own_characters_when_folding_changes_length():
    """ß folds to two letters, İ to two code points: the marks are the matched characters of the text."""
    words = query_words("Refund at the STRASSE")
    text = mark_words(literal("ßßßß İİ Straße: refunds at the straße"), words, "bold")
    assert [text.plain[s.start:s.end] for s in sorted(text.spans, key=lambda s: s.start)] == \
        ["Straße", "refunds", "straße"]


def test_hits_snippet_marks_stay_on_the_match_after_control_characters_are_made_visible():
    from ragdiff.app.judge_search import HitsScreen
    from ragdiff.core.judge.pool import Hit

    snippet = "a\u202e\x9b refund"
    line = HitsScreen._snippet(Hit("c1", None, snippet, 1, ((snippet.index("refund"), len(snippet)),)), "bold")
    marked = [line.plain[s.start:s.end] for s in line.spans if s.style == "bold"]
    assert marked == ["refund"] and "<U+202E>" in line.plain


def test_corpus_index_reads_lines_on_demand(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [{"id": f"c{i}", "title": f"t{i}", "text": f"text {i}"} for i in range(1000)]
    lines.append({"_id": 7, "text": "numeric id"})
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    index = CorpusIndex(path, cache_size=4)
    assert not index.ready and index.get("c1") is None  # nothing read before the worker builds the index
    assert index.build() == 1001 and index.ready and index.error is None
    assert index.get("c500").text == "text 500" and index.get("c500").title == "t500"
    assert index.get("7").text == "numeric id"
    assert index.get("nope") is None
    for i in range(10):
        index.get(f"c{i}")
    assert index.cache_size == 4


def test_corpus_index_problems_are_words_not_exceptions(tmp_path):
    index = CorpusIndex(tmp_path / "absent.jsonl")
    assert index.build() == 0 and "cannot read the corpus" in index.error and not index.ready
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    index = CorpusIndex(bad)
    assert index.build() == 0 and "bad.jsonl" in index.error


def test_eval_does_not_import_textual():
    code = ("import sys\nfrom ragdiff.cli.main import build_parser\nbuild_parser()\n"
            "import ragdiff.cli.review_cmd, ragdiff.app.model, ragdiff.app.corpus, ragdiff.app.text\n"
            "sys.exit(1 if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) else 0)\n")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cli_registers_review_and_demo():
    from ragdiff.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["review", "a.jsonl", "b.jsonl", "--gold", "g.yaml", "-k", "3", "--reviewer", "ann"])
    assert args.handler.__name__ == "run_review" and args.k == 3 and args.reviewer == "ann"
    assert parser.parse_args(["demo"]).handler.__name__ == "run_demo"


def test_demo_says_when_sample_runs_are_missing(tmp_path, monkeypatch, capsys):
    from ragdiff.cli import review_cmd
    from ragdiff.cli.main import main

    monkeypatch.setattr(review_cmd, "sample_runs_dir", lambda: tmp_path / "sample_runs")
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert "sample runs are not here" in err and "gold.yaml" in err


def test_review_missing_file_is_exit_2(tmp_path, capsys):
    from ragdiff.cli.main import main

    assert main(["review", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--gold", str(tmp_path / "g.yaml")]) == 2
    assert "a.jsonl" in capsys.readouterr().err


def test_agent_run_says_which_search_found_a_chunk(tmp_path):
    import json

    from ragdiff.app.model import ReviewModel
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    text: refund window\n    gold: [c3]\n")
    (tmp_path / "agent.jsonl").write_text(json.dumps({"query_id": "q1", "searches": [
        {"query": "refund", "results": ["c1", "c2"]}, {"query": "refund window ebook", "results": ["c2", "c3"]}]}) + "\n")
    (tmp_path / "plain.jsonl").write_text(json.dumps({"query_id": "q1", "results": ["c3"]}) + "\n")
    model = ReviewModel(load_run(tmp_path / "agent.jsonl"), load_run(tmp_path / "plain.jsonl"),
                        load_gold(tmp_path / "gold.yaml"), EvalSettings(k=3, depth=50))
    assert [r.chunk_id for r in model.ranked("q1", "a")] == ["c1", "c2", "c3"]  # the union, first seen
    assert model.found_by("q1", "a", "c3") == (2, 2, "refund window ebook")
    assert model.found_by("q1", "a", "c2") == (1, 2, "refund")
    assert model.found_by("q1", "b", "c3") is None  # an ordinary run


def test_which_k_curve_is_recall_at_every_k(tmp_path):
    """The which-k plot's numbers are evaluate()'s recall@j for every j from 1 to depth."""
    from pathlib import Path

    from ragdiff.app.model import ReviewModel
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings, parse_metric
    from ragdiff.core.io.runs import load_run

    folder = Path(__file__).parent.parent / "sample_runs"
    gold = load_gold(folder / "gold.yaml")
    run_a, run_b = load_run(folder / "bm25.jsonl"), load_run(folder / "dense.jsonl")
    settings = EvalSettings(k=5, depth=50)
    curve_a, curve_b = ReviewModel(run_a, run_b, gold, settings).which_k()
    assert len(curve_a) == len(curve_b) == 50
    metrics = [parse_metric(f"recall@{j}") for j in range(1, 51)]
    for run, curve in ((run_a, curve_a), (run_b, curve_b)):
        means = evaluate(run, gold, settings, metrics).means
        assert curve == [means[f"recall@{j}"] for j in range(1, 51)]


def model_state(model, queries):
    """Everything the screen reads from the model, for comparing two models."""
    header = [(m.name, m.a, m.b, m.delta, m.worth) for m in model.header.metrics]
    return {
        "header": header, "scored": model.header.scored, "unanswerable": model.header.unanswerable,
        "rows": model.rows, "counts": model.filter_counts(),
        "visible": {key: model.visible(key) for key, _ in FILTERS},
        "ranked": {(q, s): model.ranked(q, s) for q in queries for s in "ab"},
        "missed": {(q, s): model.missed_gold(q, s) for q in queries for s in "ab"},
        "labels": {q: [model.label_of(q, r.chunk_id) for r in model.ranked(q, "a")] for q in queries},
        "which_k": model.which_k(),
    }


def test_a_change_updates_the_model_as_a_fresh_load_would(sample_runs, tmp_path, k=2):
    """The model takes each mark's Change (no re-read): after marks that add, regrade, replace, remove the
    last gold of a query (it becomes unanswerable), give an unanswerable query its first gold, and undo,
    every number and row the screen reads equals a model built from the written file."""
    import random
    import shutil

    from ragdiff.core.labels import LabelFile, Mark

    for name in ("bm25.jsonl", "dense.jsonl", "gold.yaml"):
        shutil.copy2(sample_runs / name, tmp_path / name)
    paths = {"a": tmp_path / "bm25.jsonl", "b": tmp_path / "dense.jsonl", "gold": tmp_path / "gold.yaml"}
    model = make_model(paths, k=k)
    file = LabelFile(paths["gold"], reviewer="tester")
    rng = random.Random(11)
    queries = [q for q in model.visible("all")]
    unanswerable = model.visible("unanswerable")
    marks = []
    for qid in rng.sample(queries, 4):
        rows = model.ranked(qid, "a")
        for row in rng.sample(rows, 2):
            marks.append(Mark(qid, row.chunk_id, rng.choice(["gold", "evidence", "not_relevant"]),
                              run="bm25", rank=row.rank))
    first = queries[0]  # every relevant chunk of one query marked not relevant: it becomes unanswerable
    for chunk, _, _ in list(model.relevant(first)):
        marks.append(Mark(first, chunk, "not_relevant"))
    if unanswerable:
        marks.append(Mark(unanswerable[0], model.ranked(unanswerable[0], "b")[0].chunk_id, "gold", grade=2))
    marks.append(Mark(queries[1], model.ranked(queries[1], "b")[0].chunk_id, "gold", grade=3))
    marks.append(Mark(queries[2], model.ranked(queries[2], "a")[0].chunk_id, "none"))  # judged -> unjudged@k
    touched = {m.query_id for m in marks}
    for mark in marks:
        change = file.apply(mark)
        if change.saved:
            model.apply_change(change)
    assert first in model.visible("unanswerable") and queries[2] in model.visible("unjudged")
    for _ in range(3):
        model.apply_change(file.undo())
    fresh = make_model(paths, k=k)
    assert model_state(model, touched) == model_state(fresh, touched)


def test_header_and_rows_are_the_cores_numbers_at_every_k_after_marks(sample_runs, tmp_path):
    """Every k the screen can show, after marks (the prepared runs spliced query by query): the header's A and B
    are `evaluate`'s means on the written label file to the last bit, each row's hit, reciprocal rank and nDCG
    are its per-query values, and the filters are the core's flips (the k's come from lookups in `ByK`)."""
    import math
    import shutil

    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.labels import LabelFile, Mark

    for name in ("bm25.jsonl", "dense.jsonl", "gold.yaml"):
        shutil.copy2(sample_runs / name, tmp_path / name)
    paths = {"a": tmp_path / "bm25.jsonl", "b": tmp_path / "dense.jsonl", "gold": tmp_path / "gold.yaml"}
    model = make_model(paths, k=3, depth=20)
    file = LabelFile(paths["gold"], reviewer="tester")
    queries = model.visible("all")
    for i, qid in enumerate(queries[:6]):
        row = model.ranked(qid, "ab"[i % 2])[i]
        model.apply_change(file.apply(Mark(qid, row.chunk_id, ["gold", "not_relevant", "evidence"][i % 3],
                                           grade=2 if i % 3 == 0 else None)))
    gold = load_gold(paths["gold"])
    for k in [*range(1, 22), 5, 1]:
        model.set_k(k)
        metrics = default_metrics(k, 20, "header")
        evals = [evaluate(run, gold, model.settings, metrics) for run in (model.run_a, model.run_b)]
        for line in model.header.metrics:
            for got, ev in ((line.a, evals[0]), (line.b, evals[1])):
                want = ev.means[line.name]
                assert got == want or (math.isnan(got) and math.isnan(want)), (k, line.name)
        h2m, m2h = flips(*evals, k)
        assert model.visible("hit_to_miss") == h2m and model.visible("miss_to_hit") == m2h
        for side, ev in zip("ab", evals):
            for qid, recall, rr, ndcg in ev.per_query.select("query_id", f"recall@{k}", "mrr", f"ndcg@{k}").iter_rows():
                row = model.rows[qid]
                assert (getattr(row, f"hit_{side}"), getattr(row, f"rr_{side}"), getattr(row, f"ndcg_{side}")) == \
                       (recall > 0, rr, ndcg), (k, qid)


def test_unjudged_rows_after_the_first_screen_and_a_mark_before_them(sample_runs, tmp_path):
    """The app's model leaves the unjudged rows to a worker: until they come unjudged@k has no count (None, not
    0); they give the numbers of a model that found them at once; and a mark before them finds them itself,
    so the worker's result (made from the labels before the mark) is dropped."""
    import shutil

    from ragdiff.core.labels import LabelFile, Mark

    for name in ("bm25.jsonl", "dense.jsonl", "gold.yaml"):
        shutil.copy2(sample_runs / name, tmp_path / name)
    paths = {"a": tmp_path / "bm25.jsonl", "b": tmp_path / "dense.jsonl", "gold": tmp_path / "gold.yaml"}

    def later():
        return ReviewModel(load_run(paths["a"]), load_run(paths["b"]), load_gold(paths["gold"]),
                           EvalSettings(k=20, depth=50), unjudged_later=True)

    model, full = later(), make_model(paths, k=20)
    assert model.filter_counts()["unjudged"] is None and model.visible("unjudged") == []
    assert full.filter_counts()["unjudged"] > 0
    generation, function, args = model.unjudged_job()
    assert model.apply_unjudged(generation, function(*args)) and model.unjudged_job() is None
    queries = full.visible("all")[:5]
    for k in (20, 1, 30):
        model.set_k(k)
        full.set_k(k)
        assert model_state(model, queries) == model_state(full, queries)

    model = later()
    generation, function, args = model.unjudged_job()
    stale = function(*args)
    qid = model.visible("all")[0]
    chunk = next(r.chunk_id for r in model.ranked(qid, "a") if r.level is None)  # unjudged
    model.apply_change(LabelFile(paths["gold"], reviewer="tester").apply(Mark(qid, chunk, "not_relevant")))
    assert not model.apply_unjudged(generation, stale)
    fresh = make_model(paths, k=20)
    assert model_state(model, [qid, *queries]) == model_state(fresh, [qid, *queries])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # sample_runs: read only
@given(data=st.data())
def test_random_marks_give_a_fresh_models_numbers(sample_runs, data):
    """Each mark updates one query in place (its stretch of both runs' `ByK` and of the unjudged rows, the
    basis kept when the scored queries stay): after random marks — new grades, removals, evidence, a query's
    relevant chunks taken away or an unanswerable query's first gold — every number and row the screen reads,
    at the k shown and at k's moved to afterwards, equals a model built afresh on the same labels."""
    from dataclasses import replace

    import polars as pl

    from ragdiff.core import vocab
    from ragdiff.core.labels.marks import UNJUDGED, Change, Judgment

    extra = data.draw(st.sampled_from([{}, {"judged_only": True}, {"unanswerable_as_zero": True},
                                       {"gain": "exp", "threshold": 2}, {"level": "evidence"}]), label="settings")
    settings_ = EvalSettings(k=data.draw(st.integers(1, 12), label="k"), depth=30, **extra)
    run_a, run_b = load_run(sample_runs / "bm25.jsonl"), load_run(sample_runs / "dense.jsonl")
    gold = load_gold(sample_runs / "gold.yaml")
    model = ReviewModel(run_a, run_b, gold, settings_, unjudged_later=data.draw(st.booleans(), label="later"))
    queries = model.visible("all")
    for _ in range(data.draw(st.integers(1, 4), label="marks")):
        qid = data.draw(st.sampled_from(queries), label="query")
        chunks = [r.chunk_id for side in "ab" for r in model.ranked(qid, side)] + [c for c, _, _ in model.relevant(qid)]
        chunk = data.draw(st.sampled_from(chunks), label="chunk")
        after = data.draw(st.sampled_from([UNJUDGED, Judgment(vocab.NOT_RELEVANT, 0), Judgment(vocab.EVIDENCE, 1),
                                           Judgment(vocab.GOLD, 1), Judgment(vocab.GOLD, 3)]), label="after")
        judgments = gold.judgments.filter(~((pl.col("query_id") == qid) & (pl.col("chunk_id") == chunk)))
        if after is not UNJUDGED:
            row = pl.DataFrame({"query_id": [qid], "chunk_id": [chunk], "grade": [after.grade], "level": [after.kind]})
            judgments = pl.concat([judgments, row.cast({c: gold.judgments.schema[c] for c in row.columns})],
                                  how="diagonal_relaxed")
        gold = replace(gold, judgments=judgments)
        model.apply_change(Change(qid, chunk, UNJUDGED, after, "", True))
    fresh = ReviewModel(run_a, run_b, gold, settings_)
    touched = queries[:3] + [qid]
    for k in [settings_.k, *data.draw(st.lists(st.integers(1, 31), max_size=3), label="ks")]:
        model.set_k(k)
        fresh.set_k(k)
        assert model_state(model, touched) == model_state(fresh, touched), k


def _view_of(model) -> dict:
    """Everything the screen reads of a model at its k: header, counts, each filter's list, every row."""
    rows = {}
    for qid in model.visible("all"):
        row = model.rows[qid]
        values = (row.hit_a, row.hit_b, row.rr_a, row.rr_b, row.ndcg_a, row.ndcg_b, row.unjudged_a, row.unjudged_b,
                  row.unanswerable, row.in_a, row.in_b, row.text, row.position, row.kind, row.delta_rr,
                  row.delta_ndcg)
        # plain Python values, as the widgets and the line keys take them (no numpy scalars)
        assert all(value is None or type(value) in (bool, int, float, str) for value in values), (qid, values)
        rows[qid] = values
    return {"header": [(m.name, m.a, m.b, m.delta, m.worth) for m in model.header.metrics],
            "counts": model.filter_counts(), "rows": rows,
            "lists": {(f, s): model.visible(f, s) for f, _ in FILTERS for s in ("flips", "delta_rr", "delta_ndcg")}}


def test_k_walked_down_and_about_is_a_fresh_models_k(sample_runs):
    """`+` and `-` step each unjudged and judged count from the k beside (`Ranked.upto`) and keep the metrics
    already scored (`ByK.score`): walking k down from depth, then about in steps and jumps, every k's header,
    counts, lists and rows are those of a model opened at that k (whose counts are each searched anew)."""
    import math
    import random

    paths = {"a": sample_runs / "bm25.jsonl", "b": sample_runs / "dense.jsonl", "gold": sample_runs / "gold.yaml"}
    model = make_model(paths, k=50)
    rng = random.Random(12)
    ks, k = list(range(50, 0, -1)), 1
    for _ in range(40):
        k = min(50, max(1, k + rng.choice([1, 1, 1, -1, -1, 7, -5])))
        ks.append(k)
    fresh: dict[int, dict] = {}

    def same(a, b):  # nan where a metric has no value (both sides alike)
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
        return a == b

    for k in ks:
        model.set_k(k)
        if k not in fresh:
            fresh[k] = _view_of(make_model(paths, k=k))
        got = _view_of(model)
        for part in got:
            assert same(got[part], fresh[k][part]), (k, part)


@pytest.mark.parametrize("k", [1, 3])
def test_one_flips_rule_for_the_core_and_the_review(lesson, monkeypatch, k):
    """diff.flips_of is the one home of the flips' rule: `ragdiff diff`'s flips and the review's view at k
    both read it (the review's view_at restated it on its own hit arrays). A changed rule (here: the runs'
    parts swapped) changes both."""
    from ragdiff.core.metrics import diff

    model = make_model(lesson, k=k)
    ev_a = evaluate(model.run_a, model.gold, model.settings, model.metrics)
    ev_b = evaluate(model.run_b, model.gold, model.settings, model.metrics)
    h2m, m2h = flips(ev_a, ev_b, k)
    assert (model.visible("hit_to_miss"), model.visible("miss_to_hit")) == (h2m, m2h)
    assert h2m or m2h  # the lesson flips at these k's: the swap below can be seen
    rule = diff.flips_of
    monkeypatch.setattr(diff, "flips_of", lambda ids, a, b: rule(ids, b, a))
    assert flips(ev_a, ev_b, k) == (m2h, h2m)
    swapped = make_model(lesson, k=k)
    assert (swapped.visible("hit_to_miss"), swapped.visible("miss_to_hit")) == (m2h, h2m)


@pytest.mark.parametrize("level", ["gold", "evidence"])
def test_qrels_are_the_judgments_rows_in_their_order(tmp_path, level):
    """The review's labels take gold.qrels(level)'s grades beside the judgments they come from (no join): they must be
    the same rows in the same order, one grade each, for every kind of judgment and a chunk judged in two
    queries."""
    (tmp_path / "gold.yaml").write_text(
        "queries:\n  - id: q2\n    text: two\n    gold: {c1: 2, c9: 1}\n    evidence: [c3]\n    not_relevant: [c2]\n"
        "  - id: q1\n    text: one\n    gold: [c3]\n    evidence: {c1: 2}\n    not_relevant: [c4]\n")
    gold = load_gold(tmp_path / "gold.yaml")
    qrels = gold.qrels(level)
    assert qrels.height == gold.judgments.height > 0
    assert qrels.select("query_id", "chunk_id").equals(gold.judgments.select("query_id", "chunk_id"))
    joined = gold.judgments.select("query_id", "chunk_id", "grade", "level").join(
        qrels.rename({"grade": "effective"}), on=["query_id", "chunk_id"], how="left", maintain_order="left")
    assert labels_frame(gold, level).equals(joined)
