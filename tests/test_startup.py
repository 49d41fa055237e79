"""Start-up: building the parser (`ragdiff --help`, `ragdiff COMMAND --help`) loads no heavy library, and a
command that needs polars still loads it only after ragdiff has set polars' allocator settings.

Behaviour, not timing (the times are in bench/RESULTS.md, measured by bench/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import SAMPLE_RUNS

HEAVY = ("polars", "numpy", "rich", "textual", "yaml", "pyarrow")

# runs the CLI the way the console script does, then reports which heavy top-level packages got imported
PROBE = f"""
import json, sys
from ragdiff.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit_:
    code = exit_.code
loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))
print(json.dumps({{"code": code, "loaded": loaded}}), file=sys.stderr)
"""


def probe(*argv: str, env: dict | None = None) -> dict:
    result = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env)
    return json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["eval", "--help"], ["diff", "--help"],
                                  ["review", "--help"], ["history", "--help"], ["report", "--help"],
                                  ["run", "--help"], ["judge", "--help"]])
def test_help_loads_no_heavy_library(argv):
    got = probe(*argv)
    assert got["code"] == 0
    assert got["loaded"] == []


def test_a_usage_error_loads_no_heavy_library():
    got = probe("eval", "--gold")
    assert got["code"] == 2
    assert got["loaded"] == []


def test_the_probe_sees_heavy_libraries_when_a_command_runs():
    """The check above could pass by seeing nothing: a real eval must show polars loaded."""
    got = probe("eval", str(SAMPLE_RUNS / "bm25.jsonl"), "--gold", str(SAMPLE_RUNS / "gold.yaml"), "--json")
    assert got["code"] == 0
    assert "polars" in got["loaded"]


@pytest.mark.parametrize("command", ["eval", "diff"])
def test_json_output_loads_no_terminal_library(command):
    """`--json` prints one document: rich (the tables and colours of the text output) is not imported."""
    runs = [str(SAMPLE_RUNS / "bm25.jsonl")] + ([str(SAMPLE_RUNS / "dense.jsonl")] if command == "diff" else [])
    flips = ["--flips", "200"] if command == "diff" else []
    got = probe(command, *runs, "--gold", str(SAMPLE_RUNS / "gold.yaml"), "--json", *flips)
    assert got["code"] == 0
    assert "polars" in got["loaded"] and "rich" not in got["loaded"] and "textual" not in got["loaded"]


def test_polars_loads_after_its_allocator_setting():
    """ragdiff/__init__.py sets jemalloc's decay before polars loads (bench/RESULTS.md); lazy imports must
    keep it so. An import hook records the environment at the moment polars is first imported."""
    code = f"""
import os, sys, json
seen = {{}}
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "polars" and "polars" not in seen:
            seen["polars"] = os.environ.get("_RJEM_MALLOC_CONF")
        return None
sys.meta_path.insert(0, Watch())
from ragdiff.cli.main import main
main(["eval", {str(SAMPLE_RUNS / "bm25.jsonl")!r}, "--gold", {str(SAMPLE_RUNS / "gold.yaml")!r}, "--json"])
print(json.dumps(seen), file=sys.stderr)
"""
    env = {k: v for k, v in __import__("os").environ.items() if k != "_RJEM_MALLOC_CONF"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    seen = json.loads(result.stderr.strip().splitlines()[-1])
    assert "polars" in seen, result.stderr
    assert seen["polars"] and "dirty_decay_ms" in seen["polars"]
