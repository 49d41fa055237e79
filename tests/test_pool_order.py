"""The judging queue's orders (core/judge/pool_order.py) and the replay against a finished label file (core/judge/pool_replay.py,
`ragdiff judge --simulate`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from ragdiff.cli.main import main
from ragdiff.core.io.choices import POOL_ORDERS
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.judge.gold_model import GoldModel
from ragdiff.core.judge.pool_order import Pool, make_order
from ragdiff.core.judge.pool_replay import replay_pool, simulate
from ragdiff.core.io.runs import load_run

RUNS = ("bm25", "dense", "rrf")


def small_pool(items: dict[str, list[tuple[str, tuple[int, ...]]]], depth: int = 3,
               judged: dict[tuple[str, str], bool] | None = None) -> Pool:
    """A pool in the given order: query -> [(chunk, its rank in each run, 0 when absent)]."""
    judged = judged or {}
    queries = tuple(items)
    rows = [(qi, c, r) for qi, q in enumerate(queries) for c, r in items[q]]
    pool = Pool(queries, [c for _, c, _ in rows], np.array([q for q, _, _ in rows]),
                np.array([r for _, _, r in rows]), depth,
                np.array([(queries[q], c) in judged for q, c, _ in rows]),
                np.array([judged.get((queries[q], c), False) for q, c, _ in rows]))
    pool.index = {(queries[q], c): i for i, (q, c, _) in enumerate(rows)}
    return pool


# x: run 0 rank 1, run 1 rank 2; y, z: run 0 only; w, v: run 1 only
ONE_QUERY = {"q": [("x", (1, 2)), ("w", (0, 1)), ("y", (2, 0)), ("v", (0, 3)), ("z", (3, 0))]}
TRUTH = {"x": True, "y": False, "w": False, "z": True, "v": False}


def walk(order, truth) -> list[str]:
    seen = []
    while (item := order.next()) is not None:
        seen.append(item[1])
        order.tell(*item, truth[item[1]])
    return seen


def test_move_to_front_keeps_the_run_on_the_floor_while_it_finds_gold():
    # run 0 offers x (gold: it keeps the floor), y (not: it loses a point); run 1 offers w (not); both at -1,
    # run 0 first by run order: z (gold: it keeps the floor, then runs dry); run 1: v
    assert walk(make_order("mtf", small_pool(ONE_QUERY)), TRUTH) == ["x", "y", "w", "z", "v"]


def test_maxmean_takes_the_arm_of_highest_mean():
    # both arms hold x: gold raises both to 2/3; y drops run 0 to 2/4; run 1 (2/3) offers w, then 2/4 each and
    # run 1 keeps the floor: v (2/5), then run 0: z
    assert walk(make_order("bandit-stationary", small_pool(ONE_QUERY)), TRUTH) == ["x", "y", "w", "v", "z"]


def test_rank_is_the_queues_order():
    assert walk(make_order("rank", small_pool(ONE_QUERY)), TRUTH) == ["x", "w", "y", "v", "z"]


@pytest.fixture
def sample_queue(sample_runs, tmp_path):
    labels = yaml.safe_load((sample_runs / "gold.yaml").read_text())
    # half the queries keep their labels, half start unjudged: the orders skip what is judged
    for i, query in enumerate(labels["queries"]):
        if i % 2:
            for key in ("gold", "evidence", "not_relevant"):
                query.pop(key, None)
    start = tmp_path / "start.yaml"
    start.write_text(yaml.safe_dump(labels, sort_keys=False))
    runs = [load_run(sample_runs / f"{n}.jsonl") for n in RUNS]
    return JudgeQueue.build(runs, load_gold(start), 10)


def test_rank_equals_the_queue_walk_on_the_sample_runs(sample_queue):
    queue = sample_queue
    order = make_order("rank", Pool.from_queue(queue))
    walked, at = [], queue.next_unjudged()
    while at is not None:
        qid, entry = queue.entry_at(at)
        walked.append((qid, entry.chunk_id))
        queue.decide(qid, entry.chunk_id)
        at = queue.next_unjudged(at)
    ordered = []
    while (item := order.next()) is not None:
        ordered.append(item)
        order.tell(*item, False)
    assert len(walked) > 500 and ordered == walked


@pytest.mark.parametrize("name", POOL_ORDERS)
def test_every_order_offers_each_unjudged_chunk_once_and_next_stays_until_told(sample_queue, name):
    pool = Pool.from_queue(sample_queue)
    rng = np.random.default_rng(5)
    truth = rng.random(len(pool)) < 0.2
    order = make_order(name, pool)
    seen = []
    while (item := order.next()) is not None:
        assert order.next() == item  # asking again changes nothing: only a decision moves the queue on
        seen.append(item)
        order.tell(*item, bool(truth[pool.index[item]]))
        assert order.next() != item
    assert sorted(seen) == sorted(pool.item(i) for i in np.flatnonzero(~pool.judged))


def test_a_skipped_chunk_comes_back_when_nothing_else_is_left():
    order = make_order("rank", small_pool(ONE_QUERY))
    order.skip("q", "x")
    assert walk(order, TRUTH) == ["w", "y", "v", "z", "x"]


def test_global_model_prior_is_one_over_rank_plus_one_and_learns_rates():
    pool = small_pool(ONE_QUERY)
    p = GoldModel(pool).probabilities()
    assert p[pool.index["q", "w"]] == pytest.approx(1 / 2)  # run 1's rank 1, no decision yet
    assert p[pool.index["q", "y"]] == pytest.approx(1 / 3)
    assert p[pool.index["q", "x"]] > p[pool.index["q", "w"]]  # two runs hold it
    # 40 queries of two chunks each, rank 1 and rank 2 of the one run: gold at rank 1 in 30 of them, rank 2 in 8
    items = {f"q{i}": [("a", (1,)), ("b", (2,))] for i in range(40)}
    pool = small_pool(items)
    model = GoldModel(pool)
    for i in range(40):
        model.tell_index(pool.index[f"q{i}", "a"], i < 30)
        model.tell_index(pool.index[f"q{i}", "b"], i % 5 == 0)
    raw = 1 / (1 + np.exp(-model.weights[model.hot].sum(axis=1)))  # before each query's own factor
    assert raw[pool.index["q0", "a"]] == pytest.approx(30 / 40, abs=0.03)
    assert raw[pool.index["q0", "b"]] == pytest.approx(8 / 40, abs=0.03)


def test_global_leaves_a_query_whose_chunks_are_not_gold():
    items = {"q1": [("a", (1,)), ("b", (2,))], "q2": [("c", (1,)), ("d", (2,))]}
    order = make_order("global", small_pool(items))
    assert order.next() == ("q1", "a")
    order.tell("q1", "a", False)  # q1's best chunk is not gold: q2's best comes before q1's second
    assert order.next() == ("q2", "c")
    order.tell("q2", "c", True)
    assert order.next() == ("q2", "d")


def test_replay_counts_judgments_to_each_share_of_the_gold():
    truth = np.array([TRUTH[c] for c in small_pool(ONE_QUERY).chunk_ids])
    rank = replay_pool(small_pool(ONE_QUERY), truth, "rank")  # x w y v z: gold at 1 and 5
    assert rank.gold_in_pool == 2 and rank.pool_size == 5
    assert rank.judgments_to == {"50": 1, "80": 5, "90": 5, "95": 5, "100": 5}
    assert rank.curve == [[0, 0], [1, 1], [5, 2]]
    mtf = replay_pool(small_pool(ONE_QUERY), truth, "mtf")  # x y w z v
    assert mtf.judgments_to == {"50": 1, "80": 4, "90": 4, "95": 4, "100": 4}
    assert mtf.curve == [[0, 0], [1, 1], [4, 2], [5, 2]]
    err = mtf.estimate_error
    assert err["steps"] == 6 and err["mean_abs"] >= abs(err["mean_signed"])


def test_replay_estimate_error_is_the_estimate_minus_the_gold_left():
    truth = np.array([TRUTH[c] for c in small_pool(ONE_QUERY).chunk_ids])
    pool = small_pool(ONE_QUERY)
    replay = replay_pool(pool, truth, "rank")
    model, errors, left = GoldModel(small_pool(ONE_QUERY)), [], 2
    errors.append(model.gold_left()[0] - left)
    for chunk in ["x", "w", "y", "v", "z"]:
        model.tell_index(pool.index["q", chunk], TRUTH[chunk])
        left -= TRUTH[chunk]
        errors.append(model.gold_left()[0] - left)
    assert replay.estimate_error["mean_signed"] == pytest.approx(np.mean(errors), abs=1e-3)
    assert replay.estimate_error["mean_abs"] == pytest.approx(np.mean(np.abs(errors)), abs=1e-3)
    assert errors[-1] == 0  # nothing unjudged, nothing estimated


# ---- the command ------------------------------------------------------------------------------------------


def start_file(sample_runs, tmp_path, extra_oracle_query=False):
    labels = yaml.safe_load((sample_runs / "gold.yaml").read_text())
    start = tmp_path / "start.yaml"
    start.write_text(yaml.safe_dump({"queries": [{"id": q["id"], "text": q["text"]} for q in labels["queries"]]},
                                    sort_keys=False))
    oracle = sample_runs / "gold.yaml"
    if extra_oracle_query:
        labels["queries"].append({"id": "zz-only-in-oracle", "text": "no run has it", "gold": ["json#0"]})
        oracle = tmp_path / "oracle.yaml"
        oracle.write_text(yaml.safe_dump(labels, sort_keys=False))
    return start, oracle


def test_simulate_json_is_one_document_and_writes_nothing(sample_runs, tmp_path, capsys):
    start, oracle = start_file(sample_runs, tmp_path, extra_oracle_query=True)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    code = main(["judge", *(str(sample_runs / f"{n}.jsonl") for n in RUNS[:2]), "--gold", str(start),
                 "--simulate", str(oracle), "--order", "bandit", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out)
    assert {"order", "pool_size", "gold_in_pool", "judgments_to", "curve", "estimate_error"} <= set(doc)
    assert doc["order"] == "bandit" and list(doc["judgments_to"]) == ["50", "80", "90", "95", "100"]
    assert doc["queries_left_out"]["not_in_runs"] == {"count": 1, "queries": ["zz-only-in-oracle"]}
    # the pool of bm25 and dense top 10 is what the sample's labels judged: its gold is every pooled gold chunk
    oracle_gold = load_gold(oracle).qrels()
    runs = [load_run(sample_runs / f"{n}.jsonl") for n in RUNS[:2]]
    queue = JudgeQueue.build(runs, load_gold(start), 10)
    pooled = {(q, e.chunk_id) for q in queue.queries for e in queue.entries[q]}
    gold = {(q, c) for q, c, g in oracle_gold.iter_rows() if g >= 1}
    assert doc["gold_in_pool"] == len(pooled & gold) and doc["pool_size"] == len(pooled)
    last = doc["curve"][-1]
    assert last == [len(pooled), len(pooled & gold)]
    for percent, n in doc["judgments_to"].items():  # the first point of the curve at that share
        need = math.ceil(doc["gold_in_pool"] * int(percent) / 100)
        assert n == min(j for j, f in doc["curve"] if f >= need)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before  # no label, journal or flag file written
    assert sorted(p.name for p in sample_runs.iterdir() if "ragdiff" in p.name) == []


def test_simulate_text_shows_the_table_and_the_plot(sample_runs, tmp_path, capsys):
    start, oracle = start_file(sample_runs, tmp_path)
    code = main(["judge", *(str(sample_runs / f"{n}.jsonl") for n in RUNS[:2]), "--gold", str(start),
                 "--simulate", str(oracle), "--order", "mtf"])
    out = capsys.readouterr().out
    assert code == 0
    assert "80%" in out and "mtf" in out and "rank" in out and "gold-left estimate" in out and "█" in out


def test_simulate_bad_oracle(sample_runs, tmp_path, capsys):
    start, _ = start_file(sample_runs, tmp_path)
    bad = tmp_path / "oracle.yaml"
    bad.write_text("queries:\n  - id: q1\n    gold: [a\n")
    code = main(["judge", str(sample_runs / "bm25.jsonl"), "--gold", str(start), "--simulate", str(bad), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "oracle.yaml" in captured.err and "Traceback" not in captured.err


def test_simulate_matches_the_core_replay(sample_runs, tmp_path, capsys):
    start, oracle = start_file(sample_runs, tmp_path)
    runs = [load_run(sample_runs / f"{n}.jsonl") for n in RUNS]
    from ragdiff.core.io.choices import DEFAULT_POOL_ORDER

    replay = simulate(runs, load_gold(start), load_gold(oracle), 10, DEFAULT_POOL_ORDER)
    main(["judge", *(str(sample_runs / f"{n}.jsonl") for n in RUNS), "--gold", str(start),
          "--simulate", str(oracle), "--json"])  # no --order: the default
    doc = json.loads(capsys.readouterr().out)
    assert doc["order"] == "mtf" and doc["judgments_to"] == replay.judgments_to
    assert doc["query_switches_to"] == replay.query_switches_to and doc["query_switches_to"]["80"] > 0


def test_replay_per_query_error_is_each_querys_estimate_against_its_gold_left():
    items = {"q1": [("a", (1,)), ("b", (2,))], "q2": [("c", (1,)), ("d", (2,))]}
    truth_of = {"a": True, "b": False, "c": False, "d": True}
    pool = small_pool(items)
    truth = np.array([truth_of[c] for c in pool.chunk_ids])
    replay = replay_pool(small_pool(items), truth, "rank")
    model, left, errors = GoldModel(small_pool(items)), {"q1": 1, "q2": 1}, []
    errors.append(np.mean(np.abs(model.gold_left()[1] - [left["q1"], left["q2"]])))
    for q, c in [("q1", "a"), ("q1", "b"), ("q2", "c"), ("q2", "d")]:
        model.tell_index(pool.index[q, c], truth_of[c])
        left[q] -= truth_of[c]
        errors.append(np.mean(np.abs(model.gold_left()[1] - [left["q1"], left["q2"]])))
    assert replay.estimate_error["per_query_mean_abs"] == pytest.approx(np.mean(errors), abs=1e-3)


def test_gold_left_reports_the_estimate_per_query_and_writes_nothing(sample_runs, tmp_path, capsys):
    start, _ = start_file(sample_runs, tmp_path)
    labels = yaml.safe_load((sample_runs / "gold.yaml").read_text())
    half = tmp_path / "half.yaml"  # the first half of the queries judged, the rest not
    for query in labels["queries"][36:]:
        for key in ("gold", "evidence", "not_relevant"):
            query.pop(key, None)
    half.write_text(yaml.safe_dump(labels, sort_keys=False))
    before = half.read_bytes()
    runs = [str(sample_runs / f"{n}.jsonl") for n in RUNS[:2]]
    assert main(["judge", *runs, "--gold", str(half), "--gold-left", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    judged_queries = {q["id"] for q in labels["queries"][:36]}
    assert doc["pool_size"] == doc["judged"] + doc["unjudged"] and doc["unjudged"] > 0
    assert {r["query_id"] for r in doc["queries"]} <= {q["id"] for q in labels["queries"][36:]}
    assert not judged_queries & {r["query_id"] for r in doc["queries"]}  # the judged half has nothing left
    assert doc["gold_left"] == pytest.approx(sum(r["gold_left"] for r in doc["queries"]), abs=0.05)
    assert 0 < doc["gold_left"] < doc["unjudged"]
    assert half.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["half.yaml", "start.yaml"]
    assert main(["judge", *runs, "--gold", str(half), "--gold-left"]) == 0
    out = capsys.readouterr().out
    out = " ".join(out.split())
    assert f"among the {doc['unjudged']} unjudged chunks: stopping here leaves recall@10's bound at" in out
    assert f"({doc['pool_size']} pooled" in out and "gold left" in out


@pytest.mark.parametrize("name", ["mtf", "bandit", "bandit-stationary"])
def test_an_arm_order_offers_the_chunks_no_arm_holds_last(name):
    """A drafted query's drafted chunk no run returned belongs to no (query, run) arm: still offered, at the end."""
    items = {"q": [("x", (1, 2)), ("w", (0, 1)), ("drafted", (0, 0))]}
    seen = walk(make_order(name, small_pool(items)), {"x": True, "w": False, "drafted": True})
    assert seen[-1] == "drafted" and sorted(seen) == ["drafted", "w", "x"]
