"""The diff document in the terminal (`ragdiff diff`, and `ragdiff run` after a logged run): a short report a team
can paste into a pull request. Prose lines are not wrapped; tables go to the console the command gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from ragdiff.core import fmt, words
from ragdiff.core.report.cells import (FLIP_MARKS, adjustment_note, by_hand_note, cell_ci, cell_delta, cell_p,
                                       cell_value, cell_worth, first_gold, method_note, noise_heading, overlap_line,
                                       pass_note, scope_line)
from ragdiff.core.report.diff_doc import DiffReport, comparisons
from ragdiff.core.visible import visible

if TYPE_CHECKING:
    from rich.console import Console


def print_slices(report: DiffReport, console: Console) -> None:
    """The drafts line, the as-if-accepted means and the per-tag means, each run beside the baseline."""
    slices = report.doc
    cs = comparisons(report)
    names = [cs[0]["a"]["name"], *(c["b"]["name"] for c in cs)]
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
            row.append(fmt.DASH if base is None or b is None else fmt.number(b - base, "delta"))
        return row

    if slices["not_retrieval"]:
        console.print()
        _say(console, Text(visible(f"{len(slices['not_retrieval'])} marked retrieval: false (the answer is not inside a "
                                   "chunk; left out of every score): " + ", ".join(slices["not_retrieval"]))))
    for note in filter(None, report.notes):
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
                interval = fmt.DASH if low is None else f"[{fmt.number(low, 'delta')}, {fmt.number(high, 'delta')}]"
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
    direction = f["direction"]
    style = "red" if direction != "miss_to_hit" else "green"
    line = Text("  ")
    line.append(FLIP_MARKS.get(direction, "✗"), style=style)
    line.append(" ")
    line.append(visible(f["query_id"]), style="bold")
    if f["text"] and f["text"] != f["query_id"]:
        line.append("  ")
        line.append(visible(f["text"]))
    line.append(f"  (first gold: A {first_gold(f['a_rank'])}, B {first_gold(f['b_rank'])})",
                style="dim")
    return line


def _list(console, flips: list[dict], limit: int | None) -> None:
    shown = flips if limit is None else flips[:limit]
    for f in shown:
        _say(console, _flip_line(f))
    if len(flips) > len(shown):
        _say(console, Text(f"  … and {len(flips) - len(shown)} more (--show N, or --json)", style="dim"))


def _metrics_table(c: dict) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    p_head = "p (Holm)" if c.get("p_adjustment") else "p"
    for col, justify in (("metric", "left"), ("A", "right"), ("B", "right"), ("Δ", "right"),
                         ("in queries", "right"), (p_head, "right"), ("95% CI of Δ", "right")):
        table.add_column(col, justify=justify)
    for name, m in c["metrics"].items():
        style = {"gain": "green", "drop": "red"}.get(m["verdict"], "") if m["highlight"] else ""
        metric = c["specs"][name]
        table.add_row(name, cell_value(metric, m["a"]), cell_value(metric, m["b"]),
                      Text(cell_delta(metric, m["delta"]), style=style), cell_worth(m), cell_p(m),
                      cell_ci(metric, m))
    return table


def _many_table(cs: list[dict]) -> Table:
    """A row per metric: the baseline, then each run's value, Δ and Holm-adjusted p."""
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("metric")
    table.add_column(Text(visible(cs[0]["a"]["name"])), justify="right")
    for c in cs:
        name = visible(c["b"]["name"])
        table.add_column(Text(name), justify="right")
        table.add_column(Text("Δ"), justify="right")
        table.add_column(Text("p (Holm)"), justify="right")
    for name, base in cs[0]["metrics"].items():
        metric = cs[0]["specs"][name]
        row = [name, cell_value(metric, base["a"])]
        for c in cs:
            m = c["metrics"][name]
            style = {"gain": "green", "drop": "red"}.get(m["verdict"], "") if m["highlight"] else ""
            row += [cell_value(metric, m["b"]), Text(cell_delta(metric, m["delta"]), style=style), cell_p(m)]
        table.add_row(*row)
    return table


def _verdicts(console, c: dict) -> None:
    if c["by_hand"]:
        _say(console, Text(by_hand_note(c), style="bold yellow"))
        for m in c["metrics"].values():
            _say(console, Text(f"  {m['summary']}"))
    else:
        _say(console, Text("Verdict", style="bold"))
        for m in c["metrics"].values():
            style = {"gain": "green", "drop": "red"}.get(m["verdict"], "")
            _say(console, Text(f"  {m['sentence']}", style=style))


def _unjudged(console, c: dict) -> None:
    """Per metric with unjudged chunks behind it: each run's upper bound, and whether the verdict could flip."""

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
    _say(console, Text(noise_heading(c), style="bold"))
    for m in c["metrics"].values():
        _say(console, Text(f"  {m['noise']}"))


def _details(console, c: dict, show: int) -> None:
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
        _say(console, Text(overlap_line(ov)))
    if c["judged_warning"]:
        console.print()
        _say(console, Text("warning: " + visible(c["judged_warning"]), style="yellow"))
    if c["regressions"]:
        console.print()
        _say(console, Text(f"Regression queries that miss at k={s['k']} in B: {len(c['regressions'])}",
                           style="bold red"))
        _list(console, c["regressions"], None)


def print_report(report: DiffReport, show: int, console: Console) -> None:
    """The terminal report, rendered from the diff document."""
    doc = report.doc
    cs = comparisons(report)
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
    _say(console, Text(scope_line(first, visible(doc["gold"]) if doc.get("gold") else None)))
    console.print()
    console.print(_metrics_table(first) if len(cs) == 1 else _many_table(cs))
    console.print()
    if len(cs) > 1:
        _say(console, Text(adjustment_note(doc)))
        _say(console, Text(f"({method_note(first)})", style="dim"))
        console.print()
    for c in cs:
        if len(cs) > 1:
            _say(console, Text(f"── {visible(c['b']['name'])} vs baseline {visible(c['a']['name'])} ──", style="bold"))
        _verdicts(console, c)
        if not c["by_hand"] and len(cs) == 1:
            _say(console, Text(f"  ({method_note(c)})", style="dim"))
        _noise(console, c)
        _unjudged(console, c)
        console.print()
        _details(console, c, show)
        if c is not cs[-1]:
            console.print()


def print_gate(report: DiffReport, failures: list[str], console: Console) -> None:
    """`--fail-on-regression`'s verdict: each reason it fails, or that it passes."""
    if not failures:
        console.print(Text(pass_note(report)))
        return
    _say(console, Text("FAIL (--fail-on-regression):", style="bold red"))
    for reason in failures:
        _say(console, Text(f"  - {visible(reason)}"))
