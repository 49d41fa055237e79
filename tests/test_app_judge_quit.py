"""Quitting while the judging queue is built ends the process at once — the terminal restored, the label file
whole — rather than when the build is done (1-2 s at 10,000 queries): `ragdiff review` after its first J, and
`ragdiff judge` while it loads. The build's thread is not one that asyncio's executor shutdown or the
interpreter's exit waits for (threads.detached)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from ragdiff.core.labels.gold import load_gold

from held_quit import quit_while_held

LESSON = Path(__file__).parent / "data" / "lesson"

# ragdiff whose JudgeQueue.build says it started (a file) and then waits until the test lets it go (another
# file): the process is quitting while the build still runs, however slow the machine
HELD = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from ragdiff.core.judge.pool import JudgeQueue
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
    runs = [str(LESSON / "runs.json")] * (2 if command == "review" else 1)
    code, rest = quit_while_held(tmp_path, HELD, [command, *runs, "--gold", str(gold)],
                                 ready=b"refund window" if command == "review" else b"loading",
                                 keys=b"J" if command == "review" else b"")
    assert code == 0, "the process waited for the judging queue's build"
    assert b"\x1b[?1049l" in rest, "the alternate screen was not left: terminal not restored"
    assert gold.read_bytes() == before and load_gold(gold).queries.height == 3
