"""CLI messages that name what the user wrote, and the one settings check every command shares."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiff.cli.main import main

GOLD = "queries:\n  - id: q1\n    text: refund window\n    gold: [c1]\n  - id: q2\n    text: blender\n    gold: [c2]\n"
RUN = '{"query_id": "q1", "results": ["c1", "c2"]}\n{"query_id": "q2", "results": ["c2"]}\n'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "gold.yaml").write_text(GOLD)
    (tmp_path / "a.jsonl").write_text(RUN)
    (tmp_path / "b.jsonl").write_text(RUN.replace('"c1", "c2"', '"c2", "c1"'))
    return {name: tmp_path / name for name in ("gold.yaml", "a.jsonl", "b.jsonl")}


def _command(name: str, files: dict[str, Path]) -> list[str]:
    runs = {"eval": [files["a.jsonl"]], "diff": [files["a.jsonl"], files["b.jsonl"]],
            "review": [files["a.jsonl"], files["b.jsonl"]], "demo": []}[name]
    gold = [] if name == "demo" else ["--gold", str(files["gold.yaml"])]
    return [name, *map(str, runs), *gold]


# ---- one settings check, every command --------------------------------------------------------------------

@pytest.mark.parametrize("command", ["eval", "diff", "review", "demo"])
@pytest.mark.parametrize("options, words", [
    (["-k", "60", "--depth", "50"], "-k 60 is above --depth 50; expected k <= depth"),
    (["-k", "6", "--depth", "5"], "-k 6 is above --depth 5; expected k <= depth"),
])
def test_k_above_depth_is_refused_by_every_command(command, options, words, files, capsys):
    assert main([*_command(command, files), *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragdiff {command}: {words}"), err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", ["eval", "diff", "review", "demo"])
@pytest.mark.parametrize("option", ["-k", "--depth"])
@pytest.mark.parametrize("value", ["0", "-3", "five", "2.5"])
def test_k_and_depth_are_positive_whole_numbers(command, option, value, files, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*_command(command, files), option, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and "expected a whole number" in err and value in err


@pytest.mark.parametrize("command", ["eval", "diff", "review"])
def test_threshold_below_one_is_refused(command, files, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*_command(command, files), "--threshold", "0"])
    assert exit_.value.code == 2
    assert "argument --threshold: expected a whole number >= 1, got 0" in capsys.readouterr().err


def test_the_check_is_one_function_every_command_can_call():
    """New commands (judge, report, run) call the same check on the settings they build."""
    from ragdiff.cli.common import check_settings
    from ragdiff.core.errors import UsageError
    from ragdiff.core.metrics.specs import EvalSettings

    assert check_settings(EvalSettings(k=5, depth=5)) == EvalSettings(k=5, depth=5)
    for bad, words in ((EvalSettings(k=9, depth=3), "-k 9 is above --depth 3"),
                       (EvalSettings(k=0, depth=3), "-k 0: expected a whole number >= 1"),
                       (EvalSettings(k=True, depth=3), "-k True"),
                       (EvalSettings(threshold=0), "--threshold 0")):
        with pytest.raises(UsageError, match=words):
            check_settings(bad)


def test_settings_are_checked_before_any_file_is_read(tmp_path, capsys):
    """A usage mistake is said first, even when the files are missing too."""
    missing = [str(tmp_path / "nope.jsonl"), "--gold", str(tmp_path / "nope.yaml")]
    for command in (["eval", *missing], ["diff", missing[0], *missing], ["review", missing[0], *missing]):
        assert main([*command, "-k", "9", "--depth", "3"]) == 2
        assert "-k 9 is above --depth 3" in capsys.readouterr().err


# ---- messages that name what the user wrote ---------------------------------------------------------------

def test_csv_header_error_names_only_the_columns_written(tmp_path, files, capsys):
    run = tmp_path / "run.csv"
    run.write_text("query_id,doc\nq1,c1\n")
    assert main(["eval", str(run), "--gold", str(files["gold.yaml"])]) == 2
    err = capsys.readouterr().err
    assert f"{run}:1: the header has 'query_id', 'doc'; it lacks a chunk column (chunk_id) and rank or score" in err
    assert "'line'" not in err


@pytest.mark.parametrize("name, content, looks", [
    ("run.json", '{"q1": ["policy-14", "c2"], "q2": ["c2"]}\n', "JSON"),
    ("run.jsonl", RUN, "JSON"),
    ("run.csv", "query_id,chunk_id,rank\nq1,c1,1\n", "CSV"),
])
def test_format_trec_on_another_format_says_it_is_not_trec(name, content, looks, tmp_path, files, capsys):
    run = tmp_path / name
    run.write_text(content)
    assert main(["eval", str(run), "--gold", str(files["gold.yaml"]), "--format", "trec"]) == 2
    err = capsys.readouterr().err
    assert f"{run}:1: this is not a TREC run: its first line looks like {looks}" in err
    assert "not a finite number" not in err and "columns" not in err.split("expected")[0]


def test_per_query_at_80_columns_never_cuts_a_heading(files, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    metrics = "recall@5,recall@50,recall_frac@5,precision@5,mrr,ndcg@5,ndcg@50,judged@5"
    assert main(["eval", str(files["a.jsonl"]), "--gold", str(files["gold.yaml"]), "--metrics", metrics,
                 "--per-query"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line.lstrip().startswith("query ")]
    assert len(headings) >= 2  # split into tables that fit
    assert all(len(line.rstrip()) <= 80 for line in out.splitlines())
    shown = " ".join(headings)
    assert "…" not in shown
    for name in metrics.split(","):
        assert f" {name} " in shown + " ", name


def test_one_query_is_said_in_the_singular(tmp_path, capsys):
    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    gold: [c1]\n")
    (tmp_path / "a.jsonl").write_text('{"query_id": "q1", "results": ["c1"]}\n')
    (tmp_path / "b.jsonl").write_text('{"query_id": "q1", "results": ["c2", "c1"]}\n')
    args = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--gold", str(tmp_path / "gold.yaml"), "-k", "1"]
    assert main(["diff", *args]) == 0
    out = capsys.readouterr().out
    assert "1 query scored" in out and "Only 1 scored query " in out
    assert "1 queries" not in out and "1 scored queries" not in out
    assert main(["diff", *args, "--markdown"]) == 0
    assert "1 queries" not in capsys.readouterr().out


def test_diff_of_a_run_with_itself_warns(files, tmp_path, capsys):
    a = str(files["a.jsonl"])
    assert main(["diff", a, a, "--gold", str(files["gold.yaml"])]) == 0
    err = capsys.readouterr().err
    assert f"warning: {a} ranks every query exactly as {a} does (it is the same file): every Δ is 0" in err
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(files["a.jsonl"].read_bytes())
    assert main(["diff", a, str(copy), "--gold", str(files["gold.yaml"])]) == 0
    err = capsys.readouterr().err
    assert f"{copy} ranks every query exactly as {a} does: every Δ is 0" in err
    assert main(["diff", a, str(files["b.jsonl"]), "--gold", str(files["gold.yaml"])]) == 0
    assert "ranks every query exactly" not in capsys.readouterr().err


@pytest.mark.parametrize("low", [0.0, 0.3, 0.5, 0.6, 0.9])
def test_which_k_axis_labels_share_one_format(low):
    import re

    from ragdiff.app.widgets.which_k import plot

    curve_a = [low + (1 - low) * j / 19 for j in range(20)]
    curve_b = [min(1.0, v + 0.05) for v in curve_a]
    styles = {name: "" for name in ("a", "b", "both", "k", "dim")}
    text = plot(curve_a, curve_b, 5, 40, styles).plain
    labels = [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line]
    assert len(labels) == 3 and labels[0] == "1.00"
    assert all(re.fullmatch(r"\d\.\d\d", label) for label in labels), labels
    values = [float(label) for label in labels]
    assert values == sorted(values, reverse=True) and values[-1] == pytest.approx(int(low * 10) / 10)
