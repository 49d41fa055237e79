"""The diff document: what `ragdiff diff` found, as one JSON-able dict that every output reads.

`--json` prints it; the terminal report, `--markdown` (a pull-request comment) and `ragdiff report` (one HTML
page) render it, so the flips, verdicts and numbers are the same everywhere by construction.

- Two runs: DESIGN's shape — `a`, `b`, per metric `{"a", "b", "delta", "p_value", "ci95", …}`, `flips`, ….
- Several runs against one baseline (`diff BASE RUN [RUN ...]`): `{"baseline", "runs": [one comparison per run,
  each shaped like the two-run document], "p_adjustment"}`; every p-value is Holm-adjusted across
  runs × metrics, each metric carries `p_adjusted` beside the raw `p_value`, and the verdicts read the
  adjusted one.

`comparisons(doc)` gives either shape as a list of two-run documents, which is what the renderers loop over.
"""

from __future__ import annotations

import html
import math

from ragdiff.core import fmt
from ragdiff.core.diff import (MIN_QUERIES_FOR_VERDICT, Diff, Flip, decide,
                               worth_text)
from ragdiff.core import words
from ragdiff.core.metrics import parse_metric
from ragdiff.core.words import JUDGED_ONLY_WORDS

HOLM = "Holm"
SHORT_LIST = 5  # flips and opportunity lists longer than this collapse in <details> in Markdown


# --------------------------------------------------------------------------------------------------------------
# Holm's step-down correction


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: sort ascending, multiply the i-th smallest (0-based) by
    m − i, carry the running maximum, cap at 1. NaN (nothing tested) stays NaN and is not counted in m."""
    tested = [(p, i) for i, p in enumerate(p_values) if p == p]
    m = len(tested)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(tested)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def adjust(diffs: list[Diff]) -> int:
    """Holm across every run × metric of these comparisons with one baseline: each metric's p_adjusted is set
    and its verdict and sentence re-decided on it. Returns the number of tests in the family."""
    cells = [(d, m) for d in diffs for m in d.metrics]
    adjusted = holm([m.p_value for _, m in cells])
    for (d, m), p in zip(cells, adjusted):
        m.p_adjusted = p if p == p else None
        m.adjustment = HOLM if p == p else None
        decide(m, d.alpha, d.by_hand)
    return sum(1 for p in adjusted if p == p)


# --------------------------------------------------------------------------------------------------------------
# the document


def _flip_entry(f: Flip) -> dict:
    return {"query_id": f.query_id, "text": f.text, "direction": f.direction, "a_rank": f.a_rank,
            "b_rank": f.b_rank}


def _settings(d: Diff) -> dict:
    s = d.settings
    return {**s.as_json(), "flips": d.flips, "seed": d.seed, "alpha": d.alpha}


def _unjudged_entry(m) -> dict | None:
    """Each run's upper bound (unjudged chunks in the top `window` relevant) and whether the verdict could flip."""
    c = m.unjudged
    if c is None:
        return None
    return {"window": c.window,
            "a": {"upper_bound": fmt.json_number(c.a_bound), "unjudged": c.a_unjudged},
            "b": {"upper_bound": fmt.json_number(c.b_bound), "unjudged": c.b_unjudged},
            "relabelled": c.side, "if_relabelled": {"a": fmt.json_number(c.if_a), "b": fmt.json_number(c.if_b),
                                                   "p_value": fmt.json_number(c.p_value), "verdict": c.verdict or None},
            "could_flip": c.could_flip, "sentence": c.sentence or None}


def _comparison(d: Diff) -> dict:
    """Everything about one run against the baseline (the part a multi-run document repeats per run)."""
    s = d.settings
    metrics = {}
    for m in d.metrics:
        entry = {"a": fmt.json_number(m.a), "b": fmt.json_number(m.b), "delta": fmt.json_number(m.delta),
                 "p_value": fmt.json_number(m.p_value)}
        if m.p_adjusted is not None:
            entry["p_adjusted"] = fmt.json_number(m.p_adjusted)
        entry.update({"ci95": [fmt.json_number(m.ci95[0]), fmt.json_number(m.ci95[1])], "n": m.n,
                      "queries_worth": fmt.json_number(m.queries_worth),
                      "worth": worth_text(m), "test": m.method, "verdict": m.verdict,
                      "verdict_words": m.verdict_words, "highlight": m.is_quality_change, "summary": m.summary,
                      "sentence": m.sentence, "detectable_change": fmt.json_number(m.detectable),
                      "detectable_queries": fmt.json_number(m.detectable * m.n) if m.n else None,
                      "noise": m.noise_words,
                      "unjudged": _unjudged_entry(m)})
        metrics[m.name] = entry
    return {
        "queries": {"scored": len(d.scored), "unanswerable": d.unanswerable},
        "by_hand": d.by_hand,
        "metrics": metrics,
        "flips": {"k": s.k, "hit_to_miss": [f.query_id for f in d.hit_to_miss],
                  "miss_to_hit": [f.query_id for f in d.miss_to_hit]},
        "flipped_queries": [_flip_entry(f) for f in d.hit_to_miss + d.miss_to_hit],
        "reranker_opportunity": {
            side: {"run": o.run, f"recall@{o.k}": fmt.json_number(o.recall_k),
                   f"recall@{o.depth}": fmt.json_number(o.recall_depth),
                   "count": o.count, "queries": o.queries}
            for side, o in d.opportunity.items()
        },
        "overlap": None if d.overlap is None else {
            # Jaccard and RBO of the top k, RBO of the top depth; the share of RBO's weight in the top k says
            # how little the order deep in the lists moves it
            "k": d.overlap.k, "depth": d.overlap.depth, "rbo_p": d.overlap.p,
            "rbo_weight_top_k": fmt.json_number(d.overlap.weight_top_k),
            "mean_jaccard": fmt.json_number(d.overlap.mean_jaccard),
            "mean_rbo_k": fmt.json_number(d.overlap.mean_rbo_k),
            "mean_rbo": fmt.json_number(d.overlap.mean_rbo),
            "per_query": {q: {"jaccard": fmt.json_number(j), "rbo_k": fmt.json_number(rk), "rbo": fmt.json_number(r)}
                          for q, j, r, rk in d.overlap.per_query.select("query_id", "jaccard", "rbo", "rbo_k")
                          .iter_rows()},
        },
        "judged_warning": d.judged_warning,
        "regressions": [_flip_entry(f) for f in d.regressions],
    }


def diff_document(d: Diff, a_path: str | None = None, b_path: str | None = None,
                  gold_path: str | None = None) -> dict:
    """The two-run document (`ragdiff diff A B --json`)."""
    return {"a": {"name": d.a_name, "path": a_path}, "b": {"name": d.b_name, "path": b_path}, "gold": gold_path,
            "settings": _settings(d), **_comparison(d)}


def document(diffs: list[Diff], base_path: str | None = None, run_paths: list[str | None] | None = None,
             gold_path: str | None = None) -> dict:
    """One run: the two-run document. Several (one baseline, each diff's A): the multi-run document, with
    p-values Holm-adjusted across runs × metrics (call it on fresh diffs; it adjusts them)."""
    run_paths = run_paths or [None] * len(diffs)
    if len(diffs) == 1:
        return diff_document(diffs[0], base_path, run_paths[0], gold_path)
    tests = adjust(diffs)
    first = diffs[0]
    return {
        "baseline": {"name": first.a_name, "path": base_path},
        "gold": gold_path,
        "settings": _settings(first),
        "p_adjustment": {"method": "holm", "across": "runs × metrics", "tests": tests,
                         "note": f"p (Holm): p-values Holm-adjusted across {len(diffs)} runs × {len(first.metrics)} "
                                 f"metrics ({tests} tests); the verdicts read them (the raw p is p_value in --json "
                                 "and in each sentence)"},
        "runs": [{"b": {"name": d.b_name, "path": p}, **_comparison(d)} for d, p in zip(diffs, run_paths)],
    }


def comparisons(doc: dict) -> list[dict]:
    """Either document shape as a list of two-run documents (baseline as `a`, the run as `b`)."""
    if "runs" not in doc:
        return [doc]
    common = {"a": doc["baseline"], "gold": doc["gold"], "settings": doc["settings"],
              "p_adjustment": doc["p_adjustment"]}
    return [{**common, **run} for run in doc["runs"]]


def adjustment_note(doc: dict) -> str | None:
    adj = doc.get("p_adjustment")
    return adj["note"] if adj else None


def method_note(c: dict) -> str:
    """How the p-values were computed, in one line."""
    s = c["settings"]
    exact = all(m["test"] == "exact" for m in c["metrics"].values())
    how = "exact over all sign flips" if exact else f"{s['flips']} random sign flips, seed {s['seed']}"
    return f"paired sign-flip test, two-sided, {how}; bootstrap 95% interval; α = {s['alpha']:g}"


def scope_line(c: dict, gold_path: str | None) -> str:
    """'gold.yaml: 67 queries scored (5 unanswerable, left out) · k=5 depth=50'."""
    s, q = c["settings"], c["queries"]
    info = f"{gold_path}: " if gold_path else ""
    info += f"{words.queries(q['scored'])} scored"
    if q["unanswerable"]:
        info += f" ({len(q['unanswerable'])} unanswerable, left out)"
    info += f" · k={s['k']} depth={s['depth']}"
    if s["threshold"] != 1:
        info += f" threshold={s['threshold']}"
    if s["level"] != "gold":
        info += f" level={s['level']}"
    if s["gain"] != "linear":
        info += " · nDCG gain 2^grade-1"
    if s.get("judged_only"):
        info += f" · {JUDGED_ONLY_WORDS}"
    return info


def by_hand_note(c: dict) -> str:
    return (f"Only {words.count(c['queries']['scored'], 'scored query', 'scored queries')} "
            f"(under {MIN_QUERIES_FOR_VERDICT}): no verdict — read "
            "these by hand.")


def cell_value(name: str, value) -> str:
    return fmt.metric_number(parse_metric(name), value)


def cell_delta(name: str, delta) -> str:
    return fmt.metric_number(parse_metric(name), delta, "delta")


def cell_p(m: dict) -> str:
    return fmt.number(m.get("p_adjusted", m["p_value"]), "p")


def cell_ci(name: str, m: dict) -> str:
    lo, hi = m["ci95"]
    if parse_metric(name).spec.percent:
        whole = [fmt.number(end * 100, "delta_whole") for end in (lo, hi)] if lo is not None else None
        return fmt.DASH if whole is None else f"[{whole[0]}, {whole[1]}] pts"
    return f"[{fmt.number(lo, 'delta')}, {fmt.number(hi, 'delta')}]"


def cell_worth(m: dict) -> str:
    """'+1 of 67 queries' -> '+1 of 67' (the column is headed "in queries")."""
    for tail in (" queries' worth", " query's worth", " queries", " query"):
        if m["worth"].endswith(tail):
            return m["worth"][: -len(tail)]
    return m["worth"]


def noise_heading(c: dict) -> str:
    """The heading over each metric's smallest detectable change (the sentences are the document's `noise`)."""
    from ragdiff.core.diff import POWER

    return (f"Smallest change this set detects (α = {c['settings']['alpha']:g}, power {POWER:g}, from the "
            "per-query differences)")


def overlap_line(ov: dict) -> str:
    """How far the ranked lists moved, in one line (the document's overlap)."""
    return (f"Lists moved (means; 1 = identical, 0 = disjoint): top {ov['k']} Jaccard {ov['mean_jaccard']:.2f}, "
            f"RBO {fmt.number(ov['mean_rbo_k'], 'short')} · top {ov['depth']} RBO {ov['mean_rbo']:.2f} "
            f"(p={ov['rbo_p']:g}: the top {ov['k']} carry {ov['rbo_weight_top_k']:.0%} of its weight)")


def first_gold(rank: int | None) -> str:
    return "—" if rank is None else f"#{rank}"


FLIP_HEADINGS = {"hit_to_miss": "hit→miss", "miss_to_hit": "miss→hit"}
FLIP_MARKS = {"hit_to_miss": "✓→✗", "miss_to_hit": "✗→✓", "regression": "✗"}


# --------------------------------------------------------------------------------------------------------------
# Markdown (a pull-request comment)

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
        rows.append([name, cell_value(name, m["a"]), cell_value(name, m["b"]), cell_delta(name, m["delta"]),
                     cell_worth(m), cell_p(m), cell_ci(name, m), verdict])
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
        row = [name, cell_value(name, base["a"])]
        for c in cs:
            m = c["metrics"][name]
            verdict = f"**{m['verdict_words']}**" if m["highlight"] else m["verdict_words"]
            row += [cell_value(name, m["b"]), cell_delta(name, m["delta"]), cell_p(m), verdict]
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


def _md_slices(doc: dict, names: list[str]) -> list[str]:
    """`--drafted as-labels` and `--by-tag` (diff's slice_document): the baseline and each run, Δ beside."""
    heads = ["A", "B"] if len(names) == 2 else [f"baseline {md_text(names[0])}", *map(md_text, names[1:])]
    deltas = ["Δ"] if len(names) == 2 else [f"Δ {h}" for h in heads[1:]]

    def cells(values: list[dict], name: str) -> list[str]:
        base = values[0].get(name)
        return [cell_value(name, v.get(name)) for v in values] + [
            fmt.DASH if base is None or v.get(name) is None else cell_delta(name, v[name] - base) for v in values[1:]]

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


def markdown(doc: dict, failures: list[str] | None = None, show: int | None = 20,
             notes: list[str | None] = ()) -> str:
    """GitHub-flavoured Markdown for a pull-request comment: the metrics table with Δ, p, CI and the verdict
    in words, the flips at k, the reranker's opportunity, the unjudged warning. Long lists collapse, and list
    at most `show` queries each (a GitHub comment holds 65,536 characters) unless under 30 were scored.
    `notes`: lines every scoring command says about the gold set (drafts waiting), shown as notes."""
    cs = comparisons(doc)
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
    out += _md_slices(doc, [first["a"]["name"], *(c["b"]["name"] for c in cs)])
    out += [f"> {md_text(note)}\n" for note in notes if note]
    if failures:
        out += ["**FAIL (--fail-on-regression):**", ""] + [f"- {md_text(r)}" for r in failures] + [""]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------------------------------------
# what the HTML page shows beyond the document: the which-k curves and the flipped queries' ranked lists


TEXT_LIMIT = 4000  # characters of a chunk's text on the page; the rest is said, not shown


def page_data(evals: list, gold, corpus=None) -> dict:
    """For `ragdiff report`: each run's recall@j curve (j = 1 … depth), and for every query that flipped
    against the baseline (evals[0]) each run's ranked list there — the top k, then every relevant chunk below
    k with its rank or as not retrieved — with labels, scores, the rank in the other run, and chunk text."""
    import polars as pl

    from ragdiff.core.diff import flips as flip_ids
    from ragdiff.core.metrics import aligned_frame, prepare, recall_curve

    base = evals[0]
    s = base.settings
    curves = {ev.run.name: recall_curve(prepare(ev.run, gold, s), s, s.depth) for ev in evals}
    flipped: list[str] = []
    for ev in evals[1:]:
        lost, gained = flip_ids(base, ev, s.k)
        flipped += lost + gained
    wanted = pl.Series(list(dict.fromkeys(flipped)), dtype=pl.String)
    scoring = gold.qrels(s.level).filter(pl.col("query_id").is_in(wanted.implode()))
    relevant = {(q, c) for q, c, g in scoring.iter_rows() if g is not None and g >= s.threshold}
    labels: dict[tuple[str, str], tuple[str, int | None]] = {}
    order = {"gold": 0, "evidence": 1, "not_relevant": 2}
    judged = gold.judgments.filter(pl.col("query_id").is_in(wanted.implode()))
    for q, c, grade, level in judged.select("query_id", "chunk_id", "grade", "level").iter_rows():
        held = labels.get((q, c))
        if held is None or order.get(level, 9) < order.get(held[0], 9):
            labels[(q, c)] = (level, grade)
    # only the rows the page can show: each run's top k, the relevant chunks, and these chunks' ranks in every
    # run (300 flipped queries at depth 1,000: 600,000 rows shrink to about 12,000)
    tops = {ev.run.name: aligned_frame(ev.run, gold).filter(pl.col("query_id").is_in(wanted.implode())
                                                           & (pl.col("rank") <= s.depth))
            for ev in evals}
    shown = pl.concat([t.filter(pl.col("rank") <= s.k).select("query_id", "chunk_id") for t in tops.values()]
                      + [pl.DataFrame(sorted(relevant), schema={"query_id": pl.String, "chunk_id": pl.String},
                                      orient="row")]).unique()
    ranks: dict[str, dict[str, dict[str, tuple[int, float | None]]]] = {}
    for ev in evals:
        frame = tops[ev.run.name].join(shown, on=["query_id", "chunk_id"], how="semi")
        per: dict[str, dict[str, tuple[int, float | None]]] = {}
        for q, c, rank, score in frame.select("query_id", "chunk_id", "rank", "score").iter_rows():
            per.setdefault(q, {})[c] = (rank, score)
        ranks[ev.run.name] = per
    must: dict[str, list[str]] = {}
    for q, c in sorted(relevant):
        must.setdefault(q, []).append(c)

    def rows(run: str, q: str) -> list[dict]:
        got = ranks[run].get(q, {})
        shown = sorted(((r, c, sc) for c, (r, sc) in got.items() if r <= s.k))
        below = sorted(((got[c][0], c, got[c][1]) for c in must.get(q, []) if c in got and got[c][0] > s.k))
        absent = [(None, c, None) for c in must.get(q, []) if c not in got]
        out = []
        for rank, chunk, score in shown + below + absent:
            level, grade = labels.get((q, chunk), (None, None))
            out.append({"rank": rank, "chunk_id": chunk, "score": score, "level": level, "grade": grade,
                        "relevant": (q, chunk) in relevant, "below_k": rank is None or rank > s.k})
        return out

    lists = {ev.run.name: {q: rows(ev.run.name, q) for q in wanted} for ev in evals}
    ranks_only = {run: {q: {c: r for c, (r, _) in per.items()} for q, per in by_q.items()}
                  for run, by_q in ranks.items()}
    chunks: dict[str, dict | None] = {}
    if corpus is not None:
        ids = {e["chunk_id"] for by_q in lists.values() for entries in by_q.values() for e in entries}
        found = corpus.get_many(ids)
        for cid in ids:
            chunk = found.get(cid)
            if chunk is None:
                chunks[cid] = None  # not in the corpus
                continue
            more = len(chunk.text) - TEXT_LIMIT
            chunks[cid] = {"title": chunk.title, "text": chunk.text[:TEXT_LIMIT] if more > 0 else chunk.text,
                           "cut": max(0, more)}
    return {"curves": curves, "lists": lists, "ranks": ranks_only, "chunks": chunks,
            "corpus": None if corpus is None else str(corpus.path)}
