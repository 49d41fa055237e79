"""`ByK` (every k at once, from running values down each query's ranks) equals `metrics.score` at every k, to
the last bit: every metric of `SPECS`, under each setting the review can take."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from ragdiff.core.io.runs import load_run
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics import scoring
from ragdiff.core.metrics.aggregates import DCG, graded_gain, rank_discount
from ragdiff.core.metrics.by_k import ByK, kahan_running
from ragdiff.core.metrics.evaluate import score
from ragdiff.core.metrics.prepared import aligned_frame, prepare
from ragdiff.core.metrics.specs import SPECS, EvalSettings, Metric

SETTINGS = [
    {},
    {"judged_only": True},
    {"unanswerable_as_zero": True},
    {"gain": "exp", "threshold": 2},
    {"judged_only": True, "unanswerable_as_zero": True, "level": "evidence"},
]


def every_metric(k: int) -> list[Metric]:
    out = []
    for family, spec in SPECS.items():
        if spec.cutoff in ("required", "optional"):
            out.append(Metric(family, k))
        if spec.cutoff in ("optional", "none"):
            out.append(Metric(family))
    return out


def same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def assert_equal_at_every_k(run, gold, depth: int, extra: dict, ks) -> None:
    settings = EvalSettings(k=1, depth=depth, **extra)
    prepared = prepare(run, gold, settings, unjudged_depth=0)
    by_k = ByK(prepared, settings)
    for k in ks:
        at = replace(settings, k=k)
        metrics = every_metric(k)
        mine, theirs = by_k.score(at, metrics), score(prepared, at, metrics)
        assert mine.per_query.columns == theirs.per_query.columns
        for column in theirs.per_query.columns:
            got, want = mine.per_query.get_column(column), theirs.per_query.get_column(column)
            assert got.equals(want, check_dtypes=True), (extra, k, column)
        for m in metrics:
            assert same(mine.means[m.name], theirs.means[m.name]), (extra, k, m.name)
        assert mine.queries == theirs.queries and mine.settings == at


@pytest.mark.parametrize("extra", SETTINGS)
def test_sample_runs_at_every_k(sample_runs, extra):
    gold = load_gold(sample_runs / "gold.yaml")
    for name in ("bm25.jsonl", "dense.jsonl", "rrf.jsonl"):
        assert_equal_at_every_k(load_run(sample_runs / name), gold, 50, extra, range(1, 52))


def write_set(folder, seed=5, queries=40, depth=300):
    """TREC runs with tied scores, graded qrels (0-3, and -1: unjudged as trec_eval reads it) of up to ~200
    judged chunks per query (longer than polars' 128-value blocks), unanswerable queries, a gold query run B
    lacks and a run query the gold set lacks."""
    rng = random.Random(seed)
    qrels, runs = [], {"a": [], "b": []}
    for q in range(queries):
        qid = f"q{q:03d}"
        pool = [f"c{q}-{i}" for i in range(depth + 100)]
        unanswerable = q % 9 == 4
        for chunk in rng.sample(pool, rng.choice([3, 20, 200])):
            grade = 0 if unanswerable else rng.choice([0, 0, 1, 2, 3, -1])
            qrels.append(f"{qid} 0 {chunk} {grade}\n")
        for side, lines in runs.items():
            if side == "b" and q == 7:
                continue  # a gold query run B lacks
            for rank, chunk in enumerate(rng.sample(pool, rng.randint(depth // 2, depth)), start=1):
                lines.append(f"{qid} Q0 {chunk} {rank} {round(rng.random(), 1)} {side}\n")  # many ties
    runs["a"].append("stray Q0 x 1 0.5 a\n")  # a run query the gold set lacks
    (folder / "qrels.txt").write_text("".join(qrels))
    for side, lines in runs.items():
        (folder / f"{side}.trec").write_text("".join(lines))
    return folder


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = write_set(tmp_path_factory.mktemp("by_k"))
    gold = load_gold(folder / "qrels.txt", "qrels")
    return gold, [load_run(folder / f"{side}.trec", "trec") for side in ("a", "b")]


@pytest.mark.parametrize("extra", SETTINGS[:4])
def test_generated_set_at_every_k(generated, extra):
    gold, runs = generated
    for run in runs:
        assert_equal_at_every_k(run, gold, 300, extra, [*range(1, 40), *range(40, 302, 7), 299, 300, 301, 1000])


def test_the_set_tells_the_two_sums_apart(generated):
    """The equality above means something: on these rows polars' sum at a cutoff that keeps some rows is
    Kahan's, which a plain running sum misses in the last bit, and where the cutoff keeps every row it is the
    plain sum, which Kahan's misses."""
    gold, runs = generated
    settings = EvalSettings(k=1, depth=300)
    prepared = prepare(runs[0], gold, settings, unjudged_depth=0)
    rows = prepared.judged.sort("query_id", "rank").with_columns(
        dg=graded_gain(pl.col("grade"), "linear") * rank_discount(pl.col("rank")))
    lengths = rows.get_column("query_id").rle().struct.field("len").to_numpy().astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    dg = rows.get_column("dg").to_numpy()
    kahan = kahan_running(dg, starts, lengths)
    plain = np.concatenate([np.cumsum(dg[s:s + n]) for s, n in zip(starts, lengths)])
    last = starts + lengths - 1
    deepest = int(rows.get_column("rank").max())
    core_at = {k: rows.group_by("query_id", maintain_order=True).agg(**DCG.make(k)).get_column(f"dcg_{k}").to_numpy()
               for k in (deepest - 1, deepest)}
    kept = rows.group_by("query_id", maintain_order=True).agg(
        n=(pl.col("rank") <= deepest - 1).sum()).get_column("n").to_numpy()
    cut = starts + kept - 1
    assert (core_at[deepest - 1] != np.where(kept > 0, plain[cut], 0.0)).any()  # Kahan's, not plain
    assert (core_at[deepest - 1] == np.where(kept > 0, kahan[cut], 0.0)).all()
    assert (core_at[deepest] != kahan[last]).any()  # every row kept: the plain sum
    assert (core_at[deepest] == plain[last]).all() or lengths.max() >= 128  # pairwise beyond 128 values


def test_every_declared_kernel_is_provided():
    """Each aggregate of the metric table names a kernel `ByK` has, or none (then the metric is scored by the
    core): a misspelt name is caught here, not by a slow review screen."""
    declared = {agg.kernel for spec in SPECS.values() for agg in spec.aggs}
    assert declared - {None} <= set(ByK.KERNELS)
    assert set(ByK.KERNELS) <= declared  # no kernel left over that nothing reads


def test_the_fast_path_is_the_one_the_specs_declare(sample_runs, monkeypatch):
    """A metric whose aggregates all name a kernel is scored at every k from the kernels alone (the core's
    per_query_values is never called for it); one with an aggregate naming none is scored by the core, once."""
    gold = load_gold(sample_runs / "gold.yaml")
    settings = EvalSettings(k=5, depth=50)
    by_k = ByK(prepare(load_run(sample_runs / "bm25.jsonl"), gold, settings, unjudged_depth=0), settings)
    asked: list[list[str]] = []
    scored_by_core = scoring.per_query_values

    def spy(prepared, metrics, at):
        asked.append([m.name for m in metrics])
        return scored_by_core(prepared, metrics, at)

    monkeypatch.setattr(scoring, "per_query_values", spy)
    fast = {m.name for m in every_metric(5) if all(agg.kernel for agg in m.spec.aggs)}
    assert {"recall@5", "recall_frac@5", "precision@5", "mrr", "mrr@5", "ndcg", "ndcg@5", "judged@5", "map",
            "map@5"} <= fast
    for k in (5, 6, 50, 4):
        by_k.score(replace(settings, k=k), every_metric(k))
    slow = [m.name for m in every_metric(5) if m.name not in fast]
    assert slow and asked == [slow]  # each scored by the core once, at the first k


def test_other_settings_are_refused(generated):
    gold, runs = generated
    settings = EvalSettings(k=3, depth=300)
    by_k = ByK(prepare(runs[0], gold, settings, unjudged_depth=0), settings)
    with pytest.raises(ValueError):
        by_k.score(replace(settings, threshold=2), [Metric("recall", 3)])


def _judge(gold, qid: str, chunk: str, grade: int | None, level: str):
    """`gold` with (qid, chunk) judged `grade` at `level` (None: no judgment)."""
    judgments = gold.judgments.filter(~((pl.col("query_id") == qid) & (pl.col("chunk_id") == chunk)))
    if grade is not None:
        row = pl.DataFrame({"query_id": [qid], "chunk_id": [chunk], "grade": [grade], "level": [level]})
        judgments = pl.concat([judgments, row], how="diagonal_relaxed").select(gold.judgments.columns)
    return replace(gold, judgments=judgments.cast(gold.judgments.schema))


@examples(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_query_replaced_equals_the_build(generated, data):
    """A review mark: `with_query` (that query's stretch of every table replaced by its own prepared rows) scores
    every k as the core does on the whole run prepared again — each metric per query and its mean, to the last
    bit — after random marks (new grades, removals, a query's relevant chunks taken away or given), with the
    core's plain sums (a cutoff at or past the deepest rank) asked for before the mark or only after it."""
    gold, runs = generated
    extra = data.draw(st.sampled_from(SETTINGS[:4]), label="settings")
    run = runs[data.draw(st.integers(0, 1), label="run")]
    settings = EvalSettings(k=1, depth=300, **extra)
    prepared = prepare(run, gold, settings, unjudged_depth=0)
    by_k = ByK(prepared, settings)
    ks = [1, 2, 3, 5, 10, 50, 120, 150, 200, 298, 299, 300, 301, 1000]
    if data.draw(st.booleans(), label="deep sums first"):
        for k in ks:
            by_k.score(replace(settings, k=k), every_metric(k))
    queries = gold.queries.get_column("query_id").to_list()
    frame = aligned_frame(run, gold)
    for _ in range(data.draw(st.integers(1, 3), label="marks")):
        qid = data.draw(st.sampled_from(queries), label="query")
        returned = frame.filter(pl.col("query_id") == qid).get_column("chunk_id").to_list()
        judged = gold.judgments.filter(pl.col("query_id") == qid).get_column("chunk_id").to_list()
        chunk = data.draw(st.sampled_from(returned + judged + ["new-chunk"]), label="chunk")
        grade = data.draw(st.sampled_from([None, -1, 0, 1, 2, 3]), label="grade")
        level = "not_relevant" if grade is not None and grade <= 0 else data.draw(
            st.sampled_from(["gold", "evidence"]), label="level")
        gold = _judge(gold, qid, chunk, grade, level)
        whole = prepare(run, gold, settings, unjudged_depth=0)
        one_gold = replace(gold, queries=gold.queries.filter(pl.col("query_id") == qid),
                           judgments=gold.judgments.filter(pl.col("query_id") == qid))
        one = prepare(replace(run, frame=frame.filter(pl.col("query_id") == qid)), one_gold, settings,
                      unjudged_depth=0)
        new = by_k.with_query(whole, one)
        if new is None:  # the scored queries changed: only then is it built anew
            assert whole.scored.get_column("query_id").to_list() != by_k.queries.to_list() or one.scored.height != 1
            new = ByK(whole, settings)
        by_k = new
        for k in data.draw(st.lists(st.sampled_from(ks), min_size=3, max_size=6, unique=True), label="ks"):
            at = replace(settings, k=k)
            metrics = every_metric(k)
            mine, theirs = by_k.score(at, metrics), score(whole, at, metrics)
            for column in theirs.per_query.columns:
                assert mine.per_query.get_column(column).equals(theirs.per_query.get_column(column),
                                                                check_dtypes=True), (extra, k, column)
            for m in metrics:
                assert same(mine.means[m.name], theirs.means[m.name]), (extra, k, m.name)


def test_sample_runs_with_k_walked_down_and_about(sample_runs):
    """The k's in the order `+` and `-` ask for them (each count a step from the k beside, the metrics already
    scored kept): down from past the depth to 1, then a seeded walk of steps and jumps, k's asked again."""
    gold = load_gold(sample_runs / "gold.yaml")
    rng = random.Random(3)
    ks, k = list(range(52, 0, -1)), 1
    for _ in range(60):
        k = min(52, max(1, k + rng.choice([1, 1, -1, -1, 0, 9, -6])))
        ks.append(k)
    for extra in SETTINGS[:2]:
        assert_equal_at_every_k(load_run(sample_runs / "bm25.jsonl"), gold, 50, extra, ks)


@pytest.mark.parametrize("distinct", [True, False])
def test_counts_stepped_from_the_k_beside_equal_a_search(distinct):
    """`Ranked.upto(k)` found from the kept count at k - 1 or k + 1 equals the count searched anew, at every
    k of a walk, on stretches of every length (empty ones too); with two rows of one rank in a stretch
    (`distinct` False) it searches each k anew, which it must equal too."""
    from ragdiff.core.metrics.by_k import Ranked

    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 30, size=200).astype(np.int64)
    ranks = np.concatenate([np.sort(rng.choice(np.arange(1, 60), size=n, replace=False)) for n in lengths])
    if not distinct:
        ranks[int(lengths[:5].sum()) + 1] = ranks[int(lengths[:5].sum())]  # query 5's second row takes the first's rank
        assert lengths[5] >= 2
    ranked = Ranked._of_arrays(ranks.astype(np.int64), np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    k, walk = 30, []
    for _ in range(300):
        k = int(min(70, max(0, k + rng.choice([1, 1, -1, -1, 13, -11]))))
        walk.append(k)
    for k in walk:
        searched = Ranked._of_arrays(ranked.ranks, ranked.starts, ranked.lengths).upto(k)  # nothing kept
        want = np.array([int(np.sum(ranked.ranks[s:s + n] <= k)) for s, n in zip(ranked.starts, ranked.lengths)])
        assert np.array_equal(searched, want)
        assert np.array_equal(ranked.upto(k), want), k
