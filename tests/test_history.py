"""`eval --log HISTORY.csv` and `ragdiff history`: one row per run, read back, trends, drops, bad files."""

import csv
import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import file_sha256
from ragdiff.core.report.history import FIXED_COLUMNS, drops, load_history, sparkline

DATA = Path(__file__).parent / "data" / "diff"
LESSON = ["--gold", str(DATA / "lesson_gold.yaml"), "-k", "1", "--depth", "3"]


def run_cli(capsys, *argv):
    code = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_log_twice_then_history(tmp_path, capsys):
    log = tmp_path / "history.csv"
    a, b = DATA / "lesson_a.json", DATA / "lesson_b.json"
    code, out, err = run_cli(capsys, "eval", a, *LESSON, "--log", log, "--json")
    assert code == 0
    means_a = json.loads(out)["runs"][0]["metrics"]
    code, out, err = run_cli(capsys, "eval", b, *LESSON, "--log", log)
    assert code == 0

    with log.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 3  # a header and two rows
    header = rows[0]
    assert tuple(header[:len(FIXED_COLUMNS)]) == FIXED_COLUMNS
    assert header[len(FIXED_COLUMNS):] == ["recall@1", "recall@3", "recall_frac@1", "precision@1", "mrr", "ndcg@1",
                                           "ndcg@3", "judged@1"]

    history = load_history(log)
    first, second = history.rows
    assert (first.run, second.run) == ("lesson_a", "lesson_b")
    assert first.get("run_sha256") == file_sha256(a)
    assert first.get("gold_sha256") == file_sha256(DATA / "lesson_gold.yaml")
    assert first.get("queries_scored") == "3" and first.get("k") == "1" and first.get("depth") == "3"
    assert first.when.tzinfo is not None and first.when.utcoffset().total_seconds() == 0
    for name, value in means_a.items():
        assert first.metrics[name] == pytest.approx(value, abs=1e-9)
    assert first.metrics["recall@1"] == pytest.approx(1 / 3)
    assert second.metrics["recall@1"] == pytest.approx(2 / 3)
    assert first.metrics["mrr"] == pytest.approx(5 / 9)

    code, out, err = run_cli(capsys, "history", log)
    assert code == 0, err
    assert "lesson_a" in out and "lesson_b" in out
    assert "0.333" in out and "0.667" in out
    assert "Trend" in out and "recall@1" in out
    assert "No drop" in out

    code, out, err = run_cli(capsys, "history", log, "--json")
    doc = json.loads(out)
    assert [r["run"] for r in doc["rows"]] == ["lesson_a", "lesson_b"]
    assert doc["rows"][1]["metrics"]["recall@1"] == pytest.approx(2 / 3)


def test_corpus_snapshot_recorded(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "policy-14", "text": "Ebooks can be refunded within 14 days."}\n')
    log = tmp_path / "h.csv"
    assert run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", log, "--corpus", corpus)[0] == 0
    row = load_history(log).rows[0]
    assert row.get("corpus_file_sha256") == file_sha256(corpus)
    assert row.get("corpus_sha256") == ""  # the short-form gold file records no snapshot


def test_new_metric_columns_are_merged(tmp_path, capsys):
    log = tmp_path / "h.csv"
    run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", log, "--metrics", "recall@1,mrr")
    run_cli(capsys, "eval", DATA / "lesson_b.json", *LESSON, "--log", log, "--metrics", "mrr,ndcg@3")
    history = load_history(log)
    assert history.metric_names == ["recall@1", "mrr", "ndcg@3"]
    first, second = history.rows
    assert first.metrics["ndcg@3"] is None and first.metrics["recall@1"] == pytest.approx(1 / 3)
    assert second.metrics["recall@1"] is None and second.metrics["mrr"] == pytest.approx(5 / 6)
    # appending with a subset of the columns keeps the header
    run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", log, "--metrics", "mrr")
    history = load_history(log)
    assert history.metric_names == ["recall@1", "mrr", "ndcg@3"] and len(history.rows) == 3
    assert not list(tmp_path.glob(".h.csv.*"))  # no temporary file left behind


def test_drop_from_previous_row_of_the_same_run(tmp_path, capsys):
    """Two runs named `run` (same file name, different folders): the second is worse and is flagged."""
    log = tmp_path / "h.csv"
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "run.json").write_text((DATA / "lesson_b.json").read_text())
    (bad / "run.json").write_text((DATA / "lesson_a.json").read_text())
    run_cli(capsys, "eval", good / "run.json", *LESSON, "--log", log)
    run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", log)  # another run interleaved
    run_cli(capsys, "eval", bad / "run.json", *LESSON, "--log", log)
    history = load_history(log)
    found = {(d.row.run, d.metric) for d in drops(history)}
    assert ("run", "recall@1") in found and ("run", "mrr") in found
    assert all(d.row.line == 4 and d.previous.line == 2 for d in drops(history))
    code, out, err = run_cli(capsys, "history", log)
    assert code == 0
    assert "▼0.333" in out
    assert "Drops from the run's previous row" in out
    assert "recall@1 0.667 → 0.333" in out
    assert "per run" in out  # interleaved run names: one trend line per run


@pytest.mark.parametrize("content, line, words", [
    ("this is not a csv history\nat all\n", 1, "not a ragdiff history"),
    (",".join(FIXED_COLUMNS) + ",recall@5\n"
     "2025-01-01T00:00:00+00:00,a,a.json,x,g.yaml,y,,,50,0,5,50,1,gold,linear,0.5\n"
     "2025-01-02T00:00:00+00:00,a,a.json,x,g.yaml,y,,,50,0,5,50,1,gold,linear,lots\n", 3, "recall@5 is 'lots'"),
    (",".join(FIXED_COLUMNS) + ",recall@5\n"
     "2025-01-01T00:00:00+00:00,a,a.json,x,g.yaml,y,,,50,0,5,50,1,gold,linear\n", 2, "expected 16 columns"),
    (",".join(FIXED_COLUMNS) + ",recall@5\n"
     "yesterday,a,a.json,x,g.yaml,y,,,50,0,5,50,1,gold,linear,0.5\n", 2, "ISO date"),
    (",".join(FIXED_COLUMNS) + ",recall@5\n"
     "2025-01-01T00:00:00+00:00,a,a.json,x,g.yaml,y,,,fifty,0,5,50,1,gold,linear,0.5\n", 2, "queries_scored"),
    (",".join(FIXED_COLUMNS) + ",colour\n", 1, "'colour' is not a metric"),
])
def test_malformed_history_is_exit_2(tmp_path, capsys, content, line, words):
    path = tmp_path / "history.csv"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        load_history(path)
    assert err.value.line == line
    code, out, err_text = run_cli(capsys, "history", path)
    assert code == 2
    assert f"history.csv:{line}:" in err_text and words in err_text
    assert "Traceback" not in err_text and out == ""


def test_binary_or_empty_history(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_bytes(b"\x00\x01\x02garbage")
    assert run_cli(capsys, "history", path)[0] == 2
    path.write_text("")
    assert run_cli(capsys, "history", path)[0] == 2
    assert run_cli(capsys, "history", tmp_path / "missing.csv")[0] == 2


def test_eval_log_refuses_a_foreign_file(tmp_path, capsys):
    path = tmp_path / "notes.csv"
    path.write_text("name,age\nann,3\n")
    code, out, err = run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", path)
    assert code == 2 and "notes.csv:1" in err
    assert path.read_text() == "name,age\nann,3\n"


def test_sparkline():
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([0.7, 0.7]) == "▅▅"
    assert sparkline([None, 1.0, 0.0]) == " █▁"
    assert sparkline([0.5], lo=0.0, hi=1.0) == "▅"
    assert sparkline([]) == ""


def test_the_gold_hash_of_a_beir_folder_is_its_labels_and_queries_only(tmp_path):
    """history flags a drop across a gold change by gold_sha256: a BEIR folder's gold set is the qrels split read
    and queries.jsonl; the corpus (hashed on its own), the label journal and the other splits are not it."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.labels.journal import journal_path

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n')
    (beir / "corpus.jsonl").write_text('{"_id": "a", "text": "alpha"}\n')
    qrels = beir / "qrels" / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    first = load_gold(beir).sha256()
    assert load_gold(qrels, "beir").sha256() == first  # the same gold set named by its split file
    (beir / "corpus.jsonl").write_text('{"_id": "a", "text": "alpha, edited"}\n')
    journal_path(qrels).write_text("{}\n")
    (beir / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq9\tz\t1\n")
    assert load_gold(beir).sha256() == first
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello there"}\n')
    second = load_gold(beir).sha256()
    assert second != first
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\ta\t2\n")
    assert load_gold(beir).sha256() not in (first, second)


def test_a_drop_is_only_against_a_row_scored_the_same_way(tmp_path, capsys):
    """--threshold 2 (or --level, --gain) scores the same run by other rules: lower numbers there are not a
    drop of the run."""
    log = tmp_path / "history.csv"
    gold = tmp_path / "gold.yaml"
    gold.write_text("q1: {a: 2, b: 1}\nq2: {c: 2, d: 1}\n")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "results": ["b", "a"]}\n{"query_id": "q2", "results": ["c", "d"]}\n')
    scoring = ["--gold", gold, "-k", "1", "--depth", "2", "--metrics", "recall@1,mrr", "--log", log]
    assert run_cli(capsys, "eval", run, *scoring)[0] == 0
    assert run_cli(capsys, "eval", run, *scoring, "--threshold", "2")[0] == 0
    history = load_history(log)
    first, second = history.rows
    assert second.metrics["recall@1"] < first.metrics["recall@1"]  # lower, by another rule
    assert drops(history) == []
    assert run_cli(capsys, "eval", run, *scoring, "--threshold", "2")[0] == 0  # as row 2 again: nothing fell
    assert drops(load_history(log)) == []
    run.write_text('{"query_id": "q1", "results": ["b", "a"]}\n{"query_id": "q2", "results": ["x", "c"]}\n')
    assert run_cli(capsys, "eval", run, *scoring)[0] == 0  # against row 1, scored the same way: a drop
    assert [(d.previous.line, d.metric) for d in drops(load_history(log))] == [(2, "recall@1"), (2, "mrr")]


def test_a_history_that_cannot_be_written_is_bad_input(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code, out, err = run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", tmp_path / "file" / "h.csv")
    assert code == 2 and "Traceback" not in err and "h.csv" in err and f"{tmp_path / 'file'} is a file" in err


def test_a_row_holds_each_metric_exactly_as_eval_computed_it(tmp_path):
    """Correct to the last decimal: a logged number reads back as the same float, bit for bit (it was cut to
    10 significant digits: 0.5555555555555556 came back as 0.5555555556)."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.report.history import append_runs
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    gold = load_gold(DATA / "lesson_gold.yaml")
    ev = evaluate(load_run(DATA / "lesson_a.json"), gold, EvalSettings(k=3, depth=3))
    assert any(len(repr(v)) > 12 for v in ev.means.values() if v is not None)  # a number 10 digits would cut
    log = tmp_path / "h.csv"
    append_runs(log, [ev], gold)
    [row] = load_history(log).rows
    assert {m: v for m, v in row.metrics.items()} == dict(ev.means)
    assert all(v is None or v.hex() == row.metrics[m].hex() for m, v in ev.means.items())


def test_rows_written_at_ten_digits_still_read_and_a_widened_file_keeps_their_cells(tmp_path, capsys):
    log = tmp_path / "h.csv"
    run_cli(capsys, "eval", DATA / "lesson_a.json", *LESSON, "--log", log, "--metrics", "mrr")
    header, row = log.read_text().splitlines()
    old_cell = "0.5555555556"  # what the earlier writer wrote for 5/9
    old = row.rsplit(",", 1)[0] + "," + old_cell
    typed = row.rsplit(",", 1)[0] + ",0.50"  # a cell someone typed
    log.write_text(f"{header}\n{old}\n{typed}\n")
    assert [r.metrics["mrr"] for r in load_history(log).rows] == [float(old_cell), 0.5]
    run_cli(capsys, "eval", DATA / "lesson_b.json", *LESSON, "--log", log, "--metrics", "mrr,ndcg@3")  # widens
    lines = log.read_text().splitlines()
    assert lines[1:3] == [old + ",", typed + ","]  # the old rows as written, one empty cell added
    assert [r.metrics["mrr"] for r in load_history(log).rows[:2]] == [float(old_cell), 0.5]
