"""The metric registry: every name and alias, trec_eval -c for unanswerable queries, and the CLI reading it."""

import json

import pytest

from ragdiff.cli.main import main
from ragdiff.core.metrics.specs import SPECS, Metric, parse_metric


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def issue_repro(tmp_path):
    """The issue's repro: query a answerable and found, query b with nothing relevant."""
    qrels = write(tmp_path / "qrels.txt", "a 0 d1 1\nb 0 d1 0\n")
    run = write(tmp_path / "run.txt", "a Q0 d1 1 1.0 r\nb Q0 d1 1 1.0 r\n")
    return qrels, run


def eval_json(capsys, *argv):
    assert main(["eval", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("metric", ["recall_frac@5", "recall@5", "precision@1", "mrr", "ndcg@5", "ndcg", "map",
                                    "map@5", "rprec", "bpref"])
def test_unanswerable_as_zero_counts_the_query_as_zero(capsys, issue_repro, metric):
    """trec_eval -c on the repro gives 0.5 for every metric: query a scores 1, query b (nothing relevant) 0."""
    qrels, run = issue_repro
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", metric, "--unanswerable-as-zero")
    name = parse_metric(metric).name
    assert doc["runs"][0]["metrics"][name] == 0.5
    # without the flag, b is left out and listed
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", metric)
    assert doc["runs"][0]["metrics"][name] == 1.0
    assert doc["queries"]["unanswerable"] == ["b"]


def test_judged_is_measured_on_unanswerable_queries(capsys, issue_repro):
    qrels, run = issue_repro
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", "judged@5", "--unanswerable-as-zero", "--per-query")
    assert doc["runs"][0]["per_query"]["b"]["judged@5"] == 1.0


def test_cli_accepts_trec_eval_and_ir_measures_names(capsys, issue_repro):
    qrels, run = issue_repro
    names = "P_5,P@5,ndcg_cut_10,nDCG@10,recip_rank,RR,map,AP@100,Rprec,R@100,Judged@10,success_5,recall_5,bpref"
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", names)
    assert list(doc["runs"][0]["metrics"]) == list(dict.fromkeys(parse_metric(n).name for n in names.split(",")))
    assert "recall_frac@5" in doc["runs"][0]["metrics"] and "recall@5" in doc["runs"][0]["metrics"]


@pytest.mark.parametrize("text,message", [
    ("bogus@5", "unknown metric"), ("recall", "needs a cutoff"), ("P", "needs a cutoff"),
    ("rprec@5", "takes no cutoff"), ("bpref_10", "takes no cutoff"), ("map@0", "positive"),
])
def test_bad_metric_names_say_what_is_known(text, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(text)


def test_a_name_with_digits_parses_once_its_spec_is_in_the_table(monkeypatch):
    """A metric named with a digit (say f1@k) needs only its entry in SPECS; names that were unknown stay
    unknown."""
    from dataclasses import replace

    from ragdiff.core.metrics import specs

    for text in ("metric2@5", "p10", "recall5", "ndcg1@5"):
        with pytest.raises(ValueError, match="unknown metric"):
            parse_metric(text)
    monkeypatch.setitem(specs.SPECS, "metric2", replace(SPECS["precision"], family="metric2", aliases=("Metric2@{k}",)))
    monkeypatch.setattr(specs, "_ALIASES", specs._alias_index())
    assert parse_metric("metric2@5") == parse_metric("Metric2@5") == parse_metric(" METRIC2@5 ") == Metric("metric2", 5)
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_metric("metric2")
    assert parse_metric("ndcg_cut_10") == Metric("ndcg", 10) and parse_metric("P_5") == Metric("precision", 5)


def test_every_spec_round_trips_its_name_and_aliases():
    for family, spec in SPECS.items():
        ks = {"required": [7], "optional": [None, 7], "none": [None]}[spec.cutoff]
        for k in ks:
            metric = Metric(family, k)
            assert parse_metric(metric.name) == metric
            assert metric.label.startswith(spec.title)
        for alias in spec.aliases:
            if "{k}" in alias:
                assert parse_metric(alias.format(k=7)) == Metric(family, 7)
            else:
                assert parse_metric(alias) == Metric(family, None)


# ---- the unjudged upper bound --------------------------------------------------------------------------------

QRELS = """q1 0 a 2
q1 0 b 0
q1 0 c 1
q1 0 z 3
q2 0 d 1
q2 0 e 0
q2 0 f -1
q3 0 g 1
"""
# unjudged in the top 5: q1 x (rank 1), y (4); q2 f (grade -1: unjudged, rank 2), w (3); q3 h (1)
RUN = """q1 Q0 x 1 9 r
q1 Q0 b 2 8 r
q1 Q0 a 3 7 r
q1 Q0 y 4 6 r
q1 Q0 c 5 5 r
q1 Q0 u 6 4 r
q2 Q0 e 1 9 r
q2 Q0 f 2 8 r
q2 Q0 w 3 7 r
q2 Q0 d 4 6 r
q3 Q0 h 1 9 r
q3 Q0 g 2 8 r
"""
PROMOTED = {("q1", "x"), ("q1", "y"), ("q2", "f"), ("q2", "w"), ("q3", "h")}


@pytest.mark.parametrize("threshold", [1, 2])
def test_upper_bound_is_the_metric_with_the_unjudged_chunks_made_relevant(tmp_path, threshold):
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    names = ["recall@5", "recall_frac@5", "precision@5", "mrr", "mrr@5", "ndcg@5", "ndcg", "map", "map@5", "rprec",
             "bpref", "recall@2", "precision@3"]
    metrics = [parse_metric(n) for n in names]
    settings = EvalSettings(k=5, depth=10, threshold=threshold)
    run = load_run(write(tmp_path / "run.txt", RUN), fmt="trec")
    ev = evaluate(run, load_gold(write(tmp_path / "qrels.txt", QRELS), fmt="qrels"), settings, metrics, bounds=True)
    for m in metrics:
        window = m.k or settings.k
        # over the same queries: with threshold 2 only q1 is answerable, and the bound does not make q2 and q3 so
        promoted = {(q, c) for q, c in PROMOTED if q in ev.queries.scored and int(dict(
            (line.split()[2], line.split()[3]) for line in RUN.splitlines() if line.split()[0] == q)[c]) <= window}
        grade = max(threshold, 1)
        lines = [line for line in QRELS.splitlines() if (line.split()[0], line.split()[2]) not in promoted]
        lines += [f"{q} 0 {c} {grade}" for q, c in sorted(promoted)]
        relabelled = load_gold(write(tmp_path / f"qrels_{m.name}.txt", "\n".join(lines) + "\n"), fmt="qrels")
        again = evaluate(run, relabelled, settings, [m]).per_query
        again = again.filter(again["query_id"].is_in(ev.queries.scored))[m.name].mean()
        bound = ev.bounds[m.name]
        assert bound.unjudged == len(promoted) and bound.window == window
        assert bound.value == pytest.approx(again, abs=1e-12), m.name
        assert bound.value >= ev.means[m.name] - 1e-12, m.name
    assert any(ev.bounds[n].value > ev.means[n] for n in names)  # the unjudged chunks matter here
    assert "judged@5" not in evaluate(run, load_gold(tmp_path / "qrels.txt", fmt="qrels"), settings,
                                      [parse_metric("judged@5")], bounds=True).bounds


def test_eval_shows_the_bound_in_text_and_json(capsys, tmp_path):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    doc = eval_json(capsys, run, "--gold", qrels, "--metrics", "recall@5,precision@5,judged@5", "--depth", "10")
    bound = doc["runs"][0]["upper_bound"]
    # relevant in the top 5 with x, y, f, w, h made relevant: q1 x a y c, q2 f w d, q3 h g
    assert bound["precision@5"] == {"value": pytest.approx((4 + 3 + 2) / 15), "unjudged": 5, "window": 5}
    assert "judged@5" not in bound
    assert main(["eval", str(run), "--gold", str(qrels), "--metrics", "precision@5", "--depth", "10"]) == 0
    out = capsys.readouterr().out
    assert "If every unjudged chunk in the top k were relevant (how many unjudged):" in out
    assert any(line.split()[:4] == ["≤", "precision@5", "│", "0.6000"] and "(5)" in line for line in out.splitlines())


def _random_case(tmp_path, seed: int, n: int = 40, pool: int = 30):
    """A qrels file and a TREC run with every case the counted bound must get right: graded, judged
    not-relevant (0) and negative (unjudged) labels, relevant chunks past the window, queries with fewer rows
    than the window, a gold query the run lacks, a run query the gold set lacks, queries with nothing relevant."""
    import random

    rnd = random.Random(seed)
    qrels, run = [], []
    for i in range(n):
        qid = f"q{i:02d}"
        for c in rnd.sample(range(pool), rnd.randrange(0 if i % 7 == 0 else 1, 9)):
            qrels.append(f"{qid} 0 c{c} {rnd.choice([-1, 0, 0, 1, 1, 2, 3])}")
        if i == 5:
            continue  # a gold query the run lacks
        chunks = rnd.sample(range(pool), rnd.choice([1, 3, 6, 12, pool]))
        run += [f"{qid} Q0 c{c} {r} {100 - r} r" for r, c in enumerate(chunks, start=1)]
    run += [f"extra Q0 c{c} {r} {100 - r} r" for r, c in enumerate(range(8), start=1)]  # not in the gold set
    return (write(tmp_path / f"qrels{seed}.txt", "\n".join(qrels) + "\n"),
            write(tmp_path / f"run{seed}.txt", "\n".join(run) + "\n"))


BOUND_METRICS = ["recall@1", "recall@3", "recall@5", "recall@10", "recall@20", "recall_frac@3", "recall_frac@5",
                 "recall_frac@20", "precision@5", "precision@10", "precision@20", "mrr", "ndcg@5", "ndcg@20",
                 "map@10", "bpref", "mrr@20"]


@pytest.mark.parametrize("case", [dict(), dict(threshold=2), dict(level="evidence"), dict(unanswerable_as_zero=True),
                                  dict(threshold=2, unanswerable_as_zero=True, depth=20), dict(threshold=-1),
                                  dict(judged_only=True)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_counted_bounds_are_the_promoted_ones_to_the_last_bit(tmp_path, case, seed):
    """recall, recall_frac and precision's bounds are counted (each unjudged row in the window one more hit and
    one more relevant chunk); by definition they are the promoted rows rescored: the same floats, per query,
    mean and count."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.bounds import upper_bounds
    from ragdiff.core.metrics.prepared import prepare
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    import dataclasses

    import polars as pl

    qrels, run_path = _random_case(tmp_path, seed)
    gold, run = load_gold(qrels, fmt="qrels"), load_run(run_path, fmt="trec")
    if seed == 3:  # a pair judged twice (a file cannot say so, a merged label set could): one row of the run
        gold = dataclasses.replace(gold, judgments=pl.concat([gold.judgments, gold.judgments.head(12)]))
    settings = EvalSettings(**{"k": 5, "depth": 10, **case})
    metrics = [parse_metric(n) for n in BOUND_METRICS]
    prepared = prepare(run, gold, settings)
    assert prepared.ranked_from_one
    counted, promoted = upper_bounds(prepared, metrics, settings), upper_bounds(prepared, metrics, settings,
                                                                                counted=False)
    window = settings.depth if settings.depth > 10 else 10
    assert {n for n in counted} == {n for n in promoted} == {m.name for m in metrics if (m.k or 5) <= window}
    assert any(b.unjudged for b in counted.values()) != settings.judged_only  # condensed lists: none unjudged
    for name, bound in promoted.items():
        got = counted[name]
        assert (got.value, got.unjudged, got.window) == (bound.value, bound.unjudged, bound.window), name
        assert got.per_query.to_list() == bound.per_query.to_list(), name
    # fewer rows kept (a caller that counts): the promoted ones are read again from the run, the same numbers
    thin = prepare(run, gold, settings, unjudged_depth=0)
    assert {n: (b.value, b.unjudged) for n, b in upper_bounds(thin, metrics, settings).items()} == \
           {n: (b.value, b.unjudged) for n, b in promoted.items()}


DEEP_METRICS = ["ndcg@600", "map@600", "mrr@600", "recall_frac@600", "ndcg@5", "mrr", "ndcg", "map", "bpref",
                "rprec", "recall@600"]


@pytest.mark.parametrize("case", [dict(), dict(threshold=2, gain="exp"), dict(unanswerable_as_zero=True),
                                  dict(judged_only=True)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_deep_bounds_promoted_without_listing_the_rows_are_the_listed_ones_to_the_last_bit(tmp_path, case, seed):
    """ndcg, map, mrr and the rest at a window of 600 (queries of up to 600 rows): the promoted rows made from
    the judged rows and the returned counts (`promote_window`, no unjudged row listed or kept) rescore to the
    floats of the listed unjudged rows promoted (`promote`), per query, mean and count; a chunk judged twice in a
    query (seed 3) falls back to listing them."""
    import dataclasses

    import polars as pl

    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.bounds import promote_window, rows_for_bounds, upper_bounds
    from ragdiff.core.metrics.prepared import prepare
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    qrels, run_path = _random_case(tmp_path, seed, pool=600)
    gold, run = load_gold(qrels, fmt="qrels"), load_run(run_path, fmt="trec")
    if seed == 3:
        gold = dataclasses.replace(gold, judgments=pl.concat([gold.judgments, gold.judgments.head(12)]))
    settings = EvalSettings(**{"k": 5, "depth": 600, **case})
    metrics = [parse_metric(n) for n in DEEP_METRICS]
    assert rows_for_bounds(metrics, settings) == 5  # the deep windows' rows are not kept
    prepared = prepare(run, gold, settings, unjudged_depth=rows_for_bounds(metrics, settings))
    assert (promote_window(prepared, 600, settings) is None) == (seed == 3)
    fast = upper_bounds(prepared, metrics, settings)
    plain = upper_bounds(prepare(run, gold, settings), metrics, settings, counted=False)
    assert set(fast) == set(plain) == {m.name for m in metrics}
    assert any(b.unjudged for b in plain.values()) != settings.judged_only
    for name, bound in plain.items():
        got = fast[name]
        assert (got.value, got.unjudged, got.window) == (bound.value, bound.unjudged, bound.window), name
        assert got.per_query.to_list() == bound.per_query.to_list(), name


def test_counted_bounds_fall_back_when_a_query_is_two_stretches(tmp_path):
    """A run keying one query by its id and by its text makes two stretches of one query after the text is
    read as the id: its top w no longer holds min(returned, w) rows, so its bounds are promoted, not counted."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.bounds import upper_bounds
    from ragdiff.core.metrics.prepared import prepare
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    gold = load_gold(write(tmp_path / "gold.yaml", "queries:\n  - id: q1\n    text: what is x\n    gold: [a]\n"
                                                   "  - id: q2\n    text: what is y\n    gold: [b]\n"))
    run = load_run(write(tmp_path / "run.txt", "q1 Q0 z 1 9 r\nq1 Q0 y 2 8 r\nwhat is x Q0 w 1 9 r\n"
                                               "what is x Q0 a 2 8 r\nq2 Q0 b 1 9 r\n".replace("what is x", "what_is_x")),
                   fmt="trec")
    gold = replace_text(gold, "q1", "what_is_x")
    settings = EvalSettings(k=1, depth=2)
    metrics = [parse_metric(n) for n in ("recall@1", "precision@2", "recall_frac@2")]
    prepared = prepare(run, gold, settings)
    assert not prepared.ranked_from_one
    assert upper_bounds(prepared, metrics, settings) == upper_bounds(prepared, metrics, settings, counted=False)
    # two rows at rank 1 of q1 (z and w) both unjudged: precision@2's bound counts all four rows of q1's top 2
    assert upper_bounds(prepared, metrics, settings)["precision@2"].unjudged == 3


def replace_text(gold, qid, text):
    import dataclasses

    import polars as pl

    queries = gold.queries.with_columns(pl.when(pl.col("query_id") == qid).then(pl.lit(text))
                                        .otherwise(pl.col("text")).alias("text"))
    return dataclasses.replace(gold, queries=queries)


@pytest.mark.parametrize("order", ["as loaded", "shuffled", "empty"])
def test_returned_counts_from_stretches_are_the_grouped_ones(order):
    """prepare's rows and deepest rank per query, from the run's stretches of one query (no hashing of every
    row's query id), are the group-by's — in a frame's own order, shuffled, with a query in two stretches."""
    import polars as pl

    import numpy as np

    from ragdiff.core.metrics.prepared import _returned

    rng = np.random.default_rng(4)
    frame = pl.DataFrame({"query_id": [q for q, n in (("q1", 3), ("q2", 5), ("q1", 2), ("q3", 1)) for _ in range(n)],
                          "rank": pl.Series([1, 2, 3, 1, 2, 3, 4, 5, 1, 2, 1], dtype=pl.UInt32)})
    if order == "shuffled":
        frame = frame[rng.permutation(frame.height).tolist()]
    if order == "empty":
        frame = frame.head(0)
    want = frame.group_by("query_id").agg(returned=pl.len(), deepest=pl.col("rank").max()).sort("query_id")
    got = _returned(frame).sort("query_id")
    assert got.schema == want.schema
    assert got.equals(want)


def test_window_counts_kept_are_the_fresh_ones_and_not_a_promoted_runs(tmp_path):
    """window_counts keeps its table per (window, threshold) on the prepared run (the bounds and diff's unjudged
    check ask for the same ones): the kept table is the one computed afresh, and a run made from it by promote
    (dataclasses.replace) counts its own rows, not the kept ones."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.bounds import _window_counts, promote, unjudged_in, window_counts
    from ragdiff.core.metrics.prepared import prepare
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    qrels, run_path = _random_case(tmp_path, 1)
    gold, run = load_gold(qrels, fmt="qrels"), load_run(run_path, fmt="trec")
    for settings in (EvalSettings(k=5, depth=10), EvalSettings(k=5, depth=10, threshold=2)):
        prepared = prepare(run, gold, settings)
        first = window_counts(prepared, 5, settings)
        assert window_counts(prepared, 5, settings) is first
        assert first.equals(_window_counts(prepared, 5, settings.threshold))
        assert window_counts(prepared, 10, settings).equals(_window_counts(prepared, 10, settings.threshold))
        promoted = promote(prepared, unjudged_in(prepared, 5), settings)
        again = window_counts(promoted, 5, settings)
        assert again.equals(_window_counts(promoted, 5, settings.threshold))
        assert again.get_column("hits").sum() > first.get_column("hits").sum()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_runs_evaluated_side_by_side_are_each_evaluated_alone(tmp_path, threads):
    """`evaluate_runs` runs the evaluations in threads: each run's values, means and bounds are those of
    `evaluate` on it alone, in the runs' order (runs of different sizes, so the slower one finishes last)."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate, evaluate_runs
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    runs, golds = [], []
    for seed, n in ((4, 300), (5, 20), (6, 120)):
        qrels, run_path = _random_case(tmp_path, seed, n=n)
        golds.append(load_gold(qrels, fmt="qrels"))
        runs.append(load_run(run_path, fmt="trec", name=f"run{seed}"))
    gold = golds[0]
    settings = EvalSettings(k=5, depth=10)
    metrics = [parse_metric(n) for n in BOUND_METRICS]
    got = evaluate_runs(runs, gold, settings, metrics, bounds=True, threads=threads)
    assert [ev.run.name for ev in got] == ["run4", "run5", "run6"]
    for run, ev in zip(runs, got):
        alone = evaluate(run, gold, settings, metrics, bounds=True)
        assert ev.per_query.equals(alone.per_query)
        assert ev.means == alone.means
        assert {n: (b.value, b.unjudged, b.per_query.to_list()) for n, b in ev.bounds.items()} == \
               {n: (b.value, b.unjudged, b.per_query.to_list()) for n, b in alone.bounds.items()}
        assert ev.queries == alone.queries


def _rows_and_pairs(rng, rows: tuple[int, int, int], pairs: tuple[int, int, int]):
    """A run's rows (query_id, chunk_id, rank; each pair once) and (query_id, chunk_id) pairs, each drawn as
    (how many, from how many queries, from how many chunks)."""
    import polars as pl

    def drawn(count: int, queries: int, chunks: int) -> pl.DataFrame:
        return pl.DataFrame({"query_id": [f"q{rng.randrange(queries)}" for _ in range(count)],
                             "chunk_id": [f"c{rng.randrange(chunks)}" for _ in range(count)]})

    ranked = drawn(*rows).with_columns(rank=pl.int_range(1, pl.len() + 1))
    return ranked.unique(["query_id", "chunk_id"], maintain_order=True), drawn(*pairs).unique()


@pytest.mark.parametrize("how", ["inner", "semi"])
@pytest.mark.parametrize("pair_hash", ["real", "all collide", "chunk only"])
def test_rows_of_pairs_is_the_join_on_both_columns_in_the_rows_order(monkeypatch, how, pair_hash):
    """rows_of_pairs finds rows by a hash of (query, chunk) before it joins: whatever that hash lets through
    (everything, when every pair collides; every row of a labelled chunk, when it hashes the chunk alone), the
    result is the join on both columns, in the rows' order."""
    import random

    import polars as pl

    import ragdiff.core.metrics.prepared as metrics_mod

    if pair_hash == "all collide":
        monkeypatch.setattr(metrics_mod, "_pair_hash", lambda: pl.lit(7, dtype=pl.UInt64))
    elif pair_hash == "chunk only":
        monkeypatch.setattr(metrics_mod, "_pair_hash", lambda: pl.col("chunk_id").hash(seed=1))
    rows, pairs = _rows_and_pairs(random.Random(5), rows=(3_000, 40, 300), pairs=(500, 45, 320))
    pairs = pairs.with_columns(grade=pl.int_range(pl.len()) % 4)
    got = metrics_mod.rows_of_pairs(rows, pairs, how=how)
    expected = rows.join(pairs, on=["query_id", "chunk_id"], how=how, maintain_order="left")
    assert got.height > 20
    assert got.equals(expected)


@pytest.mark.parametrize("slice_rows", ["1", "7", "height - 1", "height", "height + 1", "1 << 18"])
def test_rows_of_pairs_hashed_a_slice_at_a_time_keeps_every_row_in_order(monkeypatch, slice_rows):
    """rows_of_pairs hashes `rows` a slice of _HASHED_ROWS at a time and filters by the slices' masks joined in
    order: at any slice size, a row on a slice's edge included, the rows come out as the join on both columns
    gives them, in `rows`' order (the gold join's order is what scoring and the unjudged check read)."""
    import random

    import ragdiff.core.metrics.prepared as metrics_mod

    rows, pairs = _rows_and_pairs(random.Random(9), rows=(2_000, 30, 200), pairs=(600, 30, 200))
    monkeypatch.setattr(metrics_mod, "_HASHED_ROWS", eval(slice_rows, {"height": rows.height}))  # edges at the end too
    for how in ("inner", "semi"):
        got = metrics_mod.rows_of_pairs(rows, pairs, how=how)
        expected = rows.join(pairs, on=["query_id", "chunk_id"], how=how, maintain_order="left")
        assert got.height > 50
        assert got.equals(expected)
