"""Entry point: parse the command line, run one command, turn bad input into one message and exit code 2."""

from __future__ import annotations

import argparse
import errno
import gc
import os
import sys
from typing import NoReturn

from ragdiff import __version__
from ragdiff.core.errors import InputError, UsageError


# each command and the module whose add_parser adds it, in `ragdiff --help`'s order
# (tests/test_cli_parser.py holds this table to what the modules register)
COMMANDS = {"eval": "eval_cmd", "diff": "diff_cmd", "report": "report_cmd", "run": "run_cmd",
            "history": "history_cmd", "review": "review_cmd", "demo": "review_cmd", "judge": "judge_cmd",
            "labels": "labels_cmd", "bm25": "bm25_cmd", "export": "export_cmd", "fuse": "fuse_cmd"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. `command` (one of COMMANDS): only that command's module is imported and its
    parser built — what `main` does when the first word names a command, so `ragdiff diff ...` does not import
    and build every other command (bench/run_bench.py, the 1M pair); anything else (`--help`,
    `--version`, no command, an unknown one) gets the whole parser, whose help and errors list every command."""
    parser = argparse.ArgumentParser(
        prog="ragdiff",
        description="Did retrieval get better? Score runs exactly as trec_eval does, diff two of them with "
                    "paired significance, and review the flips in a terminal app.",
    )
    parser.add_argument("--version", action="version", version=f"ragdiff {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    modules = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in dict.fromkeys(modules):
        try:
            mod = __import__(f"ragdiff.cli.{module}", fromlist=["add_parser"])
        except ModuleNotFoundError as err:
            if err.name != f"ragdiff.cli.{module}":
                raise
            continue
        mod.add_parser(subparsers)
    return parser


# Commands whose work is done when their handler returns (the report printed, every file they write closed):
# the process may end without Python freeing each frame and module in turn — ~0.07 s of a 1.2 s `diff` of two
# 1M-line runs (bench/run_bench.py). mypy's hard_exit does the same. Only from the console script and
# `python -m ragdiff` (entry), never when main() is called in-process.
HARD_EXIT_COMMANDS = frozenset({"eval", "diff"})
# Of those, the ones that run without the cyclic garbage collector: in a `diff` of the 1M pair its ~110
# collections (the imports', polars' and the report's objects) took ~20 ms of CPU and freed 793 objects in all.
# Not `eval`: a run too big for memory is read in parts (--low-memory, or on its own), part after part for
# minutes under a memory limit, and a part's frames caught in a cycle would wait for the end.
NO_COLLECTOR_COMMANDS = frozenset({"diff"})


def entry() -> NoReturn:
    """The `ragdiff` console script and `python -m ragdiff`."""
    raise SystemExit(main(hard_exit=True))


def main(argv: list[str] | None = None, *, hard_exit: bool = False) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser = build_parser(argv[0] if argv else None)
    # `ragdiff run GOLD [options] -- COMMAND ...`: what follows the first -- is the retriever's command line,
    # kept whole (its own options included) rather than parsed as ragdiff's
    retriever = None
    if argv[:1] == ["run"] and "--" in argv:
        cut = argv.index("--")
        argv, retriever = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if retriever is not None:
        args.retriever = retriever
    ends_at_once = hard_exit and args.command in HARD_EXIT_COMMANDS
    if ends_at_once and args.command in NO_COLLECTOR_COMMANDS:
        gc.disable()
    code = _handle(args)
    if ends_at_once:
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """Flush what was printed and end the process at once; a failed write is still one message and a failing
    exit code (as Python's own exit would give), never a silent 0."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass  # `ragdiff eval ... | head`: the reader left (the handler may have closed stderr): say nothing more
    except OSError as err:
        if code == 0:  # else the handler's failed write was already said
            _output_lost(err)
            code = 1
    try:
        sys.stderr.flush()
    except (OSError, ValueError):  # closed after a broken pipe
        pass
    os._exit(code)


# a write failed (the report redirected to a full disk, a quota, a file too big): one line, exit 1
_WRITE_FAILED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _handle(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except UsageError as err:
        print(f"ragdiff {args.command}: {err}", file=sys.stderr)
        return 2
    except InputError as err:
        print(f"ragdiff: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `ragdiff eval ... | head`: the reader left; say nothing more
        sys.stderr.close()
        return 0
    except OSError as err:
        if err.errno in _WRITE_FAILED:
            _output_lost(err)
            return 1
        if err.errno != errno.ENOMEM:
            raise
        _out_of_memory(args, err)
        return 2
    except MemoryError as err:
        _out_of_memory(args, err)
        return 2
    except KeyboardInterrupt:
        return 130


def _out_of_memory(args: argparse.Namespace, err: BaseException) -> None:
    # one line, not a traceback: a run too big for the memory (or the `ulimit -v`) the process has
    print(f"ragdiff {args.command}: out of memory ({err.__class__.__name__}); expected inputs that fit in "
          "the memory limit — `ragdiff eval --low-memory` reads TREC runs in parts", file=sys.stderr)


def _output_lost(err: OSError) -> None:
    print(f"ragdiff: cannot write the output: {err.strerror or err}", file=sys.stderr)


if __name__ == "__main__":
    entry()
