"""The gold-left estimate (core/judge/stopping.py) made without the judging queue: `Pool.from_runs` holds the pool
`JudgeQueue.build` pools, `GoldModel`'s faster sums are the old ones to the bit, and `ragdiff eval --gold-left`
says the number `labels stale --runs` says."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiff.cli.main import main
from ragdiff.core.io.runs import load_run
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.judge import gold_model
from ragdiff.core.judge.gold_model import GoldModel, _curvature
from ragdiff.core.judge.pool_order import Pool
from ragdiff.core.judge.stopping import bounds, gold_left, sentence
from ragdiff.core.labels.gold import load_gold

from test_app_keys import demo_copy
from test_judge import strip_judgments

RUNS = ("bm25.jsonl", "dense.jsonl")


def partly_judged(folder) -> None:
    """The sample's labels with holes: the first 4 queries unjudged, every third query's not-relevant list gone,
    and a gold chunk of grade 1 turned grade 2 here and there (so a threshold of 2 counts differently)."""
    strip_judgments(folder / "gold.yaml", 4)
    out, query = [], 0
    for line in (folder / "gold.yaml").read_text().splitlines(keepends=True):
        if line.startswith("  - id: "):
            query += 1
        if query % 3 == 0 and line.startswith("    not_relevant:"):
            continue
        if query % 2 == 0 and line.startswith("    gold: {"):
            line = line.replace(": 1}", ": 2}")
        out.append(line)
    (folder / "gold.yaml").write_text("".join(out))


def pools(folder, depth=10, threshold=1, names=RUNS) -> tuple[Pool, Pool]:
    runs = [load_run(folder / name) for name in names]
    gold = load_gold(folder / "gold.yaml")
    return Pool.from_queue(JudgeQueue.build(runs, gold, depth), threshold), Pool.from_runs(runs, gold, depth, threshold)


@pytest.mark.parametrize("depth, threshold", [(10, 1), (20, 1), (10, 2)])
def test_the_pool_from_the_runs_is_the_queues_pool(sample_runs, tmp_path, depth, threshold):
    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    queued, direct = pools(folder, depth, threshold)
    assert direct.queries == queued.queries and direct.chunk_ids == queued.chunk_ids
    for name in ("query", "ranks", "judged", "relevant"):
        assert np.array_equal(getattr(direct, name), getattr(queued, name)), name
    assert direct.depth == queued.depth and direct.index == queued.index
    assert 0 < direct.judged.sum() < len(direct) and 0 < direct.relevant.sum() < direct.judged.sum()
    queued_left, direct_left = GoldModel(queued).gold_left(), GoldModel(direct).gold_left()
    assert direct_left[0] == queued_left[0] and np.array_equal(direct_left[1], queued_left[1])


def test_a_drafted_query_pools_its_drafted_chunks_from_the_runs_too(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    drafted = folder / "drafted.jsonl"
    drafted.write_text(json.dumps({"query": "parse command line flags", "chunk_id": "argparse#0"}) + "\n"
                       + json.dumps({"query": "zz no run has this", "chunk_id": "nowhere#0", "grade": 2}) + "\n")
    assert main(["labels", "add", str(folder / "gold.yaml"), "--from", str(drafted), "--reviewer", "model"]) == 0
    capsys.readouterr()
    queued, direct = pools(folder)
    assert direct.chunk_ids == queued.chunk_ids and np.array_equal(direct.ranks, queued.ranks)
    assert "nowhere#0" in direct.chunk_ids  # a drafted query's drafted chunk, which no run returned
    # what each draft says, the same either way: a draft without a grade is gold, a drafted 2 gold too
    assert np.array_equal(direct.drafted, queued.drafted)
    said = {direct.chunk_ids[i]: int(direct.drafted[i]) for i in np.flatnonzero(direct.drafted)}
    assert said == {"argparse#0": 1, "nowhere#0": 1}
    assert pools(folder, threshold=3)[1].drafted[direct.chunk_ids.index("nowhere#0")] == -1


def test_a_pool_without_drafts_has_no_draft_column(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    queued, direct = pools(folder)
    assert queued.drafted is None and direct.drafted is None
    assert GoldModel(direct).columns == 1 + 2 * (len(gold_model._BUCKET_EDGES) + 1)


def one_query_pool(n: int, drafted: list[int] | None) -> Pool:
    """n chunks of one query, each ranked i + 1 by the one run, none judged."""
    pool = Pool(("q",), [f"c{i}" for i in range(n)], np.zeros(n, dtype=np.int64),
                np.arange(1, n + 1).reshape(n, 1), 10, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))
    if drafted is not None:
        pool.drafted = np.array(drafted, dtype=np.int8)
    return pool


def test_drafts_seed_the_model_and_judgments_teach_it_how_far_to_trust_them():
    plain = GoldModel(one_query_pool(6, None)).probabilities()
    seeded = GoldModel(one_query_pool(6, [1, -1, 0, 1, -1, 0])).probabilities()
    assert seeded[0] > plain[0] and seeded[3] > plain[3]  # drafted relevant: more likely gold
    assert seeded[1] < plain[1] and seeded[4] < plain[4]  # drafted not relevant: less
    # a drafter wrong every time: people judge its drafted-relevant chunks not relevant, and the model learns it
    n = 60
    model = GoldModel(one_query_pool(n, [1] * n))
    before = model.weights[-3]
    for i in range(0, n, 2):
        model.tell_index(i, False)
    assert model.weights[-3] < before - 1


def _old_curvature(hot: np.ndarray, curvature: np.ndarray, columns: int) -> np.ndarray:
    """The Hessian's loop as it was: np.add.at per pair of hot slots (the reference)."""
    hessian = np.zeros((columns, columns))
    for a in range(hot.shape[1]):
        for b in range(hot.shape[1]):
            np.add.at(hessian, (hot[:, a], hot[:, b]), curvature)
    return hessian


@pytest.mark.parametrize("runs, rows, seed", [(1, 7, 0), (2, 500, 1), (3, 4000, 2), (5, 1, 3)])
def test_the_curvature_is_the_old_loops_to_the_bit(runs, rows, seed):
    rng = np.random.default_rng(seed)
    nb = len(gold_model._BUCKET_EDGES) + 1
    columns = 1 + runs * nb
    hot = np.concatenate([np.zeros((rows, 1), dtype=np.int64),
                          1 + np.arange(runs) * nb + rng.integers(0, nb, size=(rows, runs))], axis=1)
    p = rng.random(rows)
    curvature = p * (1 - p)  # sums of many floats of mixed size: any change of order shows in the last bits
    new, old = _curvature(hot, curvature, columns), _old_curvature(hot, curvature, columns)
    assert new.tobytes() == old.tobytes()


def test_the_model_fitted_at_once_is_the_model_told_one_by_one(sample_runs, tmp_path, monkeypatch):
    """GoldModel records the pool's judgments at once and sums its curvature with one bincount; the reference
    records them one at a time (`_record`) and sums with np.add.at, as it did: the same weights and estimate to
    the bit."""
    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    _, pool = pools(folder, names=(*RUNS, "bm25.jsonl"))  # three runs (one twice: the same ranks in two slots)
    new = GoldModel(pool)
    monkeypatch.setattr(gold_model, "_curvature", _old_curvature)
    blank = Pool(pool.queries, pool.chunk_ids, pool.query, pool.ranks, pool.depth,
                 np.zeros(len(pool), dtype=bool), np.zeros(len(pool), dtype=bool))
    old = GoldModel(blank)
    old.pool = pool
    for i in np.flatnonzero(pool.judged):
        old._record(int(i), bool(pool.relevant[i]))
    old.weights = old.prior.copy()
    old._fit()
    assert new.count == old.count and np.array_equal(new.query_rel, old.query_rel)
    assert new.weights.tobytes() == old.weights.tobytes()
    assert new.probabilities().tobytes() == old.probabilities().tobytes()
    assert new.gold_left()[0] == old.gold_left()[0]


# ---- ragdiff eval --gold-left ------------------------------------------------------------------------------


def run_json(capsys, *args) -> dict:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_says_the_gold_left_labels_stale_says(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    runs, gold = [str(folder / name) for name in RUNS], str(folder / "gold.yaml")
    left = run_json(capsys, "labels", "stale", gold, "--runs", *runs, "--json")["gold_left"]
    note = run_json(capsys, "eval", *runs, "--gold", gold, "--gold-left", "--json")["gold_left"]
    assert left["unjudged"] > 0 and left["gold_left"] > 0
    rows = left.pop("queries")
    assert note == {"pool_depth": 10, **left}  # the same estimate and sentence, no per-query rows
    direct = gold_left([load_run(path) for path in runs], load_gold(gold))
    assert {k: direct[k] for k in ("pool_size", "judged", "gold_found", "unjudged", "gold_left")} == {
        k: note[k] for k in ("pool_size", "judged", "gold_found", "unjudged", "gold_left")}
    with_rows = run_json(capsys, "eval", *runs, "--gold", gold, "--gold-left", "--per-query", "--json")["gold_left"]
    assert with_rows["queries"] == rows and rows  # --per-query: every query's, as labels stale lists them
    assert main(["eval", *runs, "--gold", gold, "--gold-left"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"unjudged in the runs' top 10: {note['stopping']}" in out
    assert note["stopping"].startswith(f"about {note['gold_left']:.0f} gold expected among the {note['unjudged']} "
                                       "unjudged chunks: stopping here leaves recall@10's bound at ")


def test_eval_says_nothing_of_the_gold_left_unasked_or_when_the_pool_is_judged(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    runs, gold = [str(folder / name) for name in RUNS], str(folder / "gold.yaml")
    # the sample's labels judge the whole merged top 10 of bm25 and dense
    assert run_json(capsys, "labels", "stale", gold, "--runs", *runs, "--json")["gold_left"]["unjudged"] == 0
    assert "gold_left" not in run_json(capsys, "eval", *runs, "--gold", gold, "--gold-left", "--json")
    assert main(["eval", *runs, "--gold", gold, "--gold-left"]) == 0
    assert "gold expected" not in capsys.readouterr().out
    partly_judged(folder)
    assert "gold_left" not in run_json(capsys, "eval", *runs, "--gold", gold, "--json")  # not asked for
    assert main(["eval", *runs, "--gold", gold]) == 0
    assert "gold expected" not in capsys.readouterr().out


def test_the_bound_from_evals_own_evaluation_is_the_bound_evaluated_again(sample_runs, tmp_path, monkeypatch):
    from ragdiff.core.metrics import evaluate as evaluate_module
    from ragdiff.core.metrics.evaluate import evaluate_runs
    from ragdiff.core.metrics.specs import EvalSettings

    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    runs, gold = [load_run(folder / name) for name in RUNS], load_gold(folder / "gold.yaml")
    fresh = bounds(runs, gold)
    assert any(bound > value for _, value, bound in fresh)  # something unjudged in the top 10
    evals = evaluate_runs(runs, gold, EvalSettings(), bounds=True)

    def again(*args, **kwargs):
        raise AssertionError("evaluated again")

    monkeypatch.setattr(evaluate_module, "evaluate", again)
    assert bounds(runs, gold, evals=evals) == fresh
    monkeypatch.undo()
    # eval at threshold 2: the estimate and the bound at threshold 2, as gold_left and bounds give them
    fresh2 = bounds(runs, gold, threshold=2)
    assert fresh2 != fresh
    evals2 = evaluate_runs(runs, gold, EvalSettings(threshold=2), bounds=True)
    assert bounds(runs, gold, evals=evals2, threshold=2) == fresh2
    assert bounds(runs, gold, evals=evals2) == fresh  # another threshold than eval's: evaluated again


def test_eval_gold_left_at_threshold_2(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    partly_judged(folder)
    paths, gold = [str(folder / name) for name in RUNS], str(folder / "gold.yaml")
    note = run_json(capsys, "eval", *paths, "--gold", gold, "--gold-left", "--threshold", "2", "--json")["gold_left"]
    runs = [load_run(path) for path in paths]
    direct = gold_left(runs, load_gold(gold), threshold=2)
    assert note["gold_found"] == direct["gold_found"] < gold_left(runs, load_gold(gold))["gold_found"]
    assert note["gold_left"] == direct["gold_left"]
    per_run = bounds(runs, load_gold(gold), threshold=2)
    assert note["stopping"] == sentence(direct["gold_left"], direct["unjudged"], per_run)


def test_eval_gold_left_with_trec_eval_is_refused(sample_runs, capsys):
    code = main(["eval", str(sample_runs / "bm25.jsonl"), "--gold", str(sample_runs / "gold.yaml"), "--gold-left",
                 "--trec-eval"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "--gold-left" in captured.err
