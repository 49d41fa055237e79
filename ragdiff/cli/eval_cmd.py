"""`ragdiff eval RUN [RUN ...] --gold GOLD`: every metric at k and at depth, per run."""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

from ragdiff.cli.common import (add_input_options, add_slice_options, check_run_matches_corpus, check_run_matches_gold,
                                corpus_warning, load_inputs, metric_list, settings_from, stdout_console,
                                table_console, warn)
from ragdiff.core.errors import InputError, UsageError

if TYPE_CHECKING:  # polars, numpy and rich load when the command runs, not for --help
    from ragdiff.core.labels.gold import Gold
    from ragdiff.core.metrics.evaluate import RunEval


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("eval", help="score runs against the gold set",
                                   description="Score one or more runs against the gold set, at k and at depth.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN")
    add_input_options(parser)
    parser.add_argument("--metrics", type=metric_list,
                        help="comma-separated, e.g. recall@5,recall@50,mrr,ndcg@10,precision@5,judged@10")
    parser.add_argument("--per-query", action="store_true", help="also show every query's values")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    parser.add_argument("--trec-eval", action="store_true",
                        help="print trec_eval's layout (measure, query, value) for the metrics trec_eval has; with "
                             "--per-query, trec_eval -q's")
    parser.add_argument("--csv", type=Path, metavar="FILE", help="write the per-query table (query, run, metrics, "
                                                                 "tags, unanswerable) as CSV")
    parser.add_argument("--parquet", type=Path, metavar="FILE", help="write the per-query table as Parquet")
    parser.add_argument("--log", type=Path, metavar="HISTORY.csv", help="append one row per run to this history file")
    parser.add_argument("--gold-left", action="store_true",
                        help="also estimate the gold still unjudged in the runs' top 10 (the pool `judge` judges) and "
                             "what stopping there leaves of recall@10's bound, as `labels stale --runs` does")
    add_slice_options(parser)
    parser.add_argument("--low-memory", action="store_true",
                        help="read TREC runs a slice of queries at a time (same numbers, bounded memory); chosen by "
                             "itself when the runs would not fit in memory")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.metrics.evaluate import evaluate_runs
    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.report.eval_doc import eval_report

    settings = settings_from(args)
    if args.trec_eval and args.json:
        raise UsageError("--trec-eval with --json: each prints the whole output on stdout; choose one")
    if args.trec_eval and args.gold_left:
        raise UsageError("--trec-eval with --gold-left: trec_eval's layout has no place for the estimate; choose one")
    if settings.judged_only and args.log:
        raise UsageError("--judged-only with --log: a history compares runs scored the same way, and condensed "
                         "lists are not; log without --judged-only")
    metrics = args.metrics or default_metrics(settings.k, settings.depth)
    # runs too big for memory (or --low-memory) are scored a slice of queries at a time, with the same numbers
    in_parts = args.low_memory or _too_big(args)
    if in_parts:
        gold, runs = _gold_and_trec_runs(args), []

        def score_all(g: Gold) -> list[RunEval]:
            return _scored_in_parts(args, g, settings, metrics)
    else:
        gold, runs = load_inputs(args, args.runs)

        def score_all(g: Gold) -> list[RunEval]:
            return evaluate_runs(runs, g, settings, metrics, bounds=True)
    warnings = [corpus_warning(gold, args.corpus, strict=args.strict_corpus)]
    evals = score_all(gold)
    # --drafted as-labels: the same runs scored as if every draft were accepted, shown beside the real numbers
    as_labels = None
    if args.drafted == "as-labels":
        as_labels = score_all(gold.with_drafts_as_labels())
    tags = None
    if args.by_tag:
        from ragdiff.core.metrics.slices import by_tag

        tags = [by_tag(ev, gold) for ev in evals]
    if args.gold_left and in_parts:
        warnings.append("warning: runs read in parts (--low-memory): the gold left is not estimated (its pool "
                        "needs each run whole)")
    if args.corpus and in_parts:
        warnings.append(f"warning: runs read in parts (--low-memory): their chunk ids are not checked against "
                        f"{args.corpus}")
    elif args.corpus:
        corpus = Corpus(args.corpus)
        warnings += [check_run_matches_corpus(r, corpus) for r in runs]
    for warning in filter(None, warnings):
        warn(warning)
    if args.log:
        from ragdiff.core.report.history import append_runs

        append_runs(args.log, evals, gold, corpus=args.corpus)
    _write_tables(args, evals, gold)
    report = eval_report(evals, args.per_query, gold, as_labels, tags)
    if args.gold_left and runs:
        # asked for, not by default: the pool joins every run whole, 1.2-1.3x the eval's time at 10,000 queries
        # (bench/RESULTS.md, "The gold left in eval")
        from ragdiff.core.judge.stopping import eval_note

        report.gold_left = eval_note(runs, gold, evals, args.per_query, threshold=settings.threshold)
    if args.trec_eval:
        import sys

        from ragdiff.core.report.trec_eval import trec_eval_text

        sys.stdout.write(trec_eval_text(report))
    elif args.json:
        from ragdiff.core.report.as_json import dumps, eval_json

        print(dumps(eval_json(report)))
    else:  # rich loads for the tables only
        from ragdiff.core.report.text_eval import print_tables

        print_tables(report, stdout_console(), table_console())
    return 0


def _write_tables(args: argparse.Namespace, evals: list[RunEval], gold: Gold) -> None:
    """--csv / --parquet: the per-query table, each file whole or not at all."""
    if not (args.csv or args.parquet):
        return
    from ragdiff.core.report.export import per_query_table, table_bytes
    from ragdiff.core.io.textio import write_file

    table = per_query_table(evals, gold)
    inputs = [*args.runs, args.gold]
    for path, fmt in ((args.csv, "csv"), (args.parquet, "parquet")):
        if path is not None:
            write_file(path, table_bytes(table, fmt), inputs=inputs)


def _too_big(args: argparse.Namespace) -> bool:
    from ragdiff.core.metrics.partitioned import too_big_for_memory

    return too_big_for_memory(args.runs, args.run_format)


def _gold_and_trec_runs(args: argparse.Namespace) -> Gold:
    """The gold set, after checking that every run is a TREC file (the only format read in parts)."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.io.runs import sniff_run_format
    from ragdiff.core.io.textio import check_file

    for path in args.runs:
        check_file(path)
        fmt = args.run_format or sniff_run_format(path)
        if fmt != "trec":
            raise InputError(path, f"--low-memory reads TREC runs only; this run is {fmt}")
    return load_gold(args.gold, args.gold_format)


def _scored_in_parts(args: argparse.Namespace, gold: Gold, settings, metrics) -> list[RunEval]:
    """Each TREC run scored a slice of queries at a time (core/metrics/partitioned.py): the numbers of `evaluate`."""
    from ragdiff.core.metrics.partitioned import evaluate_partitioned

    evals = [evaluate_partitioned(path, gold, settings, metrics, keep_first=args.keep_first, bounds=True) for path in args.runs]
    names = [ev.run.name for ev in evals]
    for ev in evals:
        if names.count(ev.run.name) > 1:
            ev.run.name = str(ev.run.path)
        check_run_matches_gold(ev.run, gold)
    return evals
