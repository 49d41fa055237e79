"""`ragdiff export contexts GOLD --corpus C`: the labelled chunks' text per query, as JSONL; `ragdiff export run
RUN -o FILE` and `ragdiff export qrels GOLD -o FILE`: TREC files for trec_eval, ir_measures and ranx
(core/report/export.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragdiff.cli.common import add_gold_format
from ragdiff.core.io.choices import RUN_FORMATS
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

    run = kinds.add_parser(
        "run", help="a run as a file of another format (TREC for trec_eval, ir_measures, ranx)",
        description="Write a run in the format of the output's extension (.trec/.run, .jsonl, .json, .csv, .tsv, "
                    ".parquet), in the order ragdiff scores it. A TREC file keeps the run's scores when they give "
                    "that order under trec_eval's rule (score descending, ties by chunk id descending); otherwise "
                    "each query's scores become returned - rank + 1, and a warning says so.")
    run.add_argument("run", type=Path, metavar="RUN", help="the run to write out")
    run.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the run's format outright")
    run.add_argument("--keep-first", action="store_true", help="keep the first of duplicate chunks in a query")
    run.add_argument("-o", "--output", type=Path, metavar="FILE", required=True,
                     help="the file to write; its extension gives the format")
    run.set_defaults(handler=run_run)

    qrels = kinds.add_parser(
        "qrels", help="the gold set as TREC qrels, grades as ragdiff scores them",
        description="Write the gold set as TREC qrels (qid 0 chunk grade), with the grades ragdiff scores at the "
                    "level asked for (--level gold: evidence is judged 0; evidence: gold and evidence are "
                    "relevant). Drafts are left out; so are queries marked retrieval: false. ragdiff's "
                    "--threshold is trec_eval's -l.")
    qrels.add_argument("gold", type=Path, metavar="GOLD", help="the gold set")
    add_gold_format(qrels)
    qrels.add_argument("--level", choices=SCORING_LEVELS, default="gold",
                       help="gold: the gold chunks relevant; evidence: gold and evidence chunks (default gold)")
    qrels.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default: stdout)")
    qrels.set_defaults(handler=run_qrels)


def run_contexts(args: argparse.Namespace) -> int:
    from ragdiff.cli.common import check_settings, corpus_warning, warn
    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.report.export import contexts_jsonl
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.textio import write_file

    check_settings(EvalSettings(threshold=args.threshold, level=args.level))
    gold = load_gold(args.gold, args.gold_format)
    warning = corpus_warning(gold, args.corpus)
    text = contexts_jsonl(gold, Corpus(args.corpus), args.level, args.threshold)
    if warning:
        warn(warning)
    if args.output is None:
        sys.stdout.write(text)
    else:
        from ragdiff.cli.common import stdout_console
        from ragdiff.core.words import queries

        write_file(args.output, text.encode("utf-8"), inputs=[args.gold, args.corpus])
        lines = text.count("\n")
        stdout_console().print(f"wrote {args.output} ({queries(lines)}, the text of their gold "
                               f"chunks, {len(text.encode()) // 1024 + 1} KiB)", highlight=False, markup=False,
                               soft_wrap=True)
    return 0


def run_run(args: argparse.Namespace) -> int:
    from ragdiff.cli.common import warn
    from ragdiff.core.errors import InputError
    from ragdiff.core.report.export import run_bytes
    from ragdiff.core.io.runs import load_run, run_format_from_extension
    from ragdiff.core.io.textio import write_file

    fmt = run_format_from_extension(args.output)
    if fmt is None:
        raise InputError(args.output, f"cannot tell the format to write from the extension "
                                      f"{args.output.suffix or '(none)'!r}; expected .trec, .run, .jsonl, .json, "
                                      ".csv, .tsv or .parquet")
    run = load_run(args.run, args.run_format, keep_first=args.keep_first)
    data, replaced = run_bytes(run.frame, fmt, run.name, run.query_text, path=args.run)
    write_file(args.output, data, inputs=[args.run])
    if replaced:
        warn(f"note: the scores in {args.run} do not give its order under trec_eval's rule (score descending, "
             f"ties by chunk id descending); {args.output} carries returned - rank + 1 instead, so every tool "
             "reads the order ragdiff scores")
    return 0


def run_qrels(args: argparse.Namespace) -> int:
    from ragdiff.core.report.export import qrels_text
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.io.textio import write_file

    text = qrels_text(load_gold(args.gold, args.gold_format), args.level)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_file(args.output, text.encode("utf-8"), inputs=[args.gold])
    return 0
