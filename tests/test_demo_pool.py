"""`ragdiff demo` has judging work in it: its private copy holds back the not-relevant labels of the hit→miss
queries, so J opens a queue with chunks to judge (the shipped labels judge every pooled chunk: "1161/1161
judged", nothing to show a first-time user), and every score stays what it was."""

from __future__ import annotations

import shutil

from ragdiff.cli import review_cmd
from ragdiff.cli.review_cmd import DEMO_FILES, HELD_BACK, hold_back
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.io.runs import load_run

from conftest import settle
from test_app_keys import type_fast


def demo_folder(sample_runs, folder):
    for name in DEMO_FILES:
        data = (sample_runs / name).read_bytes()
        (folder / name).write_bytes(hold_back(data, HELD_BACK) if name == "gold.yaml" else data)
    return folder


def test_the_copy_leaves_pooled_chunks_to_judge_and_every_score_as_it_was(sample_runs, tmp_path):
    folder = demo_folder(sample_runs, tmp_path)
    shipped, held = load_gold(sample_runs / "gold.yaml"), load_gold(folder / "gold.yaml")
    runs = [load_run(sample_runs / "bm25.jsonl"), load_run(sample_runs / "dense.jsonl")]
    full = JudgeQueue.build(runs, shipped, 10, {})
    queue = JudgeQueue.build(runs, held, 10, {})
    assert full.progress()[0] == full.progress()[1]  # the shipped labels: nothing left to judge
    judged, total = queue.progress()
    assert total == full.progress()[1] and total - judged >= 50
    unjudged = {q for q in queue.queries if queue.query_progress(q)[0] < queue.query_progress(q)[1]}
    assert unjudged == set(HELD_BACK)
    settings = EvalSettings(k=5, depth=50)
    for run in runs:
        before, after = evaluate(run, shipped, settings).means, evaluate(run, held, settings).means
        assert {m: v for m, v in after.items() if not m.startswith("judged")} == \
            {m: v for m, v in before.items() if not m.startswith("judged")}
    text = (folder / "gold.yaml").read_text()
    assert text.count("# held back in the demo") == len(HELD_BACK)


def test_run_demo_works_on_the_held_back_copy(monkeypatch):
    seen = {}

    def fake_run_app(run_a, run_b, gold, settings, **options):
        seen["gold"] = gold.read_text()
        seen["note"] = options.get("note", "")
        return 0

    monkeypatch.setattr(review_cmd, "_run_app", fake_run_app)
    from ragdiff.cli.main import main

    assert main(["demo"]) == 0
    assert seen["gold"].count("# held back in the demo") == len(HELD_BACK)
    assert "J judges the labels it holds back" in seen["note"]  # the first status line says what to try


async def test_j_in_the_demo_opens_a_queue_with_work_at_the_first_query(sample_runs, tmp_path):
    from ragdiff.app.app import ReviewApp, ReviewInputs
    from ragdiff.app.judge import JudgeScreen

    folder = demo_folder(sample_runs, tmp_path)
    shutil.copy2(sample_runs / "corpus.jsonl", folder / "corpus.jsonl")
    app = ReviewApp(ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl", gold=folder / "gold.yaml",
                                 settings=EvalSettings(k=5, depth=50), corpus=folder / "corpus.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first = app.selected_query
        assert first in HELD_BACK
        await type_fast(pilot, "J")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        qid, entry = screen.queue.entry_at(screen.position)
        done, size = screen.queue.query_progress(qid)
        assert qid == first and done < size and not screen.queue.is_judged(qid, entry.chunk_id)
