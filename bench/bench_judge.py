"""How fast is the judging queue (J) on a big set? (a benchmark, not a test)

Generates bench_review's seeded 10,000-query pair (two TREC runs × 100 chunks, qrels), opens the review with
Pilot at 140×40 and measures inside the app's process, the app's own time (the action → the screen refreshed
after it, no Pilot):

- J opened three times at the query on screen (the first opening builds the queue; later ones reuse it): J
  pressed → the queue's screen refreshed, and the longest stall of the app's event loop meanwhile (a task
  asking to wake every 5 ms: how long the screen was frozen),
- ten decisions (`x`) in the queue, each given its time to be written before the next,
- twenty moves (`n`, the next chunk: the pool list and the chunk pane drawn again, nothing written),
- `JudgeQueue.progress()` called on its own (median of 20 calls) after them.

    .venv/bin/python bench/bench_judge.py [--queries 10000] [--tree /tmp/base]   # --tree: another checkout
    .venv/bin/python bench/bench_judge.py --pair bench/data/1000x1000   # run_a.trec, run_b.trec, qrels.txt there

`--tree` runs another checkout's ragdiff with this same bench (a before/after in the same rounds). Writes nothing
but what it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose ragdiff is measured (default: this one)")
    parser.add_argument("--pair", type=Path, default=None,
                        help="a folder with run_a.trec, run_b.trec and qrels.txt (e.g. bench/data/1000x1000) "
                             "instead of the generated set; no corpus")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    import ragdiff  # noqa: F401 - from --tree: every later ragdiff import resolves inside it

    sys.path.insert(1, str(Path(__file__).resolve().parent))
    from bench_review import TimedApp, generate  # noqa: E402 - the review bench's data and app

    if args.pair is not None:
        # the decisions are written to the label file: a copy of it, never the shared seeded pair's (a run of this
        # bench once wrote 57 marks into bench/data's qrels.txt and changed every 1M result after it)
        with tempfile.TemporaryDirectory(prefix="ragdiff-bench-judge-") as tmp:
            gold = Path(tmp) / "qrels.txt"
            shutil.copyfile(args.pair / "qrels.txt", gold)
            paths = {"a": args.pair / "run_a.trec", "b": args.pair / "run_b.trec", "gold": gold, "corpus": None}
            result = asyncio.run(measure(TimedApp, paths, args.depth))
        what = f"the pair in {args.pair} (depth {args.depth})"
    else:
        with tempfile.TemporaryDirectory(prefix="ragdiff-bench-judge-") as tmp:
            paths = generate(Path(tmp), args.queries, args.depth)
            result = asyncio.run(measure(TimedApp, paths, args.depth))
        what = f"{args.queries:,} queries × {args.depth} chunks per run, two runs, qrels"
    where = Path(ragdiff.__file__).resolve().parent.parent
    print(f"ragdiff judge bench: {what}; ragdiff of {where} · python {platform.python_version()}")
    print(f"pooled chunks: {result['pooled']:,}")
    print("J → the queue's screen refreshed: " + ", ".join(f"{ms:.0f}" for ms in result["judge_ms"])
          + " ms (the first opening, then two more); the event loop's longest stall meanwhile: "
          + ", ".join(f"{ms:.0f}" for ms in result["frozen_ms"]) + " ms")
    print(f"a decision x in the queue: median {statistics.median(result['decide_ms']):.1f} ms, "
          f"worst {max(result['decide_ms']):.1f} ms (n={len(result['decide_ms'])})")
    print(f"a move n in the queue: median {statistics.median(result['move_ms']):.1f} ms, "
          f"worst {max(result['move_ms']):.1f} ms (n={len(result['move_ms'])})")
    print(f"JudgeQueue.progress(): median {statistics.median(result['progress_ms']):.2f} ms (n=20)")
    return 0


async def measure(app_class, paths: dict[str, Path], depth: int) -> dict:
    from ragdiff.app.app import ReviewInputs
    from ragdiff.app.judge import JudgeScreen
    from ragdiff.core.metrics.specs import EvalSettings
    from textual.worker import WorkerState

    app = app_class(ReviewInputs(run_a=paths["a"], run_b=paths["b"], gold=paths["gold"],
                                 settings=EvalSettings(k=10, depth=depth), corpus=paths["corpus"],
                                 gold_format="qrels", run_format="trec", reviewer="bench"))
    out: dict = {}
    async with app.run_test(size=(140, 40)) as pilot:
        async def finished() -> None:
            """Every worker to its end (a p-value job replaced by a newer one ends cancelled)."""
            while running := [w for w in app.workers if w.state == WorkerState.RUNNING]:
                await asyncio.gather(*(w.wait() for w in running), return_exceptions=True)

        started = time.perf_counter()
        while app.first_screen_at is None:
            if not app.is_running or time.perf_counter() - started > 300:
                raise SystemExit(f"the review screen did not open: {app.failure or 'timeout'}")
            await asyncio.sleep(0.005)
        await finished()
        await pilot.pause()

        async def own(action) -> float:
            done: list[float] = []
            t0 = time.perf_counter()
            action()
            app.call_after_refresh(lambda: done.append(time.perf_counter()))
            while not done:
                await asyncio.sleep(0.001)
            await pilot.pause()
            await finished()  # the label write, before the next decision
            await pilot.pause()
            return 1000 * (done[0] - t0)

        out["judge_ms"], out["frozen_ms"] = [], []
        for _ in range(3):
            gaps: list[float] = []
            ticking = asyncio.create_task(heartbeat(gaps))
            await asyncio.sleep(0.02)  # the heartbeat running before J (J's action runs in this coroutine)
            gaps.clear()
            out["judge_ms"].append(await open_judge(app))
            ticking.cancel()
            out["frozen_ms"].append(1000 * max(gaps, default=0.0))
            await pilot.pause()
            await finished()
            app.screen.action_close()
            await pilot.pause()
        app.action_judge()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        out["decide_ms"] = [await own(lambda: screen.action_decide("not_relevant")) for _ in range(10)]
        out["move_ms"] = [await own(lambda: screen.action_step(1)) for _ in range(20)]
        queue = screen.queue
        out["pooled"] = queue.progress()[1]
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            queue.progress()
            times.append(1000 * (time.perf_counter() - t0))
        out["progress_ms"] = times
        screen.action_close()
        await pilot.pause()
        await pilot.press("q")
    return out


async def open_judge(app) -> float:
    """J pressed → the judging queue's screen up and refreshed, in ms (the first J builds the queue, in a
    worker)."""
    from ragdiff.app.judge import JudgeScreen

    done: list[float] = []
    t0 = time.perf_counter()
    app.action_judge()
    while not isinstance(app.screen, JudgeScreen):
        await asyncio.sleep(0.001)
    app.call_after_refresh(lambda: done.append(time.perf_counter()))
    while not done:
        await asyncio.sleep(0.001)
    return 1000 * (done[0] - t0)


async def heartbeat(gaps: list[float], every: float = 0.005) -> None:
    """The gaps between wake-ups of a task asking for one every 5 ms: the longest is how long the app's event
    loop — its screen — was frozen."""
    last = time.perf_counter()
    while True:
        await asyncio.sleep(every)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


if __name__ == "__main__":
    sys.exit(main())
