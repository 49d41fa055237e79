"""Quitting the review while its own first load runs ends the process at once — the terminal restored, the label
file whole — rather than when the load is done (~1 s at 10,000 queries; for ever on a file that does not end).
Two places waited: the three files were read on a ThreadPoolExecutor's threads, which the interpreter's exit
joins, and the model was built on the Textual worker's own thread, which asyncio.run's executor shutdown joins.
Both now run on daemon threads (threads.side_by_side, threads.detached). Here the load is held where each of them
was (a read, the model), by a file the test never writes until the process has ended or failed to."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from ragdiff.core.labels.gold import load_gold

from held_quit import quit_while_held

LESSON = Path(__file__).parent / "data" / "lesson"

# ragdiff whose load says it has started holding (a file) and then waits until the test lets it go (another
# file): the quit comes while the load still runs, however slow the machine
HELD = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    started, release, where = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    def hold():
        started.touch()
        while not release.exists():
            time.sleep(0.02)

    if where == "read":
        import ragdiff.core.io.runs as runs
        real_run = runs.load_run
        def load_run(*args, **kwargs):
            hold()
            return real_run(*args, **kwargs)
        runs.load_run = load_run
    else:
        import ragdiff.app.loading as app
        class Held(app.ReviewModel):
            def __init__(self, *args, **kwargs):
                hold()
                super().__init__(*args, **kwargs)
        app.ReviewModel = Held
    from ragdiff.cli.main import main
    sys.exit(main(sys.argv[4:], hard_exit=True))
""")


@pytest.mark.parametrize("where", ["read", "model"])
@pytest.mark.parametrize("quit_key", [b"\x11", b"q"], ids=["ctrl+q", "q"])
def test_quitting_while_the_review_loads_ends_the_process_at_once(tmp_path, where, quit_key):
    gold = tmp_path / "gold.yaml"
    shutil.copy(LESSON / "gold.yaml", gold)
    before = gold.read_bytes()
    code, rest = quit_while_held(tmp_path, HELD, [where, "review", str(LESSON / "runs.json"),
                                                  str(LESSON / "runs.json"), "--gold", str(gold)],
                                 ready=b"loading", quit_key=quit_key)
    assert code == 0, "the process waited for the review's load"
    assert b"\x1b[?1049l" in rest, "the alternate screen was not left: terminal not restored"
    assert gold.read_bytes() == before and load_gold(gold).queries.height == 3
