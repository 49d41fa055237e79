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
    from ragdiff.core.metrics import EvalSettings

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
