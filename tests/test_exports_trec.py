"""Exports other tools read (DESIGN.md, "Exports and reports"): `eval --trec-eval` against trec_eval's own output,
`export run` / `export qrels` against pytrec_eval (trec_eval's C code) reading the exported files, and the
per-query table of `eval --csv/--parquet`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from ragdiff.cli.main import main
from ragdiff.core.report.trec_eval import trec_eval_name
from ragdiff.core.metrics.specs import parse_metric
from ragdiff.core.io.runs import load_run

pytrec_eval = pytest.importorskip("pytrec_eval")

HERE = Path(__file__).parent
CONFORMANCE = HERE / "conformance"
SAMPLE = HERE.parent / "sample_runs"

# every measure of trec_eval's all_trec output that ragdiff has, written down: the test fails if one of them
# stops being recognised (and so silently stops being compared)
SHARED = (["map", "Rprec", "bpref", "recip_rank"] + [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
          + [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)] + ["ndcg"]
          + [f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
          + [f"map_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
          + [f"success_{k}" for k in (1, 5, 10)])


def _shared_in(lines: list[str]) -> list[str]:
    """The measures of a trec_eval output that ragdiff knows by the same name, in trec_eval's order."""
    found = []
    for line in lines:
        measure = line.split("\t")[0].strip()
        try:
            metric = parse_metric(measure)
        except ValueError:
            continue
        if trec_eval_name(metric) == measure and measure not in found:
            found.append(measure)
    return found


@pytest.mark.parametrize("out_file, qrels, threshold", [("out.test.aq", "qrels.test", 1),
                                                        ("out.test.aql", "qrels.rel_level", 2)])
def test_trec_eval_q_layout_equals_trec_eval_line_for_line(capsys, out_file, qrels, threshold):
    expected_all = (CONFORMANCE / out_file).read_text().splitlines(keepends=True)
    shared = _shared_in(expected_all)
    assert sorted(shared) == sorted(SHARED)
    assert main(["eval", str(CONFORMANCE / "results.test"), "--gold", str(CONFORMANCE / qrels), "--format", "trec",
                 "--threshold", str(threshold), "--metrics", ",".join(shared), "--per-query", "--trec-eval"]) == 0
    got = capsys.readouterr().out.splitlines(keepends=True)
    # runid: trec_eval prints the run's tag column, ragdiff the run's name (its file's stem)
    assert got[[line.split("\t")[0].strip() for line in got].index("runid")] == f"{'runid':<22}\tall\tresults\n"
    got = [line for line in got if not line.startswith("runid ")]
    expected = [line for line in expected_all if line.split("\t")[0].strip() in {*shared, "num_q"}]
    assert len(expected) == (3 + 1) * len(shared) + 1  # three topics and `all`, and num_q
    assert got == expected


def test_trec_eval_without_per_query_prints_the_all_lines(capsys):
    assert main(["eval", str(CONFORMANCE / "results.test"), "--gold", str(CONFORMANCE / "qrels.test"),
                 "--metrics", "map,P_5,mrr@10,judged@5", "--trec-eval"]) == 0
    out = capsys.readouterr().out.splitlines()
    expected = (CONFORMANCE / "out.test.aq").read_text().splitlines()
    # mrr@10 and judged@5 have no trec_eval measure of the same meaning: left out
    assert [line.split("\t")[0].strip() for line in out] == ["runid", "num_q", "map", "P_5"]
    assert out[2:] == [line for line in expected if line.split("\t")[1] == "all"
                       and line.split("\t")[0].strip() in ("map", "P_5")]


def test_trec_eval_and_json_refused(capsys):
    assert main(["eval", str(SAMPLE / "bm25.jsonl"), "--gold", str(SAMPLE / "gold.yaml"), "--trec-eval",
                 "--json"]) == 2
    assert "--trec-eval with --json" in capsys.readouterr().err


TREC_MEASURES = {"P.5,10", "recall.5,10", "success.1,5", "ndcg_cut.5,10", "map_cut.10", "recip_rank", "map",
                 "Rprec", "ndcg", "bpref"}
RAGDIFF_OF = {"P_5": "precision@5", "P_10": "precision@10", "recall_5": "recall_frac@5",
              "recall_10": "recall_frac@10", "success_1": "recall@1", "success_5": "recall@5",
              "ndcg_cut_5": "ndcg@5", "ndcg_cut_10": "ndcg@10", "map_cut_10": "map@10", "recip_rank": "mrr",
              "map": "map", "Rprec": "rprec", "ndcg": "ndcg", "bpref": "bpref"}


@pytest.mark.parametrize("level", ["gold", "evidence"])
@pytest.mark.parametrize("run", ["bm25.jsonl", "dense.jsonl", "rrf.jsonl"])
def test_exported_files_score_in_pytrec_eval_as_the_originals_in_ragdiff(tmp_path, capsys, run, level):
    run_file, qrels_file = tmp_path / "run.trec", tmp_path / "qrels.txt"
    assert main(["export", "run", str(SAMPLE / run), "-o", str(run_file)]) == 0
    assert main(["export", "qrels", str(SAMPLE / "gold.yaml"), "--level", level, "-o", str(qrels_file)]) == 0
    capsys.readouterr()
    assert main(["eval", str(SAMPLE / run), "--gold", str(SAMPLE / "gold.yaml"), "--level", level,
                 "--metrics", ",".join(RAGDIFF_OF.values()), "--per-query", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)["runs"][0]["per_query"]
    with qrels_file.open() as q, run_file.open() as r:
        qrels, trec_run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(trec_run)
    assert len(ours) > 50
    for qid, values in ours.items():
        for measure, name in RAGDIFF_OF.items():
            assert values[name] == pytest.approx(theirs[qid][measure], abs=1e-9), (qid, measure)


@pytest.mark.parametrize("suffix", [".trec", ".jsonl", ".json", ".csv", ".tsv", ".parquet"])
def test_export_run_reads_back_in_the_same_order(tmp_path, suffix):
    original = load_run(SAMPLE / "dense.jsonl")
    out = tmp_path / f"dense{suffix}"
    assert main(["export", "run", str(SAMPLE / "dense.jsonl"), "-o", str(out)]) == 0
    back = load_run(out)
    cols = ["query_id", "chunk_id", "rank"]
    assert back.frame.select(cols).equals(original.frame.select(cols))


def test_export_run_keeps_scores_that_give_the_order(tmp_path):
    out = tmp_path / "results.trec"
    assert main(["export", "run", str(CONFORMANCE / "results.test"), "--format", "trec", "-o", str(out)]) == 0
    original = load_run(CONFORMANCE / "results.test", fmt="trec").frame
    back = load_run(out).frame
    assert back.select("query_id", "chunk_id", "rank", "score").equals(
        original.select("query_id", "chunk_id", "rank", "score"))


def test_export_refuses_ids_trec_cannot_hold(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"query_id": "q 1", "results": ["a", "b"]}) + "\n")
    assert main(["export", "run", str(run), "-o", str(tmp_path / "out.trec")]) == 2
    err = capsys.readouterr().err
    assert "query id 'q 1' cannot be written as a TREC run" in err and "Traceback" not in err
    assert not (tmp_path / "out.trec").exists()
    # the same run in a format that holds any id
    assert main(["export", "run", str(run), "-o", str(tmp_path / "out.jsonl")]) == 0


def test_per_query_table_csv_and_parquet(tmp_path, capsys):
    csv, parquet = tmp_path / "pq.csv", tmp_path / "pq.parquet"
    runs = [str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl")]
    assert main(["eval", *runs, "--gold", str(SAMPLE / "gold.yaml"), "--per-query", "--json", "--csv", str(csv),
                 "--parquet", str(parquet)]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = pl.read_parquet(parquet)
    metrics = list(doc["runs"][0]["metrics"])
    assert table.columns == ["query", "run", *metrics, "tags", "unanswerable"]
    unanswerable = doc["queries"]["unanswerable"]
    scored = doc["queries"]["scored"]
    assert table.height == 2 * (len(scored) + len(unanswerable))
    for entry in doc["runs"]:
        rows = table.filter(pl.col("run") == entry["name"])
        assert rows.filter(~pl.col("unanswerable")).get_column("query").to_list() == list(entry["per_query"])
        for row in rows.iter_rows(named=True):
            if row["unanswerable"]:
                assert row["query"] in unanswerable and all(row[m] is None for m in metrics)
            else:
                assert {m: row[m] for m in metrics} == pytest.approx(entry["per_query"][row["query"]], abs=1e-10)
    from_csv = pl.read_csv(csv)
    assert from_csv.columns == table.columns
    assert from_csv.select(metrics).equals(table.select(metrics))


def test_per_query_table_carries_tags(tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n"
                    "  - {id: a, text: one, gold: [x], tags: [typo, follow-up]}\n"
                    "  - {id: b, text: two, gold: [y]}\n"
                    "  - {id: c, text: three, gold: [], tags: [none]}\n")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "a", "results": ["x"]}\n{"query_id": "b", "results": ["z"]}\n')
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    assert main(["eval", str(run), "--gold", str(gold), "--metrics", "recall@1", "--csv", str(csv),
                 "--parquet", str(parquet)]) == 0
    table = pl.read_parquet(parquet)
    assert table.rows() == [("a", "run", 1.0, ["typo", "follow-up"], False), ("b", "run", 0.0, [], False),
                            ("c", "run", None, ["none"], True)]
    assert csv.read_text().splitlines() == ["query,run,recall@1,tags,unanswerable", "a,run,1.0,typo;follow-up,false",
                                            "b,run,0.0,\"\",false", "c,run,,none,true"]
