"""The parser built for one command (`main` builds only the command its first word names) is the whole
parser's, and main.COMMANDS says which module adds which command."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from ragdiff.cli.main import COMMANDS, build_parser


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _helps(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, str]:
    """Every (sub)command's help text, nested commands (labels log, export contexts) included."""
    out = {}
    for name, sub in _commands(parser).items():
        out[prefix + name] = sub.format_help()
        if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            out.update(_helps(sub, prefix + name + " "))
    return out


def test_the_table_names_every_command_in_help_order():
    assert list(_commands(build_parser())) == list(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_one_commands_parser_is_the_whole_parsers(command):
    whole = _helps(build_parser())
    alone = _helps(build_parser(command))
    # what the command's module adds: the command and its siblings in that module (review adds demo)
    assert set(_commands(build_parser(command))) == {c for c, m in COMMANDS.items() if m == COMMANDS[command]}
    assert alone == {name: text for name, text in whole.items() if name.split()[0] in alone}
    assert command in alone


@pytest.mark.parametrize("argv", [[], ["nosuch"], ["--help"], ["--version"], ["-h", "diff"]])
def test_no_command_first_gets_the_whole_parser(argv):
    assert list(_commands(build_parser(argv[0] if argv else None))) == list(COMMANDS)


PROBE = """
import json, sys
before = set(sys.modules)
from ragdiff.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(set(sys.modules) - before)), file=sys.stderr)
"""


# report draws diff's comparison as a page: it takes diff's options and compare_all from diff_cmd
_SHARES = {"report_cmd": {"diff_cmd"}}


@pytest.mark.parametrize("command", list(_helps(build_parser())))
def test_a_commands_help_imports_only_its_own_module_and_no_library(command):
    """`ragdiff COMMAND --help` (and `labels log --help`, ...) imports its own command's module and no other
    command's (but what _SHARES says), and nothing from outside the standard library: not polars, numpy,
    textual, rich or PyYAML, nor ragdiff.app — what it prints is argparse's (start-up, bench/RESULTS.md)."""
    got = subprocess.run([sys.executable, "-c", PROBE, *command.split(), "--help"], capture_output=True, text=True)
    assert got.returncode == 0 and "usage: ragdiff " + command in got.stdout, got.stderr
    loaded = set(json.loads(got.stderr.strip().splitlines()[-1]))
    own = COMMANDS[command.split()[0]]
    others = {f"ragdiff.cli.{m}" for m in COMMANDS.values() if m != own and m not in _SHARES.get(own, ())}
    # eval's options are shared through cli.common, not through another command's module
    assert f"ragdiff.cli.{own}" in loaded and not others & loaded, sorted(others & loaded)
    outside = sorted(m for m in loaded if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "ragdiff")
    assert outside == [], outside
    assert not any(m.startswith("ragdiff.app") for m in loaded)


def test_help_lists_every_command():
    got = subprocess.run([sys.executable, "-m", "ragdiff", "--help"], capture_output=True, text=True)
    assert got.returncode == 0
    for command, sub in _commands(build_parser()).items():
        assert command in got.stdout
    # each command's one-line help is there
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for choice in action._choices_actions:
        assert " ".join(choice.help.split()[:4]) in " ".join(got.stdout.split()), choice.dest
