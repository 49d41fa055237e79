"""`ragdiff diff BASE RUN [RUN ...] --gold GOLD`: is B better than A, and is the difference more than noise?

A short report a team can paste into a pull request: each metric's change with a paired sign-flip test and a
bootstrap interval, in words; the queries that flipped at k; which k (the reranker's opportunity); how far the
lists moved. `--fail-on-regression` makes it a CI gate (exit 1). Several runs are each compared with the
baseline in one table, p-values Holm-adjusted across runs × metrics. Every output (text, `--json`,
`--markdown`) renders one document, `ragdiff.core.report.diff_doc`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from ragdiff.cli.common import (add_input_options, add_slice_options, corpus_warning, load_inputs, metric_list, positive_int,
                                settings_from, start_loading, stdout_console, table_console, warn, whole_number)
from ragdiff.core.io.choices import DEFAULT_FLIPS, DEFAULT_SEED
from ragdiff.core.visible import visible

# polars, numpy, rich and the core's diff and report load inside the functions that use them, not for --help
# (tests/test_startup.py)
if TYPE_CHECKING:
    from ragdiff.core.metrics.diff import Diff
    from ragdiff.core.labels.gold import Gold
    from ragdiff.core.metrics.evaluate import RunEval
    from ragdiff.core.report.diff_doc import DiffReport


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value}")
    return value


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """What `diff` and `report` both take: the baseline, the runs, the inputs and the test's settings."""
    parser.add_argument("base", type=Path, metavar="BASE", help="the baseline (run A)")
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN",
                        help="the change (run B); several runs are each compared with the baseline in one table, "
                             "p-values Holm-adjusted across runs × metrics")
    add_input_options(parser)
    parser.add_argument("--metrics", type=metric_list,
                        help="comma-separated metrics to test (default: recall, recall_frac, precision and ndcg at k, "
                             "mrr, judged@k, recall at depth)")
    parser.add_argument("--flips", type=positive_int, default=DEFAULT_FLIPS,
                        help=f"random sign flips for the test and bootstrap resamples (default {DEFAULT_FLIPS})")
    parser.add_argument("--seed", type=whole_number(0), default=DEFAULT_SEED, help="seed of the generator (default fixed)")
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (default 0.05)")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "diff", help="compare runs with a baseline: paired significance, flips at k, which k",
        description="Compare run B against run A on the same gold set: per-metric change with a paired "
                    "sign-flip test and a bootstrap 95% interval, the queries that flipped at k, and the "
                    "reranker's opportunity between k and depth. Several runs: each against the baseline, "
                    "p-values Holm-adjusted across runs × metrics.")
    add_comparison_arguments(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    output.add_argument("--markdown", action="store_true",
                        help="print GitHub-flavoured Markdown for a pull-request comment")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when a query marked `regression: true` misses at k in B, or a metric drops "
                             "with p < alpha")
    parser.add_argument("--show", type=positive_int, default=20, metavar="N",
                        help="list at most N queries per group, in text and --markdown (default 20); under 30 "
                             "queries all are listed")
    add_slice_options(parser)
    parser.set_defaults(handler=run)


def same_ranking(a, b) -> bool:
    """Two runs with the same chunks in the same order for every query (scores aside)."""
    columns = ["query_id", "chunk_id", "rank"]
    return a.frame.height == b.frame.height and a.frame.select(columns).equals(b.frame.select(columns))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def compare_all(args: argparse.Namespace, started: list | None = None) -> tuple[list[Diff], DiffReport, list[RunEval],
                                                                               Gold]:
    """Load, evaluate and compare every run with the baseline: the diffs, the report every output renders,
    the evaluations (baseline first) and the gold set. `started`: common.start_loading's reads."""
    threads = 2 if one_blas_thread() else 1
    from concurrent.futures import ThreadPoolExecutor

    from ragdiff.core.metrics.diff import compare
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.report.diff_doc import report
    from ragdiff.core.report.notes import drafts_note

    settings = settings_from(args)
    metrics = args.metrics or default_metrics(settings.k, settings.depth, "diff")
    # each run is evaluated as soon as it is read and ordered: the baseline's evaluation (polars, its own
    # threads) runs while the next run is ordered (numpy, one core), where they ran one after the other.
    # The same evaluations as metrics.evaluate_runs; their errors come after the inputs' checks, as there
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="ragdiff-evaluate") as pool:
        pending = []
        try:
            gold, runs = load_inputs(args, [args.base, *args.runs], started,
                                     each=lambda g, run: pending.append(
                                         pool.submit(evaluate, run, g, settings, metrics, bounds=True)))
        except BaseException:
            for future in pending:
                future.cancel()
            raise
        evals = [future.result() for future in pending]
    warning = corpus_warning(gold, args.corpus, strict=args.strict_corpus)
    if warning:
        warn(warning)
    for path, run in zip(args.runs, runs[1:]):
        if same_ranking(runs[0], run):
            warn(f"warning: {path} ranks every query exactly as {args.base} does"
                 f"{' (it is the same file)' if _same_file(args.base, path) else ''}: every Δ is 0 and nothing "
                 "flips — did you mean to compare another run?")
    diffs = [compare(evals[0], ev, gold=gold, flips=args.flips, seed=args.seed, alpha=args.alpha, threads=threads)
             for ev in evals[1:]]
    found = report(diffs, str(args.base), [str(p) for p in args.runs], str(args.gold), [drafts_note(gold)])
    return diffs, found, evals, gold


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread() -> bool:
    """Load numpy with its BLAS at one thread per call, so that `compare` may run its own two threads (OpenBLAS's
    threads spin after every product and would take the cores from them: several times slower, measured). The variables are
    put back once numpy is loaded (BLAS reads them then), so nothing this process starts inherits them. False
    when it cannot say: numpy already loaded, or the user set a thread count (then `compare` runs in one)."""
    global _PINNED
    if _PINNED is None:
        _PINNED = "numpy" not in sys.modules and not any(name in os.environ for name in _BLAS_THREADS)
        if _PINNED:
            os.environ.update(dict.fromkeys(_BLAS_THREADS, "1"))
            try:
                import numpy  # noqa: F401
            finally:
                for name in _BLAS_THREADS:
                    del os.environ[name]
    return _PINNED


_PINNED: bool | None = None  # whether `one_blas_thread` loaded numpy itself


def gate(diffs: list[Diff]) -> list[str]:
    """Why `--fail-on-regression` fails, over every run (each reason names its run when there are several)."""
    if len(diffs) == 1:
        return diffs[0].failures()
    return [f"{d.b_name}: {reason}" for d in diffs for reason in d.failures()]


def run(args: argparse.Namespace) -> int:
    started = start_loading(args, [args.base, *args.runs])  # polars reads run A while the rest imports
    one_blas_thread()  # before anything loads numpy (the report does)
    from ragdiff.core.report.diff_doc import slices

    diffs, report, evals, gold = compare_all(args, started)
    failures = gate(diffs) if args.fail_on_regression else []
    report.doc.update(slices(evals, gold, drafts_as_labels=args.drafted == "as-labels", tags=args.by_tag,
                             flips=args.flips, seed=args.seed, alpha=args.alpha))
    if args.json:
        from ragdiff.core.report.as_json import diff_json, dumps

        print(dumps(diff_json(report, failures if args.fail_on_regression else None)))
    elif args.markdown:
        from ragdiff.core.report.markdown import markdown

        print(markdown(report, failures, args.show, gate=args.fail_on_regression), end="")
    else:
        from ragdiff.core.report.text_diff import print_gate, print_report, print_slices

        print_report(report, args.show, stdout_console())
        print_slices(report, table_console())
        if args.fail_on_regression:
            print_gate(report, failures, stdout_console())
    if failures and (args.json or args.markdown):  # the document holds them; stderr says them too
        for reason in failures:
            warn(f"regression: {visible(reason)}")
    return 1 if failures else 0
