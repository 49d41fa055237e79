"""A ragdiff process in a pseudo-terminal whose work is held (by a script that waits for a file) while the test
quits it: did it end at once? Used by the quit tests of the review's load and of the judging queue's build."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from test_app_signals import read_until

COLUMNS, LINES = 140, 40


def quit_while_held(folder: Path, script: str, args: list[str], ready: bytes, keys: bytes = b"",
                    quit_key: bytes = b"\x11") -> tuple[int | None, bytes]:
    """Run `script` (argv: the started file, the release file, then `args`) at 140x40; once the screen shows
    `ready`, type `keys`; once the script says its hold has started, type `quit_key`. (exit code, or None when
    the process had not ended 20 s after the quit; what it wrote meanwhile). The hold is released, and a process
    that still runs killed with its session, before this returns: none is left behind."""
    path, started, release = folder / "held.py", folder / "started", folder / "release"
    path.write_text(script)
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    os.set_blocking(main_fd, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(LINES)}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, str(path), str(started), str(release), *args],
                            stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, start_new_session=True)
    os.close(child_fd)
    try:
        screen = read_until(main_fd, ready, 30)
        assert b"\x1b[?1049h" in screen, f"the app never took the screen: {screen[-2000:]!r}"
        if keys:
            os.write(main_fd, keys)
        deadline = time.monotonic() + 30  # a loaded machine: the work has reached the hold
        while not started.exists() and time.monotonic() < deadline:
            read_until(main_fd, b"\0", 0.02)
        assert started.exists(), "the work never reached the hold"
        os.write(main_fd, quit_key)
        rest = read_until(main_fd, b"\x1b[?1049l", 20)
        try:
            code = proc.wait(timeout=20)  # the work is still held: the old code waited for it here, for ever
        except subprocess.TimeoutExpired:
            code = None
        return code, rest  # the hold is released only below, after the process ended or was given up on
    finally:
        release.touch()
        # a process that still does not end is killed with its session: on the old code of the judging queue's
        # test one was left behind, spinning a core for 88 minutes and skewing every benchmark run meanwhile
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(main_fd)
