"""`ragdiff run GOLD -- COMMAND`: the gold queries to a retriever's stdin, its run from stdout; saved, scored,
logged and diffed — or, when the retriever fails, hangs or prints a malformed line, nothing saved or logged."""

import json
import sys
from pathlib import Path

import polars as pl
import pytest

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.report.history import append_runs, load_history
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import load_run

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample_runs"
GOLD = SAMPLE / "gold.yaml"
RETRIEVERS = HERE / "retrievers"


def retriever(name: str, *extra) -> list[str]:
    return [sys.executable, str(RETRIEVERS / f"{name}.py"), *map(str, extra)]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def logged(tmp_path):
    """A history with bm25 logged, as `eval --log` writes it."""
    log = tmp_path / "history.csv"
    gold = load_gold(GOLD)
    append_runs(log, [evaluate(load_run(SAMPLE / "bm25.jsonl"), gold, EvalSettings())], gold)
    return log


def test_replayed_run_is_saved_scored_logged_and_diffed(tmp_path, capsys, logged):
    code, out, err = run_cli(capsys, "run", GOLD, "--log", logged, "--json", "--", *retriever("replay"))
    assert code == 0, err
    doc = json.loads(out)
    saved = Path(doc["saved"])
    # saved under a name with its time, beside the history in runs/
    assert saved.parent == tmp_path / "runs"
    assert saved.name.startswith("replay-") and saved.name.endswith("Z.jsonl")
    # the run file holds what dense.jsonl holds
    ours = load_run(saved).frame.select("query_id", "chunk_id", "rank")
    theirs = load_run(SAMPLE / "dense.jsonl").frame.select("query_id", "chunk_id", "rank")
    assert ours.equals(theirs)
    # scored as `eval` scores dense.jsonl
    code, js, _ = run_cli(capsys, "eval", SAMPLE / "dense.jsonl", "--gold", GOLD, "--json")
    assert doc["eval"]["runs"][0]["metrics"] == json.loads(js)["runs"][0]["metrics"]
    # one history row appended, with those numbers and the saved path
    history = load_history(logged)
    assert [r.run for r in history.rows] == ["bm25", "replay"]
    row = history.rows[-1]
    # written relative to the history's folder, so it reads the same from any folder
    assert row.get("run_path") == str(Path("runs") / saved.name) and history.run_file(row) == saved
    for name, value in json.loads(js)["runs"][0]["metrics"].items():
        assert row.metrics[name] == pytest.approx(value, abs=1e-9)
    # diffed against the last logged run: the same flips and p-values as `diff bm25 dense`
    assert doc["against"] == str(SAMPLE / "bm25.jsonl")
    code, js, _ = run_cli(capsys, "diff", SAMPLE / "bm25.jsonl", SAMPLE / "dense.jsonl", "--gold", GOLD, "--json")
    expected = json.loads(js)
    assert doc["diff"]["flips"] == expected["flips"]
    assert {m: v["p_value"] for m, v in doc["diff"]["metrics"].items()} == \
        {m: v["p_value"] for m, v in expected["metrics"].items()}


def test_second_run_diffs_against_the_first_and_the_text_report(tmp_path, capsys, logged):
    assert run_cli(capsys, "run", GOLD, "--log", logged, "--", *retriever("replay"))[0] == 0
    code, out, err = run_cli(capsys, "run", GOLD, "--log", logged, "--", *retriever("replay", SAMPLE / "rrf.jsonl"))
    assert code == 0, err
    rows = load_history(logged).rows
    assert len(rows) == 3 and rows[1].get("run_path") != rows[2].get("run_path")
    assert f"A {Path(rows[1].get('run_path')).stem}" in out  # the diff is against the previous run, not bm25
    assert "answered 72 of 72 queries" in out and "Verdict" in out


def test_first_run_without_history_says_nothing_to_diff(tmp_path, capsys):
    log = tmp_path / "new.csv"
    code, out, _ = run_cli(capsys, "run", GOLD, "--log", log, "-o", tmp_path / "r.jsonl", "--", *retriever("replay"))
    assert code == 0
    assert "nothing to diff against yet" in out
    assert (tmp_path / "r.jsonl").is_file() and len(load_history(log).rows) == 1


def nothing_written(tmp_path: Path, log: Path, rows_before: int) -> None:
    assert len(load_history(log).rows) == rows_before
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


def test_retriever_exiting_midway_is_named_and_nothing_is_logged(tmp_path, capfd, logged):
    capfd.readouterr()
    code = main(["run", str(GOLD), "--log", str(logged), "--", *retriever("fail_midway")])
    out, err = capfd.readouterr()
    assert code == 2
    assert "exited with status 1 after printing 3 of 72 answers" in err
    assert "q04" in err and "convert UTC timestamp to local time" in err  # the query it failed on
    assert "index not found while answering q04" in err  # its own stderr reaches the user
    assert "nothing was saved or logged" in err and "Traceback" not in err
    nothing_written(tmp_path, logged, 1)


def test_malformed_line_is_named_by_line_and_query(tmp_path, capsys, logged):
    code, out, err = run_cli(capsys, "run", GOLD, "--log", logged, "--", *retriever("malformed"))
    assert code == 2 and out == ""
    assert "stdout line 5 is not JSON" in err and "DEBUG embedding" in err
    assert "q05" in err and "TLS verify hostname certificate" in err
    nothing_written(tmp_path, logged, 1)


def test_hanging_retriever_is_stopped_at_the_timeout(tmp_path, capsys, logged):
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--timeout", "1", "--", *retriever("hang"))
    assert code == 2
    assert "did not finish within 1 s" in err and "printed 2 of 72 answers" in err and "q03" in err
    nothing_written(tmp_path, logged, 1)


def test_output_lines_that_are_json_but_not_answers(tmp_path, capsys, logged):
    script = tmp_path / "odd.py"
    cases = {
        '["not", "an", "object"]': "stdout line 1 is not a run line",
        '{"query_id": "zz", "results": []}': "answers query_id 'zz', which was not sent",
        '{"query_id": "q01"}': 'has no "results" list',
        '{"query_id": "q01", "results": [{"score": 1}]}': "stdout line 1",
    }
    for line, message in cases.items():
        script.write_text(f"import sys\nsys.stdin.read()\nprint({line!r})\n")
        code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--", sys.executable, script)
        assert code == 2, line
        assert message in err, (line, err)
        assert "nothing was saved or logged" in err and "Traceback" not in err
        nothing_written(tmp_path, logged, 1)


def test_command_that_cannot_start_and_no_command(tmp_path, capsys, logged):
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--", tmp_path / "no-such-retriever")
    assert code == 2 and "cannot start the retriever" in err
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged)
    assert code == 2 and "no retriever command" in err
    nothing_written(tmp_path, logged, 1)


def test_fail_on_regression_against_the_last_logged_run(tmp_path, capsys):
    # the last logged run finds everything; the new one is a retriever that returns nothing relevant
    log = tmp_path / "h.csv"
    assert run_cli(capsys, "eval", SAMPLE / "rrf.jsonl", "--gold", GOLD, "--log", log)[0] == 0
    junk = tmp_path / "junk.jsonl"
    ids = pl.read_ndjson(SAMPLE / "rrf.jsonl").get_column("query_id").to_list()
    junk.write_text("".join(json.dumps({"query_id": q, "results": [f"nothing-{q}"]}) + "\n" for q in ids))
    code, _, err = run_cli(capsys, "run", GOLD, "--log", log, "--fail-on-regression", "--",
                           *retriever("replay", junk))
    assert code == 1
    assert "regression:" in err and "dropped" in err
    assert len(load_history(log).rows) == 2  # a regression is still a run worth logging


def test_markdown_is_the_diff_against_the_last_logged_run(tmp_path, capsys, logged):
    code, md, err = run_cli(capsys, "run", GOLD, "--log", logged, "--markdown", "--", *retriever("replay"))
    assert code == 0
    assert md.startswith("### ragdiff: A bm25 vs B replay-") and "| recall@5 |" in md
    assert "answered 72 of 72 queries; saved" in err  # what was saved goes to stderr, the comment to stdout
    code, js, _ = run_cli(capsys, "diff", SAMPLE / "bm25.jsonl", SAMPLE / "dense.jsonl", "--gold", GOLD, "--json")
    for qid in json.loads(js)["flips"]["hit_to_miss"]:
        assert f"| {qid} |" in md


def test_a_run_refused_after_saving_leaves_no_file_and_no_row(tmp_path, capsys, logged):
    # a corpus that knows none of the run's chunk ids: the run is from another corpus, exit 2
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "elsewhere#0", "text": "nothing here"}) + "\n")
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--corpus", other, "--", *retriever("replay"))
    assert code == 2 and "none of its" in err and "Traceback" not in err
    nothing_written(tmp_path, logged, 1)


def test_the_ci_example_uses_real_options():
    """Every ragdiff command line in docs/ci.md's GitHub Actions job parses (an option renamed later fails here)."""
    import re
    import shlex

    import yaml

    from ragdiff.cli.main import build_parser

    doc = (HERE.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(name: retrieval\n.*?)```", doc, re.S).group(1)
    steps = yaml.safe_load(block)["jobs"]["eval"]["steps"]
    lines = [line.strip() for step in steps for line in step.get("run", "").replace("\\\n", " ").splitlines()]
    commands = [shlex.split(line) for line in lines if line.startswith("ragdiff ")]
    assert {c[1] for c in commands} == {"run", "diff", "report"}
    parser = build_parser()
    for argv in commands:
        argv = argv[1:]
        for op in (">", "|", "&&", ";"):  # the shell's part of the line
            argv = argv[:argv.index(op)] if op in argv else argv
        if argv[0] == "run":
            argv = argv[:argv.index("--")]
        parser.parse_args(argv)  # exits 2 on an unknown option
    diff = next(c for c in commands if c[1] == "diff")
    assert "--markdown" in diff and "--fail-on-regression" in diff


def test_a_run_refused_after_saving_keeps_what_was_at_the_output_path(tmp_path, capsys, logged):
    # `-o` names a file that already holds a run: a refused run must leave it as it was ("nothing was saved")
    target = tmp_path / "main.jsonl"
    before = (SAMPLE / "bm25.jsonl").read_bytes()
    target.write_bytes(before)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "elsewhere#0", "text": "nothing here"}) + "\n")
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--corpus", other, "-o", target, "--",
                           *retriever("replay"))
    assert code == 2 and "Traceback" not in err
    assert target.read_bytes() == before


@pytest.mark.parametrize("where", ["a folder", "under a file", "in a read-only folder"])
def test_an_output_path_that_cannot_be_written_is_bad_input(tmp_path, capsys, where):
    import os

    if where == "a folder":
        target = tmp_path / "runs.jsonl"
        target.mkdir()
    elif where == "under a file":
        (tmp_path / "plain").write_text("x")
        target = tmp_path / "plain" / "run.jsonl"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder")
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        target = folder / "run.jsonl"
    code, _, err = run_cli(capsys, "run", GOLD, "-o", target, "--", *retriever("replay"))
    assert code == 2 and "Traceback" not in err and str(target) in err


def test_a_run_saved_over_the_last_logged_run_is_diffed_against_what_that_file_held(tmp_path, capsys):
    """`-o latest.jsonl` every time: the last logged run is that very file, and the diff must be against the
    run it held before this one replaced it, not the new run against itself."""
    log, target = tmp_path / "history.csv", tmp_path / "latest.jsonl"
    code, _, err = run_cli(capsys, "run", GOLD, "--log", log, "-o", target, "--", *retriever("replay", SAMPLE / "bm25.jsonl"))
    assert code == 0, err
    code, out, err = run_cli(capsys, "run", GOLD, "--log", log, "-o", target, "--json", "--", *retriever("replay"))
    assert code == 0, err
    diff = json.loads(out)["diff"]
    code, js, _ = run_cli(capsys, "diff", SAMPLE / "bm25.jsonl", SAMPLE / "dense.jsonl", "--gold", GOLD, "--json")
    want = json.loads(js)
    assert {m: (v["a"], v["b"]) for m, v in diff["metrics"].items()} == \
        {m: (v["a"], v["b"]) for m, v in want["metrics"].items()}


def test_a_run_is_never_saved_over_the_gold_set_or_the_history(tmp_path, capsys, logged):
    gold = tmp_path / "gold.yaml"
    gold.write_bytes(GOLD.read_bytes())
    for target in (gold, logged):
        before = target.read_bytes()
        code, _, err = run_cli(capsys, "run", gold, "--log", logged, "-o", target, "--", *retriever("replay"))
        assert code == 2 and "inputs" in err and "Traceback" not in err
        assert target.read_bytes() == before


def test_a_run_line_the_run_reader_refuses_names_the_stdout_line_and_query(tmp_path, capsys, logged):
    code, _, err = run_cli(capsys, "run", GOLD, "--log", logged, "--", *retriever("duplicate"))
    assert code == 2 and "Traceback" not in err and "<input>" not in err, err
    assert "the retriever's stdout line 3 (the answer to query 'q03')" in err and "nothing was saved or logged" in err
    nothing_written(tmp_path, logged, 1)


def test_the_last_logged_run_is_found_from_another_folder(tmp_path, capsys, monkeypatch):
    """eval --log in the project folder with a relative run path, then `ragdiff run` from elsewhere: the row's
    run_path is read from the history's folder, not from wherever the command runs."""
    project = tmp_path / "project"
    (project / "runs").mkdir(parents=True)
    (project / "runs" / "bm25.jsonl").write_bytes((SAMPLE / "bm25.jsonl").read_bytes())
    monkeypatch.chdir(project)
    assert run_cli(capsys, "eval", "runs/bm25.jsonl", "--gold", GOLD, "--log", "history.csv")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run_cli(capsys, "run", GOLD, "--log", project / "history.csv", "--json", "--",
                             *retriever("replay"))
    assert code == 0, err
    assert "not there any more" not in err
    doc = json.loads(out)
    assert Path(doc["against"]).resolve() == (project / "runs" / "bm25.jsonl").resolve()
    assert doc["diff"] is not None


def test_an_old_row_written_relative_to_where_eval_ran_is_still_found(tmp_path, capsys, monkeypatch):
    """History files from before kept run_path as given (relative to the folder eval ran in): read from that
    folder they still name their run."""
    (tmp_path / "eval" / "runs").mkdir(parents=True)
    (tmp_path / "eval" / "runs" / "bm25.jsonl").write_bytes((SAMPLE / "bm25.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert run_cli(capsys, "eval", "eval/runs/bm25.jsonl", "--gold", GOLD, "--log", "eval/history.csv")[0] == 0
    log = tmp_path / "eval" / "history.csv"
    text = log.read_text()
    written = load_history(log).rows[0].get("run_path")
    log.write_text(text.replace(f",{written},", ",eval/runs/bm25.jsonl,"))  # as the old code wrote it
    assert load_history(log).rows[0].get("run_path") == "eval/runs/bm25.jsonl"
    code, out, err = run_cli(capsys, "run", GOLD, "--log", log, "--json", "--", *retriever("replay"))
    assert code == 0, err
    assert json.loads(out)["diff"] is not None and "not there any more" not in err
