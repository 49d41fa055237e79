"""The diff document as GitHub-flavoured Markdown: a pull-request comment (`ragdiff diff --markdown`)."""

from __future__ import annotations

import html

from ragdiff.core import fmt, words
from ragdiff.core.metrics.specs import Metric
from ragdiff.core.report.cells import (FLIP_HEADINGS, FLIP_MARKS, adjustment_note, by_hand_note, cell_ci, cell_delta,
                                       cell_p, cell_value, cell_worth, first_gold, method_note, noise_heading,
                                       overlap_line, pass_note, scope_line)
from ragdiff.core.report.diff_doc import DiffReport, comparisons

SHORT_LIST = 5  # flips and opportunity lists longer than this collapse in <details> in Markdown
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|~#!"})


def md_text(value) -> str:
    """Text from a file, shown literally in GitHub-flavoured Markdown (also inside a table cell): control
    characters made visible, HTML escaped, Markdown punctuation backslash-escaped, one line."""
    from ragdiff.core.visible import visible

    text = visible(value).translate(_MD_SPECIAL)
    return html.escape(text, quote=False)


def _md_table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    rule = {"l": "---", "r": "---:"}
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule[a] for a in align) + " |"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _md_collapsible(summary: str, body: list[str], count: int) -> list[str]:
    if count <= SHORT_LIST:
        return [summary, ""] + body + [""]
    return ["<details>", f"<summary>{summary}</summary>", ""] + body + ["", "</details>", ""]


def _more(total: int, shown: int) -> list[str]:
    return [] if total <= shown else ["", f"… and {total - shown} more (`--show N`, `--json` or `ragdiff report`)"]


def _md_flips(c: dict, direction: str, show: int | None) -> list[str]:
    entries = [f for f in c["flipped_queries"] if f["direction"] == direction]
    if not entries:
        return []
    a, b = md_text(c["a"]["name"]), md_text(c["b"]["name"])
    listed = entries if show is None else entries[:show]
    rows = [[md_text(f["query_id"]), md_text(f["text"]) if f["text"] and f["text"] != f["query_id"] else "",
             first_gold(f["a_rank"]), first_gold(f["b_rank"])] for f in listed]
    table = _md_table(["query", "text", f"first gold in A {a}", f"first gold in B {b}"], ["l", "l", "r", "r"], rows)
    summary = f"{FLIP_MARKS[direction]} {len(entries)} {FLIP_HEADINGS[direction]}"
    if len(entries) <= SHORT_LIST:
        summary = f"**{summary}**"
    return _md_collapsible(summary, table + _more(len(entries), len(listed)), len(entries))


def _md_metrics_two(c: dict) -> list[str]:
    a, b = md_text(c["a"]["name"]), md_text(c["b"]["name"])
    p_head = "p (Holm)" if c.get("p_adjustment") else "p"
    rows = []
    for name, m in c["metrics"].items():
        verdict = f"**{m['verdict_words']}**" if m["highlight"] else m["verdict_words"]
        metric = c["specs"][name]
        rows.append([name, cell_value(metric, m["a"]), cell_value(metric, m["b"]), cell_delta(metric, m["delta"]),
                     cell_worth(m), cell_p(m), cell_ci(metric, m), verdict])
    return _md_table(["metric", f"A {a}", f"B {b}", "Δ", "in queries", p_head, "95% CI of Δ", "verdict"],
                     ["l", "r", "r", "r", "r", "r", "r", "l"], rows)


def _md_metrics_many(cs: list[dict]) -> list[str]:
    """One table: a row per metric, the baseline's value, then each run's value, Δ, Holm p and verdict."""
    header = ["metric", f"baseline {md_text(cs[0]['a']['name'])}"]
    align = ["l", "r"]
    for c in cs:
        name = md_text(c["b"]["name"])
        header += [name, f"Δ {name}", "p (Holm)", "verdict"]
        align += ["r", "r", "r", "l"]
    rows = []
    for name, base in cs[0]["metrics"].items():
        metric = cs[0]["specs"][name]
        row = [name, cell_value(metric, base["a"])]
        for c in cs:
            m = c["metrics"][name]
            verdict = f"**{m['verdict_words']}**" if m["highlight"] else m["verdict_words"]
            row += [cell_value(metric, m["b"]), cell_delta(metric, m["delta"]), cell_p(m), verdict]
        rows.append(row)
    return _md_table(header, align, rows)


def _md_opportunity(c: dict, show: int | None) -> list[str]:
    opp = c["reranker_opportunity"]
    if not opp:
        return []
    s = c["settings"]
    k, depth, n = s["k"], s["depth"], c["queries"]["scored"]
    out = [f"**The reranker's opportunity** (gold in the top {depth} but not the top {k}):", ""]
    for side in ("a", "b"):
        o = opp.get(side)
        if o is None:
            continue
        line = (f"- {side.upper()} {md_text(o['run'])}: recall@{k} {fmt.number(o[f'recall@{k}'])} → recall@{depth} "
                f"{fmt.number(o[f'recall@{depth}'])}, **{o['count']} of {words.queries(n)}**")
        if o["queries"] and len(o["queries"]) <= SHORT_LIST:
            line += ": " + ", ".join(md_text(q) for q in o["queries"])
        out.append(line)
    out.append("")
    for side in ("a", "b"):
        o = opp.get(side)
        if o is not None and len(o["queries"]) > SHORT_LIST:
            listed = o["queries"] if show is None else o["queries"][:show]
            out += _md_collapsible(f"{side.upper()} {md_text(o['run'])}: {words.queries(o['count'])}",
                                   [", ".join(md_text(q) for q in listed)] + _more(o["count"], len(listed)),
                                   o["count"])
    return out


def _md_noise(c: dict) -> list[str]:
    """Each metric's smallest detectable change, collapsed: the table says the verdicts, this says why."""
    return ["<details>", f"<summary>{md_text(noise_heading(c))}</summary>", ""] + \
        [f"- {md_text(m['noise'])}" for m in c["metrics"].values()] + ["", "</details>", ""]


def _md_comparison_body(c: dict, with_metrics: bool, show: int | None) -> list[str]:
    show = None if c["by_hand"] else show  # under 30 queries every flip is listed, to be read by hand
    out: list[str] = []
    if with_metrics:
        out += _md_metrics_two(c) + [""]
    if not c["by_hand"]:
        out += _md_noise(c)
    if c["by_hand"]:
        out += [f"**{by_hand_note(c)}**", ""]
    k = c["settings"]["k"]
    h2m, m2h = len(c["flips"]["hit_to_miss"]), len(c["flips"]["miss_to_hit"])
    out += [f"**Flips at k={k}:** {h2m} hit→miss, {m2h} miss→hit (where the first gold chunk went)", ""]
    out += _md_flips(c, "hit_to_miss", show) + _md_flips(c, "miss_to_hit", show)
    out += _md_opportunity(c, show)
    if c["overlap"] is not None:
        out += [md_text(overlap_line(c["overlap"])), ""]
    if c["judged_warning"]:
        out += [f"> **Unjudged chunks:** {md_text(c['judged_warning'])}", ""]
    if c["regressions"]:
        ids = ", ".join(md_text(f["query_id"]) for f in c["regressions"])
        out += [f"> **Regression queries that miss at k={k} in B:** {ids}", ""]
    return out


def _md_slices(doc: dict, names: list[str], specs: dict[str, Metric]) -> list[str]:
    """`--drafted as-labels` and `--by-tag` (diff_doc.slices): the baseline and each run, Δ beside."""
    heads = ["A", "B"] if len(names) == 2 else [f"baseline {md_text(names[0])}", *map(md_text, names[1:])]
    deltas = ["Δ"] if len(names) == 2 else [f"Δ {h}" for h in heads[1:]]

    def cells(values: list[dict], name: str) -> list[str]:
        base, metric = values[0].get(name), specs[name]
        return [cell_value(metric, v.get(name)) for v in values] + [
            fmt.DASH if base is None or v.get(name) is None else cell_delta(metric, v[name] - base) for v in values[1:]]

    out: list[str] = []
    if "drafts_as_labels" in doc:
        values = [doc["drafts_as_labels"][n] for n in names]
        rows = [[md_text(m), *cells(values, m)] for m in values[0]]
        out += ["**As if every drafted label were accepted** (a drafted 0 as not relevant):", ""]
        out += _md_table(["metric (+drafts)", *heads, *deltas], ["l"] + ["r"] * (len(heads) + len(deltas)), rows)
        out += [""]
    if "by_tag" in doc:
        tags = list(doc["by_tag"][names[0]])
        if not tags:
            return out + ["--by-tag: no query in the gold set has tags", ""]
        rows = []
        for tag in tags:
            values = [doc["by_tag"][n][tag]["metrics"] for n in names]
            queries = str(len(doc["by_tag"][names[0]][tag]["queries"]))
            rows += [[md_text(tag) if i == 0 else "", queries if i == 0 else "", md_text(m), *cells(values, m)]
                     for i, m in enumerate(values[0])]
        out += ["**Per tag** (mean over the tag's scored queries):", ""]
        out += _md_table(["tag", "queries", "metric", *heads, *deltas],
                         ["l", "r", "l"] + ["r"] * (len(heads) + len(deltas)), rows)
        out += [""]
    return out


def markdown(report: DiffReport, failures: list[str] | None = None, show: int | None = 20, gate: bool = False) -> str:
    """GitHub-flavoured Markdown for a pull-request comment: the metrics table with Δ, p, CI and the verdict
    in words, the flips at k, the reranker's opportunity, the unjudged warning. Long lists collapse, and list
    at most `show` queries each (a GitHub comment holds 65,536 characters) unless under 30 were scored.
    The report's notes (drafts waiting) are shown as notes; `gate` (--fail-on-regression): the failures, or
    that it passed."""
    doc = report.doc
    cs = comparisons(report)
    first = cs[0]
    gold = md_text(doc["gold"]) if doc.get("gold") else None
    out: list[str] = []
    if len(cs) == 1:
        out += [f"### ragdiff: A {md_text(first['a']['name'])} vs B {md_text(first['b']['name'])}", ""]
    else:
        runs = ", ".join(md_text(c["b"]["name"]) for c in cs)
        out += [f"### ragdiff: {runs} against baseline {md_text(first['a']['name'])}", ""]
    out += [scope_line(first, gold), ""]
    if len(cs) == 1:
        out += _md_comparison_body(first, with_metrics=True, show=show)
    else:
        out += _md_metrics_many(cs) + [""]
    out += [f"<sub>{method_note(first)}</sub>", ""]
    if adjustment_note(doc):
        out += [f"<sub>{adjustment_note(doc)}</sub>", ""]
    if len(cs) > 1:
        for c in cs:
            out += [f"#### {md_text(c['b']['name'])} vs baseline {md_text(c['a']['name'])}", ""]
            out += _md_comparison_body(c, with_metrics=False, show=show)
    out += _md_slices(doc, [first["a"]["name"], *(c["b"]["name"] for c in cs)], report.metrics)
    out += [f"> {md_text(note)}\n" for note in report.notes if note]
    if failures:
        out += ["**FAIL (--fail-on-regression):**", ""] + [f"- {md_text(r)}" for r in failures] + [""]
    text = "\n".join(out).rstrip() + "\n"
    return text + f"\n**{pass_note(report)}**\n" if gate and not failures else text
