"""`ragdiff eval RUN [RUN ...] --gold GOLD`: every metric at k and at depth, per run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from typing import TYPE_CHECKING

from ragdiff.cli.common import (add_input_options, check_run_matches_corpus, corpus_warning, fmt_value, load_inputs, metric_list,
                                settings_from, stdout_console, warn)

if TYPE_CHECKING:  # polars, numpy and rich load when the command runs, not for --help
    from ragdiff.core.metrics import RunEval


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("eval", help="score runs against the gold set",
                                   description="Score one or more runs against the gold set, at k and at depth.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN")
    add_input_options(parser)
    parser.add_argument("--metrics", type=metric_list,
                        help="comma-separated, e.g. recall@5,recall@50,mrr,ndcg@10,precision@5,judged@10")
    parser.add_argument("--per-query", action="store_true", help="also show every query's values")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    parser.add_argument("--log", type=Path, metavar="HISTORY.csv", help="append one row per run to this history file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ragdiff.core.corpus import Corpus
    from ragdiff.core.metrics import default_metrics, evaluate

    settings = settings_from(args)
    gold, runs = load_inputs(args, args.runs)
    metrics = args.metrics or default_metrics(settings.k, settings.depth)
    evals = [evaluate(r, gold, settings, metrics) for r in runs]
    warnings = [corpus_warning(gold, args.corpus)]
    if args.corpus:
        corpus = Corpus(args.corpus)
        warnings += [check_run_matches_corpus(r, corpus) for r in runs]
    for warning in filter(None, warnings):
        warn(warning)
    if args.log:
        from ragdiff.core.history import append_runs

        append_runs(args.log, evals, gold, corpus=args.corpus)
    if args.json:
        print(json.dumps(eval_document(evals, args.per_query), ensure_ascii=False, indent=2))
    else:
        print_tables(evals, args.per_query)
    return 0


def eval_document(evals: list[RunEval], per_query: bool) -> dict:
    """The JSON shape DESIGN.md gives for `eval --json`."""
    first = evals[0]
    runs = []
    for ev in evals:
        entry = {"name": ev.run.name, "path": str(ev.run.path),
                 "metrics": {name: _json_number(value) for name, value in ev.means.items()}}
        if per_query:
            entry["per_query"] = {
                row["query_id"]: {m.name: _json_number(row[m.name]) for m in ev.metrics}
                for row in ev.per_query.iter_rows(named=True)
            }
        runs.append(entry)
    return {
        "settings": {"k": first.settings.k, "depth": first.settings.depth, "threshold": first.settings.threshold,
                     "level": first.settings.level, "gain": first.settings.gain},
        "runs": runs,
        "queries": {
            "scored": first.queries.scored,
            "unanswerable": first.queries.unanswerable,
            "missing_from_run": {ev.run.name: ev.queries.missing_from_run for ev in evals},
            "not_in_gold": {ev.run.name: ev.queries.not_in_gold for ev in evals},
        },
    }


def _json_number(value):
    return None if value is None or value != value else round(float(value), 10)


def print_tables(evals: list[RunEval], per_query: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core.visible import visible

    console = stdout_console()
    first = evals[0]
    s = first.settings
    gain = "" if s.gain == "linear" else " · nDCG gain 2^grade-1"
    console.print(Text(f"k={s.k} depth={s.depth} threshold={s.threshold} level={s.level}{gain}"))
    table = Table(show_edge=False)
    table.add_column("metric")
    for ev in evals:
        table.add_column(Text(visible(ev.run.name)), justify="right")
    for metric in first.metrics:
        table.add_row(metric.name, *[fmt_value(ev.means.get(metric.name)) for ev in evals])
    console.print(table)
    q = first.queries
    console.print(Text(f"queries: {len(q.scored)} scored · {len(q.unanswerable)} unanswerable (left out of the means)"))
    for ev in evals:
        notes = []
        if ev.queries.missing_from_run:
            notes.append(f"{len(ev.queries.missing_from_run)} gold queries missing (scored 0): "
                         + ", ".join(ev.queries.missing_from_run[:10]) + (" …" if len(ev.queries.missing_from_run) > 10 else ""))
        if ev.queries.not_in_gold:
            notes.append(f"{len(ev.queries.not_in_gold)} queries not in the gold set (left out): "
                         + ", ".join(ev.queries.not_in_gold[:10]) + (" …" if len(ev.queries.not_in_gold) > 10 else ""))
        for note in notes:
            console.print(Text(visible(f"{ev.run.name}: {note}")))
    if len(q.scored) == 0:
        console.print(Text("no query has a relevant chunk in the gold set: nothing to score"))
    if per_query:
        for ev in evals:
            pq = Table(title=Text(f"{visible(ev.run.name)}: per query"), title_justify="left", show_edge=False)
            pq.add_column("query")
            for metric in ev.metrics:
                pq.add_column(metric.name, justify="right")
            for row in ev.per_query.iter_rows(named=True):
                pq.add_row(Text(visible(row["query_id"])), *[fmt_value(row[m.name]) for m in ev.metrics])
            console.print(pq)
