"""Runs that outgrow the memory a process may use: the allocator setting under `ulimit -v`, and one message
instead of a traceback when an allocation fails."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys

import pytest

from ragdiff.cli import main as cli_main

SHOW = "import os, ragdiff; print(os.environ['_RJEM_MALLOC_CONF'])"


def _allocator_conf(limit: int | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}

    def set_limit() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    out = subprocess.run([sys.executable, "-c", SHOW], env=env, preexec_fn=set_limit, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY,
                    reason="the test process itself runs under an address-space limit")
def test_freed_address_ranges_are_returned_only_under_an_address_space_limit():
    assert "retain:false" not in _allocator_conf(None).split(",")
    assert "retain:false" in _allocator_conf(8 * 2**30).split(",")


def test_a_value_the_user_set_wins():
    env = dict(os.environ, _RJEM_MALLOC_CONF="dirty_decay_ms:0")
    out = subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "dirty_decay_ms:0"


@pytest.mark.parametrize("failure", [OSError(errno.ENOMEM, "Cannot allocate memory"), MemoryError()])
def test_running_out_of_memory_is_one_message(monkeypatch, capsys, tmp_path, failure):
    from ragdiff.cli import eval_cmd

    def out_of_memory(args):
        raise failure

    monkeypatch.setattr(eval_cmd, "run", out_of_memory)
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c1 1 1.0 t\n")
    gold = tmp_path / "qrels.txt"
    gold.write_text("q1 0 c1 1\n")
    assert cli_main.main(["eval", str(run), "--gold", str(gold)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of memory" in err and "Traceback" not in err


def test_other_os_errors_are_not_called_out_of_memory(monkeypatch, tmp_path):
    from ragdiff.cli import eval_cmd

    def io_error(args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(eval_cmd, "run", io_error)
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c1 1 1.0 t\n")
    with pytest.raises(OSError):
        cli_main.main(["eval", str(run), "--gold", str(run)])


@pytest.mark.parametrize("untidy", ["tabs", "crlf", "blank line at the end"])
def test_an_untidy_run_over_the_memory_limit_gives_the_in_memory_document(monkeypatch, capsys, tmp_path, untidy):
    """Over the memory limit `eval` reads a TREC run in parts by itself (core/metrics/partitioned.py): a run with tabs,
    CRLF or a blank line prints the JSON the in-memory reader prints, byte for byte."""
    from ragdiff.core.metrics import partitioned

    lines = [f"q{q} Q0 c{(q * 7 + r) % 50} {r} {10 - r / 4} t" for q in range(1, 40) for r in range(1, 30)]
    run = tmp_path / "run.trec"
    run.write_bytes({"tabs": "".join(line.replace(" ", "\t") + "\n" for line in lines),
                     "crlf": "".join(line + "\r\n" for line in lines),
                     "blank line at the end": "".join(line + "\n" for line in lines) + "\n"}[untidy].encode())
    gold = tmp_path / "qrels.txt"
    gold.write_text("".join(f"q{q} 0 c{q % 50} {q % 3}\n" for q in range(1, 45)))
    args = ["eval", str(run), "--gold", str(gold), "--json", "--per-query"]
    assert cli_main.main(args) == 0
    in_memory = capsys.readouterr().out
    calls = []
    real = partitioned.evaluate_partitioned
    monkeypatch.setattr(partitioned, "evaluate_partitioned", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(partitioned, "memory_limit", lambda: 100_000)
    assert cli_main.main(args) == 0
    assert calls == [run] and capsys.readouterr().out == in_memory
