"""`ragdiff report RUN_A RUN_B [RUN ...] --gold GOLD [--corpus C] -o FILE.html`: one page to share.

The same comparison as `ragdiff diff` (several runs: each against the first, Holm-adjusted), written as one
self-contained HTML file: the metrics with verdicts, the which-k plot, and every flipped query with both
ranked lists side by side, labels marked, chunk text a click away.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragdiff.cli import diff_cmd
from ragdiff.cli.common import stdout_console
from ragdiff.core.errors import InputError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write one self-contained HTML page comparing runs (to share or attach to a PR)",
        description="Compare run B (and any further runs) with run A, as `ragdiff diff` does, and write one "
                    "self-contained HTML file: no network, works from file:// offline.")
    diff_cmd.add_comparison_arguments(parser)
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.html", help="where to write the page")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    diff_cmd.one_blas_thread()  # before anything loads numpy: compare_all may then run its two threads
    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.report.html_page import page_data, render
    from ragdiff.core.io.textio import write_file

    if args.output.is_dir():
        raise InputError(args.output, "is a folder; expected the path of the HTML file to write")
    _diffs, report, evals, gold = diff_cmd.compare_all(args)
    corpus_path = args.corpus
    if corpus_path is None:
        named = gold.recorded_corpus()  # the corpus the label file names, beside it
        corpus_path = named if named is not None and named.is_file() else None
    corpus = Corpus(corpus_path) if corpus_path is not None else None
    page = render(report, page_data(evals, gold, corpus))
    write_file(args.output, page.encode("utf-8"), inputs=[args.base, *args.runs, args.gold, corpus_path])
    flipped = sum(len(r["flipped_queries"]) for r in report.doc.get("runs", [report.doc]))
    stdout_console().print(f"wrote {args.output} ({len(page.encode()) // 1024 + 1} KiB, {flipped} flipped queries"
                           + ("" if corpus else ", no corpus: chunk text not shown") + ")", highlight=False,
                           markup=False)
    return 0
