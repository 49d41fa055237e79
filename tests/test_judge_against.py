"""`ragdiff judge ... --against B`: a queue of only the disagreements with another reviewer's label file, settled one
key each (core/judge/settle.py), keys at machine speed (Pilot)."""

from __future__ import annotations

import re

from ragdiff.app.judge_app import JudgeApp, JudgeInputs
from ragdiff.cli.main import main
from ragdiff.core.judge.agreement import agree
from ragdiff.core.labels.gold import load_gold

from test_app_keys import demo_copy, journal, type_fast
from test_app_pilot import SIZE
from test_judge import header, opened


def other_reviewer(folder, regraded: int = 4):
    """B: the label file with the grades of the first `regraded` gold lists moved (3 -> 1, 2 -> 3)."""
    out, n = [], 0
    for line in (folder / "gold.yaml").read_text().splitlines(keepends=True):
        if n < regraded and re.match(r"    gold: \{", line):
            line = line.replace(": 3", ": 1").replace(": 2", ": 3")
            n += 1
        out.append(line)
    (folder / "b.yaml").write_text("".join(out))
    return folder / "b.yaml"


def app_of(folder) -> JudgeApp:
    return JudgeApp(JudgeInputs(runs=[folder / "bm25.jsonl", folder / "dense.jsonl"], gold=folder / "gold.yaml",
                                corpus=folder / "corpus.jsonl", reviewer="tester", against=folder / "b.yaml"))


async def test_the_queue_holds_the_disagreements_and_each_key_settles_the_one_on_screen(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    b = other_reviewer(folder)
    disagreements = agree(load_gold(folder / "gold.yaml"), load_gold(b)).disagreements
    assert len(disagreements) > 3
    app = app_of(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        total = len(disagreements)
        assert f"0/{total} judged" in header(app) and "disagreements with b.yaml" in header(app)
        assert {(q, e.chunk_id) for q in screen.queue.queries for e in screen.queue.entries[q]} == \
            {(d.query_id, d.chunk_id) for d in disagreements}
        shown = screen.queue.entry_at(screen.position)
        title = str(screen.query_one("#judge-text").border_title)
        first = next(d for d in disagreements if (d.query_id, d.chunk_id) == (shown[0], shown[1].chunk_id))
        assert f"yours {first.a} · b.yaml's {first.b}" in title
        # machine speed: three decisions, then an undo of the last
        order = [(q, e.chunk_id) for q in screen.queue.queries for e in screen.queue.entries[q]]
        await type_fast(pilot, "1", "x", "3")
        marks = [(r["query"], r["chunk"]) for r in journal(folder / "gold.yaml") if r["type"] == "mark"]
        assert marks == order[:3]  # each key on the disagreement on screen, in the queue's order
        assert f"3/{total} judged" in header(app)
        await type_fast(pilot, "u")
        assert f"2/{total} judged" in header(app)  # taken back: to settle again
        assert screen.queue.entry_at(screen.position)[1].chunk_id == order[2][1]
    # the one taken back and those not reached still disagree
    after = agree(load_gold(folder / "gold.yaml"), load_gold(b))
    assert {(d.query_id, d.chunk_id) for d in after.disagreements} >= set(order[2:])


def test_nothing_to_settle_or_nothing_in_common(sample_runs, tmp_path, capsys):
    folder = demo_copy(sample_runs, tmp_path)
    runs = [str(folder / "bm25.jsonl"), str(folder / "dense.jsonl")]
    (folder / "same.yaml").write_text((folder / "gold.yaml").read_text())
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--against", str(folder / "same.yaml")]) == 0
    assert "nothing to settle" in capsys.readouterr().out
    (folder / "other.yaml").write_text("queries:\n  - id: elsewhere\n    gold: [x]\n")
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--against", str(folder / "other.yaml")]) == 2
    err = capsys.readouterr().err
    assert "no (query, chunk) pair in common" in err and "Traceback" not in err
    assert main(["judge", *runs, "--gold", str(folder / "gold.yaml"), "--against", str(folder / "same.yaml"),
                 "--gold-left"]) == 2
    assert "--against" in capsys.readouterr().err
