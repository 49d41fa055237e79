"""`ragdiff eval` and `diff` end the process at once after their report (cli/main.py's hard exit): what they
printed must still arrive whole, a write that fails must still fail, and main() called in-process returns."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ragdiff.cli.main import main


def _diff_args(sample_runs: Path) -> list[str]:
    return ["diff", str(sample_runs / "bm25.jsonl"), str(sample_runs / "rrf.jsonl"), "--gold",
            str(sample_runs / "gold.yaml"), "--json"]


def _in_process(argv: list[str]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0  # returns: no hard exit without hard_exit=True
    return out.getvalue()


def _module(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragdiff", *argv], capture_output=True, **kwargs)


@pytest.mark.parametrize("command", ["diff", "eval"])
def test_a_report_written_to_a_file_arrives_whole(sample_runs, tmp_path, command):
    # stdout to a file is block-buffered: without the flush before the hard exit the file would be cut or empty
    argv = _diff_args(sample_runs)
    if command == "eval":
        argv = ["eval", *argv[1:], "--per-query"]
    expected = _in_process(argv)
    assert len(expected) > 8192  # more than one buffer's worth
    target = tmp_path / "out.json"
    with target.open("wb") as handle:
        proc = subprocess.run([sys.executable, "-m", "ragdiff", *argv], stdout=handle, stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    assert target.read_text(encoding="utf-8") == expected
    json.loads(expected)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_write_is_one_message_and_a_failing_exit(sample_runs):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "ragdiff", *_diff_args(sample_runs)], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == ["ragdiff: cannot write the output: No space left on device"]


def test_a_reader_that_leaves_early_is_no_error(sample_runs):
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    proc = subprocess.run([sys.executable, "-m", "ragdiff", *_diff_args(sample_runs)], stdout=reader.stdin,
                          stderr=subprocess.PIPE, text=True)
    reader.stdin.close()
    reader.wait()
    assert proc.returncode == 0
    assert proc.stderr == ""


def test_bad_input_still_one_message_and_exit_2(tmp_path, sample_runs):
    bad = tmp_path / "run.trec"
    bad.write_text("q1 Q0 c1 one 1.0 tag\n", encoding="utf-8")
    proc = _module(["diff", str(bad), str(bad), "--gold", str(sample_runs / "gold.yaml")], text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and str(bad) in proc.stderr


# the text report too: rich's own Console.on_broken_pipe would exit 1 (cli/common.stdout_console)
@pytest.mark.parametrize("json_flag", [["--json"], []])
@pytest.mark.parametrize("command", ["eval", "diff"])
def test_a_reader_gone_before_the_report_is_no_error(sample_runs, json_flag, command):
    # the pipe's reading end closed before the process starts: the first write inside the handler fails
    # (the handler then closes stderr), and the hard exit must not fail again on the closed stderr
    runs = [str(sample_runs / n) for n in ("bm25.jsonl", "dense.jsonl", "rrf.jsonl")]
    per_query = ["--per-query"] if command == "eval" else []
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "ragdiff", command, *runs, "--gold", str(sample_runs / "gold.yaml"),
                               *per_query, *json_flag], stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 0


def test_the_console_leaves_a_broken_pipe_to_rich_then_to_the_handler(monkeypatch):
    """stdout_console's on_broken_pipe is rich's (quiet, stdout onto /dev/null: stood in for here, so this
    process keeps its stdout) with its SystemExit(1) turned into the BrokenPipeError that cli/main.py says
    nothing about and exits 0 on."""
    from rich.console import Console

    from ragdiff.cli.common import stdout_console

    calls = []

    def rich_own(self):
        calls.append(self)
        raise SystemExit(1)

    monkeypatch.setattr(Console, "on_broken_pipe", rich_own)
    console = stdout_console()
    with pytest.raises(BrokenPipeError):
        console.on_broken_pipe()
    assert calls == [console]


_COLLECTOR_DURING = """
import gc, sys
from ragdiff.cli import main as cli
cli._handle = lambda args: print(args.command, gc.isenabled()) or 0
cli.main(sys.argv[2:], hard_exit=sys.argv[1] == "hard")
print("returned", gc.isenabled())
"""


@pytest.mark.parametrize("command,hard,expected", [
    ("diff", "hard", "diff False\n"),  # ended at once: nothing printed after the handler
    ("eval", "hard", "eval True\n"),  # ended at once too, but a run too big for memory is read part after part
    ("diff", "in-process", "diff True\nreturned True\n"),  # main() called in-process leaves the collector alone
    ("report", "hard", "report True\nreturned True\n"),  # a command that returns normally keeps it on
])
def test_diff_from_the_console_script_runs_without_the_cyclic_collector(sample_runs, command, hard, expected):
    argv = _diff_args(sample_runs)
    argv[0] = command
    if command == "report":  # parsed only, never run: the handler is replaced
        argv = [*argv[:-1], "-o", "never-written.html"]
    proc = subprocess.run([sys.executable, "-c", _COLLECTOR_DURING, hard, *argv], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected
