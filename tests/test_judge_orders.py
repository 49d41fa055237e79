"""`ragdiff judge --order`: the queue on screen walks an adaptive order (core/pool_order.py, QueueOrder), keys at
machine speed (Pilot); and the order's bookkeeping on its own (undo, skip, a dropped query)."""

from __future__ import annotations

import pytest

from ragdiff.app.judge_app import JudgeApp, JudgeInputs
from ragdiff.core import vocab
from ragdiff.core.io.runs import load_run
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.marks import Judgment
from ragdiff.core.labels.store import Changed

from test_app_keys import demo_copy, journal, type_fast
from test_app_pilot import SIZE
from test_judge import header, opened, strip_judgments

# a mix of decisions, a skip and a flag among them: gold and not relevant teach the order different things
KEYS = ["x", "2", "x", "s", "x", "g", "x", "x", "exclamation_mark", "1", "x", "x", "3", "x", "x", "e", "x", "0"]
DECISION = {"x": (vocab.NOT_RELEVANT, None), "0": (vocab.NOT_RELEVANT, None), "g": (vocab.GOLD, None),
            "e": (vocab.EVIDENCE, None), "1": (vocab.GOLD, 1), "2": (vocab.GOLD, 2), "3": (vocab.GOLD, 3)}


def queue_of(folder, order: str) -> JudgeQueue:
    gold = load_gold(folder / "gold.yaml")
    queue = JudgeQueue.build([load_run(folder / "bm25.jsonl"), load_run(folder / "dense.jsonl")], gold, 10)
    queue.use_order(order)
    return queue


def offered(queue: JudgeQueue, keys: list[str]):
    """The marks `keys` make when each lands on the chunk the order offered before it, and where the queue
    stands after them: the queue replayed without the app, as the screen walks it (decide, skip or flag, then
    the next chunk)."""
    position, marks = queue.next_unjudged(), []
    for k in keys:
        qid, entry = queue.entry_at(position)
        if k in DECISION:
            kind, grade = DECISION[k]
            queue.decide(qid, entry.chunk_id, kind, grade)
            marks.append((qid, entry.chunk_id, kind))
        elif k == "s":
            queue.skip(qid, entry.chunk_id)
        else:
            queue.flag(qid, entry.chunk_id)
        position = queue.next_unjudged(position)
    return marks, position


@pytest.mark.parametrize("order", ["bandit", "mtf", "global"])
async def test_every_key_lands_on_the_chunk_the_order_offered(sample_runs, tmp_path, order):
    """Keys sent with no pauses: each decision is written for the chunk on screen when its key came, and the
    order moved on from it, so the journal is the order's own walk, decision by decision."""
    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 10)
    expected, now = offered(queue_of(folder, order), KEYS)
    assert len({q for q, _, _ in expected}) > 1  # the order moved across queries: not the rank walk
    app = JudgeApp(JudgeInputs(runs=[folder / "bm25.jsonl", folder / "dense.jsonl"], gold=folder / "gold.yaml",
                               corpus=folder / "corpus.jsonl", reviewer="tester", order=order))
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert f"{order} order" in header(app)
        await type_fast(pilot, *KEYS)
        marks = [(r["query"], r["chunk"], r["label"]) for r in journal(folder / "gold.yaml") if r["type"] == "mark"]
        assert marks == expected
        assert screen.position == now  # on screen: what the order offers after them


async def test_the_header_estimates_the_gold_left_and_it_falls_as_gold_is_found(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 10)
    app = JudgeApp(JudgeInputs(runs=[folder / "bm25.jsonl", folder / "dense.jsonl"], gold=folder / "gold.yaml",
                               reviewer="tester", order="global"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        before = screen.queue.walk.gold_left()
        assert f"about {before:.0f} gold left" in header(app)
        status = " ".join(str(screen.query_one("#judge-status").render()).split())
        assert f"about {before:.0f} gold in {screen.queue.progress()[1] - screen.queue.progress()[0]} unjudged" \
            " · stopping here: recall@10 ≤ " in status, status
        line = str(screen.query_one("#judge-query").render())
        assert "gold left" in line
        await type_fast(pilot, "3", "3", "3")
        after = screen.queue.walk.gold_left()
        assert after < before
        assert f"about {after:.0f} gold left" in header(app)


def test_an_undo_puts_the_chunk_back_in_the_order(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 10)
    queue = queue_of(folder, "global")
    first = queue.next_unjudged()
    qid, entry = queue.entry_at(first)
    left = queue.walk.gold_left()
    queue.decide(qid, entry.chunk_id, vocab.GOLD, 3)
    queue.changed([Changed(qid, entry.chunk_id, Judgment(None, None), Judgment(vocab.GOLD, 3))])
    assert queue.next_unjudged() != first and queue.walk.gold_left() < left
    # taken back: unjudged again, and the order offers it again (it was the most likely gold)
    queue.changed([Changed(qid, entry.chunk_id, Judgment(vocab.GOLD, 3), Judgment(None, None))])
    assert queue.next_unjudged() == first
    assert queue.walk.gold_left() == pytest.approx(left, abs=1e-9)


def test_a_skipped_chunk_comes_back_only_when_nothing_else_is_left(lesson):
    gold = load_gold(lesson["gold"])
    queue = JudgeQueue.build([load_run(lesson["a"]), load_run(lesson["b"])], gold, 10)
    queue.use_order("mtf")
    seen = []
    skipped = position = queue.next_unjudged()
    qid, entry = queue.entry_at(position)
    queue.skip(qid, entry.chunk_id)
    position = queue.next_unjudged(position)
    while position is not None and position != skipped:
        qid, entry = queue.entry_at(position)
        seen.append((qid, entry))
        queue.decide(qid, entry.chunk_id, vocab.NOT_RELEVANT, None)
        position = queue.next_unjudged(position)
    total = queue.progress()[1]
    assert position is not None and queue.decided() == total - 1, seen  # every other chunk first
    assert queue.entry_at(skipped) not in seen


def test_a_failed_save_is_offered_again(lesson):
    from ragdiff.app.session import Target

    gold = load_gold(lesson["gold"])
    queue = JudgeQueue.build([load_run(lesson["a"]), load_run(lesson["b"])], gold, 10)
    queue.use_order("bandit")
    first = queue.next_unjudged()
    qid, entry = queue.entry_at(first)
    queue.decide(qid, entry.chunk_id, vocab.NOT_RELEVANT, None)
    assert queue.next_unjudged() != first
    queue.apply([], failed=Target(qid, entry.chunk_id, None, None))
    assert queue.next_unjudged() == first


@pytest.mark.parametrize("threshold", [1, 2])
def test_gold_left_says_what_stopping_leaves_with_evals_own_bound(sample_runs, tmp_path, capsys, threshold):
    """`judge --gold-left`: the stopping suggestion names recall@10's bound per run, the very number `ragdiff eval
    -k 10 --json` gives as its upper bound at the same --threshold, and the estimate --json reports."""
    import json

    from ragdiff.cli.main import main

    folder = demo_copy(sample_runs, tmp_path)
    # five queries whose only gold no run returns, their pools unjudged: a miss each that the bound may turn
    for qid in strip_judgments(folder / "gold.yaml", 5):
        text = (folder / "gold.yaml").read_text()
        (folder / "gold.yaml").write_text(text.replace(f"  - id: {qid}\n", f"  - id: {qid}\n    gold: {{nowhere#0: 3}}\n", 1))
    runs = [str(folder / "bm25.jsonl"), str(folder / "dense.jsonl")]
    at = ["--threshold", str(threshold)]
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--gold-left", "--json", *at]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--gold-left", *at]) == 0
    out = " ".join(capsys.readouterr().out.split())
    bounds = []
    for run in runs:
        assert main(["eval", run, "--gold", str(folder / "gold.yaml"), "-k", "10", "--metrics", "recall@10",
                     "--json", *at]) == 0
        entry = json.loads(capsys.readouterr().out)["runs"][0]
        bounds.append((entry["name"], entry["metrics"]["recall@10"], entry["upper_bound"]["recall@10"]["value"]))
    assert any(b > v for _, v, b in bounds)  # the bound is above the value: there is something to find
    expected = (f"about {doc['gold_left']:.0f} gold expected among the {doc['unjudged']} unjudged chunks: stopping here "
                f"leaves recall@10's bound at {bounds[0][2]:.3f} for bm25 ({bounds[0][1]:.3f} as judged) and "
                f"{bounds[1][2]:.3f} for dense ({bounds[1][1]:.3f} as judged)")
    assert expected in out, out[:400]


def test_labels_stale_with_runs_says_the_gold_left_as_judge_does(sample_runs, tmp_path, capsys):
    import json

    from ragdiff.cli.main import main

    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 4)
    runs = [str(folder / "bm25.jsonl"), str(folder / "dense.jsonl")]
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--gold-left", "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)
    assert main(["labels", "stale", str(folder / "gold.yaml"), "--runs", *runs, "--json"]) == 0
    left = json.loads(capsys.readouterr().out)["gold_left"]
    assert {k: left[k] for k in judged} == judged
    assert main(["labels", "stale", str(folder / "gold.yaml"), "--runs", *runs]) == 0
    out = capsys.readouterr().out
    assert f"unjudged in the runs' top 10: {left['stopping']}" in " ".join(out.split())
    assert left["stopping"].startswith(f"about {left['gold_left']:.0f} gold expected among the {left['unjudged']} ")


def test_the_command_line_opens_the_queue_in_the_default_order(sample_runs, tmp_path, monkeypatch):
    from ragdiff.cli import judge_cmd
    from ragdiff.cli.main import main

    opened_with = []
    monkeypatch.setattr(judge_cmd, "run_app", lambda app: opened_with.append(app.inputs) or 0)
    runs = [str(sample_runs / "bm25.jsonl"), str(sample_runs / "dense.jsonl")]
    assert main(["judge", *runs, "--gold", str(sample_runs / "gold.yaml")]) == 0
    assert main(["judge", *runs, "--gold", str(sample_runs / "gold.yaml"), "--order", "global", "--pool", "30"]) == 0
    assert [(i.order, i.pool) for i in opened_with] == [("mtf", 10), ("global", 30)]
