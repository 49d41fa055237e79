"""The file side of a mark: one lock per folder, temp file + fsync + rename, and the line patches undo uses."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ragdiff.core.journal import _fsync_dir
from ragdiff.core.labels.edits import _lines
from ragdiff.core.labels.errors import LabelWriteError

TEMP_SUFFIX = ".ragdiff-tmp"


def _patch(old: str, new: str, context: int = 2) -> dict:
    a, b = _lines(old), _lines(new)
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    s = 0
    while s < len(a) - p and s < len(b) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    return {
        "at": p,
        "before": a[max(0, p - context) : p],
        "old": a[p : len(a) - s],
        "new": b[p : len(b) - s],
        "after": a[len(a) - s : len(a) - s + context],
    }


def _unpatch(text: str, patch: dict) -> str | None:
    """Turn the patch's `new` side back into its `old` side, if it can be found exactly once (preferring
    the recorded place). The context lines are tried whole, then one side at a time (another reviewer may
    have changed a neighbouring line since); the caller verifies whatever comes back."""
    cur = _lines(text)
    at = patch["at"]
    for before, after in ((patch["before"], patch["after"]), ([], patch["after"]), (patch["before"], []), ([], [])):
        if not (before or after or patch["new"]):
            continue  # a pure deletion without context has nowhere to go back to
        block = before + patch["new"] + after
        preferred = at - len(before)
        n = len(block)
        hits = [i for i in range(0, len(cur) - n + 1) if cur[i : i + n] == block]
        if preferred in hits:
            i = preferred
        elif len(hits) == 1:
            i = hits[0]
        else:
            continue
        return "".join(cur[:i] + before + patch["old"] + after + cur[i + n :])
    return None


@contextmanager
def file_lock(path: Path):
    """An exclusive advisory lock held for one read-edit-rename of the label file.

    It is taken on the label file's folder: a lock on the file itself would stay on the old inode after the
    rename, and a lock file would be left in the user's folder (an empty journal, before, after a mark that
    was refused). Two label files in one folder take turns, which costs a few milliseconds.
    """
    folder = path.parent
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as err:
        if not folder.is_dir():
            raise LabelWriteError(f"cannot save {path}: its folder {folder} is gone ({err.strerror})") from None
        raise LabelWriteError(f"cannot save {path}: cannot lock its folder ({err.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def stat_key(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def atomic_write(path: Path, data: bytes, expected_stat: tuple):
    """Temp file in the same folder, fsync, rename over the label file, fsync the folder.

    Returns the new stat key, or None when the file changed on disk since `expected_stat` (nothing written).
    """
    folder = path.parent
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not folder.is_dir():
            raise LabelWriteError(f"cannot save {path}: its folder {folder} is gone") from None
        raise LabelWriteError(f"cannot save {path}: the file is gone") from None
    if not (st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(path, os.W_OK):
        raise LabelWriteError(f"cannot save {path}: the file is read-only ({os.strerror(errno.EACCES)})")
    fd = -1
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, stat.S_IMODE(st.st_mode))  # mkstemp makes 0600: keep the file's own mode
        os.close(fd)
        fd = -1
        if stat_key(os.stat(path)) != expected_stat:
            os.unlink(tmp)
            return None
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        reason = err.strerror or str(err)
        raise LabelWriteError(f"cannot save {path}: {reason} (errno {err.errno}); the file was not changed") from None
    finally:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _fsync_dir(folder)
    return stat_key(os.stat(path))


def clean_stray_temps(path: Path) -> list[Path]:
    """Temp files left by a writer that died before its rename. They are never the label file; those of
    a process that no longer runs are removed, the others are listed."""
    left = []
    for p in path.parent.glob(f".{path.name}.*{TEMP_SUFFIX}"):
        m = re.match(rf"\.{re.escape(path.name)}\.(\d+)\.", p.name)
        alive = False
        if m:
            pid = int(m.group(1))
            if pid == os.getpid():
                alive = True
            else:
                try:
                    os.kill(pid, 0)
                    alive = True
                except ProcessLookupError:
                    alive = False
                except PermissionError:
                    alive = True
        if not alive:
            try:
                p.unlink()
                continue
            except OSError:
                pass
        left.append(p)
    return left
