"""`ragdiff diff RUN_A RUN_B --gold GOLD`: is B better than A, and is the difference more than noise?

A short report a team can paste into a pull request: each metric's change with a paired sign-flip test and a
bootstrap interval, in words; the queries that flipped at k; which k (the reranker's opportunity); how far the
lists moved. `--fail-on-regression` makes it a CI gate (exit 1).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table
from rich.text import Text

from ragdiff.cli.common import (add_input_options, corpus_warning, load_inputs, metric_list, positive_int,
                                settings_from, stdout_console, warn, whole_number)
from ragdiff.core.diff import (MIN_QUERIES_FOR_VERDICT, Diff, Flip, compare, diff_document, diff_metrics, fmt_delta,
                               fmt_p, fmt_value, worth_text)
from ragdiff.core.metrics import evaluate
from ragdiff.core.visible import visible
from ragdiff.core.stats import DEFAULT_FLIPS, DEFAULT_SEED


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value}")
    return value


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "diff", help="compare two runs: paired significance, flips at k, which k",
        description="Compare run B against run A on the same gold set: per-metric change with a paired "
                    "sign-flip test and a bootstrap 95% interval, the queries that flipped at k, and the "
                    "reranker's opportunity between k and depth.")
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the change")
    add_input_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    parser.add_argument("--metrics", type=metric_list,
                        help="comma-separated metrics to test (default: recall, recall_frac, precision and ndcg at k, "
                             "mrr, judged@k, recall at depth)")
    parser.add_argument("--flips", type=positive_int, default=DEFAULT_FLIPS,
                        help=f"random sign flips for the test and bootstrap resamples (default {DEFAULT_FLIPS})")
    parser.add_argument("--seed", type=whole_number(0), default=DEFAULT_SEED, help="seed of the generator (default fixed)")
    parser.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when a query marked `regression: true` misses at k in B, or a metric drops "
                             "with p < alpha")
    parser.add_argument("--show", type=positive_int, default=20, metavar="N",
                        help="list at most N queries per group (default 20); under 30 queries all are listed")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    gold, runs = load_inputs(args, [args.run_a, args.run_b])
    settings = settings_from(args)
    metrics = args.metrics or diff_metrics(settings.k, settings.depth)
    ev_a, ev_b = (evaluate(r, gold, settings, metrics) for r in runs)
    warning = corpus_warning(gold, args.corpus)
    if warning:
        warn(warning)
    diff = compare(ev_a, ev_b, gold=gold, flips=args.flips, seed=args.seed, alpha=args.alpha)
    failures = diff.failures() if args.fail_on_regression else []
    if args.json:
        doc = diff_document(diff, str(args.run_a), str(args.run_b), str(args.gold))
        if args.fail_on_regression:
            doc["fail_on_regression"] = {"failed": bool(failures), "reasons": failures}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print_report(diff, str(args.gold), args.show)
    if args.fail_on_regression:
        if failures:
            console = stdout_console() if not args.json else None
            if console is not None:
                _say(console, Text("FAIL (--fail-on-regression):", style="bold red"))
                for reason in failures:
                    _say(console, Text(f"  - {visible(reason)}"))
            else:
                for reason in failures:
                    warn(f"regression: {visible(reason)}")
            return 1
        if not args.json:
            note = "PASS (--fail-on-regression): no regression-marked query misses at k in B"
            if diff.by_hand:
                note += f"; under {MIN_QUERIES_FOR_VERDICT} queries, metric drops are not tested"
            else:
                note += f", no metric drops with p < {args.alpha:g}"
            stdout_console().print(Text(note))
    return 0


def _say(console, text: Text) -> None:
    """Prose lines are not wrapped, so the report pastes cleanly into a pull request."""
    console.print(text, soft_wrap=True)


def _flip_line(f: Flip, a_name: str, b_name: str) -> Text:
    mark = "✓→✗" if f.direction == "hit_to_miss" else ("✗→✓" if f.direction == "miss_to_hit" else "✗")
    style = "red" if f.direction != "miss_to_hit" else "green"
    line = Text("  ")
    line.append(mark, style=style)
    line.append(" ")
    line.append(visible(f.query_id), style="bold")
    if f.text and f.text != f.query_id:
        line.append("  ")
        line.append(visible(f.text))
    a = f"#{f.a_rank}" if f.a_rank is not None else "—"
    b = f"#{f.b_rank}" if f.b_rank is not None else "—"
    line.append(f"  (first gold: A {a}, B {b})", style="dim")
    return line


def _list(console, flips: list[Flip], limit: int | None, d: Diff) -> None:
    shown = flips if limit is None else flips[:limit]
    for f in shown:
        _say(console, _flip_line(f, d.a_name, d.b_name))
    if len(flips) > len(shown):
        _say(console, Text(f"  … and {len(flips) - len(shown)} more (--show N, or --json)", style="dim"))


def print_report(d: Diff, gold_path: str, show: int) -> None:
    console = stdout_console()
    s = d.settings
    head = Text()
    head.append("ragdiff diff  ", style="bold")
    head.append("A ")
    head.append(visible(d.a_name), style="bold")
    head.append("  vs  B ")
    head.append(visible(d.b_name), style="bold")
    _say(console, head)
    info = f"{gold_path}: {d.n} queries scored"
    if d.unanswerable:
        info += f" ({len(d.unanswerable)} unanswerable, left out)"
    info += f" · k={s.k} depth={s.depth}"
    if s.threshold != 1:
        info += f" threshold={s.threshold}"
    if s.level != "gold":
        info += f" level={s.level}"
    if s.gain != "linear":
        info += " · nDCG gain 2^grade-1"
    _say(console, Text(info))

    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col, justify in (("metric", "left"), ("A", "right"), ("B", "right"), ("Δ", "right"),
                         ("in queries", "right"), ("p", "right"), ("95% CI of Δ", "right")):
        table.add_column(col, justify=justify)
    for m in d.metrics:
        style = {"gain": "green", "drop": "red"}.get(m.verdict)
        table.add_row(m.name, fmt_value(m.a), fmt_value(m.b), Text(fmt_delta(m.delta), style=style or ""),
                      worth_text(m).replace(" queries' worth", "").replace(" queries", ""), fmt_p(m.p_value),
                      f"[{fmt_delta(m.ci95[0])}, {fmt_delta(m.ci95[1])}]")
    console.print()
    console.print(table)
    console.print()

    if d.by_hand:
        _say(console, Text(f"Only {d.n} scored queries (under {MIN_QUERIES_FOR_VERDICT}): no verdict — read these "
                           f"by hand.", style="bold yellow"))
        for m in d.metrics:
            _say(console, Text(f"  {m.summary}"))
    else:
        _say(console, Text("Verdict", style="bold"))
        for m in d.metrics:
            style = {"gain": "green", "drop": "red"}.get(m.verdict, "")
            _say(console, Text(f"  {m.sentence}", style=style))
        method = "exact over all sign flips" if all(m.method == "exact" for m in d.metrics) else \
            f"{d.flips} random sign flips, seed {d.seed}"
        _say(console, Text(f"  (paired sign-flip test, two-sided, {method}; α = {d.alpha:g})", style="dim"))
    console.print()

    limit = None if d.by_hand else show
    title = Text(f"Flips at k={s.k}: ", style="bold")
    title.append(f"{len(d.hit_to_miss)} hit→miss, {len(d.miss_to_hit)} miss→hit")
    _say(console, title)
    if not d.hit_to_miss and not d.miss_to_hit:
        _say(console, Text("  no query flipped"))
    _list(console, d.hit_to_miss, limit, d)
    _list(console, d.miss_to_hit, limit, d)

    if d.opportunity:
        console.print()
        _say(console, Text(f"Which k (recall@{s.k} → recall@{s.depth}; gold in the top {s.depth} but not the "
                           f"top {s.k} is the reranker's opportunity)", style="bold"))
        for side in ("a", "b"):
            o = d.opportunity.get(side)
            if o is None:
                continue
            line = Text(f"  {side.upper()} ")
            line.append(visible(o.run))
            line.append(f": {fmt_value(o.recall_k)} → {fmt_value(o.recall_depth)}, {o.count} of {d.n} queries")
            if o.queries:
                line.append(": " + ", ".join(map(visible, o.queries[:show])) + (" …" if len(o.queries) > show else ""), style="dim")
            _say(console, line)

    if d.overlap is not None:
        console.print()
        ov = d.overlap
        _say(console, Text(f"Lists moved: mean Jaccard of the top {ov.k} {ov.mean_jaccard:.2f}, "
                           f"RBO (p={ov.p:g}, top {ov.depth}) {ov.mean_rbo:.2f}  (1 = identical, 0 = disjoint)"))

    if d.judged_warning:
        console.print()
        _say(console, Text("warning: " + visible(d.judged_warning), style="yellow"))
    if d.regressions:
        console.print()
        _say(console, Text(f"Regression queries that miss at k={s.k} in B: {len(d.regressions)}", style="bold red"))
        _list(console, d.regressions, None, d)
