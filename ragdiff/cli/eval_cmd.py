"""`ragdiff eval RUN [RUN ...] --gold GOLD`: every metric at k and at depth, per run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from typing import TYPE_CHECKING

from ragdiff.cli.common import (add_input_options, add_slice_options, check_run_matches_corpus, check_run_matches_gold,
                                corpus_warning, drafts_note, drafts_summary, load_inputs, metric_list,
                                settings_from, stdout_console, warn)
from ragdiff.core import fmt, words
from ragdiff.core.errors import InputError, UsageError

if TYPE_CHECKING:  # polars, numpy and rich load when the command runs, not for --help
    from ragdiff.core.gold import Gold
    from ragdiff.core.metrics import RunEval
    from ragdiff.core.slices import TagSlice


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
    add_slice_options(parser)
    parser.add_argument("--low-memory", action="store_true",
                        help="read TREC runs a slice of queries at a time (same numbers, bounded memory); chosen by "
                             "itself when the runs would not fit in memory")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ragdiff.core.corpus import Corpus
    from ragdiff.core.metrics import default_metrics, evaluate_runs

    settings = settings_from(args)
    if args.trec_eval and args.json:
        raise UsageError("--trec-eval with --json: each prints the whole output on stdout; choose one")
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
        from ragdiff.core.slices import by_tag

        tags = [by_tag(ev, gold) for ev in evals]
    if args.corpus and in_parts:
        warnings.append(f"warning: runs read in parts (--low-memory): their chunk ids are not checked against "
                        f"{args.corpus}")
    elif args.corpus:
        corpus = Corpus(args.corpus)
        warnings += [check_run_matches_corpus(r, corpus) for r in runs]
    for warning in filter(None, warnings):
        warn(warning)
    if args.log:
        from ragdiff.core.history import append_runs

        append_runs(args.log, evals, gold, corpus=args.corpus)
    _write_tables(args, evals, gold)
    if args.trec_eval:
        import sys

        from ragdiff.core.export import trec_eval_text

        sys.stdout.write(trec_eval_text(evals, args.per_query))
    elif args.json:
        print(json.dumps(eval_document(evals, args.per_query, gold, as_labels, tags), ensure_ascii=False, indent=2))
    else:
        print_tables(evals, args.per_query, gold, as_labels, tags)
    return 0


def _write_tables(args: argparse.Namespace, evals: list[RunEval], gold: Gold) -> None:
    """--csv / --parquet: the per-query table, each file whole or not at all."""
    if not (args.csv or args.parquet):
        return
    from ragdiff.core.export import per_query_table, table_bytes
    from ragdiff.core.textio import write_file

    table = per_query_table(evals, gold)
    inputs = [*args.runs, args.gold]
    for path, fmt in ((args.csv, "csv"), (args.parquet, "parquet")):
        if path is not None:
            write_file(path, table_bytes(table, fmt), inputs=inputs)


def _too_big(args: argparse.Namespace) -> bool:
    from ragdiff.core.partitioned import too_big_for_memory

    return too_big_for_memory(args.runs, args.run_format)


def _gold_and_trec_runs(args: argparse.Namespace) -> Gold:
    """The gold set, after checking that every run is a TREC file (the only format read in parts)."""
    from ragdiff.core.gold import load_gold
    from ragdiff.core.runs import sniff_run_format
    from ragdiff.core.textio import check_file

    for path in args.runs:
        check_file(path)
        fmt = args.run_format or sniff_run_format(path)
        if fmt != "trec":
            raise InputError(path, f"--low-memory reads TREC runs only; this run is {fmt}")
    return load_gold(args.gold, args.gold_format)


def _scored_in_parts(args: argparse.Namespace, gold: Gold, settings, metrics) -> list[RunEval]:
    """Each TREC run scored a slice of queries at a time (core/partitioned.py): the numbers of `evaluate`."""
    from ragdiff.core.partitioned import evaluate_partitioned

    evals = [evaluate_partitioned(path, gold, settings, metrics, keep_first=args.keep_first, bounds=True) for path in args.runs]
    names = [ev.run.name for ev in evals]
    for ev in evals:
        if names.count(ev.run.name) > 1:
            ev.run.name = str(ev.run.path)
        check_run_matches_gold(ev.run, gold)
    return evals


def eval_document(evals: list[RunEval], per_query: bool, gold: Gold | None = None,
                  as_labels: list[RunEval] | None = None, tags: list[list[TagSlice]] | None = None) -> dict:
    """The JSON shape DESIGN.md gives for `eval --json`, plus `drafted` (how many drafts wait), per run
    `drafts_as_labels` (--drafted as-labels) and `by_tag` (--by-tag), and `queries.not_retrieval`."""
    first = evals[0]
    runs = []
    for i, ev in enumerate(evals):
        entry = {"name": ev.run.name, "path": str(ev.run.path),
                 "metrics": {name: fmt.json_number(value) for name, value in ev.means.items()}}
        if ev.bounds:
            entry["upper_bound"] = {name: {"value": fmt.json_number(b.value), "unjudged": b.unjudged, "window": b.window}
                                    for name, b in ev.bounds.items()}
        if as_labels is not None:
            entry["drafts_as_labels"] = {"metrics": {n: fmt.json_number(v) for n, v in as_labels[i].means.items()},
                                         "scored": len(as_labels[i].queries.scored)}
        if tags is not None:
            entry["by_tag"] = {t.tag: {"queries": t.queries, "metrics": {n: fmt.json_number(v) for n, v in t.means.items()}}
                               for t in tags[i]}
        if per_query:
            entry["per_query"] = {
                row["query_id"]: {m.name: fmt.json_number(row[m.name]) for m in ev.metrics}
                for row in ev.per_query.iter_rows(named=True)
            }
        runs.append(entry)
    doc = {
        "settings": first.settings.as_json(),
        "runs": runs,
        "queries": {
            "scored": first.queries.scored,
            "unanswerable": first.queries.unanswerable,
            "missing_from_run": {ev.run.name: ev.queries.missing_from_run for ev in evals},
            "not_in_gold": {ev.run.name: ev.queries.not_in_gold for ev in evals},
            "not_retrieval": first.queries.not_retrieval,
        },
    }
    if gold is not None:
        doc["drafted"] = drafts_summary(gold)
    return doc


def _print_bounds(console, evals: list[RunEval]) -> None:
    """Beside each metric: its value if every unjudged chunk in its top k were relevant, and how many there are."""
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core.visible import visible

    rows = [m for m in evals[0].metrics if any(ev.bounds.get(m.name) and ev.bounds[m.name].unjudged for ev in evals)]
    if not rows:
        return
    console.print(Text("If every unjudged chunk in the top k were relevant (how many unjudged):"))
    table = Table(show_edge=False)
    table.add_column("upper bound")
    for ev in evals:
        table.add_column(Text(visible(ev.run.name)), justify="right")
    for m in rows:
        cells = []
        for ev in evals:
            b = ev.bounds.get(m.name)
            cells.append("—" if b is None else f"{fmt.number(b.value, 'eval')} ({b.unjudged})")
        table.add_row(f"≤ {m.name}", *cells)
    console.print(table)


def _shallower_than(evals: list[RunEval], deep: int) -> list[tuple[str, int]]:
    """(run name, most results it returned for a query) of the runs that returned fewer than `deep` for every
    query: a k beyond what a run returned is said once, not left to be read off flat numbers."""
    out = []
    for ev in evals:
        returned = ev.prepared.returned.get_column("returned") if ev.prepared is not None else None
        if returned is None or returned.is_empty():
            continue
        deepest = int(returned.max())
        if deepest < deep:
            out.append((ev.run.name, deepest))
    return out


def print_tables(evals: list[RunEval], per_query: bool, gold: Gold | None = None,
                 as_labels: list[RunEval] | None = None, tags: list[list[TagSlice]] | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.core.visible import visible
    from ragdiff.core.words import JUDGED_ONLY_WORDS

    console = stdout_console()
    first = evals[0]
    s = first.settings
    gain = "" if s.gain == "linear" else " · nDCG gain 2^grade-1"
    console.print(Text(f"k={s.k} depth={s.depth} threshold={s.threshold} level={s.level}{gain}"))
    if s.judged_only:
        console.print(Text(JUDGED_ONLY_WORDS))
    table = Table(show_edge=False)
    table.add_column("metric")
    columns = []  # (heading, means): each run, and with --drafted as-labels its numbers beside it
    for i, ev in enumerate(evals):
        columns.append((visible(ev.run.name), ev.means))
        if as_labels is not None:
            columns.append((f"{visible(ev.run.name)} +drafts", as_labels[i].means))
    for heading, _ in columns:
        table.add_column(Text(heading), justify="right")
    for metric in first.metrics:
        table.add_row(metric.name, *[fmt.number(means.get(metric.name), "eval") for _, means in columns])
    console.print(table)
    _print_bounds(console, evals)
    q = first.queries
    counted = "scored 0, in the means" if s.unanswerable_as_zero else "left out of the means"
    console.print(Text(f"queries: {len(q.scored)} scored · {len(q.unanswerable)} unanswerable ({counted})"))
    shallow = _shallower_than(evals, s.k)  # k: what is pasted into the prompt (depth alone beyond is usual)
    if shallow:
        over = [f"{name}={value}" for name, value in (("k", s.k), ("depth", s.depth))
                if value > min(deepest for _, deepest in shallow)]
        runs = " and ".join(f"{name} (at most {deepest} a query)" for name, deepest in shallow)
        go = "go" if len(over) > 1 else "goes"
        console.print(Text(visible(f"{' and '.join(over)} {go} past what {runs} returned: a metric that deep counts "
                                   "only the results there are")))
    if q.not_retrieval:
        console.print(Text(visible(f"{len(q.not_retrieval)} marked retrieval: false (the answer is not inside a chunk; "
                                   "left out of every score): " + ", ".join(q.not_retrieval[:10])
                                   + (" …" if len(q.not_retrieval) > 10 else ""))), soft_wrap=True)
    note = drafts_note(gold) if gold is not None else None
    if note:
        console.print(Text(note), soft_wrap=True)
    if as_labels is not None:
        console.print(Text("+drafts: scored as if every drafted label were accepted (a drafted 0 as not relevant)"),
                      soft_wrap=True)
    unanswerable = set(q.unanswerable)
    for ev in evals:
        notes = []
        # an unanswerable query the run lacks is said once, with the unanswerable ones above
        missing = [query for query in ev.queries.missing_from_run if query not in unanswerable]
        if missing:
            notes.append(f"{words.count(len(missing), 'gold query', 'gold queries')} missing (scored 0): "
                         + ", ".join(missing[:10]) + (" …" if len(missing) > 10 else ""))
        if ev.queries.not_in_gold:
            notes.append(f"{words.queries(len(ev.queries.not_in_gold))} not in the gold set (left out): "
                         + ", ".join(ev.queries.not_in_gold[:10]) + (" …" if len(ev.queries.not_in_gold) > 10 else ""))
        for note in notes:
            console.print(Text(visible(f"{ev.run.name}: {note}")))
    if len(q.scored) == 0:
        console.print(Text("no query has a relevant chunk in the gold set: nothing to score"))
    if tags is not None:
        print_by_tag(evals, tags)
    if per_query:
        for ev in evals:
            # as many metric columns as fit the terminal whole (a heading never shrinks to `recal…`); the rest
            # follow in another table with the query column again
            rows = list(ev.per_query.iter_rows(named=True))
            ids = [visible(row["query_id"]) for row in rows]
            query_width = min(40, max([len("query"), *map(len, ids)])) + 3
            groups = column_groups([m.name for m in ev.metrics], console.width - query_width, 6)
            for number, names in enumerate(groups, 1):
                part = f" ({number}/{len(groups)})" if len(groups) > 1 else ""
                pq = Table(title=Text(f"{visible(ev.run.name)}: per query{part}"), title_justify="left",
                           show_edge=False)
                pq.add_column("query", overflow="fold")
                for name in names:
                    pq.add_column(name, justify="right", no_wrap=True, min_width=len(name))
                for query, row in zip(ids, rows):
                    pq.add_row(Text(query), *[fmt.number(row[name], "eval") for name in names])
                console.print(pq)


def column_groups(names: list[str], room: int, value_width: int) -> list[list[str]]:
    """Split columns into runs that fit `room` cells, each column as wide as its heading or its values (plus
    rich's padding and rule, 3 cells); a column wider than the room gets a group of its own."""
    groups: list[list[str]] = [[]]
    used = 0
    for name in names:
        width = max(len(name), value_width) + 3
        if groups[-1] and used + width > room:
            groups.append([])
            used = 0
        groups[-1].append(name)
        used += width
    return groups


def print_by_tag(evals: list[RunEval], tags: list[list[TagSlice]]) -> None:
    """Per run, one row per tag: its scored queries and every metric's mean over them."""
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core.visible import visible

    console = table_console()
    if not tags or not tags[0]:
        console.print(Text("--by-tag: no query in the gold set has tags"))
        return
    for ev, slices in zip(evals, tags):
        table = Table(title=Text(f"{visible(ev.run.name)}: per tag"), title_justify="left", show_edge=False)
        table.add_column("tag")
        table.add_column("queries", justify="right")
        for metric in ev.metrics:
            table.add_column(metric.name, justify="right")
        for t in slices:
            table.add_row(Text(visible(t.tag)), str(len(t.queries)), *[fmt.number(t.means.get(m.name), "eval") for m in ev.metrics])
        console.print(table)
