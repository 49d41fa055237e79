"""The group commit (`LabelFile.apply_many` + `flush`): a batch of marks writes the same bytes as the same marks one
after another, is journaled with one append, is undone mark by mark back to the original bytes, and survives a
crash at any point of it: the journal's torn last line is dropped, the decisions journaled and not yet in the file
are written on the next open, a batch already in the file is not written twice."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.journal import Journal, journal_path
from ragdiff.core.labels import LabelFile, Mark

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "gold.yaml"
LESSON = ROOT / "tests" / "data" / "lesson" / "gold.yaml"


def flood(path: Path, n: int, seed: int, labels=("gold", "gold", "evidence", "not_relevant", "none")) -> list[Mark]:
    """Seeded marks: half on a few queries (many rounds of one query), half anywhere; known chunks and new ones,
    every label, grades, and marks that change nothing."""
    file = LabelFile(path, reviewer="planner")
    rng = random.Random(seed)
    queries = file.queries
    chunks = {q: list(file._snap.doc.state_of(q)) + [f"new-{i}" for i in range(4)] for q in queries}
    marks = []
    for i in range(n):
        q = rng.choice(queries[:4]) if i % 2 else rng.choice(queries)
        label = rng.choice(labels)
        marks.append(Mark(q, rng.choice(chunks[q]), label, rng.choice([None, 2, 3]) if label == "gold" else None))
    return marks


def two_copies(tmp_path: Path, source: Path) -> tuple[Path, Path]:
    out = []
    for name in ("one-by-one", "batched"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copyfile(source, folder / source.name)
        out.append(folder / source.name)
    return out[0], out[1]


def journal(path: Path) -> list[dict]:
    return [json.loads(line) for line in journal_path(path).read_text().splitlines()]


@pytest.mark.parametrize("source, seed", [(SAMPLE, 1), (SAMPLE, 2), (LESSON, 3)])
def test_a_batch_writes_what_one_mark_after_another_writes(tmp_path, source, seed):
    single, batched = two_copies(tmp_path, source)
    marks = flood(single, 150, seed)
    one = LabelFile(single, reviewer="r")
    expected = []
    for mark in marks:
        try:
            expected.append(one.apply(mark).after)
        except Exception as err:  # noqa: BLE001 - the short form cannot say evidence: refused the same way
            expected.append(type(err))
    many = LabelFile(batched, reviewer="r")
    results = []
    for start in range(0, len(marks), 40):  # batches of 40: rounds of several chunks of one query
        results += many.apply_many(marks[start:start + 40])
    assert many.unwritten > 0 and batched.read_bytes() == source.read_bytes()  # journaled, not yet written
    many.flush()
    assert [type(r) if isinstance(r, Exception) else r.after for r in results] == expected
    assert batched.read_bytes() == single.read_bytes()
    marked = [r for r in journal(batched) if r["type"] == "mark"]
    assert [(r["query"], r["chunk"], r["label"]) for r in marked] == \
        [(m.query_id, m.chunk_id, m.label) for m, r in zip(marks, results) if not isinstance(r, Exception)]


def test_a_batch_is_undone_mark_by_mark_to_the_original_bytes(tmp_path):
    gold = tmp_path / "gold.yaml"
    shutil.copyfile(SAMPLE, gold)
    file = LabelFile(gold, reviewer="r")
    results = file.apply_many(flood(gold, 120, 5, labels=("gold", "evidence", "not_relevant")))
    file.flush()
    changed = sum(r.saved for r in results)
    assert changed > 60
    for _ in range(changed):
        assert file.undo() is not None
    assert file.undo() is None
    assert gold.read_bytes() == SAMPLE.read_bytes()


def test_one_append_and_one_fsync_a_batch(tmp_path, monkeypatch):
    gold = tmp_path / "gold.yaml"
    shutil.copyfile(SAMPLE, gold)
    file = LabelFile(gold, reviewer="r")
    file.apply(Mark(file.queries[0], "first", "gold"))  # the journal exists (its creation fsyncs the folder too)
    calls = {"append": 0, "fsync": 0}
    real_append, real_fsync = Journal.append_many, os.fsync

    def append(self, records):
        calls["append"] += 1
        return real_append(self, records)

    def fsync(fd):
        calls["fsync"] += 1
        return real_fsync(fd)

    monkeypatch.setattr(Journal, "append_many", append)
    monkeypatch.setattr(os, "fsync", fsync)
    marks = flood(gold, 200, 7, labels=("gold", "not_relevant"))
    file.apply_many(marks)
    assert calls == {"append": 1, "fsync": 1}
    file.flush()  # the label file once (its temp file and its folder), then the "saved" lines in one append
    assert calls == {"append": 2, "fsync": 4}
    records = journal(gold)
    assert sum(r["type"] == "saved" for r in records) == sum(r["type"] == "mark" and not r.get("noop") for r in records)


# ---- crashes ---------------------------------------------------------------------------------------------------

CRASH = textwrap.dedent("""
    import os, signal, sys
    from ragdiff.core.labels import LabelFile, Mark
    from ragdiff.core.labels import atomic
    path, when = sys.argv[1], sys.argv[2]
    file = LabelFile(path, reviewer="crash")
    marks = [Mark(q, f"crash-{i}", "gold" if i % 2 else "not_relevant") for i, q in enumerate(file.queries * 3)]
    real = os.replace
    def die(src, dst):
        if when == "after-rename":
            real(src, dst)
        os.kill(os.getpid(), signal.SIGKILL)
    os.replace = die
    file.apply_many(marks)
    if when == "journaled":
        os.kill(os.getpid(), signal.SIGKILL)
    file.flush()
""")


def crash(gold: Path, when: str) -> list[tuple[str, str]]:
    """The batch's (query, chunk) pairs, after a process that applied it was killed `when`."""
    proc = subprocess.run([sys.executable, "-c", CRASH, str(gold), when], capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -9, proc.stderr.decode()
    queries = LabelFile(gold, reviewer="someone else").queries
    return [(q, f"crash-{i}") for i, q in enumerate(queries * 3)]


def judged(gold: Path) -> set[tuple[str, str]]:
    frame = load_gold(gold).judgments
    return set(zip(frame["query_id"].to_list(), frame["chunk_id"].to_list()))


@pytest.mark.parametrize("when", ["journaled", "before-rename", "after-rename"])
def test_a_batch_cut_short_is_whole_after_the_next_open(tmp_path, when):
    gold = tmp_path / "gold.yaml"
    shutil.copyfile(SAMPLE, gold)
    pairs = crash(gold, when)
    before = gold.read_bytes()
    assert (before == SAMPLE.read_bytes()) == (when != "after-rename")
    file = LabelFile(gold, reviewer="crash")
    assert set(pairs) <= judged(gold)
    if when == "after-rename":  # in the file already: only its confirmation was lost, nothing written again
        assert gold.read_bytes() == before
        assert file.recovery_notes == [f"{len(pairs)} decisions were saved to gold.yaml, but the program stopped "
                                       "before confirming them; the file has them"]
    else:
        assert file.recovery_notes == [f"{len(pairs)} decisions made before ragdiff stopped were in its journal but "
                                       "not yet in gold.yaml: written now"]
    # what the open found is written down with the next journal line (opening alone writes nothing to it)
    file.apply(Mark(file.queries[0], "next", "gold"))
    assert LabelFile(gold, reviewer="crash").recovery_notes == []
    saved = [r for r in journal(gold) if r["type"] == "saved" and r["id"] != journal(gold)[-2]["id"]]
    assert len(saved) == len(pairs) and all(r.get("recovered") for r in saved)


def test_a_torn_journal_tail_is_dropped_and_the_file_still_loads(tmp_path):
    """A crash inside the batch's one write: its last line is cut short. That decision was never durable (the
    fsync had not returned, nothing counted it): it is dropped, never misread; the whole lines before it are
    written on the next open, and the journal takes new lines cleanly after it."""
    gold = tmp_path / "gold.yaml"
    shutil.copyfile(SAMPLE, gold)
    file = LabelFile(gold, reviewer="r")
    queries = file.queries
    marks = [Mark(q, f"torn-{i}", "gold") for i, q in enumerate(queries[:5])]
    file.apply_many(marks)
    raw = journal_path(gold).read_bytes()
    lines = raw.split(b"\n")
    assert len(lines) == 6 and lines[-1] == b""
    # the last record cut at every place a crash could cut it: a prefix without its line break
    last = lines[-2]
    for cut in (1, len(last) // 2, len(last) - 1, len(last)):
        shutil.copyfile(SAMPLE, gold)
        journal_path(gold).write_bytes(b"\n".join(lines[:-2]) + b"\n" + last[:cut])
        reopened = LabelFile(gold, reviewer="r")
        assert reopened.recovery_notes == ["4 decisions made before ragdiff stopped were in its journal but not yet "
                                           "in gold.yaml: written now"], cut
        written = judged(gold)
        assert {(m.query_id, m.chunk_id) for m in marks[:4]} <= written
        assert (marks[4].query_id, marks[4].chunk_id) not in written
        reopened.apply(Mark(queries[0], "after", "gold"))
        assert ("after" in {c for _q, c in judged(gold)})
        records = Journal(journal_path(gold)).read()
        assert [r["chunk"] for r in records if r["type"] == "mark"] == [m.chunk_id for m in marks[:4]] + ["after"]


def test_a_file_changed_by_someone_else_while_decisions_wait_keeps_both_and_names_the_conflict(tmp_path):
    """Decisions journaled, not yet written; meanwhile someone else edits the file (a new chunk on one query, and
    this very chunk of another). The flush puts the waiting decisions on their version, names the one chunk they
    set otherwise (query and chunk), keeps it unsaved for retry — which then writes it over theirs."""
    gold = tmp_path / "gold.yaml"
    shutil.copyfile(SAMPLE, gold)
    file = LabelFile(gold, reviewer="r")
    first, second, third = file.queries[:3]
    mine = [Mark(first, "mine-1", "gold"), Mark(second, "both", "gold"), Mark(third, "mine-3", "evidence")]
    file.apply_many(mine)
    theirs = LabelFile(gold, reviewer="someone else")  # a second writer: the file on disk as it is
    theirs.apply(Mark(first, "theirs-1", "gold"))
    theirs.apply(Mark(second, "both", "not_relevant"))
    with pytest.raises(Exception) as raised:
        file.flush()
    assert type(raised.value).__name__ == "LabelConflictError"
    assert f"both for {second}" in str(raised.value) and "r writes it over theirs" in str(raised.value)
    written = load_gold(gold).judgments
    levels = {(q, c): lv for q, c, lv in written.select("query_id", "chunk_id", "level").iter_rows()}
    assert levels[(first, "theirs-1")] == "gold" and levels[(first, "mine-1")] == "gold"  # both sides kept
    assert levels[(third, "mine-3")] == "evidence"
    assert levels[(second, "both")] == "not_relevant"  # theirs, until the reviewer chooses
    assert file.pending == [mine[1]] and file.unwritten == 0
    file.retry()  # the reviewer chooses theirs to be overwritten
    assert dict(((q, c), lv) for q, c, lv in load_gold(gold).judgments.select(
        "query_id", "chunk_id", "level").iter_rows())[(second, "both")] == "gold"
    assert file.pending == []
