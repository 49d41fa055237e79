"""`ragdiff diff BASE RUN [RUN ...] --gold GOLD`: is B better than A, and is the difference more than noise?

A short report a team can paste into a pull request: each metric's change with a paired sign-flip test and a
bootstrap interval, in words; the queries that flipped at k; which k (the reranker's opportunity); how far the
lists moved. `--fail-on-regression` makes it a CI gate (exit 1). Several runs are each compared with the
baseline in one table, p-values Holm-adjusted across runs × metrics. Every output (text, `--json`,
`--markdown`) renders one document, `ragdiff.core.report`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from ragdiff.cli.common import (add_input_options, add_slice_options, drafts_note, drafts_summary, corpus_warning, load_inputs, metric_list, positive_int,
                                settings_from, start_loading, stdout_console, warn, whole_number)
from ragdiff.core.choices import DEFAULT_FLIPS, DEFAULT_SEED
from ragdiff.core.visible import visible
from ragdiff.core import fmt, words

# polars, numpy, rich and the core's diff and report load inside the functions that use them, not for --help
# (tests/test_startup.py)
if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core.diff import Diff
    from ragdiff.core.gold import Gold
    from ragdiff.core.metrics import RunEval


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


def compare_all(args: argparse.Namespace, started: list | None = None) -> tuple[list[Diff], dict, list[RunEval], Gold]:
    """Load, evaluate and compare every run with the baseline: the diffs, the document every output renders,
    the evaluations (baseline first) and the gold set. `started`: common.start_loading's reads."""
    threads = 2 if one_blas_thread() else 1
    from ragdiff.core import report
    from ragdiff.core.diff import compare
    from ragdiff.core.metrics import default_metrics, evaluate_runs

    settings = settings_from(args)
    gold, runs = load_inputs(args, [args.base, *args.runs], started)
    metrics = args.metrics or default_metrics(settings.k, settings.depth, "diff")
    evals = evaluate_runs(runs, gold, settings, metrics, bounds=True)
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
    doc = report.document(diffs, str(args.base), [str(p) for p in args.runs], str(args.gold))
    return diffs, doc, evals, gold


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
    from ragdiff.core import report
    from ragdiff.core.diff import MIN_QUERIES_FOR_VERDICT

    diffs, doc, evals, gold = compare_all(args, started)
    failures = gate(diffs) if args.fail_on_regression else []
    slices = slice_document(args, evals, gold)
    doc.update(slices)
    if args.json:
        if args.fail_on_regression:
            doc["fail_on_regression"] = {"failed": bool(failures), "reasons": failures}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    elif args.markdown:
        print(report.markdown(doc, failures, args.show, notes=[drafts_note(gold)]), end="")
    else:
        print_report(doc, args.show)
        print_slices(slices, [ev.run.name for ev in evals], gold)
    if args.fail_on_regression:
        by_hand = any(d.by_hand for d in diffs)
        if failures:
            if not (args.json or args.markdown):
                from rich.text import Text

                console = stdout_console()
                _say(console, Text("FAIL (--fail-on-regression):", style="bold red"))
                for reason in failures:
                    _say(console, Text(f"  - {visible(reason)}"))
            else:
                for reason in failures:
                    warn(f"regression: {visible(reason)}")
            return 1
        if not args.json:
            note = "PASS (--fail-on-regression): no regression-marked query misses at k in B"
            if by_hand:
                note += f"; under {MIN_QUERIES_FOR_VERDICT} queries, metric drops are not tested"
            else:
                note += f", no metric drops with p < {args.alpha:g}"
            if args.markdown:
                print(f"\n**{note}**")
            else:
                from rich.text import Text

                stdout_console().print(Text(note))
    return 0


def slice_document(args: argparse.Namespace, evals: list[RunEval], gold: Gold) -> dict:
    """What diff adds to its document beside the comparison: how many drafts wait, the means with every draft
    accepted (--drafted as-labels) and every metric per tag (--by-tag), for the baseline and each run."""
    from ragdiff.core.metrics import evaluate

    out: dict = {"drafted": drafts_summary(gold), "not_retrieval": gold.not_retrieval()}
    if args.drafted == "as-labels":
        accepted = gold.with_drafts_as_labels()
        out["drafts_as_labels"] = {
            ev.run.name: {n: fmt.json_number(v) for n, v in evaluate(ev.run, accepted, ev.settings, ev.metrics).means.items()}
            for ev in evals}
    if args.by_tag:
        from ragdiff.core.slices import by_tag

        out["by_tag"] = {ev.run.name: {t.tag: {"queries": t.queries, "metrics": {n: fmt.json_number(v) for n, v in t.means.items()}}
                                       for t in by_tag(ev, gold)} for ev in evals}
        out["by_tag_tests"] = by_tag_tests(args, evals, gold)
    return out


def by_tag_tests(args: argparse.Namespace, evals: list[RunEval], gold: Gold) -> dict:
    """Each run against the baseline per tag and metric: diff's paired test over the tag's queries, the p-value
    Holm-adjusted across the tags (core/slices.tag_tests), the interval and the verdict by diff's rules."""
    from ragdiff.core.diff import MIN_QUERIES_FOR_VERDICT
    from ragdiff.core.slices import tag_tests

    out: dict = {"p_adjustment": "Holm across the tags, for each run and metric",
                 "min_queries_for_verdict": MIN_QUERIES_FOR_VERDICT, "runs": {}}
    for ev in evals[1:]:
        runs = out["runs"].setdefault(ev.run.name, {})
        for t in tag_tests(evals[0], ev, gold, flips=args.flips, seed=args.seed, alpha=args.alpha):
            m = t.result
            runs.setdefault(t.tag, {})[m.name] = {
                "n": m.n, "delta": fmt.json_number(m.delta), "p_value": fmt.json_number(m.p_value),
                "p_adjusted": fmt.json_number(m.p_adjusted), "ci95": [fmt.json_number(x) for x in m.ci95],
                "verdict": m.verdict, "verdict_words": m.verdict_words, "sentence": m.sentence}
    return out


def print_slices(slices: dict, names: list[str], gold: Gold) -> None:
    """The drafts line, the as-if-accepted means and the per-tag means, each run beside the baseline."""
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console

    console = table_console()
    heads = ["A", "B"] if len(names) == 2 else ["base", *names[1:]]

    def table(first: list[str]) -> Table:
        t = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for col in first:
            t.add_column(col)
        for head in heads:
            t.add_column(Text(visible(head)), justify="right")
        for head in heads[1:]:
            t.add_column(f"Δ {visible(head)}" if len(names) > 2 else "Δ", justify="right")
        return t

    def cells(values: list[dict], name: str) -> list[str]:
        row = [fmt.number(v.get(name)) for v in values]
        base = values[0].get(name)
        for v in values[1:]:
            b = v.get(name)
            row.append("—" if base is None or b is None else fmt.number(b - base, 'delta'))
        return row

    if slices["not_retrieval"]:
        console.print()
        _say(console, Text(visible(f"{len(slices['not_retrieval'])} marked retrieval: false (the answer is not inside a "
                                   "chunk; left out of every score): " + ", ".join(slices["not_retrieval"]))))
    note = drafts_note(gold)
    if note:
        console.print()
        _say(console, Text(note))
    if "drafts_as_labels" in slices:
        values = [slices["drafts_as_labels"][n] for n in names]
        t = table(["metric (+drafts)"])
        for metric in values[0]:
            t.add_row(metric, *cells(values, metric))
        console.print()
        _say(console, Text("As if every drafted label were accepted (a drafted 0 as not relevant):", style="bold"))
        console.print(t)
    if "by_tag" in slices:
        console.print()
        tags = list(slices["by_tag"][names[0]])
        if not tags:
            _say(console, Text("--by-tag: no query in the gold set has tags"))
            return
        _say(console, Text("Per tag (mean over the tag's scored queries):", style="bold"))
        t = table(["tag", "queries", "metric"])
        for tag in tags:
            values = [slices["by_tag"][n][tag]["metrics"] for n in names]
            n_q = str(len(slices["by_tag"][names[0]][tag]["queries"]))
            for i, metric in enumerate(values[0]):
                t.add_row(Text(visible(tag)) if i == 0 else "", n_q if i == 0 else "", metric, *cells(values, metric))
        console.print(t)
        _print_tag_tests(console, slices.get("by_tag_tests"), names)


def _print_tag_tests(console, tests: dict | None, names: list[str]) -> None:
    """Per tag, each run against the baseline: Δ, p (Holm-adjusted across the tags), the 95% interval and the
    verdict — none for a slice under thirty queries."""
    from rich.table import Table
    from rich.text import Text

    if not tests or not tests["runs"]:
        return
    several = len(names) > 2
    t = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in (["run"] if several else []) + ["tag", "queries", "metric"]:
        t.add_column(col)
    for col in ("Δ", "p (Holm)", "95% CI"):
        t.add_column(col, justify="right")
    t.add_column("verdict")
    for run, tags in tests["runs"].items():
        for tag, metrics in tags.items():
            for i, (metric, m) in enumerate(metrics.items()):
                first = i == 0
                lead = ([Text(visible(run)) if first else ""] if several else []) + [
                    Text(visible(tag)) if first else "", str(m["n"]) if first else ""]
                low, high = m["ci95"]
                interval = "—" if low is None else f"[{fmt.number(low, 'delta')}, {fmt.number(high, 'delta')}]"
                verdict = m["verdict_words"]
                t.add_row(*lead, metric, fmt.number(m["delta"], "delta"), fmt.number(m["p_adjusted"], "p"), interval,
                          verdict)
    console.print()
    _say(console, Text(f"Per tag, {'each run' if several else 'B'} against {'the baseline' if several else 'A'}: "
                       "the paired test over the tag's queries, p Holm-adjusted across the tags; no verdict under "
                       f"{tests['min_queries_for_verdict']} queries in a tag", style="bold"))
    console.print(t)


def _say(console, text: Text) -> None:
    """Prose lines are not wrapped, so the report pastes cleanly into a pull request."""
    console.print(text, soft_wrap=True)


def _flip_line(f: dict) -> Text:
    from rich.text import Text

    from ragdiff.core import report

    direction = f["direction"]
    style = "red" if direction != "miss_to_hit" else "green"
    line = Text("  ")
    line.append(report.FLIP_MARKS.get(direction, "✗"), style=style)
    line.append(" ")
    line.append(visible(f["query_id"]), style="bold")
    if f["text"] and f["text"] != f["query_id"]:
        line.append("  ")
        line.append(visible(f["text"]))
    line.append(f"  (first gold: A {report.first_gold(f['a_rank'])}, B {report.first_gold(f['b_rank'])})",
                style="dim")
    return line


def _list(console, flips: list[dict], limit: int | None) -> None:
    from rich.text import Text

    shown = flips if limit is None else flips[:limit]
    for f in shown:
        _say(console, _flip_line(f))
    if len(flips) > len(shown):
        _say(console, Text(f"  … and {len(flips) - len(shown)} more (--show N, or --json)", style="dim"))


def _metrics_table(c: dict) -> Table:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core import report

    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    p_head = "p (Holm)" if c.get("p_adjustment") else "p"
    for col, justify in (("metric", "left"), ("A", "right"), ("B", "right"), ("Δ", "right"),
                         ("in queries", "right"), (p_head, "right"), ("95% CI of Δ", "right")):
        table.add_column(col, justify=justify)
    for name, m in c["metrics"].items():
        style = {"gain": "green", "drop": "red"}.get(m["verdict"], "") if m["highlight"] else ""
        table.add_row(name, report.cell_value(name, m["a"]), report.cell_value(name, m["b"]),
                      Text(report.cell_delta(name, m["delta"]), style=style), report.cell_worth(m), report.cell_p(m),
                      report.cell_ci(name, m))
    return table


def _many_table(cs: list[dict]) -> Table:
    """A row per metric: the baseline, then each run's value, Δ and Holm-adjusted p."""
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core import report

    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("metric")
    table.add_column(Text(visible(cs[0]["a"]["name"])), justify="right")
    for c in cs:
        name = visible(c["b"]["name"])
        table.add_column(Text(name), justify="right")
        table.add_column(Text("Δ"), justify="right")
        table.add_column(Text("p (Holm)"), justify="right")
    for name, base in cs[0]["metrics"].items():
        row = [name, report.cell_value(name, base["a"])]
        for c in cs:
            m = c["metrics"][name]
            style = {"gain": "green", "drop": "red"}.get(m["verdict"], "") if m["highlight"] else ""
            row += [report.cell_value(name, m["b"]), Text(report.cell_delta(name, m["delta"]), style=style),
                    report.cell_p(m)]
        table.add_row(*row)
    return table


def _verdicts(console, c: dict) -> None:
    from rich.text import Text

    from ragdiff.core import report

    if c["by_hand"]:
        _say(console, Text(report.by_hand_note(c), style="bold yellow"))
        for m in c["metrics"].values():
            _say(console, Text(f"  {m['summary']}"))
    else:
        _say(console, Text("Verdict", style="bold"))
        for m in c["metrics"].values():
            style = {"gain": "green", "drop": "red"}.get(m["verdict"], "")
            _say(console, Text(f"  {m['sentence']}", style=style))


def _unjudged(console, c: dict) -> None:
    """Per metric with unjudged chunks behind it: each run's upper bound, and whether the verdict could flip."""
    from rich.text import Text

    rows = [(name, m["unjudged"]) for name, m in c["metrics"].items()
            if m.get("unjudged") and ((m["unjudged"]["a"]["unjudged"] or 0) + (m["unjudged"]["b"]["unjudged"] or 0))]
    if not rows:
        return
    _say(console, Text("Unjudged chunks count as misses: each run's value if every unjudged chunk in its top k were "
                       "relevant (an upper bound)", style="bold"))
    for name, u in rows:
        sides = []
        for side in ("a", "b"):
            bound, count = u[side]["upper_bound"], u[side]["unjudged"]
            sides.append(f"{side.upper()} ≤ {fmt.number(bound)} ({count} unjudged)" if count is not None else
                         f"{side.upper()} —")
        _say(console, Text(f"  {name} (top {u['window']}): " + ", ".join(sides)))
        if u["sentence"]:
            _say(console, Text(f"    {u['sentence']}", style="yellow" if u["could_flip"] else "dim"))


def _noise(console, c: dict) -> None:
    """Per metric, the smallest change this many queries can tell from noise (DESIGN: in numbers)."""
    from rich.text import Text

    from ragdiff.core import report

    _say(console, Text(report.noise_heading(c), style="bold"))
    for m in c["metrics"].values():
        _say(console, Text(f"  {m['noise']}"))


def _details(console, c: dict, show: int) -> None:
    from rich.text import Text

    from ragdiff.core import report

    s = c["settings"]
    n = c["queries"]["scored"]
    limit = None if c["by_hand"] else show
    flipped = c["flipped_queries"]
    title = Text(f"Flips at k={s['k']}: ", style="bold")
    title.append(f"{len(c['flips']['hit_to_miss'])} hit→miss, {len(c['flips']['miss_to_hit'])} miss→hit")
    _say(console, title)
    if not flipped:
        _say(console, Text("  no query flipped"))
    _list(console, [f for f in flipped if f["direction"] == "hit_to_miss"], limit)
    _list(console, [f for f in flipped if f["direction"] == "miss_to_hit"], limit)

    opportunity = c["reranker_opportunity"]
    if opportunity:
        console.print()
        _say(console, Text(f"Which k (recall@{s['k']} → recall@{s['depth']}; gold in the top {s['depth']} but not "
                           f"the top {s['k']} is the reranker's opportunity)", style="bold"))
        for side in ("a", "b"):
            o = opportunity.get(side)
            if o is None:
                continue
            line = Text(f"  {side.upper()} ")
            line.append(visible(o["run"]))
            at_k, at_depth = o[f"recall@{s['k']}"], o[f"recall@{s['depth']}"]
            line.append(f": {fmt.number(at_k)} → {fmt.number(at_depth)}, {o['count']} of {words.queries(n)}")
            if o["queries"]:
                line.append(": " + ", ".join(map(visible, o["queries"][:show]))
                            + (" …" if len(o["queries"]) > show else ""), style="dim")
            _say(console, line)

    ov = c["overlap"]
    if ov is not None:
        console.print()
        _say(console, Text(report.overlap_line(ov)))
    if c["judged_warning"]:
        console.print()
        _say(console, Text("warning: " + visible(c["judged_warning"]), style="yellow"))
    if c["regressions"]:
        console.print()
        _say(console, Text(f"Regression queries that miss at k={s['k']} in B: {len(c['regressions'])}",
                           style="bold red"))
        _list(console, c["regressions"], None)


def print_report(doc: dict, show: int) -> None:
    """The terminal report, rendered from the diff document."""
    from rich.text import Text

    from ragdiff.core import report

    console = stdout_console()
    cs = report.comparisons(doc)
    first = cs[0]
    head = Text()
    head.append("ragdiff diff  ", style="bold")
    if len(cs) == 1:
        head.append("A ")
        head.append(visible(first["a"]["name"]), style="bold")
        head.append("  vs  B ")
        head.append(visible(first["b"]["name"]), style="bold")
    else:
        head.append("baseline ")
        head.append(visible(first["a"]["name"]), style="bold")
        head.append("  vs  " + ", ".join(visible(c["b"]["name"]) for c in cs))
    _say(console, head)
    _say(console, Text(report.scope_line(first, visible(doc["gold"]) if doc.get("gold") else None)))
    console.print()
    console.print(_metrics_table(first) if len(cs) == 1 else _many_table(cs))
    console.print()
    if len(cs) > 1:
        _say(console, Text(report.adjustment_note(doc)))
        _say(console, Text(f"({report.method_note(first)})", style="dim"))
        console.print()
    for c in cs:
        if len(cs) > 1:
            _say(console, Text(f"── {visible(c['b']['name'])} vs baseline {visible(c['a']['name'])} ──", style="bold"))
        _verdicts(console, c)
        if not c["by_hand"] and len(cs) == 1:
            _say(console, Text(f"  ({report.method_note(c)})", style="dim"))
        _noise(console, c)
        _unjudged(console, c)
        console.print()
        _details(console, c, show)
        if c is not cs[-1]:
            console.print()
