"""Every run and gold format loads to the same frames; ids stay strings; order follows DESIGN.md."""

import json
from pathlib import Path

import polars as pl
import pytest

from ragdiff.cli.main import main
from ragdiff.core.io.corpus import Corpus
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run


def ranked(run, qid):
    return run.frame.filter(pl.col("query_id") == qid).sort("rank")["chunk_id"].to_list()


def test_trec_orders_by_score_then_chunk_id_descending(tmp_path):
    # the rank column disagrees with the scores and is ignored, as trec_eval does; the tie goes to "b" > "a"
    p = tmp_path / "run.trec"
    p.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.9 t\r\nq1\tQ0\td  4 0.1 t\n")
    assert ranked(load_run(p), "q1") == ["c", "b", "a", "d"]


def test_sniffs_trec_without_extension(tmp_path):
    p = tmp_path / "results.test"
    p.write_text("# a comment\nq1 Q0 a 1 0.5 t\n")
    assert load_run(p).format == "trec"


def test_jsonl_keeps_file_order_and_scores(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text(json.dumps({"query_id": "q1", "query": "hi", "results": [{"id": "z", "score": 1}, {"id": "a", "score": 9}]}) + "\n")
    run = load_run(p)
    assert ranked(run, "q1") == ["z", "a"]
    assert run.query_text == {"q1": "hi"}


def test_agent_run_is_scored_on_the_union_in_first_seen_order(tmp_path):
    p = tmp_path / "agent.jsonl"
    p.write_text(json.dumps({"query_id": "q1", "searches": [
        {"query": "first try", "results": ["a", "b"]},
        {"query": "second try", "results": ["b", "c", "a", "d"]},
    ]}) + "\n")
    run = load_run(p)
    assert ranked(run, "q1") == ["a", "b", "c", "d"]
    assert [s[0] for s in run.searches["q1"]] == ["first try", "second try"]


def test_json_list_and_score_map(tmp_path):
    (tmp_path / "l.json").write_text('{"q1": ["b", "a"]}')
    (tmp_path / "m.json").write_text('{"q1": {"a": 0.2, "b": 0.2, "c": 0.7}}')
    assert ranked(load_run(tmp_path / "l.json"), "q1") == ["b", "a"]
    assert ranked(load_run(tmp_path / "m.json"), "q1") == ["c", "b", "a"]


@pytest.mark.parametrize("sep,ext", [(",", "csv"), ("\t", "tsv")])
def test_csv_tsv_with_rank_or_score(tmp_path, sep, ext):
    p = tmp_path / f"run.{ext}"
    p.write_text(sep.join(["query_id", "chunk_id", "rank"]) + "\n" + "\n".join(
        sep.join(r) for r in [("q1", "x", "2"), ("q1", "y", "1")]) + "\n")
    assert ranked(load_run(p), "q1") == ["y", "x"]
    p.write_text(sep.join(["query_id", "chunk_id", "score"]) + "\n" + "\n".join(
        sep.join(r) for r in [("q1", "x", "0.1"), ("q1", "y", "0.3")]) + "\n")
    assert ranked(load_run(p), "q1") == ["y", "x"]


def test_parquet(tmp_path):
    p = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["q1", "q1"], "chunk_id": ["007", "1e3"], "score": [0.1, 0.9]}).write_parquet(p)
    assert ranked(load_run(p), "q1") == ["1e3", "007"]


LABELS = """\
# ids as written: 007, no, on and 1e3 stay strings
corpus: {path: corpus.jsonl, sha256: abc}
queries:
  - id: 007
    text: refund window for ebooks
    gold: {no: 3, "on": 2}
    evidence: [1e3]
    not_relevant: [policy-9]
    regression: true
  - text: do you ship to mars
    gold: []
"""


def test_label_file_keeps_ids_as_strings(tmp_path):
    p = tmp_path / "gold.yaml"
    p.write_text(LABELS)
    gold = load_gold(p)
    assert gold.queries["query_id"].to_list() == ["007", "do you ship to mars"]
    assert gold.queries["regression"].to_list() == [True, False]
    rows = {(r["chunk_id"], r["level"], r["grade"]) for r in gold.judgments.iter_rows(named=True)}
    assert rows == {("no", "gold", 3), ("on", "gold", 2), ("1e3", "evidence", 1), ("policy-9", "not_relevant", 0)}
    assert gold.corpus_sha256 == "abc"


def test_levels_and_unanswerable(tmp_path):
    (tmp_path / "gold.yaml").write_text(LABELS)
    (tmp_path / "run.json").write_text(json.dumps({"refund window for ebooks": ["1e3", "x", "on"],
                                                   "do you ship to mars": ["x"]}))
    gold, run = load_gold(tmp_path / "gold.yaml"), load_run(tmp_path / "run.json")
    metrics = [parse_metric("mrr"), parse_metric("recall@1")]
    at_gold = evaluate(run, gold, EvalSettings(), metrics)
    at_evidence = evaluate(run, gold, EvalSettings(level="evidence"), metrics)
    # the run is keyed by query text; the gold file gives the id 007
    assert at_gold.queries.scored == ["007"] and at_gold.queries.unanswerable == ["do you ship to mars"]
    assert at_gold.means["mrr"] == pytest.approx(1 / 3) and at_gold.means["recall@1"] == 0
    assert at_evidence.means["mrr"] == 1.0


def test_short_form_yaml_and_json_agree(tmp_path):
    (tmp_path / "g.yaml").write_text("q one: [a, b]\nq two: {c: 2}\n")
    (tmp_path / "g.json").write_text('{"q one": ["a", "b"], "q two": {"c": 2}}')
    a, b = load_gold(tmp_path / "g.yaml"), load_gold(tmp_path / "g.json")
    assert a.judgments.drop("line").sort("chunk_id").equals(b.judgments.drop("line").sort("chunk_id"))


def test_qrels_and_beir(tmp_path):
    (tmp_path / "g.txt").write_text("q1 0 a 2\nq1 0 b 0\n")
    gold = load_gold(tmp_path / "g.txt")
    assert gold.format == "qrels" and gold.qrels()["grade"].to_list() == [2, 0]
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello there"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    gold = load_gold(beir)
    assert gold.format == "beir" and gold.text_of("q1") == "hello there"
    assert gold.judgments["chunk_id"].to_list() == ["a"]


def test_corpus_reads_only_what_is_asked(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"id": "a", "title": "A", "text": "alpha [bold]"}\n{"_id": "007", "text": "zero zero seven"}\n')
    corpus = Corpus(p)
    assert corpus.get("007").text == "zero zero seven"
    assert corpus.get("a").text == "alpha [bold]" and corpus.get("a").title == "A"
    assert corpus.get("missing") is None and len(corpus) == 2


def test_corpus_snapshot_mismatch_is_said_plainly(tmp_path, capsys):
    (tmp_path / "gold.yaml").write_text(LABELS)
    (tmp_path / "corpus.jsonl").write_text('{"id": "no", "text": "x"}\n')
    (tmp_path / "run.json").write_text('{"007": ["no"]}')
    assert main(["eval", str(tmp_path / "run.json"), "--gold", str(tmp_path / "gold.yaml"), "--corpus",
                 str(tmp_path / "corpus.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "not the corpus" in err and "may be the data's, not the retriever's" in err


def test_eval_json_shape(tmp_path, capsys):
    (tmp_path / "gold.yaml").write_text(LABELS)
    (tmp_path / "run.json").write_text('{"007": ["no"], "stray": ["x"]}')
    assert main(["eval", str(tmp_path / "run.json"), "--gold", str(tmp_path / "gold.yaml"), "--per-query",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    run = doc["runs"][0]
    # DESIGN's shape, and beside the metrics their upper bound if the unjudged chunks were relevant
    assert set(run) == {"name", "path", "metrics", "per_query", "upper_bound"}
    assert run["metrics"]["recall@5"] == 1.0 and run["per_query"]["007"]["mrr"] == 1.0
    assert doc["queries"]["scored"] == ["007"]
    assert doc["queries"]["unanswerable"] == ["do you ship to mars"]
    assert doc["queries"]["missing_from_run"] == {"run": ["do you ship to mars"]}
    assert doc["queries"]["not_in_gold"] == {"run": ["stray"]}


def test_corpus_bad_line(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"id": "a", "text": "x"}\nnot json\n')
    with pytest.raises(InputError) as err:
        Corpus(p).index()
    assert err.value.line == 2


def test_escaped_surrogate_pairs_are_joined_and_lone_ones_refused(tmp_path):
    (tmp_path / "gold.yaml").write_text('queries:\n  - id: "party \\ud83c\\udf89"\n    gold: [c1]\n')
    assert load_gold(tmp_path / "gold.yaml").queries["query_id"].to_list() == ["party 🎉"]
    (tmp_path / "run.jsonl").write_text('{"query_id": "q1", "results": ["\\ud800"]}\n')
    with pytest.raises(InputError) as err:
        load_run(tmp_path / "run.jsonl")
    assert "surrogate" in str(err.value)


def test_fast_trec_path_reads_exactly_what_the_general_path_reads(tmp_path):
    from polars.testing import assert_frame_equal

    from ragdiff.core.io.runs import RUN_SCHEMA, ordered_frame
    from ragdiff.core.io.trec_run import _load_any_trec, _load_plain_trec

    import random
    rng = random.Random(5)
    rows = [f"q{rng.randint(1, 9)} Q0 c{i:04d} {rng.randint(0, 99)} {rng.choice([0.5, 0.25, rng.random()])} tag"
            for i in range(500)]
    p = tmp_path / "run.trec"
    p.write_text("\n".join(rows) + "\n")
    fast, general = _load_plain_trec(p), _load_any_trec(p)
    assert fast is not None
    # DataFrame.equals compares values only (a Categorical equals its strings): the schemas are compared too.
    # The one difference is on purpose: the plain reader reads query ids as the Categorical ordered_frame sorts
    assert dict(fast.schema) == {**general.schema, "query_id": pl.Categorical}
    assert_frame_equal(fast.with_columns(pl.col("query_id").cast(pl.String)), general, check_exact=True)
    # and after ordering, what a Run holds: RUN_SCHEMA exactly, either way
    ordered = ordered_frame(p, fast.clone(), True)
    assert dict(ordered.schema) == RUN_SCHEMA
    assert_frame_equal(ordered, ordered_frame(p, general.clone(), True), check_exact=True)
    p.write_text("\n".join(rows).replace(" Q0 ", "\tQ0\t") + "\n")
    assert _load_plain_trec(p) is None  # tabs: the general path


@pytest.mark.parametrize("line", ["q1 Q0 b 2 0.4", "q1 Q0 b 2  t", "q1 Q0  2 0.4 t", "q1 Q0 b -2 0.4 t",
                                  "q1 Q0 b 2.5 0.4 t", "q1 Q0 b 2 nan t", "q1 Q0 b 2 -inf t", "q1 Q0 b 2 x t"])
def test_the_fast_trec_reader_hands_every_faulty_line_to_the_general_path(tmp_path, line):
    """A short line, an empty field, a rank that is not a whole number >= 0, a score that is not a finite
    number: the fast reader declines the file, and the general path names the line."""
    from ragdiff.core.io.trec_run import _load_plain_trec

    p = tmp_path / "run.trec"
    p.write_text("".join(f"q{i} Q0 c{i} {i} 0.5 t\n" for i in range(300)) + line + "\n")
    assert _load_plain_trec(p) is None


def test_blank_and_comment_lines_keep_true_line_numbers(tmp_path):
    """Files the fast reader must not take (a blank line, a 6-token comment) still name the right line."""
    p = tmp_path / "run.trec"
    p.write_text("q1 Q0 a 1 0.5 t\n\nq1 Q0 b 2 0.4 t\nq1 Q0 a 3 0.3 t\n")
    with pytest.raises(InputError) as err:
        load_run(p)
    assert err.value.line == 4 and "lines 1 and 4" in str(err.value)
    p.write_text("q1 Q0 a 1 0.5 t\n# Q0 x 1 0.5 comment\nq1 Q0 b 2 0.4 t\n")
    run = load_run(p)
    assert run.query_ids == ["q1"] and run.frame["line"].to_list() == [1, 3]


def test_a_text_two_queries_share_is_no_alias_for_either(tmp_path, capsys):
    """A run keyed by query text is mapped to the id of the query with that text; when two queries share the
    text the run's line cannot be told apart, so it is listed as not in the gold set, never scored against
    whichever query came last."""
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: a1\n    text: same words\n    gold: [c1]\n"
                    "  - id: a2\n    text: same words\n    gold: [c2]\n  - id: a3\n    text: other\n    gold: [c3]\n")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "same words", "results": ["c1"]}\n{"query_id": "other", "results": ["c3"]}\n')
    assert load_gold(gold).aliases() == {"other": "a3"}
    assert main(["eval", str(run), "--gold", str(gold), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["queries"]["not_in_gold"]["run"] == ["same words"]
    assert sorted(doc["queries"]["missing_from_run"]["run"]) == ["a1", "a2"]


def _beir(tmp_path, queries: str):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text(queries)
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t1\n")
    return beir


def test_beir_query_without_text_has_no_text(tmp_path):
    """`"text": null` (or no text) is a query without text, as BEIR reads it (None), never the text 'None'."""
    gold = load_gold(_beir(tmp_path, '{"_id": "q1", "text": null}\n{"_id": "q2"}\n'))
    assert gold.text_of("q1") is None and gold.text_of("q2") is None


@pytest.mark.parametrize("lines, line, words", [
    ('{"_id": "q1", "text": 3}\n', 1, "text"),
    ('{"_id": "q1", "text": ["a"]}\n', 1, "text"),
    ('{"_id": null, "text": "x"}\n', 1, "_id"),
    ('{"_id": true, "text": "x"}\n', 1, "_id"),
    ('{"_id": "q1", "text": "x"}\n{"_id": "q1", "text": "y"}\n', 2, "twice"),
])
def test_beir_queries_read_differently_from_written_are_refused(tmp_path, lines, line, words):
    beir = _beir(tmp_path, lines)
    with pytest.raises(InputError) as caught:
        load_gold(beir)
    assert caught.value.path == str(beir / "queries.jsonl") and caught.value.line == line
    assert words in caught.value.message


def test_corpus_chunk_with_null_text_has_no_text_not_the_word_none(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"id": "a", "text": null, "title": null}\n{"id": "b", "title": "B"}\n')
    corpus = Corpus(p)
    assert corpus.get("a").text == "" and corpus.get("a").title is None
    assert corpus.get("b").text == "" and corpus.get_many(["a"])["a"].text == ""
