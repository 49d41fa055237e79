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

from ragdiff.core.labels.journal import fsync_dir
from ragdiff.core.labels.edits import text_lines
from ragdiff.core.labels.errors import LabelWriteError

TEMP_SUFFIX = ".ragdiff-tmp"


_BLOCK = 1 << 15


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the common prefix of a and b (at most limit), comparing 32 KiB slices first."""
    i = 0
    while i < limit and a[i : min(i + _BLOCK, limit)] == b[i : min(i + _BLOCK, limit)]:
        i += _BLOCK
    if i >= limit:
        return limit
    lo, hi = i, min(i + _BLOCK, limit)  # the first difference is in [lo, hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[i:mid + 1] == b[i:mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def changed_lines(old: str, new: str) -> tuple[int, int, int]:
    """(start, end_old, end_new): the smallest run of whole lines that differs, old[start:end_old] against
    new[start:end_new]. old[:start] == new[:start] and ends a line (or is empty); old[end_old:] ==
    new[end_new:] and starts a line in both texts (or is empty). Found on the characters, 32 KiB at a time."""
    limit = min(len(old), len(new))
    p = _common_prefix(old, new, limit)
    s = _common_prefix(old[::-1], new[::-1], limit - p) if limit - p else 0
    start = old.rfind("\n", 0, p) + 1  # the first differing line starts here, in both texts
    ea, eb = len(old) - s, len(new) - s  # the common tail starts here
    while (ea > start and old[ea - 1] != "\n") or (eb > start and new[eb - 1] != "\n"):
        if ea >= len(old):
            break
        nl = old.find("\n", ea)
        step = (nl + 1 if nl >= 0 else len(old)) - ea
        ea, eb = ea + step, eb + step  # to the next line start in both (the tail is the same text in both)
    return start, ea, eb


def line_patch(old: str, new: str, context: int = 2) -> dict:
    """The lines that differ between old and new, with `context` lines either side: what undo puts back.

    Found on the characters (a 32 KiB slice at a time), not by splitting both texts into lines: a mark
    in a 2 MB label file costs a millisecond here, not 80."""
    start, ea, eb = changed_lines(old, new)
    head = start
    for _ in range(context):
        if head == 0:
            break
        head = old.rfind("\n", 0, head - 1) + 1
    tail = ea
    for _ in range(context):
        if tail >= len(old):
            break
        nl = old.find("\n", tail)
        tail = nl + 1 if nl >= 0 else len(old)
    return {
        "at": old.count("\n", 0, start),
        "before": text_lines(old[head:start]),
        "old": text_lines(old[start:ea]),
        "new": text_lines(new[start:eb]),
        "after": text_lines(old[ea:tail]),
    }


def _line_hits(text: str, block: str, limit: int = 64) -> list[tuple[int, int]]:
    """(char offset, line number) of each place `block` (whole lines) stands in text as whole lines."""
    hits = []
    pos, line, counted = text.find(block), 0, 0
    while pos >= 0 and len(hits) < limit:
        end = pos + len(block)
        if (pos == 0 or text[pos - 1] == "\n") and (block.endswith("\n") or end == len(text)):
            line += text.count("\n", counted, pos)
            counted = pos
            hits.append((pos, line))
        pos = text.find(block, pos + 1)
    return hits


def line_unpatch(text: str, patch: dict) -> str | None:
    """Turn the patch's `new` side back into its `old` side, if it can be found exactly once (preferring
    the recorded place). The context lines are tried whole, then one side at a time (another reviewer may
    have changed a neighbouring line since); the caller verifies whatever comes back."""
    at = patch["at"]
    new = "".join(patch["new"])
    for before, after in ((patch["before"], patch["after"]), ([], patch["after"]), (patch["before"], []), ([], [])):
        head, tail = "".join(before), "".join(after)
        if not (head or tail or new):
            continue  # a pure deletion without context has nowhere to go back to
        hits = _line_hits(text, head + new + tail)
        preferred = [pos for pos, line in hits if line == at - len(before)]
        if preferred:
            pos = preferred[0]
        elif len(hits) == 1:
            pos = hits[0][0]
        else:
            continue
        return text[:pos] + head + "".join(patch["old"]) + tail + text[pos + len(head) + len(new) + len(tail):]
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
    fsync_dir(folder)
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
