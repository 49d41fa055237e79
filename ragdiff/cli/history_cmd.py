"""`ragdiff history HISTORY.csv`: the rows `eval --log` wrote, a trend line per metric, drops flagged."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragdiff.cli.common import table_console


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("history", help="show the history file written by eval --log",
                                   description="Show the rows `ragdiff eval --log` appended: one per run, with a "
                                               "trend line per metric and each drop from the run's previous row.")
    parser.add_argument("history", type=Path, metavar="HISTORY.csv")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # polars and rich load when the command runs, not for --help
    from ragdiff.core.report.history import load_history
    from ragdiff.core.report.history_doc import history_report

    report = history_report(load_history(args.history))
    if args.json:
        from ragdiff.core.report.as_json import dumps, history_json

        print(dumps(history_json(report)))
    else:  # rich loads for the table only
        from ragdiff.core.report.text_history import print_history

        print_history(report, table_console())  # a pipe or a file gets the whole table; a terminal what fits
    return 0
