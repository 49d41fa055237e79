"""`ragdiff judge RUN [RUN ...] --gold GOLD [--corpus C] [--pool 10]`: the judging queue over the pooled runs.

Textual is imported only inside the handler, so `ragdiff eval` and friends never load it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragdiff.cli.common import add_gold_format, add_reviewer, positive_int, run_app
from ragdiff.core.choices import RUN_FORMATS
from ragdiff.core.errors import InputError


def add_parser(subparsers) -> None:
    judge = subparsers.add_parser(
        "judge", help="judge the pooled chunks of one or more runs, one key per chunk (the labelling queue)",
        description="The pool of a query is the union of every run's top --pool chunks. Unjudged chunks come "
                    "first, one key decides each (0-3, g, e, x; s skips, ! flags), and the queue moves on by "
                    "itself across queries. Every decision is written to the label file at once; starting "
                    "again resumes at the first unjudged chunk.",
    )
    judge.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="the runs whose results are pooled")
    judge.add_argument("--gold", required=True, type=Path, help="the label file the decisions are written to")
    judge.add_argument("--corpus", type=Path, help="corpus JSONL (id, text): the chunk text, and / to search it")
    judge.add_argument("--pool", type=positive_int, default=10, help="each run's top N chunks per query (default 10)")
    add_gold_format(judge, "label file")
    judge.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    judge.add_argument("--bm25", action="store_true",
                       help="pool a BM25 run over --corpus too (as ragdiff bm25 makes it), with no file step")
    add_reviewer(judge)
    judge.set_defaults(handler=run_judge)


def run_judge(args: argparse.Namespace) -> int:
    if args.bm25 and args.corpus is None:
        from ragdiff.core.errors import UsageError

        raise UsageError("--bm25 searches the corpus: give it with --corpus C")
    for what, path in [*(("RUN", p) for p in args.runs), ("--gold", args.gold), ("--corpus", args.corpus)]:
        if path is not None and not path.exists():
            raise InputError(path, f"no such file ({what})")
    from ragdiff.app.judge import JudgeApp, JudgeInputs

    app = JudgeApp(JudgeInputs(runs=list(args.runs), gold=args.gold, pool=args.pool, corpus=args.corpus,
                               run_format=args.run_format, gold_format=args.gold_format, reviewer=args.reviewer,
                               bm25=args.bm25))
    return run_app(app)
