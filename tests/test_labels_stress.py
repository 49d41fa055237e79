"""Faults while reviewing: SIGKILL during a burst of marks, and two reviewers marking one file at once.

RAGDIFF_KILL_ITERATIONS and RAGDIFF_CONCURRENT_ITERATIONS set the rounds (tests/counts.py: quick for `make
test`, CI sets 4 and 2; more for a soak).
"""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import polars as pl

from ragdiff.core.gold import load_gold
from counts import count

KILL_ITERATIONS = count("RAGDIFF_KILL_ITERATIONS")
CONCURRENT_ITERATIONS = count("RAGDIFF_CONCURRENT_ITERATIONS")

LABELS = textwrap.dedent("""\
    # stress test labels: comments must survive every write
    queries:
      - id: q1
        text: first query   # a comment on the text
        gold: [seed-1]
      - id: q2
        text: second query
        gold: {seed-2: 3}
        not_relevant: [seed-3]
    """)

MARKER = textwrap.dedent("""\
    import sys
    from ragdiff.core.labels import LabelFile, Mark
    path, who, query, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    labels = LabelFile(path, reviewer=who)
    for i in range(count):
        chunk = f"{who}-{i:03d}"
        labels.apply(Mark(query, chunk, "gold" if i % 3 else "not_relevant", run="A", rank=i + 1))
        print("saved", query, chunk, flush=True)
    """)


def judged(path):
    frame = load_gold(path).judgments
    return set(zip(frame["query_id"], frame["chunk_id"]))


def journal_saved(path):
    ops, saved = {}, set()
    journal = path.with_name(path.name + ".ragdiff-journal.jsonl")
    if not journal.exists():
        return set()
    for line in journal.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by the kill
        if rec.get("type") == "mark":
            ops[rec["id"]] = (rec["query"], rec["chunk"])
        elif rec.get("type") == "saved" and rec["id"] in ops:
            saved.add(ops[rec["id"]])
    return saved


def start(path, who, query, count):
    return subprocess.Popen([sys.executable, "-c", MARKER, str(path), who, query, str(count)],
                            stdout=subprocess.PIPE, text=True)


def test_sigkill_during_a_burst_of_100_marks_loses_nothing_reported_saved(tmp_path):
    rng = random.Random(7)
    lost = saved = 0
    for iteration in range(KILL_ITERATIONS):
        path = tmp_path / f"gold{iteration}.yaml"
        path.write_text(LABELS)
        proc = start(path, "kill", "q1", 100)
        first = proc.stdout.readline()  # the burst has begun (whatever the machine's start-up time) …
        time.sleep(rng.uniform(0.0, 0.4))  # … and is killed somewhere inside it
        proc.send_signal(signal.SIGKILL)
        out = first + proc.communicate()[0]
        reported = {tuple(line.split()[1:3]) for line in out.splitlines() if line.startswith("saved")}
        on_disk = judged(path)  # parses, or load_gold raises and the test fails
        lost += len(reported - on_disk)
        saved += len(reported)
        assert path.read_text().startswith("# stress test labels"), "comments lost"
        # every save the journal confirms is in the file
        assert journal_saved(path) <= on_disk
    print(f"kill test: {KILL_ITERATIONS} iterations, {saved} marks reported saved, {lost} lost")
    assert saved > 0, "every burst was killed before its first mark: the test measured nothing"
    assert lost == 0


def test_two_reviewers_marking_one_file_at_once_lose_no_mark(tmp_path):
    for iteration in range(CONCURRENT_ITERATIONS):
        path = tmp_path / f"gold{iteration}.yaml"
        path.write_text(LABELS)
        procs = [start(path, "ann", "q1", 40), start(path, "bob", "q1", 40), start(path, "cy", "q2", 40)]
        outputs = [p.communicate()[0] for p in procs]
        assert all(p.returncode == 0 for p in procs)
        reported = {tuple(line.split()[1:3]) for out in outputs for line in out.splitlines()}
        assert len(reported) == 120
        on_disk = judged(path)
        assert reported <= on_disk, f"lost: {sorted(reported - on_disk)[:5]}"
        assert {("q1", "seed-1"), ("q2", "seed-2"), ("q2", "seed-3")} <= on_disk
        grades = load_gold(path).judgments.filter(pl.col("chunk_id") == "seed-2")["grade"].to_list()
        assert grades == [3]
