"""`ragdiff judge` flooded with decision keys, no pause between them, and killed (SIGKILL) at a random moment:
after reopening the label file, every decision the screen had counted as judged is in it, with the label its key
gave, none on another chunk, and the file is byte for byte what those decisions made one after another make of
the file as it was (nothing else in it changed).

RAGDIFF_JUDGE_KILLS sets the number of kills (tests/counts.py: quick for `make test`, CI sets 50).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, Mark
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.io.runs import load_run

from counts import count

KILLS = count("RAGDIFF_JUDGE_KILLS")
ROOT = Path(__file__).resolve().parent.parent
KEYS = {"x": "not_relevant", "g": "gold"}

# the judging queue under Pilot: says "ready" once open, then takes every decision key at once (posted to the
# terminal driver, as typed) and waits to be killed. Reported, each in ONE write() of a whole line (a kill never
# tears one): every decision the queue takes as judged (its MarkDone), and the header's `N judged` each time the
# screen is drawn.
CHILD = textwrap.dedent("""
    import asyncio, os, sys
    from pathlib import Path
    from textual import events
    from ragdiff.app.judge import JudgeScreen
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    folder = Path(sys.argv[1])
    drawn = JudgeScreen.show_position

    def show_position(screen):
        drawn(screen)
        line = f"shown {screen.queue.progress()[0]}\\n".encode()
        assert os.write(1, line) == len(line)

    JudgeScreen.show_position = show_position

    class Reporting(JudgeApp):
        def on_mark_done(self, message):  # Textual then runs JudgeApp's own handler, which applies it
            for change in message.changes:
                line = f"judged {change.query_id} {change.chunk_id} {change.after.kind}\\n".encode()
                assert os.write(1, line) == len(line)

    async def main():
        app = Reporting(JudgeInputs([folder / "run_a.jsonl", folder / "run_b.jsonl"], folder / "gold.yaml",
                                    reviewer="kill"))
        async with app.run_test(size=(140, 40)):
            while app.judge is None or not app.judge.is_mounted:
                await asyncio.sleep(0.02)
            total = app.judge.queue.progress()[1]
            os.write(1, b"ready\\n")
            for n in range(total):
                key = "g" if n % 2 else "x"
                event = events.Key(key, key)
                event.set_sender(app)
                app._driver.send_message(event)
            await asyncio.sleep(3600)

    asyncio.run(main())
""")


def trial_set(folder: Path, queries: int = 30) -> None:
    """30 queries, two runs of 10 chunks each pooling 516 chunks, none judged (a labelling day's first hour)."""
    folder.mkdir(parents=True)
    lines = ["# the trial's label file: comments and order stay", "queries:"]
    runs = {"a": [], "b": []}
    for i in range(queries):
        lines += [f"  - id: q{i:02d}", f"    text: query number {i}", f"    gold: [g-{i}]   # from the log"]
        a = [f"c{i}-{n}" for n in range(10)]
        b = a[: 2 if i < 6 else 3] + [f"c{i}-b{n}" for n in range(8 if i < 6 else 7)]
        for side, ids in (("a", a), ("b", b)):
            runs[side].append(json.dumps({"query_id": f"q{i:02d}", "query": f"query number {i}",
                                          "results": [{"id": c, "score": 1 - r / 20} for r, c in enumerate(ids)]}))
    (folder / "gold.yaml").write_text("\n".join(lines) + "\n")
    for side in "ab":
        (folder / f"run_{side}.jsonl").write_text("\n".join(runs[side]) + "\n")


def queue_order(folder: Path) -> list[tuple[str, str]]:
    """The (query, chunk) each decision key lands on: the queue's order, each decision moving to the next."""
    runs = [load_run(folder / f"run_{side}.jsonl") for side in "ab"]
    queue = JudgeQueue.build(runs, load_gold(folder / "gold.yaml"), 10)
    return [(queue.queries[p.query], queue.entries[queue.queries[p.query]][p.entry].chunk_id)
            for p in queue.positions()]


def reported(out: str) -> tuple[list[tuple[str, str, str]], int]:
    """The decisions reported judged, and the most the header ever said were judged."""
    *lines, rest = out.split("\n")
    assert rest == "" and "ready" in lines, f"the child's output is not whole: {out[:200]!r}…{rest!r}"
    decisions, header = [], 0
    for line in lines:
        if line == "ready":
            continue
        words = line.split(" ")
        if words[0] == "shown" and len(words) == 2:
            header = max(header, int(words[1]))
            continue
        assert len(words) == 4 and words[0] == "judged", f"not a report: {line!r}"
        decisions.append(tuple(words[1:]))
    return decisions, header


def test_sigkill_during_a_flood_of_decisions_keeps_every_one_the_screen_counted(tmp_path):
    rng = random.Random(29)
    template = tmp_path / "template"
    trial_set(template)
    order = queue_order(template)
    assert len(order) == 516
    label = {pair: KEYS["g" if n % 2 else "x"] for n, pair in enumerate(order)}
    original = (template / "gold.yaml").read_bytes()
    counted, cut_short = [], 0

    def kill_once(kill: int, wanted: int, pause: float) -> None:
        """One flood, killed `pause` seconds after the child reported `wanted` decisions; every check on it."""
        nonlocal cut_short
        folder = tmp_path / f"kill{kill}"
        shutil.copytree(template, folder)
        gold = folder / "gold.yaml"
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(folder)], stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            seen = [proc.stdout.readline()]  # the queue is open and the flood is being sent …
            while seen[-1] not in ("ready\n", ""):
                seen.append(proc.stdout.readline())
            assert seen[-1] == "ready\n", seen
            # … and the process is killed somewhere inside it: after a random number of decisions counted (whatever
            # the machine's speed), a random moment later
            counted_now = 0
            while counted_now < wanted:
                seen.append(proc.stdout.readline())
                assert seen[-1], "the child stopped before it was killed"
                counted_now += seen[-1].startswith("judged")
            time.sleep(pause)
            proc.send_signal(signal.SIGKILL)
            shown, header = reported("".join(seen) + proc.communicate()[0])
        finally:  # a failed check never leaves the flooded child behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        LabelFile(gold, reviewer="kill")  # reopened: the journal's decisions not yet in the file are written
        frame = load_gold(gold).judgments
        in_file = {(q, c): level for q, c, level in frame.select("query_id", "chunk_id", "level").iter_rows()}
        for q, c, kind in shown:
            assert in_file.get((q, c)) == kind == label[(q, c)], (kill, q, c, kind, in_file.get((q, c)))
        decided = [pair for pair in in_file if pair in label]
        # none misplaced: the file's new judgments are the queue's first decisions, each with its key's label
        assert sorted(decided, key=order.index) == order[: len(decided)], kill
        assert all(in_file[pair] == label[pair] for pair in decided)
        assert len(in_file) == len(decided) + 30  # and the 30 gold chunks the file began with, nothing else
        assert header <= len(decided), f"the screen said {header} judged, the file holds {len(decided)}"
        # the rest of the file byte for byte: those decisions made one after another on the file as it was
        oracle = tmp_path / f"oracle{kill}" / "gold.yaml"
        oracle.parent.mkdir()
        oracle.write_bytes(original)
        file = LabelFile(oracle, reviewer="oracle")
        for q, c in order[: len(decided)]:
            file.apply(Mark(q, c, label[(q, c)]))
        for q, day in LabelFile(gold)._snap.doc.reviewed.items():  # the queries the flood finished
            file.set_reviewed(q, day)
        assert gold.read_bytes() == oracle.read_bytes(), kill
        counted.append(len(shown))
        cut_short += len(decided) < len(order)

    for kill in range(KILLS):
        kill_once(kill, rng.randrange(len(order)), rng.uniform(0.0, 0.05))
    # On a loaded machine the reader of the child's reports can lag a whole flood, and the group commit may have
    # made every decision durable by the time one is reported: then a kill right after the first report, and
    # failing that right after "ready" (the keys sent, none yet durable), falls inside a flood.
    for extra, wanted in enumerate((1, 0, 0)):
        if cut_short:
            break
        kill_once(KILLS + extra, wanted, 0.0)
    print(f"judge kill test: {len(counted)} kills, decisions counted judged {counted}")
    assert sum(counted) > 0, "every flood was killed before its first decision: the test measured nothing"
    assert cut_short > 0, "no kill fell inside a flood: the test measured nothing"
