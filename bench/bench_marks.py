"""How long does a mark take to settle on the review screen? (a benchmark, not a test)

From the key's action (`x` on the chunk selected in list A) to the screen refreshed with the new numbers,
in the app's own process, with no Pilot waiting in between. Split into its parts:

- write: the label writer on its thread (read, edit, verify, journal, fsync, rename) -> the Change;
- model: `ReviewModel.relabel`, the model's listener on the judgment store (the one query; nothing read from disk);
- screen: the widgets refilled and Textual's repaint after it.

On the demo (sample_runs/, 72 queries, a YAML label file) and on bench_review.py's 10,000-query set
(qrels, 100 chunks per query). Each mark is on the first chunk of the next query, as `] x` does (`g` where that chunk is already
not relevant, so every mark changes the file).

    .venv/bin/python bench/bench_marks.py [--marks 20] [--queries 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_review import generate  # noqa: E402

from ragdiff.app.app import ReviewApp, ReviewInputs  # noqa: E402
from ragdiff.app.widgets.ranked_list import RankedList  # noqa: E402
from ragdiff.core.metrics.specs import EvalSettings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class TimedApp(ReviewApp):
    """Stamps each part of a mark's way to the screen."""

    def __init__(self, inputs) -> None:
        super().__init__(inputs)
        self.stamps: list[dict] = []
        self.verdict_delay = 0

    def action_mark(self, label, grade=None) -> None:
        self.stamps.append({"key": time.perf_counter()})
        super().action_mark(label, grade)

    def on_mark_done(self, message) -> None:
        # Textual runs the handler of every class in the MRO that defines one, this one first, then
        # ReviewApp.on_mark_done by itself: calling super() here as well (as this bench once
        # did) applied every Change to the store twice, and the second one was counted as "screen"
        stamp = self.stamps[-1]
        stamp["change"] = time.perf_counter()
        model = self.model
        if model is not None:
            real = model.relabel  # the model's listener on the judgment store

            def timed(changed):
                t0 = time.perf_counter()
                real(changed)
                stamp["model"] = stamp.get("model", 0.0) + time.perf_counter() - t0

            model.relabel = timed

            def settled():
                stamp.setdefault("settled", time.perf_counter())
                model.__dict__.pop("relabel", None)
        else:
            def settled():
                stamp.setdefault("settled", time.perf_counter())
        self.call_after_refresh(settled)


async def measure(inputs: ReviewInputs, marks: int) -> list[dict]:
    app = TimedApp(inputs)
    async with app.run_test(size=(140, 40)) as pilot:
        started = time.perf_counter()
        while app.model is None:
            if not app.is_running or time.perf_counter() - started > 300:
                raise SystemExit(f"the review screen did not open: {app.failure or 'timeout'}")
            await asyncio.sleep(0.01)
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.focus_now(app.query_one("#list-a", RankedList))
        for _ in range(marks + 1):  # the first is a warm-up (imports, the writer's first read)
            app.action_next_query()
            await pilot.pause()
            target = app.mark_target()  # a mark that changes the label (x on a chunk judged not relevant
            level = app.model.label_of(target.query_id, target.chunk_id)[0]  # would save nothing)
            app.action_mark("gold" if level == "not_relevant" else "not_relevant")
            while "settled" not in app.stamps[-1]:
                await asyncio.sleep(0.001)
            while not app.model.header.verdicts_ready:  # the p-values of this mark, before the next key
                await asyncio.sleep(0.01)
            await pilot.pause()
        await pilot.press("q")
    return app.stamps[1:]


def summary(values: list[float]) -> str:
    values = [1000 * v for v in values]
    return f"median {statistics.median(values):6.1f} ms, worst {max(values):6.1f} ms"


def report(name: str, stamps: list[dict]) -> None:
    print(f"{name} ({len(stamps)} marks):")
    print(f"  key -> screen settled   {summary([s['settled'] - s['key'] for s in stamps])}")
    print(f"    write (label file)    {summary([s['change'] - s['key'] for s in stamps])}")
    print(f"    model.relabel         {summary([s.get('model', 0.0) for s in stamps])}")
    print(f"    screen (fill, paint)  {summary([s['settled'] - s['change'] - s.get('model', 0.0) for s in stamps])}")
    print(f"  Change -> settled       {summary([s['settled'] - s['change'] for s in stamps])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marks", type=int, default=20)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragdiff-bench-marks-") as tmp:
        demo = Path(tmp) / "demo"
        demo.mkdir()
        for name in ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl"):
            shutil.copy2(ROOT / "sample_runs" / name, demo / name)
        report("demo (72 queries, gold.yaml)", asyncio.run(measure(ReviewInputs(
            run_a=demo / "bm25.jsonl", run_b=demo / "dense.jsonl", gold=demo / "gold.yaml",
            settings=EvalSettings(k=5, depth=50), corpus=demo / "corpus.jsonl", reviewer="bench"), args.marks)))
        big = Path(tmp) / "big"
        big.mkdir()
        paths = generate(big, args.queries, args.depth)
        report(f"{args.queries:,} queries × {args.depth} (qrels)", asyncio.run(measure(ReviewInputs(
            run_a=paths["a"], run_b=paths["b"], gold=paths["gold"], settings=EvalSettings(k=10, depth=args.depth),
            corpus=paths["corpus"], gold_format="qrels", run_format="trec", reviewer="bench"), args.marks)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
