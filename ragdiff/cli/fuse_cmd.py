"""`ragdiff fuse RUN RUN [...] --method rrf|combsum|combmnz|wsum -o FUSED`: one run from several (core/retrieval/fusion.py),
written in the format of FUSED's extension; `--optimize --gold G` chooses wsum's weights or RRF's k by k-fold
cross-validation and says whether the gain over the best single run is more than noise."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ragdiff.cli.common import add_gold_format, positive_int, whole_number
from ragdiff.core.io.choices import DEFAULT_SEED, FUSION_METHODS, FUSION_NORMS, RUN_FORMATS
from ragdiff.core.errors import InputError, UsageError



def weight_list(text: str) -> list[float]:
    out = []
    for part in text.split(","):
        try:
            out.append(float(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"weight {part.strip()!r} is not a number; expected e.g. 0.3,0.7") from None
    return out


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "fuse", help="fuse runs into one (RRF, CombSUM, CombMNZ, weighted sum), as ranx defines them",
        description="Fuse two or more runs into one, with ranx's definitions of each method and normalisation. "
                    "The fused list is ordered by fused score, ties by chunk id descending (ragdiff's rule for "
                    "scored runs). A query some run lacks is fused from the runs that have it.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="two or more runs")
    parser.add_argument("--method", choices=FUSION_METHODS, default="rrf", help="fusion method (default rrf)")
    parser.add_argument("--norm", choices=FUSION_NORMS, default=None,
                        help="score normalisation per run and query before combsum, combmnz or wsum (default "
                             "minmax, ranx's); rrf reads ranks only")
    parser.add_argument("--weights", type=weight_list, metavar="W,...", help="wsum: one weight per run (default 1 each)")
    parser.add_argument("--rrf-k", type=positive_number, default=60, help="rrf: the k in 1 / (k + rank) (default 60)")
    parser.add_argument("--depth", type=positive_int, metavar="N",
                        help="fuse each run's top N and keep the fused top N (default: everything)")
    parser.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    parser.add_argument("--keep-first", action="store_true", help="keep the first of duplicate chunks in a query")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FUSED",
                        help="the fused run; its extension gives the format (.jsonl, .trec, .json, .csv, .tsv, .parquet)")
    parser.add_argument("--optimize", action="store_true",
                        help="choose wsum's weights (0.1 grid summing to 1) or rrf's k (10..100) by k-fold "
                             "cross-validation on --gold")
    parser.add_argument("--gold", type=Path, help="--optimize: the gold set the setting is chosen on")
    add_gold_format(parser)
    parser.add_argument("--metric", default="ndcg@10", help="--optimize: the metric to maximise (default ndcg@10)")
    parser.add_argument("--folds", type=whole_number(2), default=5, help="--optimize: folds (default 5)")
    parser.add_argument("--seed", type=whole_number(0), default=DEFAULT_SEED, help="--optimize: seed of the folds")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ragdiff.cli.common import warn
    from ragdiff.core.retrieval import fusion
    from ragdiff.core.report.export import run_bytes
    from ragdiff.core.io.runs import load_run, run_format_from_extension
    from ragdiff.core.io.textio import write_file

    if len(args.runs) < 2:
        raise UsageError("expected two or more runs to fuse")
    if args.optimize and args.gold is None:
        raise UsageError("--optimize chooses the weights on a gold set; expected --gold GOLD")
    if args.gold is not None and not args.optimize:
        raise UsageError("--gold is read by --optimize only; add --optimize, or leave --gold out")
    if args.optimize and args.weights is not None:
        raise UsageError("--optimize chooses the weights; leave --weights out")
    if args.method == "rrf" and args.norm not in (None, "none"):
        warn(f"note: rrf reads ranks only; --norm {args.norm} changes nothing")
    norm = args.norm or fusion.DEFAULT_NORM
    metric = _metric(args.metric) if args.optimize else None
    fmt = run_format_from_extension(args.output)
    if fmt is None:
        raise InputError(args.output, f"cannot tell the format to write from the extension "
                                      f"{args.output.suffix or '(none)'!r}; expected .jsonl, .trec, .run, .json, "
                                      ".csv, .tsv or .parquet")
    fusion.check_weights(args.weights, len(args.runs), args.method)  # before any file is read
    if args.optimize:
        fusion.grid(args.method, len(args.runs))  # a method with nothing to search, before any file is read
    runs = [load_run(p, args.run_format, keep_first=args.keep_first) for p in args.runs]
    names = [r.name for r in runs]
    for r in runs:
        if names.count(r.name) > 1:
            r.name = str(r.path)
    weights, rrf_k = args.weights, args.rrf_k
    if args.optimize:
        from ragdiff.core.labels.gold import load_gold

        gold = load_gold(args.gold, args.gold_format)
        result = fusion.optimize(runs, gold, metric, args.method, norm, args.folds, args.seed, depth=args.depth)
        weights = result.chosen.weights if args.method == "wsum" else None
        rrf_k = result.chosen.rrf_k
        print(optimize_report(result))
    fused = fusion.fuse(runs, args.method, norm, weights, rrf_k, args.depth)
    for name, lacks in fused.missing.items():
        shown = ", ".join(lacks[:10]) + (" …" if len(lacks) > 10 else "")
        warn(f"note: {name} lacks {len(lacks)} quer{'y' if len(lacks) == 1 else 'ies'} the other runs have "
             f"({shown}): fused from the runs that have them")
    data, _ = run_bytes(fused.frame, fmt, args.output.stem, fused.query_text, path=args.output)
    write_file(args.output, data, inputs=args.runs + ([args.gold] if args.gold else []))
    queries = fused.frame.get_column("query_id").n_unique()
    how = f"k {rrf_k:g}" if args.method == "rrf" else f"norm {norm}" + (
        f", weights {','.join(f'{w:g}' for w in weights or [1.0] * len(runs))}" if args.method == "wsum" else "")
    print(f"wrote {args.output}: {args.method} ({how}) of {len(runs)} runs, {queries} queries, "
          f"{fused.frame.height} results")
    return 0


def _metric(text: str):
    from ragdiff.core.metrics.specs import parse_metric

    try:
        return parse_metric(text)
    except ValueError as err:
        raise UsageError(f"--metric: {err}") from None


def optimize_report(result) -> str:
    """The cross-validated score beside the in-sample one and the best single run, with diff's paired test
    (core/metrics/stats.py) between the fused run's held-out values and the best single run's, in words."""
    from ragdiff.core import fmt
    from ragdiff.core.metrics.diff import MIN_QUERIES_FOR_VERDICT
    from ragdiff.core.metrics.stats import paired_test

    n = len(result.queries)
    m = result.metric
    test = paired_test(result.held_out - result.best_single_values)
    if n < MIN_QUERIES_FOR_VERDICT:
        verdict = f"no verdict under {MIN_QUERIES_FOR_VERDICT} queries — read them by hand"
    elif test.p_value < 0.05:
        verdict = "a real gain" if test.mean > 0 else "a real drop"
    else:
        verdict = "inside the noise: the fusion is not shown to beat the best single run"
    width = max(len(name) for name in result.single)
    lines = [
        f"--optimize {result.method}{'' if result.method == 'rrf' else f' (norm {result.norm})'} on {m}: {len(result.settings)} settings, "
        f"{result.folds}-fold cross-validation over {n} scored queries (seed {result.seed})",
        f"  in-sample        {fmt.number(result.in_sample)}  {result.chosen.words(result.method)}, chosen on "
        "all queries and scored on the same queries (what ranx's optimize_fusion reports)",
        f"  cross-validated  {fmt.number(result.cross_validated)}  each fold scored with the setting chosen on "
        "the other folds",
        *[f"    fold {f + 1}: {s.words(result.method)}" for f, s in enumerate(result.fold_settings)],
        "  single runs, same queries:",
        *[f"    {name:<{width}}  {fmt.number(v)}{'  (best)' if name == result.best_single else ''}"
          for name, v in result.single.items()],
        f"  fused (held out) vs {result.best_single}: {m} {fmt.number(test.mean, 'delta')}, p = {fmt.number(test.p_value, 'p')}, "
        f"95% CI [{fmt.number(test.ci95[0], 'delta')}, {fmt.number(test.ci95[1], 'delta')}] (paired {test.method} test, as diff): "
        f"{verdict}",
        f"  the run written uses {result.chosen.words(result.method)} (chosen on all queries); expect about the "
        "cross-validated score on new queries, not the in-sample one",
    ]
    return "\n".join(lines)
