"""Quitting while the judging queue is built ends the process at once — the terminal restored, the label file
whole — rather than when the build is done (1-2 s at 10,000 queries): `ragdiff review` after its first J, and
`ragdiff judge` while it loads. The build's thread is not one that asyncio's executor shutdown or the
interpreter's exit waits for (judge.detached)."""

from __future__ import annotations

import os
import pty
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragdiff.core.gold import load_gold

from test_app_signals import read_until

LESSON = Path(__file__).parent / "data" / "lesson"

# ragdiff whose JudgeQueue.build says it started (a file) and then waits until the test lets it go (another
# file): the process is quitting while the build still runs, however slow the machine
HELD = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from ragdiff.core.pool import JudgeQueue
    real = JudgeQueue.build.__func__
    started, release = Path(sys.argv[1]), Path(sys.argv[2])
    def held(cls, *args, **kwargs):
        started.touch()
        while not release.exists():
            time.sleep(0.02)
        return real(cls, *args, **kwargs)
    JudgeQueue.build = classmethod(held)
    from ragdiff.cli.main import main
    sys.exit(main(sys.argv[3:], hard_exit=True))
""")


@pytest.mark.parametrize("command", ["review", "judge"])
def test_quitting_while_the_queue_is_built_ends_the_process_at_once(tmp_path, command):
    gold = tmp_path / "gold.yaml"
    shutil.copy(LESSON / "gold.yaml", gold)
    before = gold.read_bytes()
    script, started, release = tmp_path / "held.py", tmp_path / "started", tmp_path / "release"
    script.write_text(HELD)
    runs = [str(LESSON / "runs.json")] * (2 if command == "review" else 1)
    main_fd, child_fd = pty.openpty()
    os.set_blocking(main_fd, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "40"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, str(script), str(started), str(release), command, *runs,
                             "--gold", str(gold)],
                            stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, start_new_session=True)
    os.close(child_fd)
    try:
        screen = read_until(main_fd, b"refund window" if command == "review" else b"loading", 30)
        assert b"\x1b[?1049h" in screen, "the app never took the screen"
        if command == "review":
            os.write(main_fd, b"J")
        for _ in range(1500):  # up to 30 s on a loaded machine: the build has begun
            if started.exists():
                break
            read_until(main_fd, b"\0", 0.02)
        assert started.exists(), "the queue's build never started"
        os.write(main_fd, b"\x11")  # ctrl+q
        rest = read_until(main_fd, b"\x1b[?1049l", 20)
        try:
            code = proc.wait(timeout=20)  # the build is still held: the old code waited for it here, for ever
        except subprocess.TimeoutExpired:
            code = None
        assert not release.exists()
        assert code == 0, "the process waited for the judging queue's build"
    finally:
        release.touch()
        # a process that still does not end is killed with its session: on the old code one was left behind,
        # spinning a core for 88 minutes and skewing every measurement of a session
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(main_fd)
    assert b"\x1b[?1049l" in rest, "the alternate screen was not left: terminal not restored"
    assert gold.read_bytes() == before and load_gold(gold).queries.height == 3
