"""How fast is the review screen on big inputs? (a benchmark, not a test)

Generates a seeded pair of runs of 10,000 queries × 100 chunks and qrels for them, opens the review screen
with Pilot at 140×40, and measures inside the app's process:

- time to the first interactive screen (app start → the Loaded message handled and the screen drawn),
- moving to the next query (`]`), median and worst of many presses,
- changing k (`+` then `-`), median and worst,
- the filter (`f`) and the sort (`s`),
- the judging queue (`J`): its first opening and two more (own time),
- the app's own time of `]`, and of `+` both to a k the app scored ahead (its worker had finished) and to a k
  nothing scored ahead (the worker switched off: a key held down outruns it).

    .venv/bin/python bench/bench_review.py [--queries 10000] [--depth 100] [--presses 50]
    .venv/bin/python bench/bench_review.py --pair bench/data/1000x1000   # the seeded 1M-line pair instead
    .venv/bin/python bench/bench_review.py --first-screen 5 [--tree /tmp/base] [--pair …]

`--first-screen N` opens the review N times, each in a fresh process, and says where each first screen went,
phase by phase (app start → mounted → the loading worker started → the gold set and the two runs read → the
model built → Loaded handled → the screen drawn), wall and the process's CPU, and the medians. `--tree` runs
another checkout's ragdiff with this same bench (a before/after in the same rounds).

Writes nothing but what it prints; bench/RESULTS.md holds the current numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _tree() -> Path:
    """The checkout whose ragdiff this bench runs: --tree's, else this file's."""
    if "--tree" in sys.argv[:-1]:
        return Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
    return Path(__file__).resolve().parent.parent


sys.path.insert(0, str(_tree()))

from bench_judge import open_judge  # noqa: E402 - beside this file
from ragdiff.app.app import ReviewApp, ReviewInputs  # noqa: E402
from ragdiff.core.metrics.specs import EvalSettings  # noqa: E402


def generate(folder: Path, queries: int, depth: int, seed: int = 20250806, reuse: bool = False) -> dict[str, Path]:
    """Two TREC runs over a shared pool and qrels with 1-4 relevant chunks per query (5% unanswerable).
    `reuse`: the files already in `folder`, when a run of the same arguments wrote them."""
    made = folder / f"made-{queries}x{depth}-{seed}"
    if reuse and made.exists():
        return {"gold": folder / "qrels.txt", "a": folder / "a.trec", "b": folder / "b.trec",
                "corpus": folder / "corpus.jsonl"}
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    qrels, run_a, run_b = [], [], []
    for q in range(1, queries + 1):
        qid = f"q{q:05d}"
        pool = [f"d{q}-{i}" for i in range(depth * 2)]
        if rng.random() >= 0.05:
            for chunk in rng.sample(pool[: depth + depth // 2], rng.randint(1, 4)):
                qrels.append(f"{qid} 0 {chunk} {rng.randint(1, 3)}\n")
        for chunk in rng.sample(pool, 12):  # some judged not relevant
            qrels.append(f"{qid} 0 {chunk}x 0\n")
        for name, out in (("A", run_a), ("B", run_b)):
            ranked = rng.sample(pool, depth)
            for rank, chunk in enumerate(ranked, start=1):
                out.append(f"{qid} Q0 {chunk} {rank} {depth - rank + rng.random():.4f} {name}\n")
    paths = {"gold": folder / "qrels.txt", "a": folder / "a.trec", "b": folder / "b.trec"}
    paths["gold"].write_text("".join(qrels))
    paths["a"].write_text("".join(run_a))
    paths["b"].write_text("".join(run_b))
    # a small corpus for the chunk pane (the index is built in a worker; a few lines are read on demand)
    with (folder / "corpus.jsonl").open("w") as handle:
        for q in range(1, queries + 1, 97):
            handle.write(json.dumps({"id": f"d{q}-0", "text": f"chunk text {q}"}) + "\n")
    paths["corpus"] = folder / "corpus.jsonl"
    made.touch()
    return paths


class TimedApp(ReviewApp):
    """Records when the first screen with data is drawn; `prefetch = False` stops scoring k's ahead."""

    first_screen_at: float | None = None
    prefetch = True

    def _prefetch_views(self) -> None:
        if self.prefetch:
            super()._prefetch_views()

    def on_loaded(self, message) -> None:
        self.loaded_at = time.perf_counter()
        # Textual runs the handler of every class in the MRO that defines one: this one first, then
        # ReviewApp.on_loaded by itself. Calling super() here as well (as this bench once
        # did) ran ReviewApp.on_loaded twice: two fills of every list, two gc.freeze(), and the corpus index,
        # the p-values and the unjudged rows asked for twice. The callback runs once the screen has been
        # refreshed after both handlers (bench_marks had the same bug, cb66a0b)
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        if self.first_screen_at is None:
            self.first_screen_at = time.perf_counter()
            self.first_screen_cpu = time.process_time()


PHASES = ("mounted", "worker started", "gold read", "run A read", "run B read", "model built", "Loaded handled",
          "drawn")


def stamp_phases(stamps: dict[str, tuple[float, float]]) -> None:
    """Record into `stamps` (phase -> (perf_counter, process_time), the first time each phase is reached) the
    loading worker's steps: wraps the loaders and the model's constructor where the app's worker finds them."""
    import ragdiff.app.loading as app_module
    import ragdiff.core.labels.gold as gold_module
    import ragdiff.core.io.runs as runs_module

    def mark(name: str) -> None:
        stamps.setdefault(name, (time.perf_counter(), time.process_time()))

    load_gold, load_run, model = gold_module.load_gold, runs_module.load_run, app_module.ReviewModel

    def timed_gold(*args, **kwargs):
        mark("worker started")
        found = load_gold(*args, **kwargs)
        mark("gold read")
        return found

    def timed_run(path, *args, **kwargs):
        found = load_run(path, *args, **kwargs)
        mark("run A read" if "run A read" not in stamps else "run B read")  # whichever ends first is "A"
        return found

    class TimedModel(model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            mark("model built")

    gold_module.load_gold, runs_module.load_run, app_module.ReviewModel = timed_gold, timed_run, TimedModel


async def first_screen(paths: dict[str, Path], depth: int) -> dict[str, tuple[float, float]]:
    """One first screen, phase by phase: phase -> (wall, CPU) in seconds since the app was made."""
    stamps: dict[str, tuple[float, float]] = {}
    stamp_phases(stamps)

    class Phased(TimedApp):
        def on_mount(self) -> None:  # Textual runs ReviewApp.on_mount by itself after this one
            stamps.setdefault("mounted", (time.perf_counter(), time.process_time()))

        def on_loaded(self, message) -> None:
            stamps.setdefault("Loaded handled", (time.perf_counter(), time.process_time()))
            super().on_loaded(message)

    started = (time.perf_counter(), time.process_time())
    app = Phased(ReviewInputs(run_a=paths["a"], run_b=paths["b"], gold=paths["gold"],
                              settings=EvalSettings(k=10, depth=depth), corpus=paths["corpus"],
                              gold_format="qrels", run_format="trec"))
    async with app.run_test(size=(140, 40)) as pilot:
        while app.first_screen_at is None:
            if not app.is_running or time.perf_counter() - started[0] > 300:
                raise SystemExit(f"the review screen did not open: {app.failure or 'timeout'}")
            await asyncio.sleep(0.002)
        stamps["drawn"] = (app.first_screen_at, app.first_screen_cpu)
        await pilot.press("q")
    return {name: (wall - started[0], cpu - started[1]) for name, (wall, cpu) in stamps.items()}


def first_screens(paths: dict[str, Path], depth: int, times: int, tree: Path) -> list[dict]:
    """`first_screen` in `times` fresh processes (imports and polars' threads cold, as a user meets them)."""
    import subprocess

    out = []
    for _ in range(times):
        done = subprocess.run([sys.executable, __file__, "--tree", str(tree), "--one-first-screen",
                               json.dumps({"paths": {k: str(v) if v else None for k, v in paths.items()},
                                           "depth": depth})],
                              check=True, capture_output=True, text=True)
        out.append(json.loads(done.stdout.splitlines()[-1]))
    return out


def print_first_screens(runs: list[dict]) -> None:
    print("first screen, phase by phase: ms since the app was made, wall / CPU of the process (runs, then the "
          "median); each phase's own share after the arrow")
    previous = (0.0, 0.0)
    reached = [phase for phase in PHASES if any(phase in run for run in runs)]
    for phase in sorted(reached, key=lambda p: statistics.median(run[p][0] for run in runs if p in run)):
        walls = [1000 * run[phase][0] for run in runs if phase in run]
        cpus = [1000 * run[phase][1] for run in runs if phase in run]
        if not walls:
            continue
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"  {phase:>15}: {wall:6.0f} / {cpu:6.0f}  (" + ", ".join(f"{w:.0f}/{c:.0f}" for w, c in
                                                                    zip(walls, cpus))
              + f")  → {wall - previous[0]:+.0f} / {cpu - previous[1]:+.0f}")
        previous = (wall, cpu)


async def measure(paths: dict[str, Path], depth: int, presses: int) -> dict:
    started, started_cpu = time.perf_counter(), time.process_time()
    app = TimedApp(ReviewInputs(run_a=paths["a"], run_b=paths["b"], gold=paths["gold"],
                                settings=EvalSettings(k=10, depth=depth), corpus=paths["corpus"],
                                gold_format="qrels", run_format="trec"))
    out: dict = {}
    async with app.run_test(size=(140, 40)) as pilot:
        while app.first_screen_at is None:
            if not app.is_running or time.perf_counter() - started > 300:
                raise SystemExit(f"the review screen did not open: {app.failure or 'timeout'}")
            await asyncio.sleep(0.005)
        out["first_screen_s"] = app.first_screen_at - started
        out["first_screen_cpu_s"] = app.first_screen_cpu - started_cpu
        out["load_worker_s"] = app.load_seconds
        out["loaded_to_drawn_ms"] = 1000 * (app.first_screen_at - app.loaded_at)

        cpu: dict[str, list[float]] = {}

        async def timed(key: str) -> float:
            """Wall time of one press; its CPU time (the app's own work: handler, model, rendering — Pilot's
            pauses until idle cost next to none) goes to cpu[key]."""
            t0, c0 = time.perf_counter(), time.process_time()
            await pilot.press(key)  # press returns after the key's handler ran and the app is idle
            cpu.setdefault(key, []).append(1000 * (time.process_time() - c0))
            return time.perf_counter() - t0

        # while the p-values for the header are computed in a worker thread (the screen is already usable)
        out["next_query_busy_ms"] = [1000 * await timed("right_square_bracket") for _ in range(10)]
        while not app.model.header.verdicts_ready:
            await asyncio.sleep(0.01)
        out["verdicts_s"] = time.perf_counter() - app.first_screen_at
        first = app.model.header.metrics[0]
        out["verdict"] = f"{first.label} p={first.p_value} {first.verdict}" + (
            f" error: {app.verdict_error}" if app.verdict_error else "")
        await app.workers.wait_for_complete()
        await pilot.pause()

        # the floor: a key nothing is bound to (what Pilot itself costs per press)
        out["noop_press_ms"] = [1000 * await timed("z") for _ in range(20)]
        out["next_query_ms"] = [1000 * await timed("right_square_bracket") for _ in range(presses)]
        k_times = []
        for _ in range(max(3, presses // 10)):
            k_times.append(1000 * await timed("plus"))
            k_times.append(1000 * await timed("minus"))
        out["change_k_ms"] = k_times
        out["filter_ms"] = [1000 * await timed("f") for _ in range(12)]
        out["sort_ms"] = [1000 * await timed("s") for _ in range(6)]
        out["cpu_ms"] = cpu

        own_cpu: dict[str, list[float]] = {}

        async def own(action, name: str) -> float:
            """The app's own time: from running the key's action to the screen refreshed after it (no Pilot);
            the process's CPU time over the same stretch goes to own_cpu[name]."""
            done: list[tuple[float, float]] = []
            t0, c0 = time.perf_counter(), time.process_time()
            action()
            app.call_after_refresh(lambda: done.append((time.perf_counter(), time.process_time())))
            while not done:
                await asyncio.sleep(0.001)
            own_cpu.setdefault(name, []).append(1000 * (done[0][1] - c0))
            await pilot.pause()
            await app.workers.wait_for_complete()  # the k's beside the new one scored ahead, when asked
            await pilot.pause()
            return 1000 * (done[0][0] - t0)

        out["own_next_query_ms"] = [await own(app.action_next_query, "next") for _ in range(30)]
        # each + reaches a k not shown before, which the worker scored after the previous press
        out["own_new_k_ms"] = [await own(lambda: app.action_change_k(1), "new") for _ in range(10)]
        # then with nothing scored ahead: one + to the k the last press's worker scored, then 10 k's nobody has
        app.prefetch = False
        await own(lambda: app.action_change_k(1), "warm-up")
        out["own_cold_k_ms"] = [await own(lambda: app.action_change_k(1), "cold") for _ in range(10)]
        # and - walks back over k's already shown (kept)
        out["own_seen_k_ms"] = [await own(lambda: app.action_change_k(-1), "seen") for _ in range(10)]
        out["own_cpu_ms"] = own_cpu

        # J, the judging queue at the query on screen, opened and closed three times: the first opening builds
        # the queue (both runs' top 10 pooled), a later one finds it kept in step with the marks
        judge_ms = []
        for _ in range(3):  # J → the queue's screen drawn (the first J builds the queue in a worker)
            judge_ms.append(await open_judge(app))
            await pilot.pause()
            await app.workers.wait_for_complete()
            app.screen.action_close()
            await pilot.pause()
        out["judge_ms"] = judge_ms
        await pilot.press("q")
    return out


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} ms, worst {max(values):.1f} ms (n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--presses", type=int, default=50)
    parser.add_argument("--pair", type=Path, help="a folder with run_a.trec, run_b.trec and qrels.txt (the seeded "
                                                  "pair of bench/data, its depth from info.json) instead")
    parser.add_argument("--first-screen", type=int, metavar="N",
                        help="only the first screen, N times (each a fresh process), phase by phase")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="with --first-screen: the generated files in DIR "
                                                                  "(written once, then read from there)")
    parser.add_argument("--tree", type=Path, default=_tree(), help="the checkout whose ragdiff to run")
    parser.add_argument("--one-first-screen", help=argparse.SUPPRESS)  # one child of --first-screen
    args = parser.parse_args()
    if args.one_first_screen:
        job = json.loads(args.one_first_screen)
        paths = {k: Path(v) if v else None for k, v in job["paths"].items()}
        print(json.dumps(asyncio.run(first_screen(paths, job["depth"]))))
        return 0
    if args.first_screen:
        with tempfile.TemporaryDirectory(prefix="ragdiff-bench-") as tmp:
            if args.keep:
                paths, depth = generate(args.keep, args.queries, args.depth, reuse=True), args.depth
            elif args.pair:
                info = json.loads((args.pair / "info.json").read_text())
                paths, depth = {"a": args.pair / "run_a.trec", "b": args.pair / "run_b.trec",
                                "gold": args.pair / "qrels.txt", "corpus": None}, info["depth"]
            else:
                paths, depth = generate(Path(tmp), args.queries, args.depth), args.depth
            runs = first_screens(paths, depth, args.first_screen, args.tree)
        print(f"ragdiff review first screen · {args.tree} · {args.pair or f'{args.queries:,} × {args.depth}'}")
        print_first_screens(runs)
        return 0
    if args.pair:
        info = json.loads((args.pair / "info.json").read_text())
        paths = {"a": args.pair / "run_a.trec", "b": args.pair / "run_b.trec", "gold": args.pair / "qrels.txt",
                 "corpus": None}
        result = asyncio.run(measure(paths, info["depth"], args.presses))
        what = f"{args.pair}: {info['queries']:,} queries × {info['depth']} chunks per run, two runs, qrels"
    else:
        with tempfile.TemporaryDirectory(prefix="ragdiff-bench-") as tmp:
            t0 = time.perf_counter()
            paths = generate(Path(tmp), args.queries, args.depth)
            generated = time.perf_counter() - t0
            result = asyncio.run(measure(paths, args.depth, args.presses))
        what = (f"{args.queries:,} queries × {args.depth} chunks per run, two runs, qrels (generated in "
                f"{generated:.1f} s)")
    print(f"ragdiff review bench: {what} · python {platform.python_version()} · {platform.machine()}")
    print(f"first interactive screen: {result['first_screen_s']:.2f} s, CPU {result['first_screen_cpu_s']:.2f} s "
          f"(loading + scoring in the worker {result['load_worker_s']:.2f} s; the Loaded message handled and the "
          f"screen drawn {result['loaded_to_drawn_ms']:.0f} ms)")
    print(f"a key bound to nothing (Pilot's own cost): {summary(result['noop_press_ms'])}")
    print(f"p-values in the header (diff.compare in a worker process): ready {result['verdicts_s']:.2f} s "
          f"after the first screen ({result['verdict']})")
    print(f"next query ] while they are computed: {summary(result['next_query_busy_ms'])}")
    print(f"next query ]: {summary(result['next_query_ms'])}")
    print(f"change k +/-: {summary(result['change_k_ms'])}")
    print(f"filter f: {summary(result['filter_ms'])}")
    print(f"sort s: {summary(result['sort_ms'])}")
    names = {"z": "a key bound to nothing", "right_square_bracket": "next query ]", "plus": "k + 1",
             "minus": "k - 1", "f": "filter f", "s": "sort s"}
    print(f"app's own time, action → screen refreshed (no Pilot): next query {summary(result['own_next_query_ms'])}; "
          f"a new k scored ahead {summary(result['own_new_k_ms'])}; a new k nothing scored ahead "
          f"{summary(result['own_cold_k_ms'])}; a k seen before {summary(result['own_seen_k_ms'])}")
    print("the judging queue J, J → its screen refreshed: " + ", ".join(f"{ms:.0f}" for ms in result["judge_ms"])
          + " ms (the first opening, then two more)")
    cpu = result["own_cpu_ms"]
    print(f"CPU of the process over that own time: next query {summary(cpu['next'])}; a new k scored ahead "
          f"{summary(cpu['new'])}; nothing scored ahead {summary(cpu['cold'])}; seen {summary(cpu['seen'])}")
    print("CPU time of the app's process per press (its own work; Pilot's waits cost next to none):")
    for key, values in result["cpu_ms"].items():
        print(f"  {names.get(key, key)}: {summary(values)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
