"""The diff document and what renders it: `diff --markdown`, several runs against one baseline with Holm."""

import json
import math
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ragdiff.cli.main import main
from ragdiff.core.metrics.holm import holm
from test_diff import case, write_run

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
GOLD = SAMPLE / "gold.yaml"


def run_cli(capsys, *argv):
    code = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return code, out, err


def parse(markdown: str):
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def tables(tokens) -> list[dict]:
    """Every table: its header cells and body rows (cell text), and whether it sits inside <details>."""
    out, inside = [], 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "html_block":
            inside += tok.content.count("<details>") - tok.content.count("</details>")
        if tok.type == "table_open":
            header, rows, row, part = [], [], None, None
            while tokens[i].type != "table_close":
                t = tokens[i]
                if t.type in ("thead_open", "tbody_open"):
                    part = t.type
                elif t.type == "tr_open":
                    row = []
                elif t.type == "inline":
                    row.append("".join(c.content for c in t.children if c.type in ("text", "code_inline")))
                elif t.type == "tr_close":
                    (header if part == "thead_open" else rows).append(row)
                i += 1
            out.append({"header": header[0], "rows": rows, "collapsed": inside > 0})
        i += 1
    return out


def sample(capsys, *extra, runs=("bm25", "dense")):
    files = [SAMPLE / f"{r}.jsonl" for r in runs]
    return run_cli(capsys, "diff", *files, "--gold", GOLD, *extra)


# ----------------------------------------------------------------------------------------------------------------
# --markdown


def test_markdown_table_has_one_row_per_metric_and_the_flips_of_json(capsys):
    code, md, _ = sample(capsys, "--markdown")
    assert code == 0
    code, js, _ = sample(capsys, "--json")
    doc = json.loads(js)
    found = tables(parse(md))
    metrics_table = found[0]
    assert [row[0] for row in metrics_table["rows"]] == list(doc["metrics"])
    assert metrics_table["header"][-1] == "verdict"
    for row, (name, m) in zip(metrics_table["rows"], doc["metrics"].items()):
        assert row[-1] == m["verdict_words"]
    flip_tables = [t for t in found if t["header"][0] == "query"]
    assert len(flip_tables) == 2
    assert [r[0] for r in flip_tables[0]["rows"]] == doc["flips"]["hit_to_miss"]
    assert [r[0] for r in flip_tables[1]["rows"]] == doc["flips"]["miss_to_hit"]
    # each metric's smallest detectable change, in the document's words, collapsed under the table
    from ragdiff.core.report.markdown import md_text
    for m in doc["metrics"].values():
        assert f"- {md_text(m['noise'])}" in md
    # where the first gold chunk went, as --json says
    ranks = {f["query_id"]: f for f in doc["flipped_queries"]}
    for t in flip_tables:
        for qid, _text, a, b in t["rows"]:
            assert a == ("—" if ranks[qid]["a_rank"] is None else f"#{ranks[qid]['a_rank']}")
            assert b == ("—" if ranks[qid]["b_rank"] is None else f"#{ranks[qid]['b_rank']}")


def test_markdown_collapses_long_lists_only(capsys):
    _, md, _ = sample(capsys, "--markdown")
    doc = json.loads(sample(capsys, "--json")[1])
    flip_tables = [t for t in tables(parse(md)) if t["header"][0] == "query"]
    for t, direction in zip(flip_tables, ("hit_to_miss", "miss_to_hit")):
        assert t["collapsed"] == (len(doc["flips"][direction]) > 5), direction
    assert not tables(parse(md))[0]["collapsed"]  # the metrics table is always open
    assert "reranker's opportunity" in md and "unanswerable" in md


def test_markdown_shows_text_from_files_literally(tmp_path, capsys):
    nasty = "<script>alert(1)</script> | *bold* [x](http://e) `tick` _u_ \\ #h"
    a, b, gold = case(tmp_path, 4, lambda i: 1, lambda i: None, texts={"q01": nasty})
    code, md, _ = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown")
    assert code == 0
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "<script>" not in rendered
    row = next(r for t in tables(parse(md)) if t["header"][0] == "query" for r in t["rows"] if r[0] == "q01")
    assert row[1] == nasty
    assert "too few" in md or "by hand" in md  # four queries: no verdict


def test_markdown_names_the_unjudged_warning(tmp_path, capsys):
    # B's top 5 is all unlabelled chunks while A's holds the gold chunk and four labelled ones
    a, b, gold = case(tmp_path, 30, lambda i: 1, lambda i: 1, b_prefix="new")
    lines = ["queries:"]
    for i in range(1, 31):
        lines += [f"  - id: q{i:02d}", f"    text: question {i}", f"    gold: [g{i}]",
                  f"    not_relevant: [x{i}-2, x{i}-3, x{i}-4, x{i}-5]"]
    gold.write_text("\n".join(lines) + "\n")
    code, md, _ = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown")
    assert code == 0
    assert "**Unjudged chunks:**" in md and "judged@5" in md


def test_markdown_lists_at_most_show_queries(tmp_path, capsys):
    # 40 queries, B loses every one: 40 hit→miss, of which --show 7 are listed, and the rest are counted
    a, b, gold = case(tmp_path, 40, lambda i: 1, lambda i: None)
    code, md, _ = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown", "--show", "7")
    assert code == 0
    (flips,) = [t for t in tables(parse(md)) if t["header"][0] == "query"]
    assert len(flips["rows"]) == 7 and flips["collapsed"]
    assert "✓→✗ 40 hit→miss" in md and "… and 33 more" in md
    code, md, _ = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown")
    (flips,) = [t for t in tables(parse(md)) if t["header"][0] == "query"]
    assert len(flips["rows"]) == 20 and "… and 20 more" in md


def test_markdown_and_json_are_exclusive(capsys):
    with pytest.raises(SystemExit) as exit_info:
        sample(capsys, "--markdown", "--json")
    assert exit_info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_markdown_fail_on_regression_exit_code(tmp_path, capsys):
    a, b, gold = case(tmp_path, 30, lambda i: 1, lambda i: 8)
    code, md, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown", "--fail-on-regression")
    assert code == 1
    assert "FAIL (--fail-on-regression)" in md and "recall@5 dropped" in err


# ----------------------------------------------------------------------------------------------------------------
# Holm across runs × metrics


def test_holm_by_hand():
    # sorted: 0.005×4 = 0.02, 0.01×3 = 0.03, 0.03×2 = 0.06, 0.04×1 = 0.04 → carried up to 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    out = holm([0.02, math.nan, 0.04])  # nothing tested is not counted: m = 2
    assert out[0] == pytest.approx(0.04) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)


def hand_holm(ps: list[float]) -> list[float]:
    """Holm (1979) as written: with the p-values ordered p(1) <= … <= p(m), the adjusted p(i) is
    max over j <= i of min(1, (m − j + 1) p(j))."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    for i in range(1, m + 1):
        adjusted[order[i - 1]] = max(min(1.0, (m - j + 1) * ps[order[j - 1]]) for j in range(1, i + 1))
    return adjusted


def test_three_runs_one_table_holm_adjusted(capsys):
    code, js, _ = sample(capsys, "--json", runs=("bm25", "dense", "rrf"))
    assert code == 0
    doc = json.loads(js)
    assert doc["baseline"]["name"] == "bm25"
    assert [r["b"]["name"] for r in doc["runs"]] == ["dense", "rrf"]
    assert doc["p_adjustment"]["method"] == "holm"
    cells = [m for r in doc["runs"] for m in r["metrics"].values()]
    assert doc["p_adjustment"]["tests"] == len(cells) == 14
    raw = [m["p_value"] for m in cells]
    expected = hand_holm(raw)
    for m, want in zip(cells, expected):
        assert m["p_adjusted"] >= m["p_value"]
        assert m["p_adjusted"] == pytest.approx(want, abs=1e-9)
    assert any(m["p_adjusted"] > m["p_value"] for m in cells)  # the correction did something
    # each run against the baseline matches the two-run diff's raw numbers
    for r in doc["runs"]:
        two = json.loads(sample(capsys, "--json", runs=("bm25", r["b"]["name"]))[1])
        assert two["flips"] == r["flips"]
        for name, m in r["metrics"].items():
            assert m["p_value"] == two["metrics"][name]["p_value"]
            assert m["delta"] == two["metrics"][name]["delta"]


def test_three_runs_text_says_holm(capsys):
    code, out, _ = sample(capsys, runs=("bm25", "dense", "rrf"))
    assert code == 0
    assert "Holm-adjusted across 2 runs × 7 metrics (14 tests)" in out
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert header.split() == ["metric", "bm25", "dense", "Δ", "p", "(Holm)", "rrf", "Δ", "p", "(Holm)"]
    assert "dense vs baseline bm25" in out and "rrf vs baseline bm25" in out


def test_three_runs_markdown_one_row_per_metric(capsys):
    code, md, _ = sample(capsys, "--markdown", runs=("bm25", "dense", "rrf"))
    assert code == 0
    doc = json.loads(sample(capsys, "--json", runs=("bm25", "dense", "rrf"))[1])
    first = tables(parse(md))[0]
    assert [r[0] for r in first["rows"]] == list(doc["runs"][0]["metrics"])
    assert first["header"].count("p (Holm)") == 2
    assert "Holm-adjusted" in md
    # rrf's judged@5 drop is label coverage, not quality: its words say so and it is not in bold
    rrf = doc["runs"][1]["metrics"]["judged@5"]
    assert rrf["verdict"] == "drop" and not rrf["highlight"]
    judged = next(r for r in first["rows"] if r[0] == "judged@5")
    assert judged[-1] == rrf["verdict_words"] != "a real drop"
    assert f"**{rrf['verdict_words']}**" not in md


def test_several_runs_exit_codes(tmp_path, capsys):
    a, b, gold = case(tmp_path, 30, lambda i: 1, lambda i: 8)  # b drops every query from rank 1 to 8
    same = write_run(tmp_path / "same.jsonl", 30, {i: 1 for i in range(1, 31)}, prefix="s")
    code, out, _ = run_cli(capsys, "diff", a, same, b, "--gold", gold, "--fail-on-regression")
    assert code == 1
    assert "b: recall@5 dropped" in out
    code, out, _ = run_cli(capsys, "diff", a, same, same, "--gold", gold, "--fail-on-regression")
    assert code == 0 and "PASS" in out
    code, js, _ = run_cli(capsys, "diff", a, same, b, "--gold", gold, "--fail-on-regression", "--json")
    assert code == 1 and json.loads(js)["fail_on_regression"]["failed"]
    code, _, err = run_cli(capsys, "diff", a, same, tmp_path / "missing.jsonl", "--gold", gold)
    assert code == 2 and "missing.jsonl" in err


def test_markdown_and_report_say_drafts_wait(tmp_path, capsys):
    a, b, gold = case(tmp_path, 4, lambda i: 1, lambda i: 2)
    gold.write_text(gold.read_text().replace("    gold: [g1]\n", "    gold: [g1]\n    drafted: {x1-2: 2}\n"))
    code, md, _ = run_cli(capsys, "diff", a, b, "--gold", gold, "--markdown")
    assert code == 0
    assert "> 1 drafted label in 1 query wait for a person" in md
    out = tmp_path / "r.html"
    assert run_cli(capsys, "report", a, b, "--gold", gold, "-o", out)[0] == 0
    assert "1 drafted label in 1 query wait for a person" in out.read_text()


def test_lists_moved_is_one_sentence_in_text_markdown_and_html(tmp_path, capsys):
    _, text, _ = sample(capsys)
    _, md, _ = sample(capsys, "--markdown")
    assert run_cli(capsys, "report", SAMPLE / "bm25.jsonl", SAMPLE / "dense.jsonl", "--gold", GOLD,
                   "-o", tmp_path / "r.html")[0] == 0
    line = next(x.strip() for x in text.splitlines() if x.startswith("Lists moved"))
    assert line in md.splitlines()
    assert f'<p class="note">{line}</p>' in (tmp_path / "r.html").read_text()
