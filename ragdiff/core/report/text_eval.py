"""The eval document in the terminal (`ragdiff eval`, and `ragdiff run`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from ragdiff.core import fmt, words
from ragdiff.core.report.eval_doc import EvalReport
from ragdiff.core.visible import visible
from ragdiff.core.words import JUDGED_ONLY_WORDS

if TYPE_CHECKING:
    from rich.console import Console

    from ragdiff.core.metrics.evaluate import RunEval
    from ragdiff.core.metrics.slices import TagSlice


def _print_bounds(console, evals: list[RunEval]) -> None:
    """Beside each metric: its value if every unjudged chunk in its top k were relevant, and how many there are."""
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
            cells.append(fmt.DASH if b is None else f"{fmt.number(b.value, 'eval')} ({b.unjudged})")
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


def print_tables(report: EvalReport, console: Console, wide: Console) -> None:
    """The metrics table (each run a column), the upper bounds, what was left out and why, then per tag and
    per query when asked; `wide`: the console for the per-tag tables (a pipe gets them whole)."""
    evals, as_labels, tags = report.evals, report.as_labels, report.tags
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
    if report.gold_left is not None:
        left = report.gold_left
        console.print(Text(visible(f"unjudged in the runs' top {left['pool_depth']}: {left['stopping']}")),
                      soft_wrap=True)
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
    note = report.drafts_note
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
        print_by_tag(evals, tags, wide)
    if report.per_query:
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


def print_by_tag(evals: list[RunEval], tags: list[list[TagSlice]], console: Console) -> None:
    """Per run, one row per tag: its scored queries and every metric's mean over them."""
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
