"""Drafts in the judging queue, at machine speed (Pilot): a drafted chunk shows the model's proposal, `a`
accepts it, any other decision overrides it; each decided chunk moves from `drafted:` to its judgment with the
rest of the label file kept, and the overturn report counts the session."""

from __future__ import annotations

import json

from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.pool_list import PoolList
from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold

from test_app_keys import demo_copy, type_fast
from test_app_pilot import SIZE
from test_judge import judge_app, opened, pool_order, strip_judgments


async def test_accept_and_override_drafts_in_the_queue(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    gold_path = folder / "gold.yaml"
    stripped = strip_judgments(gold_path, 2)
    order = pool_order(folder, stripped)
    grades = [2, 0, 3, 1, 2]  # proposals for the first five chunks in queue order
    drafts = folder / "drafts.jsonl"
    drafts.write_text("".join(json.dumps({"query_id": q, "chunk_id": c, "grade": g}) + "\n"
                              for (q, c), g in zip(order, grades)))
    assert main(["labels", "import", str(gold_path), str(drafts), "--reviewer", "model"]) == 0
    capsys.readouterr()
    before = gold_path.read_text()
    judged_before = load_gold(gold_path).judgments.height

    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert (screen.queue.entry_at(screen.position)[1].chunk_id) == order[0][1]
        assert "drafted ☆2 · a accepts" in str(screen.query_one(ChunkView).border_title)
        pool = screen.query_one(PoolList)
        assert str(pool.render_row(0, 40)).startswith("☆2") and str(pool.render_row(1, 40)).startswith("☆0")
        # accept ☆2, accept ☆0, override ☆3 with grade 1, override ☆1 with not relevant; leave ☆2 drafted (skip)
        await type_fast(pilot, "a", "a", "1", "x", "s")
        await type_fast(pilot, "a")  # on a chunk with no draft: nothing is decided
        assert "no drafted label here" in str(screen.query_one("#judge-status").render())
        await type_fast(pilot, "q")

    gold = load_gold(gold_path)
    judged = {(q, c): (lv, g) for q, c, lv, g in gold.judgments.select("query_id", "chunk_id", "level", "grade").iter_rows()}
    drafted = {(q, c): g for q, c, g in gold.drafts.select("query_id", "chunk_id", "grade").iter_rows()}
    assert gold.judgments.height == judged_before + 4
    assert [judged[k] for k in order[:4]] == [("gold", 2), ("not_relevant", 0), ("gold", 1), ("not_relevant", 0)]
    assert drafted == {order[4]: 2}
    # every line outside the decided chunks' sections is as it was
    touched = ("    gold:", "    not_relevant:", "    drafted:")
    assert [line for line in gold_path.read_text().splitlines() if not line.startswith(touched)] == \
        [line for line in before.splitlines() if not line.startswith(touched)]

    assert main(["labels", "log", str(gold_path), "--drafts", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["drafts"]
    rows = {r["grade"]: (r["decided"], r["accepted"], r["regraded"], r["not_relevant"]) for r in report["by_proposed_grade"]}
    assert rows == {0: (1, 1, 0, 0), 1: (1, 0, 0, 1), 2: (1, 1, 0, 0), 3: (1, 0, 1, 0)}
    assert (report["decided"], report["accepted"], report["overturned"]) == (4, 2, 2)


def test_review_model_shows_drafts_as_proposals_and_never_scores_them(lesson):
    from ragdiff.app.model import ReviewModel
    from ragdiff.core.labels import LabelFile, Mark
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.io.runs import load_run

    def model():
        return ReviewModel(load_run(lesson["a"]), load_run(lesson["b"]), load_gold(lesson["gold"]),
                           EvalSettings(k=3, depth=50))

    plain = model()
    text = lesson["gold"].read_text()
    lesson["gold"].write_text(text.replace("    not_relevant: [policy-9]\n",
                                           "    not_relevant: [policy-9]\n    drafted: {policy-31: 2}\n", 1))
    drafted = model()
    assert drafted.label_of("q1", "policy-31") == ("drafted", 2)
    assert [(r.chunk_id, r.level, r.relevant) for r in drafted.rows_for("q1", "b")] == \
        [(r.chunk_id, r.level, r.relevant) for r in plain.rows_for("q1", "b")]
    assert drafted.visible("hit_to_miss") == plain.visible("hit_to_miss") == ["q1"]
    # accept it: the model takes the Change (gold 2) and q1 is no longer a flip; undo brings the proposal back
    labels = LabelFile(lesson["gold"], reviewer="ann")
    drafted.apply_change(labels.apply(Mark("q1", "policy-31", "gold", 2)))
    assert drafted.label_of("q1", "policy-31") == ("gold", 2) and drafted.visible("hit_to_miss") == []
    drafted.apply_change(labels.undo())
    assert drafted.label_of("q1", "policy-31") == ("drafted", 2)
    assert drafted.visible("hit_to_miss") == ["q1"]
