"""A mark never corrupts or loses a label file: crashes, failed writes, and edits behind the writer's back."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragdiff.core.labels.journal import journal_path
from ragdiff.core.labels.spans import compose_yaml as _compose_yaml
from ragdiff.core.labels import (
    TEMP_SUFFIX,
    LabelConflictError,
    LabelFile,
    LabelWriteError,
    Mark,
)

DATA = Path(__file__).parent / "data" / "labels"
ROOT = Path(__file__).resolve().parent.parent
MARK = Mark("q01", "policy-22", "gold", run="dense", rank=3)


@pytest.fixture
def gold(tmp_path) -> Path:
    path = tmp_path / "gold.yaml"
    shutil.copy(DATA / "gold.yaml", path)
    return path


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{TEMP_SUFFIX}"))


def journal(path: Path) -> list[dict]:
    jp = journal_path(path)
    return [json.loads(x) for x in jp.read_text().splitlines()] if jp.exists() else []


def assert_untouched(path: Path, before: bytes) -> None:
    assert path.read_bytes() == before
    assert _compose_yaml(path.read_text()) is not None
    assert temps(path.parent) == []


# ------------------------------------------------------------------------- edits behind the writer's back


def test_external_edit_elsewhere_is_kept(gold):
    lf = LabelFile(gold)
    gold.write_text(gold.read_text().replace("owner: ana", "owner: bo   # changed by a teammate"))
    lf.apply(MARK)
    text = gold.read_text()
    assert "owner: bo   # changed by a teammate" in text
    assert "gold: [policy-14, policy-22]" in text
    assert LabelFile(gold).current_label("q01", "policy-22") == ("gold", 1)


def test_external_edit_in_the_same_entry_is_kept(gold):
    lf = LabelFile(gold)
    gold.write_text(gold.read_text().replace("evidence: [policy-2]", "evidence: [policy-2, policy-3]"))
    lf.apply(MARK)
    assert "evidence: [policy-2, policy-3]" in gold.read_text()
    assert "gold: [policy-14, policy-22]" in gold.read_text()


def test_external_edit_of_the_same_chunk_is_a_conflict(gold):
    lf = LabelFile(gold)
    gold.write_text(gold.read_text().replace("not_relevant: [policy-9]", "not_relevant: [policy-9, policy-22]"))
    theirs = gold.read_bytes()
    with pytest.raises(LabelConflictError, match="someone else set policy-22"):
        lf.apply(MARK)
    assert gold.read_bytes() == theirs
    # the writer now knows their version: marking again is a deliberate override of what it shows
    assert lf.current_label("q01", "policy-22") == ("not_relevant", 0)
    lf.apply(MARK)
    assert LabelFile(gold).current_label("q01", "policy-22") == ("gold", 1)


def test_external_edit_that_breaks_the_file_is_a_conflict(gold):
    lf = LabelFile(gold)
    gold.write_text(gold.read_text() + "  - [unclosed\n")
    theirs = gold.read_bytes()
    with pytest.raises(LabelConflictError, match="no longer reads"):
        lf.apply(MARK)
    assert gold.read_bytes() == theirs


def test_query_removed_behind_our_back_is_a_conflict(gold):
    lf = LabelFile(gold)
    gold.write_text(gold.read_text().replace("id: q01 ", "id: q01-renamed "))
    with pytest.raises(LabelConflictError, match="no longer has query 'q01'"):
        lf.apply(MARK)


# ---------------------------------------------------------------------------------------- failed writes


def test_rename_fails(gold, monkeypatch):
    before = gold.read_bytes()
    lf = LabelFile(gold)

    def boom(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(LabelWriteError, match=r"gold\.yaml.*Input/output error"):
        lf.apply(MARK)
    assert_untouched(gold, before)
    assert [r["type"] for r in journal(gold)] == ["mark", "failed"]
    assert lf.pending == [MARK]
    monkeypatch.undo()
    # a restart sees the failed mark too
    assert LabelFile(gold).pending == [MARK]
    assert [c.message for c in lf.retry()] == ["policy-22 → gold for q01, saved to gold.yaml"]
    assert lf.pending == []
    assert LabelFile(gold).pending == []
    assert LabelFile(gold).current_label("q01", "policy-22") == ("gold", 1)
    lf.undo()
    assert gold.read_bytes() == before


def test_read_only_file(gold):
    before = gold.read_bytes()
    gold.chmod(0o444)
    lf = LabelFile(gold)
    with pytest.raises(LabelWriteError, match=r"gold\.yaml: the file is read-only"):
        lf.apply(MARK)
    assert_untouched(gold, before)
    assert lf.pending == [MARK]
    gold.chmod(0o640)
    lf.retry()
    assert "policy-22" in gold.read_text()
    assert gold.stat().st_mode & 0o777 == 0o640  # the file keeps its mode through the rename


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder(gold):
    before = gold.read_bytes()
    lf = LabelFile(gold)
    gold.parent.chmod(0o555)
    try:
        with pytest.raises(LabelWriteError, match="Permission denied"):
            lf.apply(MARK)
    finally:
        gold.parent.chmod(0o755)
    assert_untouched(gold, before)


def test_read_only_folder_simulated(gold, monkeypatch):
    before = gold.read_bytes()
    lf = LabelFile(gold)
    import tempfile

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(gold.parent))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(LabelWriteError, match=r"gold\.yaml: Permission denied"):
        lf.apply(MARK)
    assert_untouched(gold, before)
    assert lf.pending == [MARK]


def test_folder_gone(gold, tmp_path):
    lf = LabelFile(gold)
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    tmp_path.rename(moved)
    try:
        with pytest.raises(LabelWriteError, match=r"gold\.yaml: its folder .* is gone"):
            lf.apply(MARK)
        assert lf.pending == [MARK]
        assert not tmp_path.exists()
    finally:
        moved.rename(tmp_path)
    assert gold.read_bytes() == (DATA / "gold.yaml").read_bytes()


def test_disk_full_everywhere(gold, monkeypatch):
    before = gold.read_bytes()
    lf = LabelFile(gold)

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(LabelWriteError, match="No space left on device") as info:
        lf.apply(MARK)
    assert "gold.yaml" in str(info.value)
    monkeypatch.undo()
    assert_untouched(gold, before)
    assert lf.pending == [MARK]  # kept in memory: the journal could not be written either
    lf.retry()
    assert LabelFile(gold).current_label("q01", "policy-22") == ("gold", 1)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell the temp file apart")
def test_disk_full_on_the_temp_file_only(gold, monkeypatch):
    before = gold.read_bytes()
    lf = LabelFile(gold)
    real_write = os.write

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(TEMP_SUFFIX):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(LabelWriteError, match=r"cannot save .*gold\.yaml: No space left on device"):
        lf.apply(MARK)
    monkeypatch.undo()
    assert_untouched(gold, before)
    recs = journal(gold)
    assert [r["type"] for r in recs] == ["mark", "failed"]
    assert "No space left" in recs[1]["error"]
    fresh = LabelFile(gold)
    assert fresh.pending == [MARK]
    assert any("could not be saved" in n for n in fresh.recovery_notes)
    fresh.retry()
    assert LabelFile(gold).pending == []
    assert "gold: [policy-14, policy-22]" in gold.read_text()


def test_nothing_is_journaled_when_the_mark_cannot_be_written_cleanly(gold):
    from ragdiff.core.labels import LabelFormatError

    lf = LabelFile(gold)
    with pytest.raises(LabelFormatError):
        lf.apply(Mark("q01", "x", "gold", grade=0))
    assert journal(gold) == []


def test_a_torn_journal_line_is_skipped(gold):
    LabelFile(gold).apply(MARK)
    with open(journal_path(gold), "ab") as fh:
        fh.write(b'{"v": 1, "type": "mark", "id": "torn", "que')  # a crash mid-append
    lf = LabelFile(gold)
    assert lf.pending == [] and lf.recovery_notes == []
    lf.apply(Mark("q01", "policy-23", "gold"))
    lines = journal_path(gold).read_text().splitlines()
    assert not any('"torn"' in line for line in lines)  # a write that never finished: cut off, never a record
    assert [json.loads(x)["type"] for x in lines[2:]] == ["mark", "saved"]  # new lines start clean
    lf.undo()
    lf.undo()
    assert gold.read_bytes() == (DATA / "gold.yaml").read_bytes()


# ------------------------------------------------------------------------------ the process is killed

CRASH = textwrap.dedent(
    """
    import os, signal, sys
    from ragdiff.core.labels import LabelFile, Mark
    lf = LabelFile(sys.argv[1], reviewer="crash")
    real = os.replace
    def die(src, dst):
        if sys.argv[2] == "after":
            real(src, dst)
        os.kill(os.getpid(), signal.SIGKILL)
    os.replace = die
    lf.apply(Mark("q01", "policy-22", "gold", run="dense", rank=3))
    """
)


def crash(path: Path, when: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", CRASH, str(path), when], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()


def test_killed_before_the_rename(gold):
    """The mark was journaled (durable) and the program died before the rename: the same reviewer's next open
    writes it (the journal is the record of what the screen counted), another reviewer's leaves it to them."""
    before = gold.read_bytes()
    crash(gold, "before")
    # the label file is whole and old; the dead writer's temp file is there but is not the label file
    assert gold.read_bytes() == before
    assert _compose_yaml(gold.read_text()) is not None
    assert len(temps(gold.parent)) == 1
    assert [r["type"] for r in journal(gold)] == ["mark"]  # journaled, never confirmed
    other = LabelFile(gold, reviewer="someone else")
    assert temps(gold.parent) == []  # the dead process's temp file is cleaned away
    assert other.current_label("q01", "policy-22") == ("none", None) and gold.read_bytes() == before
    assert other.pending == [MARK] and "r writes it" in other.recovery_notes[0]
    lf = LabelFile(gold, reviewer="crash")
    assert lf.current_label("q01", "policy-22") == ("gold", 1)
    assert "gold: [policy-14, policy-22]" in gold.read_text()
    assert lf.pending == []
    assert lf.recovery_notes == ["1 decision made before ragdiff stopped was in its journal but not yet in gold.yaml: "
                                 "written now"]
    assert [(r["type"], r.get("recovered")) for r in journal(gold)] == [("mark", None), ("saved", True)]
    assert LabelFile(gold, reviewer="crash").recovery_notes == []
    assert lf.undo() is not None
    assert gold.read_bytes() == before


def test_killed_after_the_rename_before_the_confirmation(gold):
    before = gold.read_bytes()
    crash(gold, "after")
    assert "gold: [policy-14, policy-22]" in gold.read_text()
    assert [r["type"] for r in journal(gold)] == ["mark"]
    lf = LabelFile(gold, reviewer="crash")  # the same reviewer restarts: their own mark is theirs to undo
    assert lf.pending == []
    assert lf.current_label("q01", "policy-22") == ("gold", 1)
    assert len(lf.recovery_notes) == 1 and "was saved to gold.yaml" in lf.recovery_notes[0]
    # the recovered mark is undoable, and the recovery is written down with the next journal line
    assert lf.undo().message.startswith("undid: policy-22: label removed")
    assert gold.read_bytes() == before
    types = [r["type"] for r in journal(gold)]
    assert types == ["mark", "saved", "undo", "saved"]
    assert journal(gold)[1].get("recovered") is True
    assert LabelFile(gold).recovery_notes == []
