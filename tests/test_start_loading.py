"""A run read early (core/io/runs.start_run, cli/common.start_loading: polars reads run A while `diff` imports the
rest) is the run load_run reads, and every error is load_run's, said in the same order (settings, gold, runs)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdiff.cli.common import load_inputs, start_loading
from ragdiff.cli.main import main
from ragdiff.core.errors import InputError, UsageError
from ragdiff.core.io.runs import load_run, start_run


def write_run(path: Path, rows: int = 600) -> Path:
    # scores with ties inside a query (trec_eval's rule: chunk id descending) and queries out of order
    lines = [f"q{(i * 7) % 13} Q0 c{(i * 31) % 997:03d} {i} {(i % 5) / 4} tag" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_qrels(path: Path) -> Path:
    path.write_text("".join(f"q{q} 0 c{(q * 31) % 997:03d} 1\n" for q in range(13)))
    return path


def args_for(gold: Path, k: int = 5, depth: int = 10) -> argparse.Namespace:
    return argparse.Namespace(gold=gold, gold_format=None, run_format=None, keep_first=False, k=k, depth=depth,
                              threshold=1)


def test_a_run_read_early_is_the_run_load_run_reads(tmp_path):
    path = write_run(tmp_path / "a.trec")
    pending = start_run(path)
    assert pending.started  # the read began (a plain TREC file)
    early = pending.result()
    assert not pending.started
    plain = load_run(path)
    assert early.frame.schema == plain.frame.schema
    assert early.frame.equals(plain.frame)
    assert (early.name, early.format, early.path) == (plain.name, plain.format, plain.path)


def test_a_file_the_plain_reader_declines_is_read_by_the_general_path(tmp_path):
    path = write_run(tmp_path / "a.trec")
    path.write_text(path.read_text().replace(" Q0 ", "\tQ0\t"))
    pending = start_run(path)
    assert not pending.started
    assert pending.result().frame.equals(load_run(path).frame)


@pytest.mark.parametrize("bad", ["q1 Q0 c001 3 0.5", "q1 Q0 c001 3 x tag", "q1 Q0 c001 -3 0.5 tag"])
def test_a_bad_line_in_a_run_read_early_is_load_runs_message(tmp_path, bad):
    """The early read takes the file (it is plain byte for byte) and fails or flags the line: the general path
    names it, exactly as load_run does."""
    path = write_run(tmp_path / "a.trec")
    path.write_text(path.read_text() + bad + "\n")
    pending = start_run(path)
    assert pending.started
    with pytest.raises(InputError) as early:
        pending.result()
    with pytest.raises(InputError) as plain:
        load_run(path)
    assert str(early.value) == str(plain.value) and early.value.line == plain.value.line == 601


def test_a_missing_run_is_said_when_its_turn_comes(tmp_path):
    pending = start_run(tmp_path / "nope.trec")
    assert not pending.started
    with pytest.raises(InputError) as early:
        pending.result()
    with pytest.raises(InputError) as plain:
        load_run(tmp_path / "nope.trec")
    assert str(early.value) == str(plain.value)


def test_a_bad_gold_set_is_said_first_and_the_early_read_is_stopped(tmp_path):
    gold = tmp_path / "qrels.txt"
    gold.write_text("q1 0 c001\n")  # three columns
    run_a = write_run(tmp_path / "a.trec")
    started = start_loading(args_for(gold), [run_a, tmp_path / "missing.trec"])
    assert started[0].started
    with pytest.raises(InputError) as err:
        load_inputs(args_for(gold), [run_a, tmp_path / "missing.trec"], started)
    assert str(err.value.path) == str(gold)
    assert not started[0].started  # waited for, nothing left running


def test_two_runs_are_read_early_one_after_the_other(tmp_path, monkeypatch):
    """start_loading reads run A and then run B (never both at once: their buffers would stack); each is the
    run load_run reads. A's read is held back a moment: B's must still wait for its end."""
    import threading
    import time

    from ragdiff.core.io import trec_run

    events: list[tuple[str, str]] = []
    real = trec_run._plain_trec_query

    class Watched:
        def __init__(self, path):
            self.path, self.query = Path(path), real(path)

        def collect(self):
            events.append(("begin", self.path.name))
            if self.path.name == "a.trec":
                time.sleep(0.3)
            frame = self.query.collect()
            events.append(("end", self.path.name))
            return frame

    monkeypatch.setattr(trec_run, "_plain_trec_query", Watched)
    gold = write_qrels(tmp_path / "qrels.txt")
    paths = [write_run(tmp_path / "a.trec"), write_run(tmp_path / "b.trec", rows=500),
             write_run(tmp_path / "c.trec", rows=400)]
    started = start_loading(args_for(gold), paths)
    assert [p.started for p in started] == [True, True]  # two ahead, not every run
    _gold, got = load_inputs(args_for(gold), paths, started)
    assert events[:4] == [("begin", "a.trec"), ("end", "a.trec"), ("begin", "b.trec"), ("end", "b.trec")]
    assert [r.name for r in got] == ["a", "b", "c"]
    monkeypatch.setattr(trec_run, "_plain_trec_query", real)
    for run, path in zip(got, paths):
        assert run.frame.equals(load_run(path).frame)
    assert threading.active_count() == 1


def test_a_bad_line_in_run_a_is_said_before_run_b_read_early(tmp_path):
    gold = write_qrels(tmp_path / "qrels.txt")
    run_a = write_run(tmp_path / "a.trec")
    run_a.write_text(run_a.read_text() + "q1 Q0 c001 3 0.5\n")
    run_b = write_run(tmp_path / "b.trec", rows=500)
    run_b.write_text(run_b.read_text() + "q1 Q0 c001 x 0.5 tag\n")
    started = start_loading(args_for(gold), [run_a, run_b])
    assert all(p.started for p in started)
    with pytest.raises(InputError) as err:
        load_inputs(args_for(gold), [run_a, run_b], started)
    assert str(err.value.path) == str(run_a) and err.value.line == 601
    assert not any(p.started for p in started)  # both waited for


def test_settings_are_checked_before_anything_is_read(tmp_path):
    with pytest.raises(UsageError):
        start_loading(args_for(tmp_path / "qrels.txt", k=20, depth=10), [tmp_path / "missing.trec"])


def test_diff_with_a_run_read_early_matches_one_read_in_its_turn(tmp_path, capsys):
    """`diff` starts run A early; the document is the one `report`'s loading (no early start) gives."""
    from ragdiff.cli import diff_cmd

    gold = write_qrels(tmp_path / "qrels.txt")
    run_a = write_run(tmp_path / "a.trec")
    run_b = write_run(tmp_path / "b.trec", rows=500)
    assert main(["diff", str(run_a), str(run_b), "--gold", str(gold), "--json"]) == 0
    early = json.loads(capsys.readouterr().out)
    argv = ["diff", str(run_a), str(run_b), "--gold", str(gold), "--json"]
    from ragdiff.cli.main import build_parser

    _diffs, report, _evals, _gold = diff_cmd.compare_all(build_parser().parse_args(argv))
    assert early["metrics"] == json.loads(json.dumps(report.doc))["metrics"]


def test_diff_names_the_bad_line_of_run_a_and_exits_2(tmp_path):
    gold = write_qrels(tmp_path / "qrels.txt")
    run_a = write_run(tmp_path / "a.trec")
    run_a.write_text(run_a.read_text() + "q1 Q0 c001 3 0.5\n")
    run_b = write_run(tmp_path / "b.trec", rows=500)
    result = subprocess.run([sys.executable, "-m", "ragdiff", "diff", str(run_a), str(run_b), "--gold", str(gold),
                             "--json"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(run_a) in lines[0] and "601" in lines[0] and "Traceback" not in result.stderr


def test_start_loading_imports_polars_but_not_numpy(tmp_path):
    """diff_cmd.one_blas_thread loads numpy itself, after start_loading (its BLAS at one thread a call)."""
    run_a = write_run(tmp_path / "a.trec")
    code = ("import argparse, sys; from pathlib import Path; from ragdiff.cli.common import start_loading; "
            "a = argparse.Namespace(k=5, depth=10, threshold=1, run_format=None, keep_first=False); "
            f"s = start_loading(a, [Path({str(run_a)!r})]); "
            "print(s[0].started, 'polars' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "False"]


def test_a_read_nobody_asks_for_ends_quietly(tmp_path):
    """A started read dropped unasked (another input failed, an interrupt) must not bring the process down when
    it ends: polars' own background query panicked then (a failed send) and aborted the process."""
    run_a = write_run(tmp_path / "a.trec", rows=200_000)
    code = ("import gc, time; from ragdiff.core.io.runs import start_run; "
            f"p = start_run({str(run_a)!r}); assert p.started; del p; gc.collect(); time.sleep(1.5); print('alive')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (result.returncode, result.stdout.strip()) == (0, "alive"), result.stderr[-2000:]
