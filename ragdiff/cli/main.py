"""Entry point: parse the command line, run one command, turn bad input into one message and exit code 2."""

from __future__ import annotations

import argparse
import errno
import sys

from ragdiff import __version__
from ragdiff.core.errors import InputError, UsageError


def build_parser() -> argparse.ArgumentParser:
    from ragdiff.cli import eval_cmd

    parser = argparse.ArgumentParser(
        prog="ragdiff",
        description="Did retrieval get better? Score runs exactly as trec_eval does, diff two of them with "
                    "paired significance, and review the flips in a terminal app.",
    )
    parser.add_argument("--version", action="version", version=f"ragdiff {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    eval_cmd.add_parser(subparsers)
    for module in ("diff_cmd", "report_cmd", "run_cmd", "history_cmd", "review_cmd", "judge_cmd", "labels_cmd",
                   "export_cmd"):
        try:
            mod = __import__(f"ragdiff.cli.{module}", fromlist=["add_parser"])
        except ModuleNotFoundError as err:
            if err.name != f"ragdiff.cli.{module}":
                raise
            continue
        mod.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    # `ragdiff run GOLD [options] -- COMMAND ...`: what follows the first -- is the retriever's command line,
    # kept whole (its own options included) rather than parsed as ragdiff's
    retriever = None
    if argv[:1] == ["run"] and "--" in argv:
        cut = argv.index("--")
        argv, retriever = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if retriever is not None:
        args.retriever = retriever
    try:
        return args.handler(args)
    except UsageError as err:
        print(f"ragdiff {args.command}: {err}", file=sys.stderr)
        return 2
    except InputError as err:
        print(f"ragdiff: {err}", file=sys.stderr)
        return 2
    except (MemoryError, OSError) as err:
        if isinstance(err, OSError) and err.errno != errno.ENOMEM:
            raise
        # one line, not a traceback: a run too big for the memory (or the `ulimit -v`) the process has
        print(f"ragdiff {args.command}: out of memory ({err.__class__.__name__}); expected inputs that fit in "
              "the memory limit — `ragdiff eval --low-memory` reads plain TREC runs in parts", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ragdiff eval ... | head`: the reader left; say nothing more
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
