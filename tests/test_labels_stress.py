"""Faults while reviewing: SIGKILL during a burst of marks, and two reviewers marking one file at once.

RAGDIFF_KILL_ITERATIONS and RAGDIFF_CONCURRENT_ITERATIONS set the rounds (tests/counts.py: quick for `make
test`, CI sets 4 and 2; more for a soak).
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import polars as pl
import pytest

from ragdiff.core.labels.gold import load_gold
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

# The child reports each save as ONE write() of a whole line. print("saved", q, c) is six writes when
# PYTHONUNBUFFERED is set (as it is in the team's shells): a SIGKILL between them left a torn line such as
# "saved q1", which the parent counted as a mark reported saved and missing from the file (a failure this
# test once had; reproduced on purpose in test_a_kill_on_any_write_...).
MARKER = textwrap.dedent("""\
    import os, sys
    from ragdiff.core.labels import LabelFile, Mark
    path, who, query, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    labels = LabelFile(path, reviewer=who)
    for i in range(count):
        chunk = f"{who}-{i:03d}"
        labels.apply(Mark(query, chunk, "gold" if i % 3 else "not_relevant", run="A", rank=i + 1))
        line = f"saved {query} {chunk}\\n".encode()
        assert os.write(1, line) == len(line)  # a pipe takes up to PIPE_BUF bytes in one piece
    """)


def judged(path):
    frame = load_gold(path).judgments
    return set(zip(frame["query_id"], frame["chunk_id"]))


def reported_saved(out):
    """The (query, chunk) pairs the child reported saved, one whole line "saved Q C\\n" each. The child writes
    a line in one write() (all or nothing under SIGKILL), so a torn or foreign line is a broken report and
    fails here, rather than being counted as a lost mark."""
    *lines, rest = out.split("\n")
    assert rest == "", f"the child's output ends in a torn line {rest!r}"
    reported = set()
    for n, line in enumerate(lines, 1):
        words = line.split(" ")
        assert len(words) == 3 and words[0] == "saved" and all(words), f"child's line {n} is not a report: {line!r}"
        reported.add((words[1], words[2]))
    return reported


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


def after_the_kill(path, out):
    """What a killed burst left: (marks reported saved, those of them missing from the file). The file must
    parse (load_gold raises otherwise), keep its comments, and hold every save the journal confirms."""
    reported = reported_saved(out)
    on_disk = judged(path)
    assert path.read_text().startswith("# stress test labels"), "comments lost"
    assert journal_saved(path) <= on_disk
    return reported, sorted(reported - on_disk)


def test_sigkill_during_a_burst_of_100_marks_loses_nothing_reported_saved(tmp_path):
    rng = random.Random(7)
    lost, saved = [], 0
    for iteration in range(KILL_ITERATIONS):
        path = tmp_path / f"gold{iteration}.yaml"
        path.write_text(LABELS)
        proc = start(path, "kill", "q1", 100)
        first = proc.stdout.readline()  # the burst has begun (whatever the machine's start-up time) …
        time.sleep(rng.uniform(0.0, 0.4))  # … and is killed somewhere inside it
        proc.send_signal(signal.SIGKILL)
        reported, missing = after_the_kill(path, first + proc.communicate()[0])
        lost += [(iteration, *pair) for pair in missing]
        saved += len(reported)
    print(f"kill test: {KILL_ITERATIONS} iterations, {saved} marks reported saved, {len(lost)} lost")
    assert saved > 0, "every burst was killed before its first mark: the test measured nothing"
    assert lost == [], f"reported saved, missing from the file (iteration, query, chunk): {lost}"


def _strace_works():
    strace = shutil.which("strace")
    if strace is None:
        return None
    probe = subprocess.run([strace, "-qq", "-o", os.devnull, "true"], capture_output=True)
    return strace if probe.returncode == 0 else None  # ptrace may be refused in a container


STRACE = _strace_works()


@pytest.mark.skipif(STRACE is None, reason="needs strace and ptrace for its fault injection")
def test_a_kill_on_any_write_of_the_first_marks_loses_nothing_reported_saved(tmp_path):
    """SIGKILL at the marker's Nth write() (strace's fault injection), for every N over its first three marks:
    before and after the journal's op line, the temp file, the saved line, and inside the report — the places
    the random kill above only hopes to hit. PYTHONUNBUFFERED=1, as in the team's shells: with print() it made
    a report six writes, and a kill between them a torn line counted as a lost mark."""
    # no bytecode writes: on a machine where ragdiff's .pyc are stale they would take the first kill points
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    lost, saved = [], 0
    for n in range(1, 14):  # a mark is 4 writes today (journal op, temp file, saved line, report): 3 marks
        path = tmp_path / f"gold{n}.yaml"
        path.write_text(LABELS)
        proc = subprocess.run([STRACE, "-qq", "-o", os.devnull, "-e", "trace=write",
                               "-e", f"inject=write:signal=SIGKILL:when={n}",
                               sys.executable, "-c", MARKER, str(path), "kill", "q1", "100"],
                              stdout=subprocess.PIPE, text=True, env=env, timeout=120)
        assert proc.returncode == -signal.SIGKILL, f"write {n}: the burst was not killed"
        reported, missing = after_the_kill(path, proc.stdout)
        lost += [(n, *pair) for pair in missing]
        saved += len(reported)
    assert saved > 0, "every burst was killed before its first mark: the test measured nothing"
    assert lost == [], f"reported saved, missing from the file (write killed at, query, chunk): {lost}"


def test_two_reviewers_marking_one_file_at_once_lose_no_mark(tmp_path):
    for iteration in range(CONCURRENT_ITERATIONS):
        path = tmp_path / f"gold{iteration}.yaml"
        path.write_text(LABELS)
        procs = [start(path, "ann", "q1", 40), start(path, "bob", "q1", 40), start(path, "cy", "q2", 40)]
        outputs = [p.communicate()[0] for p in procs]
        assert all(p.returncode == 0 for p in procs)
        reported = set().union(*map(reported_saved, outputs))
        assert len(reported) == 120
        on_disk = judged(path)
        assert reported <= on_disk, f"lost: {sorted(reported - on_disk)[:5]}"
        assert {("q1", "seed-1"), ("q2", "seed-2"), ("q2", "seed-3")} <= on_disk
        grades = load_gold(path).judgments.filter(pl.col("chunk_id") == "seed-2")["grade"].to_list()
        assert grades == [3]
