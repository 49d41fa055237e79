"""`ragdiff report`: one self-contained HTML page — the diff document and the page data rendered.

The page data (`page_data`): what the page shows beyond the document, the which-k curves and the flipped
queries' ranked lists.

No network and no CDN: the styles, the one small script and the which-k plot (SVG) are inline, so the file
works from file:// offline, in a mail attachment, or as a CI artefact. Every string that came from a file
(query text, ids, run names, chunk text) goes through `esc` (html.escape), so `<script>` in a chunk is data.
Readable printed (plain backgrounds, no buttons, a query never split across pages) and at phone width (one
column).
"""

from __future__ import annotations

import html

from ragdiff import __version__
from ragdiff.core import vocab
from ragdiff.core import fmt
from ragdiff.core.report.cells import (FLIP_HEADINGS, FLIP_MARKS, adjustment_note, by_hand_note, cell_ci, cell_delta,
                                       cell_p, cell_value, cell_worth, first_gold, method_note, noise_heading,
                                       overlap_line, scope_line)
from ragdiff.core.report.diff_doc import DiffReport, comparisons
from ragdiff.core.visible import visible

# one colour and one dash pattern per run, so the plot reads in grey print too
SERIES = (("#1b7837", ""), ("#b35806", "6 4"), ("#2166ac", "2 3"), ("#762a83", "8 3 2 3"), ("#4d4d4d", "1 2"))


def esc(value) -> str:
    """Text from a file, safe in HTML text and attributes: control characters visible, markup escaped."""
    return html.escape(visible(value), quote=True)


def esc_multiline(value) -> str:
    return html.escape(visible(value, multiline=True), quote=True)


CSS = """
:root { --fg: #1a1a1a; --dim: #5f5f5f; --rule: #d0d0d0; --gold: #8a5a00; --gold-bg: #fff3d6;
  --ev: #1f5f99; --ev-bg: #e6f0fa; --gain: #1b7837; --drop: #b2182b; --unj: #7a3fa0; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  margin: 0 auto; padding: 1rem; max-width: 78rem; background: #fff; }
h1 { font-size: 1.35rem; margin: .2rem 0; } h2 { font-size: 1.15rem; margin: 1.6rem 0 .5rem;
  border-bottom: 1px solid var(--rule); } h3 { font-size: 1rem; margin: 0 0 .3rem; }
.dim, .note { color: var(--dim); } .note { font-size: .85rem; }
code, .id, .num, .rank, .glyph { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
table.metrics td, table.metrics th { white-space: nowrap; }
.gain { color: var(--gain); font-weight: 600; } .drop { color: var(--drop); font-weight: 600; }
.warning { border-left: 4px solid #d9a400; background: #fffbea; padding: .5rem .8rem; }
svg.whichk { width: 100%; max-width: 46rem; height: auto; display: block; }
svg.whichk text { font: 11px system-ui, sans-serif; fill: var(--dim); }
ul.legend { list-style: none; padding: 0; } ul.legend li { margin: .2rem 0; }
.swatch { display: inline-block; width: 2.2rem; vertical-align: middle; }
nav.toc { columns: 2 18rem; font-size: .9rem; } nav.toc a { color: inherit; }
article.query { border: 1px solid var(--rule); border-radius: 6px; padding: .7rem; margin: .8rem 0;
  break-inside: avoid; }
.sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: .8rem; }
.side h4 { margin: .2rem 0; font-size: .9rem; }
ol.ranked { list-style: none; margin: 0; padding: 0; font-size: .88rem; }
ol.ranked li { border-bottom: 1px dotted var(--rule); }
ol.ranked li.cut { border-bottom: 2px solid var(--fg); font-size: .75rem; color: var(--dim); text-align: center; }
summary { cursor: pointer; display: flex; gap: .5rem; align-items: baseline; padding: .12rem 0; }
summary .id { flex: 1; overflow-wrap: anywhere; }
details.noise > summary { display: list-item; font-size: .9rem; }
.rank { min-width: 2.2rem; text-align: right; color: var(--dim); }
.glyph { min-width: 1.8rem; text-align: center; border-radius: 3px; }
.other { color: var(--dim); white-space: nowrap; }
.score { color: var(--dim); font-size: .8rem; }
li.gold .glyph { background: var(--gold-bg); color: var(--gold); font-weight: 700; }
li.gold.relevant .id { font-weight: 600; }
li.evidence .glyph { background: var(--ev-bg); color: var(--ev); }
li.not_relevant .glyph { color: var(--dim); }
li.unjudged .glyph { border: 1px dashed var(--unj); color: var(--unj); }
li.drafted .glyph { border: 1px dotted var(--gold); color: var(--gold); }
.chunk { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; background: #f6f6f6;
  padding: .5rem; margin: .2rem 0 .5rem; border-radius: 4px; }
@media (max-width: 700px) {
  body { padding: .6rem; font-size: 14px; }
  .sides { grid-template-columns: minmax(0, 1fr); }
  nav.toc { columns: 1; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  .noprint { display: none; }
  article.query { border-color: #999; }
  .chunk { background: none; border-left: 2px solid #999; }
  a { color: inherit; text-decoration: none; }
}
"""

# two buttons open or close every chunk's text at once; a printout holds what is open (the ranked lists
# alone print the sample's 11 flipped queries on a few pages; every chunk's text would take 80)
SCRIPT = """
(function () {
  var all = function (open) { document.querySelectorAll('details').forEach(function (d) { d.open = open; }); };
  document.querySelectorAll('button[data-open]').forEach(function (b) {
    b.addEventListener('click', function () { all(b.getAttribute('data-open') === '1'); });
  });
})();
"""


def _metrics_table_two(c: dict) -> list[str]:
    p_head = "p (Holm)" if c.get("p_adjustment") else "p"
    out = ['<div class="scroll"><table class="metrics">',
           f'<thead><tr><th>metric</th><th class="num">A {esc(c["a"]["name"])}</th>'
           f'<th class="num">B {esc(c["b"]["name"])}</th><th class="num">Δ</th><th class="num">in queries</th>'
           f'<th class="num">{p_head}</th><th class="num">95% CI of Δ</th><th>verdict</th></tr></thead><tbody>']
    for name, m in c["metrics"].items():
        cls = m["verdict"] if m["highlight"] else ""
        metric = c["specs"][name]
        out.append(f'<tr><td class="id">{esc(name)}</td><td class="num">{cell_value(metric, m["a"])}</td>'
                   f'<td class="num">{cell_value(metric, m["b"])}</td>'
                   f'<td class="num {cls}">{cell_delta(metric, m["delta"])}</td>'
                   f'<td class="num">{esc(cell_worth(m))}</td><td class="num">{cell_p(m)}</td>'
                   f'<td class="num">{cell_ci(metric, m)}</td><td class="{cls}">{esc(m["verdict_words"])}</td></tr>')
    out.append("</tbody></table></div>")
    return out


def _metrics_table_many(cs: list[dict]) -> list[str]:
    head = f'<tr><th>metric</th><th class="num">baseline {esc(cs[0]["a"]["name"])}</th>'
    for c in cs:
        name = esc(c["b"]["name"])
        head += (f'<th class="num">{name}</th><th class="num">Δ</th><th class="num">p (Holm)</th>'
                 f'<th>verdict</th>')
    out = ['<div class="scroll"><table class="metrics">', f"<thead>{head}</tr></thead><tbody>"]
    for name, base in cs[0]["metrics"].items():
        metric = cs[0]["specs"][name]
        row = f'<tr><td class="id">{esc(name)}</td><td class="num">{cell_value(metric, base["a"])}</td>'
        for c in cs:
            m = c["metrics"][name]
            cls = m["verdict"] if m["highlight"] else ""
            row += (f'<td class="num">{cell_value(metric, m["b"])}</td>'
                    f'<td class="num {cls}">{cell_delta(metric, m["delta"])}</td>'
                    f'<td class="num">{cell_p(m)}</td><td class="{cls}">{esc(m["verdict_words"])}</td>')
        out.append(row + "</tr>")
    out.append("</tbody></table></div>")
    return out


def _verdicts(c: dict) -> list[str]:
    if c["by_hand"]:
        return [f'<p class="warning">{esc(by_hand_note(c))}</p>']
    items = []
    for m in c["metrics"].values():
        cls = m["verdict"] if m["highlight"] else ""
        items.append(f'<li class="{cls}">{esc(m["sentence"])}</li>')
    noise = [f"<li>{esc(m['noise'])}</li>" for m in c["metrics"].values()]
    return ['<ul class="verdicts">', *items, "</ul>", f'<details class="noise"><summary>{esc(noise_heading(c))}'
            "</summary><ul>", *noise, "</ul></details>"]


def which_k_svg(curves: dict[str, list[float]], k: int, width: int = 640, height: int = 300) -> str:
    """recall@j for j = 1 … depth, one line per run, k and depth marked; the y axis starts at the tenth below
    the lowest value (as the app's plot does) so a few queries' difference is visible."""
    left, right, top, bottom = 44, 16, 12, 34
    names = list(curves)
    depth = max((len(v) for v in curves.values()), default=1)
    values = [v for curve in curves.values() for v in curve if v == v]
    low = max(0.0, int(min(values, default=0.0) * 10) / 10)
    span = max(1.0 - low, 1e-9)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(j: float) -> float:
        return left + (j - 1) / max(depth - 1, 1) * plot_w

    def y(v: float) -> float:
        return top + (1.0 - (v - low) / span) * plot_h

    out = [f'<svg class="whichk" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="recall at j for j from 1 to {depth}, k={k} marked">']
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#d0d0d0"/>')
    steps = 5
    for i in range(steps + 1):
        v = low + span * i / steps
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ececec"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
    for j, label in ((k, f"k={k}"), (depth, f"depth={depth}")):
        if j <= depth:
            out.append(f'<line x1="{x(j):.1f}" x2="{x(j):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#777" '
                       f'stroke-dasharray="3 3"/>')
            anchor = "end" if j == depth else "middle"
            out.append(f'<text x="{x(j):.1f}" y="{height - 18}" text-anchor="{anchor}">{label}</text>')
    out.append(f'<text x="{x(1):.1f}" y="{height - 18}" text-anchor="middle">1</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 3}" text-anchor="middle">rank j (recall@j: '
               'a right chunk in the top j)</text>')
    for i, name in enumerate(names):
        colour, dash = SERIES[i % len(SERIES)]
        curve = curves[name]
        points = " ".join(f"{x(j + 1):.1f},{y(v):.1f}" for j, v in enumerate(curve) if v == v)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2.2"{dashes} points="{points}">'
                   f"<title>{esc(name)}</title></polyline>")
        if k <= len(curve) and curve[k - 1] == curve[k - 1]:
            out.append(f'<circle cx="{x(k):.1f}" cy="{y(curve[k - 1]):.1f}" r="3.5" fill="{colour}"/>')
    out.append("</svg>")
    return "".join(out)


def _swatch(i: int) -> str:
    colour, dash = SERIES[i % len(SERIES)]
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<svg class="swatch" viewBox="0 0 36 8" aria-hidden="true"><line x1="0" y1="4" x2="36" y2="4" '
            f'stroke="{colour}" stroke-width="2.5"{dashes}/></svg>')


def _which_k(report: DiffReport, page: dict) -> list[str]:
    cs = comparisons(report)
    s = cs[0]["settings"]
    k, depth, n = s["k"], s["depth"], cs[0]["queries"]["scored"]
    names = list(page["curves"])
    out = ["<section id=\"which-k\">", f"<h2>Which k: recall@j from 1 to depth {depth}</h2>",
           which_k_svg(page["curves"], k)]
    opportunities: dict[str, dict] = {}
    for c in cs:
        for o in c["reranker_opportunity"].values():
            opportunities.setdefault(o["run"], o)
    out.append('<ul class="legend">')
    for i, name in enumerate(names):
        o = opportunities.get(name)
        text = f"<strong>{esc(name)}</strong>"
        if o is not None:
            text += (f" recall@{k} {fmt.number(o[f'recall@{k}'])} → recall@{depth} {fmt.number(o[f'recall@{depth}'])}: "
                     f"{o['count']} of {n} queries have gold in the top {depth} but not the top {k} — the "
                     "reranker's opportunity")
        out.append(f"<li>{_swatch(i)} {text}</li>")
    out += ["</ul>", "</section>"]
    return out


def _row(e: dict, other: str, other_rank: int | None, chunks: dict) -> str:
    level = e["level"]
    kind = vocab.kind_of(level, e["grade"])  # a negative grade is unjudged, whatever its level
    classes = [kind.name] + (["relevant"] if e["relevant"] else [])
    glyph = vocab.glyph(level, e["grade"])
    word = vocab.word(level, e["grade"])
    rank = "—" if e["rank"] is None else str(e["rank"])
    where = f"{other}#{other_rank}" if other_rank is not None else f"{other} —"
    score = "" if e["score"] is None else f'<span class="score">{e["score"]:.4g}</span>'
    summary = (f'<span class="rank">{rank}</span><span class="glyph" title="{esc(word)}">{esc(glyph)}</span>'
               f'<span class="id">{esc(e["chunk_id"])}</span>{score}'
               f'<span class="other" title="rank in run {other}">{esc(where)}</span>')
    chunk = chunks.get(e["chunk_id"])
    if chunk is None:
        body = '<div class="chunk dim">(no text: ' + ("not in the corpus" if e["chunk_id"] in chunks
                                                       else "no corpus given") + ")</div>"
    else:
        title = f"<strong>{esc(chunk['title'])}</strong>\n" if chunk.get("title") else ""
        cut = f"\n… ({chunk['cut']} more characters)" if chunk.get("cut") else ""
        body = f'<div class="chunk">{title}{esc_multiline(chunk["text"])}{cut}</div>'
    body = f'<p class="note">{esc(word)}</p>' + body
    return f'<li class="{" ".join(classes)}"><details><summary>{summary}</summary>{body}</details></li>'


def _side(label: str, name: str, other: str, rows: list[dict], other_ranks: dict[str, int], k: int,
          chunks: dict) -> list[str]:
    out = ['<div class="side">', f"<h4>{label} {esc(name)}</h4>", '<ol class="ranked">']
    cut_drawn = False
    for e in rows:
        if e["below_k"] and not cut_drawn:
            out.append(f'<li class="cut">k={k} · relevant chunks below</li>')
            cut_drawn = True
        out.append(_row(e, other, other_ranks.get(e["chunk_id"]), chunks))
    if not rows:
        out.append('<li class="dim">(nothing returned)</li>')
    out += ["</ol>", "</div>"]
    return out


def _flips(c: dict, page: dict, index: int, many: bool) -> list[str]:
    a, b = c["a"]["name"], c["b"]["name"]
    k = c["settings"]["k"]
    flipped = c["flipped_queries"]
    h2m, m2h = len(c["flips"]["hit_to_miss"]), len(c["flips"]["miss_to_hit"])
    title = f"Flips at k={k}: {h2m} hit→miss, {m2h} miss→hit"
    if many:
        title = f"{esc(b)} vs baseline {esc(a)} — " + title
    out = [f'<section class="flips" id="flips-{index}">', f"<h2>{title}</h2>"]
    if not flipped:
        out.append("<p>No query flipped.</p>")
    else:
        out.append('<nav class="toc"><ul>')
        for i, f in enumerate(flipped):
            text = f" {esc(f['text'])}" if f["text"] and f["text"] != f["query_id"] else ""
            out.append(f'<li><a href="#q-{index}-{i}">{FLIP_MARKS[f["direction"]]} <span class="id">'
                       f'{esc(f["query_id"])}</span>{text}</a></li>')
        out.append("</ul></nav>")
    lists, ranks, chunks = page["lists"], page["ranks"], page["chunks"]
    for i, f in enumerate(flipped):
        q = f["query_id"]
        text = f' <span class="dim">{esc(f["text"])}</span>' if f["text"] and f["text"] != q else ""
        out.append(f'<article class="query" id="q-{index}-{i}">')
        out.append(f'<h3><span class="{"drop" if f["direction"] == "hit_to_miss" else "gain"}">'
                   f'{FLIP_MARKS[f["direction"]]} {FLIP_HEADINGS[f["direction"]]}</span> '
                   f'<span class="id">{esc(q)}</span>{text}</h3>')
        out.append(f'<p class="note">first gold chunk: A {first_gold(f["a_rank"])} → B {first_gold(f["b_rank"])}'
                   " · click a row for its text</p>")
        out.append('<div class="sides">')
        out += _side("A", a, "B", lists[a].get(q, []), ranks[b].get(q, {}), k, chunks)
        out += _side("B", b, "A", lists[b].get(q, []), ranks[a].get(q, {}), k, chunks)
        out += ["</div>", "</article>"]
    out.append("</section>")
    return out


def render(report: DiffReport, page: dict) -> str:
    """The whole page as one string: the diff report and its page data (`page_data`)."""
    doc = report.doc
    cs = comparisons(report)
    first = cs[0]
    if len(cs) == 1:
        title = f"ragdiff: A {first['a']['name']} vs B {first['b']['name']}"
    else:
        title = f"ragdiff: {', '.join(c['b']['name'] for c in cs)} against baseline {first['a']['name']}"
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>"]
    out += ["<header>", f"<h1>{esc(title)}</h1>",
            f'<p class="dim">{esc(scope_line(first, doc.get("gold")))}</p>',
            '<p class="noprint"><button type="button" data-open="1">show every chunk\'s text</button> '
            '<button type="button" data-open="0">hide them</button></p>', "</header>"]
    out += ['<section id="metrics">', "<h2>Metrics</h2>"]
    out += _metrics_table_two(first) if len(cs) == 1 else _metrics_table_many(cs)
    note = method_note(first)
    out.append(f'<p class="note">{esc(note)}</p>')
    if adjustment_note(doc):
        out.append(f'<p class="note">{esc(adjustment_note(doc))}</p>')
    for c in cs:
        if len(cs) > 1:
            out.append(f"<h3>{esc(c['b']['name'])} vs baseline {esc(c['a']['name'])}</h3>")
        out += _verdicts(c)
        if c["overlap"] is not None:
            out.append(f'<p class="note">{esc(overlap_line(c["overlap"]))}</p>')
        if c["judged_warning"]:
            out.append(f'<p class="warning"><strong>Unjudged chunks:</strong> {esc(c["judged_warning"])}</p>')
        if c["regressions"]:
            ids = ", ".join(esc(f["query_id"]) for f in c["regressions"])
            out.append(f'<p class="warning"><strong>Regression queries that miss at k in B:</strong> {ids}</p>')
    out += [f'<p class="warning">{esc(note)}</p>' for note in report.notes if note]
    out.append("</section>")
    out += _which_k(report, page)
    for index, c in enumerate(cs):
        out += _flips(c, page, index, len(cs) > 1)
    legend = " · ".join(f"{esc(g)} {esc(meaning)}" for g, meaning in vocab.legend())
    out += ['<footer class="note">', f"<p>Labels: {legend}. A#n / B#n: the chunk's rank in the other run "
            "(— not in its top depth).</p>",
            f"<p>Made by ragdiff {esc(__version__)}"
            + (f" · corpus {esc(page['corpus'])}" if page.get("corpus") else "") + ".</p>", "</footer>"]
    out += [f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


TEXT_LIMIT = 4000  # characters of a chunk's text on the page; the rest is said, not shown


def page_data(evals: list, gold, corpus=None) -> dict:
    """For `ragdiff report`: each run's recall@j curve (j = 1 … depth), and for every query that flipped
    against the baseline (evals[0]) each run's ranked list there — the top k, then every relevant chunk below
    k with its rank or as not retrieved — with labels, scores, the rank in the other run, and chunk text."""
    import polars as pl

    from ragdiff.core.metrics.diff import flips as flip_ids
    from ragdiff.core.metrics.prepared import aligned_frame, prepare
    from ragdiff.core.metrics.scoring import recall_curve

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
