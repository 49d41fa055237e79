"""`ragdiff export contexts GOLD --corpus C`: the labelled chunks' text per query, as JSONL (core/export.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragdiff.cli.common import add_gold_format
from ragdiff.core.vocab import SCORING_LEVELS


def add_parser(subparsers) -> None:
    export = subparsers.add_parser("export", help="write what the gold set knows in a form other tools read",
                                   description="Write what the gold set knows in a form other tools read.")
    kinds = export.add_subparsers(dest="what", metavar="WHAT")
    kinds.required = True
    contexts = kinds.add_parser(
        "contexts", help="the gold chunks' text per query (JSONL), for testing generation on its own",
        description="One JSON object a line, one line per gold query in file order: id, text, unanswerable, "
                    "tags, and each relevant labelled chunk's id, grade, level and text from the corpus.")
    contexts.add_argument("gold", type=Path, metavar="GOLD", help="the gold set")
    add_gold_format(contexts)
    contexts.add_argument("--corpus", type=Path, required=True, help="corpus JSONL (id, text) the chunk text comes from")
    contexts.add_argument("--level", choices=SCORING_LEVELS, default="gold",
                          help="gold: the gold chunks; evidence: gold and evidence chunks (default gold)")
    contexts.add_argument("--threshold", type=int, default=1, help="lowest grade that counts as relevant (default 1)")
    contexts.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default: stdout)")
    contexts.set_defaults(handler=run_contexts)


def run_contexts(args: argparse.Namespace) -> int:
    from ragdiff.cli.common import check_settings, corpus_warning, warn
    from ragdiff.core.corpus import Corpus
    from ragdiff.core.export import contexts_jsonl
    from ragdiff.core.gold import load_gold
    from ragdiff.core.metrics import EvalSettings
    from ragdiff.core.textio import write_file

    check_settings(EvalSettings(threshold=args.threshold, level=args.level))
    gold = load_gold(args.gold, args.gold_format)
    warning = corpus_warning(gold, args.corpus)
    text = contexts_jsonl(gold, Corpus(args.corpus), args.level, args.threshold)
    if warning:
        warn(warning)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_file(args.output, text.encode("utf-8"), inputs=[args.gold, args.corpus])
    return 0
