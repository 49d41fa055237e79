"""`compare` and `ragdiff diff`: per-metric change with a paired test, flips, which k, overlap, the CI gate."""

import math
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ragdiff.cli.main import main
from ragdiff.core.metrics.diff import Diff, compare, flips, jaccard, paired, rbo
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, Metric, default_metrics
from ragdiff.core.io.runs import load_run

DATA = Path(__file__).parent / "data" / "diff"


# ----------------------------------------------------------------------------------------------------------------
# fixtures built in tmp_path: a YAML label file and two JSONL runs


def write_gold(path: Path, n: int, regression=(), texts=None, unanswerable=0) -> Path:
    lines = ["queries:"]
    for i in range(1, n + 1):
        qid = f"q{i:02d}"
        text = (texts or {}).get(qid, f"question number {i}")
        lines += [f"  - id: {qid}", f"    text: {json.dumps(text)}", f"    gold: [g{i}]"]
        if qid in regression:
            lines.append("    regression: true")
    for j in range(unanswerable):
        lines += [f"  - id: u{j}", f"    text: nothing answers {j}", "    gold: []"]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_run(path: Path, n: int, gold_rank: dict[int, int | None], depth: int = 10, prefix: str = "x") -> Path:
    """gold_rank[i]: where q{i}'s gold chunk g{i} goes (1-based), None for not retrieved."""
    out = []
    for i in range(1, n + 1):
        results = [f"{prefix}{i}-{r}" for r in range(1, depth + 1)]
        rank = gold_rank.get(i)
        if rank is not None:
            results[rank - 1] = f"g{i}"
        out.append(json.dumps({"query_id": f"q{i:02d}", "query": f"question number {i}", "results": results}))
    path.write_text("\n".join(out) + "\n")
    return path


def case(tmp_path: Path, n: int, a_rank, b_rank, regression=(), texts=None, b_prefix="x"):
    gold = write_gold(tmp_path / "gold.yaml", n, regression, texts)
    a = write_run(tmp_path / "a.jsonl", n, {i: a_rank(i) for i in range(1, n + 1)})
    b = write_run(tmp_path / "b.jsonl", n, {i: b_rank(i) for i in range(1, n + 1)}, prefix=b_prefix)
    return a, b, gold


def run_cli(capsys, *argv):
    code = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return code, out, err


def evals(a, b, gold, k=5, depth=10, metrics=None):
    g = load_gold(gold)
    s = EvalSettings(k=k, depth=depth)
    metrics = metrics or default_metrics(k, depth, "diff")
    return evaluate(load_run(a), g, s, metrics), evaluate(load_run(b), g, s, metrics), g


# ----------------------------------------------------------------------------------------------------------------
# the CI gate


def test_losing_every_query_fails_and_swapped_passes(tmp_path, capsys):
    a, b, gold = case(tmp_path, 30, lambda i: 1, lambda i: 8)  # B pushes every gold chunk from 1 to 8
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--fail-on-regression")
    assert code == 1
    assert "FAIL" in out
    assert "recall@5 dropped" in out
    assert "a real drop" in out
    assert "30 hit→miss" in out

    code, out, err = run_cli(capsys, "diff", b, a, "--gold", gold, "--fail-on-regression")
    assert code == 0, out
    assert "a real gain" in out
    assert "PASS" in out


def test_regression_query_missing_in_b_fails_alone(tmp_path, capsys):
    # q03 is marked regression: true and B loses it; nothing else changes, so no metric drop is significant
    a, b, gold = case(tmp_path, 40, lambda i: 2, lambda i: None if i == 3 else 2, regression={"q03"},
                      texts={"q03": "refund window for ebooks"})
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--fail-on-regression")
    assert code == 1
    assert "regression query q03 (refund window for ebooks) misses at k=5 in B" in out
    assert "dropped" not in out  # the metric gate did not fire
    # without the flag: the report, exit 0
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold)
    assert code == 0
    assert "Regression queries that miss at k=5 in B: 1" in out
    # B keeps it: passes
    code, out, err = run_cli(capsys, "diff", b, a, "--gold", gold, "--fail-on-regression")
    assert code == 0


def test_fail_on_regression_json_keeps_stdout_clean(tmp_path, capsys):
    a, b, gold = case(tmp_path, 30, lambda i: 1, lambda i: 8)
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--fail-on-regression", "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["fail_on_regression"]["failed"] is True
    assert any("recall@5" in r for r in doc["fail_on_regression"]["reasons"])
    assert "recall@5" in err


# ----------------------------------------------------------------------------------------------------------------
# --json


def test_json_shape(tmp_path, capsys):
    a, b, gold = case(tmp_path, 32, lambda i: 1 if i % 3 else 7, lambda i: 1 if i % 4 else None)
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--json", "--flips", "2000", "--seed", "3", "--depth", "10")
    assert code == 0
    doc = json.loads(out)
    assert set(doc["metrics"]) == {"recall@5", "recall@10", "recall_frac@5", "precision@5", "mrr", "ndcg@5",
                                   "judged@5"}
    for entry in doc["metrics"].values():
        assert {"a", "b", "delta", "p_value", "ci95"} <= set(entry)
        assert len(entry["ci95"]) == 2
    r5 = doc["metrics"]["recall@5"]
    lost = [f"q{i:02d}" for i in range(1, 33) if i % 3 and not i % 4]
    gained = [f"q{i:02d}" for i in range(1, 33) if not i % 3 and i % 4]
    assert doc["flips"]["hit_to_miss"] == lost
    assert doc["flips"]["miss_to_hit"] == gained
    assert r5["delta"] == pytest.approx((len(gained) - len(lost)) / 32)
    assert r5["queries_worth"] == pytest.approx(len(gained) - len(lost))
    assert doc["settings"]["flips"] == 2000 and doc["settings"]["seed"] == 3
    assert doc["queries"]["scored"] == 32
    assert doc["by_hand"] is False
    # A: gold at rank 7 for i % 3 == 0 -> opportunity at k=5, depth=10
    assert doc["reranker_opportunity"]["a"]["queries"] == [f"q{i:02d}" for i in range(1, 33) if not i % 3]
    assert doc["reranker_opportunity"]["b"]["count"] == 0
    assert 0 <= doc["overlap"]["mean_jaccard"] <= 1
    # same inputs, same document
    code, out2, err = run_cli(capsys, "diff", a, b, "--gold", gold, "--json", "--flips", "2000", "--seed", "3", "--depth", "10")
    assert out2 == out


def test_lesson_example(capsys):
    """The seed's three queries: recall@1 0.33 for A, B reorders them; under 30 queries: read by hand."""
    a, b, gold = DATA / "lesson_a.json", DATA / "lesson_b.json", DATA / "lesson_gold.yaml"
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "-k", "1", "--depth", "3", "--json")
    assert code == 0
    doc = json.loads(out)
    assert round(doc["metrics"]["recall@1"]["a"], 2) == 0.33
    assert round(doc["metrics"]["recall@1"]["b"], 2) == 0.67
    assert round(doc["metrics"]["mrr"]["a"], 2) == 0.56
    assert round(doc["metrics"]["recall@3"]["a"], 2) == 1.00
    assert doc["by_hand"] is True
    assert doc["metrics"]["recall@1"]["verdict"] == "by hand"
    assert doc["flips"]["hit_to_miss"] == ["refund window for ebooks"]
    assert doc["flips"]["miss_to_hit"] == ["return an unopened blender", "who approves expenses over 5k"]
    # 3 queries: the test enumerates all 8 sign patterns
    assert doc["metrics"]["recall@1"]["test"] == "exact"

    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold, "-k", "1", "--depth", "3")
    assert code == 0
    assert "read these by hand" in out
    assert "a real" not in out and "inside the noise" not in out
    for q in ("refund window for ebooks", "return an unopened blender", "who approves expenses over 5k"):
        assert q in out
    # under 30 queries a drop never trips the metric gate
    code, out, err = run_cli(capsys, "diff", b, a, "--gold", gold, "-k", "1", "--depth", "3",
                             "--fail-on-regression")
    assert code == 0


def test_file_text_is_shown_literally(tmp_path, capsys):
    texts = {"q01": "[bold red]not markup[/] :smile: [link=x]y[/link]"}
    a, b, gold = case(tmp_path, 5, lambda i: 1, lambda i: None if i == 1 else 1, texts=texts)
    code, out, err = run_cli(capsys, "diff", a, b, "--gold", gold)
    assert code == 0
    assert "[bold red]not markup[/] :smile: [link=x]y[/link]" in out


def test_bad_input_exits_2(tmp_path, capsys):
    a, b, gold = case(tmp_path, 3, lambda i: 1, lambda i: 1)
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    code, out, err = run_cli(capsys, "diff", a, tmp_path / "bad.jsonl", "--gold", gold)
    assert code == 2
    assert "bad.jsonl" in err and "Traceback" not in err
    code, out, err = run_cli(capsys, "diff", a, tmp_path / "missing.jsonl", "--gold", gold)
    assert code == 2


def test_python_dash_m(tmp_path):
    a, b, gold = case(tmp_path, 4, lambda i: 1, lambda i: 2)
    result = subprocess.run([sys.executable, "-m", "ragdiff", "diff", str(a), str(b), "--gold", str(gold), "--json"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["metrics"]["mrr"]["delta"] == pytest.approx(-0.5)


# ----------------------------------------------------------------------------------------------------------------
# the Diff object the app reads


def test_compare_fields(tmp_path):
    a, b, gold = case(tmp_path, 40, lambda i: 1 if i <= 30 else 6, lambda i: 1 if i <= 28 or i > 36 else None,
                      texts={"q29": "who approves expenses"})
    ev_a, ev_b, g = evals(a, b, gold)
    d = compare(ev_a, ev_b, gold=g, flips=2000, seed=1)
    assert isinstance(d, Diff)
    assert d.n == 40 and not d.by_hand
    assert [m.name for m in d.metrics] == ["recall@5", "recall@10", "recall_frac@5", "precision@5", "mrr", "ndcg@5",
                                           "judged@5"]
    r5 = d.metric("recall@5")
    assert (r5.a, r5.b) == (30 / 40, 32 / 40)
    assert r5.queries_worth == pytest.approx(2)
    assert r5.sentence.startswith("recall@5 +0.050 = +2 of 40 queries, p = ")
    assert r5.verdict == "noise" and r5.sentence.endswith("inside the noise")
    assert r5.ci95[0] <= r5.delta <= r5.ci95[1]
    assert [f.query_id for f in d.hit_to_miss] == ["q29", "q30"]
    assert [f.query_id for f in d.miss_to_hit] == ["q37", "q38", "q39", "q40"]
    f29 = d.hit_to_miss[0]
    assert (f29.text, f29.a_rank, f29.b_rank) == ("who approves expenses", 1, None)
    assert d.opportunity["a"].queries == [f"q{i}" for i in range(31, 41)]
    assert d.opportunity["a"].count == 10
    assert d.opportunity["b"].count == 0
    assert d.regressions == []
    # B lost eight queries' gold from its whole list: at depth that is a real drop, and the gate says so
    assert d.metric("recall@10").verdict == "drop"
    assert d.failures() == [f"recall@10 dropped: {d.metric('recall@10').sentence}"]
    assert "recall@5" in d.headline() and "inside the noise" in d.headline()
    # the same inputs give the same numbers
    again = compare(ev_a, ev_b, gold=g, flips=2000, seed=1)
    assert [(m.p_value, m.ci95) for m in again.metrics] == [(m.p_value, m.ci95) for m in d.metrics]
    # the app's functions keep working
    assert flips(ev_a, ev_b, 5) == (["q29", "q30"], ["q37", "q38", "q39", "q40"])
    assert paired(ev_a, ev_b, Metric("recall", 5)).columns == ["query_id", "a", "b"]


def test_compare_fills_in_missing_metrics_from_gold(tmp_path):
    a, b, gold = case(tmp_path, 10, lambda i: 7, lambda i: 1)
    ev_a, ev_b, g = evals(a, b, gold, metrics=[Metric("mrr")])
    d = compare(ev_a, ev_b, gold=g, flips=500)
    assert [m.name for m in d.metrics] == ["mrr"]
    assert len(d.miss_to_hit) == 10
    assert d.opportunity["a"].count == 10
    # the app's own metric list works too
    ev_a, ev_b, g = evals(a, b, gold, metrics=default_metrics(5, 10))
    assert compare(ev_a, ev_b, gold=g, flips=500).metric("ndcg@10") is not None


def test_identical_runs(tmp_path):
    a, b, gold = case(tmp_path, 31, lambda i: 3, lambda i: 3)
    ev_a, ev_b, g = evals(a, b, gold)
    d = compare(ev_a, ev_b, gold=g, flips=500)
    assert all(m.delta == 0 and m.verdict == "same" and m.p_value == 1.0 for m in d.metrics)
    assert d.overlap.mean_jaccard == 1.0 and d.overlap.mean_rbo == pytest.approx(1.0)
    assert not d.hit_to_miss and not d.miss_to_hit


def test_judged_warning(tmp_path):
    """B returns chunks nobody labelled: its top k is much less judged, its scores understated."""
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n" + "".join(
        f"  - id: q{i}\n    text: t{i}\n    gold: [g{i}]\n    not_relevant: [n{i}a, n{i}b, n{i}c, n{i}d]\n"
        for i in range(1, 6)))
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps({f"q{i}": [f"g{i}", f"n{i}a", f"n{i}b", f"n{i}c", f"n{i}d"] for i in range(1, 6)}))
    b.write_text(json.dumps({f"q{i}": [f"new{i}", f"g{i}", f"u{i}", f"v{i}", f"w{i}"] for i in range(1, 6)}))
    ev_a, ev_b, g = evals(a, b, gold)
    d = compare(ev_a, ev_b, gold=g, flips=500)
    assert d.metric("judged@5").a == 1.0 and d.metric("judged@5").b == pytest.approx(0.2)
    assert d.judged_warning and d.judged_warning.startswith("judged@5: b 20% vs a 100%")
    assert "understated" in d.judged_warning


def test_settings_must_match(tmp_path):
    a, b, gold = case(tmp_path, 3, lambda i: 1, lambda i: 1)
    g = load_gold(gold)
    ev_a = evaluate(load_run(a), g, EvalSettings(k=5, depth=10))
    ev_b = evaluate(load_run(b), g, EvalSettings(k=3, depth=10))
    with pytest.raises(ValueError):
        compare(ev_a, ev_b, gold=g)


# ----------------------------------------------------------------------------------------------------------------
# overlap measures


def test_rbo_and_jaccard():
    assert rbo(list("abcde"), list("abcde")) == pytest.approx(1.0)
    assert rbo(list("abc"), list("xyz")) == 0.0
    assert rbo([], []) == 1.0 and rbo(["a"], []) == 0.0
    assert rbo(list("abcd"), list("abdc")) == pytest.approx(rbo(list("abdc"), list("abcd")))
    # a swap at the top costs more than a swap at the bottom
    assert rbo(list("bacdef"), list("abcdef")) < rbo(list("abcdfe"), list("abcdef")) < 1.0
    # uneven lengths: a prefix agrees fully as far as it goes (extrapolated RBO treats it as agreeing)
    assert rbo(list("abc"), list("abcdef")) == pytest.approx(1.0)
    # Webber et al.'s extrapolation by hand for depth 2: X1 = 0, X2 = 2 -> (1-p)/p*(0 + 1*p^2) + 1*p^2
    p = 0.9
    assert rbo(["a", "b"], ["b", "a"], p) == pytest.approx((1 - p) / p * p ** 2 + p ** 2)
    assert jaccard(list("abc"), list("bcd")) == 0.5
    assert jaccard([], []) == 1.0


def test_compare_without_gold(tmp_path):
    """What the app calls: compare(ev_a, ev_b) alone gives every metric's verdict, flips and overlap."""
    a, b, gold = case(tmp_path, 12, lambda i: 1, lambda i: 2 if i % 2 else 9)
    ev_a, ev_b, g = evals(a, b, gold, metrics=default_metrics(5, 10))
    d = compare(ev_a, ev_b)
    assert d.by_hand
    assert {m.name for m in d.metrics} == {m.name for m in default_metrics(5, 10)}
    assert all(m.short_verdict for m in d.metrics)
    assert [f.query_id for f in d.hit_to_miss] == [f"q{i:02d}" for i in range(2, 13, 2)]
    assert d.hit_to_miss[0].a_rank is None  # ranks need the gold set
    assert d.opportunity["b"].count == 6 and d.regressions == []
    assert 0 < d.overlap.mean_rbo < 1


def test_overlap_for_all_queries_equals_jaccard_and_rbo_one_query_at_a_time(tmp_path):
    """The vectorised overlap in compare() against the plain definitions, on random lists of uneven length."""
    import json
    import random

    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    rng = random.Random(3)
    pool = [f"c{i}" for i in range(40)]
    lists = {}
    for q in range(60):
        lists[f"q{q}"] = (rng.sample(pool, rng.randint(0, 25)), rng.sample(pool, rng.randint(0, 25)))
    lists["same"] = (pool[:12], pool[:12])
    (tmp_path / "a.json").write_text(json.dumps({q: a for q, (a, _) in lists.items() if a}))
    (tmp_path / "b.json").write_text(json.dumps({q: b for q, (_, b) in lists.items() if b}))
    (tmp_path / "gold.json").write_text(json.dumps({q: [pool[0]] for q in lists}))
    gold = load_gold(tmp_path / "gold.json")
    settings = EvalSettings(k=5, depth=20)
    d = compare(evaluate(load_run(tmp_path / "a.json"), gold, settings),
                evaluate(load_run(tmp_path / "b.json"), gold, settings), gold=gold, flips=100)
    got = {q: (j, r, rk) for q, j, r, rk in d.overlap.per_query.select("query_id", "jaccard", "rbo", "rbo_k").iter_rows()}
    assert len(got) == len(lists)
    for q, (a, b) in lists.items():
        assert got[q][0] == pytest.approx(jaccard(a[:5], b[:5]), abs=1e-12), q
        assert got[q][1] == pytest.approx(rbo(a[:20], b[:20]), abs=1e-12), q
        assert got[q][2] == pytest.approx(rbo(a[:5], b[:5]), abs=1e-12), q
    assert got["same"] == (1.0, pytest.approx(1.0), pytest.approx(1.0))


def _overlap_of_trec_lists(tmp_path, lists: dict, relevant: str, k: int, depth: int) -> dict:
    """compare()'s overlap per query of two TREC runs written from `lists` (query -> (A's list, B's list)), one
    relevant chunk per query: query -> (jaccard, rbo, rbo_k)."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    longest = max((len(x) for pair in lists.values() for x in pair), default=0)

    def trec(side):
        return "".join(f"{q} Q0 {c} {r} {2 * longest - r} t\n" for q, pair in lists.items()
                       for r, c in enumerate(pair[side], start=1))

    (tmp_path / "a.trec").write_text(trec(0))
    (tmp_path / "b.trec").write_text(trec(1))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {relevant} 1\n" for q in lists))
    gold = load_gold(tmp_path / "qrels.txt")
    settings = EvalSettings(k=k, depth=depth)
    d = compare(evaluate(load_run(tmp_path / "a.trec"), gold, settings),
                evaluate(load_run(tmp_path / "b.trec"), gold, settings), gold=gold, flips=100)
    return {q: (j, r, rk) for q, j, r, rk in d.overlap.per_query.select("query_id", "jaccard", "rbo", "rbo_k").iter_rows()}


def test_overlap_of_deep_lists_equals_rbo_of_the_whole_lists(tmp_path):
    """At depth 1000 the overlap joins only the top RBO_RANKS of each list (deeper ranks weigh < 1e-18): the
    numbers still equal the plain definition over the whole lists, for lists shorter and longer than the cut,
    of uneven lengths, and with shared chunks deep down."""
    import random

    from ragdiff.core.metrics.diff import RBO_RANKS

    assert 20 < RBO_RANKS < 1000
    rng = random.Random(11)
    pool = [f"c{i:04d}" for i in range(1500)]
    lengths = [0, 1, 7, RBO_RANKS - 1, RBO_RANKS, RBO_RANKS + 1, 600, 1000]
    lists = {}
    for q in range(40):
        la, lb = rng.choice(lengths), rng.choice(lengths)
        shared = rng.sample(pool, min(la, lb))
        a = shared + rng.sample([c for c in pool if c not in set(shared)], la - len(shared))
        b = list(shared) + [c for c in rng.sample(pool, lb) if c not in set(shared)][: lb - len(shared)]
        rng.shuffle(a)
        rng.shuffle(b)
        lists[f"q{q:02d}"] = (a, b)
    lists["same"] = (pool[:1000], pool[:1000])
    lists["deep"] = (pool[:1000], pool[999::-1])  # the same chunks, reversed: all the overlap is deep

    got = _overlap_of_trec_lists(tmp_path, lists, pool[0], k=10, depth=1000)
    present = {q for q, (a, b) in lists.items() if a or b}
    assert present <= set(got)
    for q in got:
        a, b = lists[q]
        assert got[q][0] == pytest.approx(jaccard(a[:10], b[:10]), abs=1e-12), q
        assert got[q][1] == pytest.approx(rbo(a, b), abs=1e-12), q
        assert got[q][2] == pytest.approx(rbo(a[:10], b[:10]), abs=1e-12), q
    assert got["same"][1] == pytest.approx(1.0)
    assert got["deep"][1] < 0.5  # the order differs at the top, though every chunk is shared


@pytest.mark.parametrize("colliding", ["constant", "length", "first letter", "across queries"])
def test_overlap_is_exact_when_chunk_hashes_collide(tmp_path, monkeypatch, colliding):
    """The overlap joins the two runs on a 64-bit key of (query, chunk id) and checks the joined pairs against
    the strings and the queries: with keys that collide on purpose (every chunk id hashed the same, or all of
    one length, or one first letter; or the query's place left out of the key, so that a chunk returned for two
    queries has one key) the numbers still equal the plain definitions, query by query."""
    import random

    import numpy as np
    import polars as pl

    from ragdiff.core.metrics import overlap

    hashes = {"constant": lambda e: pl.lit(7, dtype=pl.UInt64).repeat_by(e.len()).explode(),
              "length": lambda e: e.str.len_bytes().cast(pl.UInt64),
              "first letter": lambda e: e.str.slice(0, 1).hash(seed=1),
              "across queries": overlap._chunk_hashes}
    monkeypatch.setattr(overlap, "_chunk_hashes", hashes[colliding])
    if colliding == "across queries":
        monkeypatch.setattr(overlap, "_QUERY_MIX", np.uint64(0))
    rng = random.Random(5)
    pool = [f"{letter}{i}" for letter in "xy" for i in range(30)]  # lengths 2 and 3, two first letters
    lists = {f"q{q}": (rng.sample(pool, rng.randint(0, 30)), rng.sample(pool, rng.randint(0, 30)))
             for q in range(40)}
    lists["same"] = (pool[:20], pool[:20])
    lists["swapped"] = (pool[:20], pool[19::-1])

    got = _overlap_of_trec_lists(tmp_path, lists, pool[0], k=5, depth=20)
    assert set(got) == set(lists)
    for q, (a, b) in lists.items():
        assert got[q][0] == pytest.approx(jaccard(a[:5], b[:5]), abs=1e-12), q
        assert got[q][1] == pytest.approx(rbo(a[:20], b[:20]), abs=1e-12), q
        assert got[q][2] == pytest.approx(rbo(a[:5], b[:5]), abs=1e-12), q
    assert got["swapped"][0] == 0.0 < got["swapped"][1] < 1.0


def test_diff_metrics_option(capsys):
    from pathlib import Path

    from ragdiff.cli.main import main

    sample = Path(__file__).parent.parent / "sample_runs"
    code = main(["diff", str(sample / "bm25.jsonl"), str(sample / "dense.jsonl"), "--gold", str(sample / "gold.yaml"),
                 "--metrics", "recall@10,mrr@10", "--json", "--flips", "500"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["metrics"]) == {"recall@10", "mrr@10"}


def test_diff_says_the_smallest_detectable_change(capsys, sample_runs):
    """DESIGN: 'with 67 queries, changes under ±0.06 recall@5 (4 queries) are inside the noise' — from the
    observed per-query differences, seeded, in the metric's units and in queries."""
    from ragdiff.core.metrics.stats import detectable_change

    argv = ["diff", str(sample_runs / "bm25.jsonl"), str(sample_runs / "rrf.jsonl"), "--gold",
            str(sample_runs / "gold.yaml"), "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == doc  # same inputs, same numbers
    m = doc["metrics"]["recall@5"]
    assert m["n"] == 67
    ev = [evaluate(load_run(sample_runs / f"{r}.jsonl"), load_gold(sample_runs / "gold.yaml"), EvalSettings(),
                   [Metric("recall", 5)]) for r in ("bm25", "rrf")]
    deltas = (ev[1].per_query["recall@5"] - ev[0].per_query["recall@5"]).to_numpy()
    assert m["detectable_change"] == pytest.approx(detectable_change(deltas), abs=1e-9)
    assert m["detectable_queries"] == pytest.approx(m["detectable_change"] * 67)
    queries = math.ceil(m["detectable_queries"] - 1e-9)
    assert m["noise"] == (f"with 67 queries, changes under ±{m['detectable_change']:.3f} recall@5 "
                          f"({queries} queries) are inside the noise")
    assert main(argv[:-1]) == 0
    assert m["noise"] in capsys.readouterr().out


def test_diff_shows_the_unjudged_bound_for_rrf(capsys, sample_runs):
    """rrf's top 5 is not fully judged (judged@5 < 1): diff gives its upper bound, how many unjudged chunks stand
    behind it, and whether the verdict could flip."""
    argv = ["diff", str(sample_runs / "bm25.jsonl"), str(sample_runs / "rrf.jsonl"), "--gold",
            str(sample_runs / "gold.yaml")]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    gold = load_gold(sample_runs / "gold.yaml")
    rrf = evaluate(load_run(sample_runs / "rrf.jsonl"), gold, EvalSettings(), [Metric("judged", 5)])
    judged = rrf.per_query["judged@5"]
    assert judged.mean() < 1
    returned = load_run(sample_runs / "rrf.jsonl").frame.group_by("query_id").len()
    shown = rrf.per_query.join(returned, on="query_id").select(
        ((1 - pl.col("judged@5")) * pl.min_horizontal(pl.col("len"), 5)).sum()).item()
    u = doc["metrics"]["recall@5"]["unjudged"]
    assert u["b"]["unjudged"] == round(shown) > 0 and u["a"]["unjudged"] == 0
    assert u["b"]["upper_bound"] > doc["metrics"]["recall@5"]["b"]
    assert u["a"]["upper_bound"] == doc["metrics"]["recall@5"]["a"]
    assert u["could_flip"] is False and "the verdict stands" in u["sentence"]  # A, the lower run, has none
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"recall@5 (top 5): A ≤ {u['a']['upper_bound']:.3f} (0 unjudged), B ≤ {u['b']['upper_bound']:.3f} " \
           f"({u['b']['unjudged']} unjudged)" in out


def test_diff_says_when_unjudged_chunks_could_flip_the_verdict(capsys, tmp_path):
    """B drops 20 of 40 queries, each to an unjudged chunk at rank 1: were they relevant, there is no drop."""
    qrels = "".join(f"q{i} 0 g{i} 1\n" for i in range(40))
    a = "".join(f"q{i} Q0 g{i} 1 1.0 a\n" for i in range(40))
    b = "".join(f"q{i} Q0 {'g' if i % 2 else 'new'}{i} 1 1.0 b\n" for i in range(40))
    paths = [tmp_path / n for n in ("qrels.txt", "a.txt", "b.txt")]
    for path, text in zip(paths, (qrels, a, b)):
        path.write_text(text)
    assert main(["diff", str(paths[1]), str(paths[2]), "--gold", str(paths[0]), "--gold-format", "qrels",
                 "--metrics", "recall@5", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]["recall@5"]
    assert m["verdict"] == "drop"
    u = m["unjudged"]
    assert u["b"]["unjudged"] == 20 and u["b"]["upper_bound"] == 1.0 and u["relabelled"] == "b"
    assert u["if_relabelled"]["verdict"] == "same" and u["could_flip"] is True
    assert "the verdict could flip" in u["sentence"]


def _unjudged_from_scratch(ev_a, ev_b, gold, diff):
    """The unjudged check by its definition: the lower run's unjudged chunks in the window made relevant in the
    gold set (`with_relevant`), both runs evaluated again from their files' rows, the same seeded test."""
    from ragdiff.core.metrics.bounds import with_relevant
    from ragdiff.core.metrics.prepared import aligned_frame, unjudged_rows
    from ragdiff.core.metrics.stats import paired_tests

    settings = ev_a.settings
    order = pl.DataFrame({"query_id": diff.scored}, schema={"query_id": pl.String})
    qrels = gold.qrels(settings.level).filter(pl.col("grade").is_not_null())
    out = {}
    for md in diff.metrics:
        check = md.unjudged
        if check is None or check.side is None:
            continue
        ev = ev_a if check.side == "a" else ev_b
        ranked = aligned_frame(ev.run, gold).select("query_id", "chunk_id", "rank").join(order, on="query_id",
                                                                                           how="semi")
        chunks = unjudged_rows(ranked, qrels, check.window)
        if chunks.height == 0:
            out[md.name] = None
            continue
        relabelled = with_relevant(gold, chunks, settings)
        again = [evaluate(e.run, relabelled, settings, [md.metric]).per_query.join(order, on="query_id", how="semi")
                 for e in (ev_a, ev_b)]
        pairs = again[0].join(again[1], on="query_id", how="inner", suffix="_b", maintain_order="left")
        row = (pairs[f"{md.name}_b"] - pairs[md.name]).fill_null(0.0).to_numpy()
        test = paired_tests(row.reshape(1, -1), flips=diff.flips, seed=diff.seed)[0]
        out[md.name] = (float(again[0][md.name].mean()), float(again[1][md.name].mean()), test.p_value,
                        chunks.height)
    return out


@pytest.mark.parametrize("case", [dict(level="gold", depth=8), dict(level="evidence", depth=20, threshold=2),
                                  dict(level="gold", depth=8, unanswerable_as_zero=True, gain="exp")])
@pytest.mark.parametrize("chosen", ["eval", "diff", "counted", "no bounds"])
def test_the_unjudged_check_rescored_incrementally_equals_evaluating_on_the_relabelled_gold_set(tmp_path, case,
                                                                                             chosen):
    """compare() rescores the check from the kept prepared runs plus the promoted rows, not from the run files:
    the same means and p-values, to the last bit, as evaluating both runs again on `with_relevant(gold, ...)` —
    with graded, not-relevant and negative (unjudged) labels, the other run holding the lower run's unjudged
    chunks past the depth, queries with no relevant chunk, a query one run lacks, at both label levels, and a
    fresh prepare for evaluations made against another gold object. With eval's metrics, diff's (recall at depth
    alone in its window: counted, looked up only where the other run has no hit), counted metrics alone at two
    windows, and evaluations made without their bounds (`ragdiff run`'s)."""
    import random

    rnd = random.Random(12)
    n, length = 45, 30
    qrels = []
    for i in range(n):
        qid = f"q{i:02d}"
        golds = [f"c{rnd.randrange(40)}" for _ in range(rnd.randrange(0 if i % 9 == 0 else 1, 4))]
        evidence = [f"c{rnd.randrange(40)}" for _ in range(rnd.randrange(3))]
        negative = [f"c{rnd.randrange(40)}" for _ in range(rnd.randrange(3))]
        judged = {}
        for c in golds:
            judged.setdefault(c, ("gold", rnd.randrange(1, 4)))
        for c in evidence:
            judged.setdefault(c, ("evidence", None))
        for c in negative:
            judged.setdefault(c, ("none", -1))
        qrels.append((qid, judged))
    # qrels: grades 1-3, 0 (not relevant) and -1 (unjudged, as in trec_eval)
    lines = []
    for qid, judged in qrels:
        for c, (kind, grade) in judged.items():
            g = grade if kind == "gold" else (0 if kind == "evidence" else -1)
            lines.append(f"{qid} 0 {c} {g}")
    qpath = tmp_path / "qrels.txt"
    qpath.write_text("\n".join(lines) + "\n")
    gold = load_gold(qpath, "qrels")

    def run(name: str, shift: int) -> Path:
        out = []
        for i in range(n):
            if name == "b" and i == 3:
                continue  # a query B lacks
            chunks = list(range(40))
            rnd.shuffle(chunks)
            for r, c in enumerate(chunks[:length - (i + shift) % 7], start=1):
                out.append(f"q{i:02d} Q0 c{c} {r} {100 - r + shift / 10} {name}")
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(out) + "\n")
        return path

    runs = [load_run(run("a", 0)), load_run(run("b", 3))]
    settings = EvalSettings(k=5, **case)
    metrics = {"eval": default_metrics(settings.k, settings.depth), "diff": default_metrics(settings.k, settings.depth, "diff"),
               "counted": [Metric("recall", 5), Metric("recall_frac", settings.depth), Metric("precision", 5),
                           Metric("recall", settings.depth), Metric("precision", settings.depth)],
               "no bounds": default_metrics(settings.k, settings.depth, "diff")}[chosen]
    bounds = chosen != "no bounds"
    evals = [evaluate(r, gold, settings, metrics, bounds=bounds) for r in runs]
    diff = compare(evals[0], evals[1], gold=gold)
    other = load_gold(qpath, "qrels")  # an equal gold set, another object: compare prepares the runs again
    again = compare(evaluate(runs[0], other, settings, metrics, bounds=bounds),
                    evaluate(runs[1], other, settings, metrics, bounds=bounds), gold=gold)
    expected = _unjudged_from_scratch(evals[0], evals[1], gold, diff)
    assert sum(v is not None for v in expected.values()) >= 3  # the case exercises the check
    for d in (diff, again):
        for md in d.metrics:
            if md.name not in expected:
                continue
            want = expected[md.name]
            check = md.unjudged
            if want is None:
                assert math.isnan(check.if_a) and "has no unjudged chunk" in check.sentence
            else:
                assert (check.if_a, check.if_b, check.p_value) == want[:3], md.name
                assert f"{want[3]} unjudged chunks" in check.sentence


def test_compare_without_the_detectable_change_changes_nothing_else(sample_runs):
    """The review header's verdict job skips the detectable change: every other number is the same."""
    gold = load_gold(sample_runs / "gold.yaml")
    settings = EvalSettings()
    evals = [evaluate(load_run(sample_runs / f), gold, settings, default_metrics(settings.k, settings.depth, "diff"))
             for f in ("bm25.jsonl", "rrf.jsonl")]
    full, bare = compare(*evals, gold=gold), compare(*evals, gold=gold, detectable=False)
    assert [(m.name, m.a, m.b, m.p_value, m.ci95, m.verdict, m.sentence) for m in full.metrics] == \
           [(m.name, m.a, m.b, m.p_value, m.ci95, m.verdict, m.sentence) for m in bare.metrics]
    assert all(m.detectable == m.detectable for m in full.metrics if m.n > 1)
    assert all(math.isnan(m.detectable) for m in bare.metrics)


def test_compare_in_threads_gives_the_same_numbers(sample_runs):
    """`threads=2` (the CLI's) runs the intervals and the detectable changes beside the rest: every number of
    every metric, the check and the overlap is the one run in a single thread."""
    gold = load_gold(sample_runs / "gold.yaml")
    settings = EvalSettings()
    evals = [evaluate(load_run(sample_runs / f), gold, settings, default_metrics(settings.k, settings.depth, "diff"),
                      bounds=True) for f in ("bm25.jsonl", "dense.jsonl")]
    one, two = compare(*evals, gold=gold), compare(*evals, gold=gold, threads=2)

    def numbers(d):
        return [(m.name, m.a, m.b, m.p_value, m.ci95, m.detectable, m.verdict, m.sentence,
                 m.unjudged and (m.unjudged.if_a, m.unjudged.if_b, m.unjudged.p_value, m.unjudged.sentence))
                for m in d.metrics] + [d.overlap.mean_rbo, d.overlap.mean_jaccard]

    assert numbers(one) == numbers(two)
    assert all(m.ci95[0] == m.ci95[0] for m in two.metrics if m.n)  # the jobs ran and were waited for
    assert sum(m.detectable == m.detectable for m in two.metrics) >= 3
