"""SIGTERM, SIGHUP and SIGINT during a review leave the terminal restored and the files whole."""

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragdiff.core.labels.gold import load_gold

LESSON = Path(__file__).parent / "data" / "lesson"


def read_until(fd, needle: bytes, timeout: float) -> bytes:
    out = b""
    end = time.time() + timeout
    while time.time() < end and needle not in out:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_restores_the_terminal(tmp_path, signum):
    gold = tmp_path / "gold.yaml"
    shutil.copy(LESSON / "gold.yaml", gold)
    before = gold.read_bytes()
    main_fd, child_fd = pty.openpty()
    os.set_blocking(main_fd, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "40"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "ragdiff", "review", str(LESSON / "runs.json"),
                             str(LESSON / "runs.json"), "--gold", str(gold)],
                            stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, start_new_session=True)
    os.close(child_fd)
    try:
        screen = read_until(main_fd, b"refund window", 20)
        assert b"\x1b[?1049h" in screen, "the app never took the screen"
        proc.send_signal(signum)
        # keep reading while it leaves: a full pty buffer would block its last writes
        rest = read_until(main_fd, b"\x1b[?1049l", 10)
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main_fd)
    assert code == 128 + signum
    assert b"\x1b[?1049l" in rest, "the alternate screen was not left: terminal not restored"
    assert gold.read_bytes() == before and load_gold(gold).queries.height == 3
