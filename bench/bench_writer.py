"""Durable decisions a second, and quit after a flood: the group-commit writer beside the writer before it
(a benchmark, not a test).

1. A flood of decisions sent to the app's label writer (`LabelSession.mark`, one call a key, as the judging queue
   sends them) as fast as a loop sends them, into a 10,000-query YAML label file (bench/labels_bench.py's, ~2 MB)
   and into a 30-query one, each decision a new chunk of a query drawn at random. Timed from the first send to
   the last decision durable (its MarkDone posted: what the screen counts as judged), and to the label file
   holding every one of them (`close`, what quit does); then the file is read and each decision checked in it.
2. `ragdiff judge` (JudgeApp under Pilot, 140x40) on a 30-query set whose two runs pool 516 chunks: the 516
   decision keys and `q` posted with no pause between them; timed from `q` taken to the app gone (its label
   writer closed), and the file checked for all 516.

Each tree runs in a fresh process, the trees alternating, in one sitting:

    git archive cd858b3 | (mkdir -p /tmp/base && tar -x -C /tmp/base)      # the writer before
    .venv/bin/python bench/bench_writer.py --old /tmp/base [--new /tmp/new] [--decisions 10000] [--rounds 2]

The writer before rewrites the whole label file for every decision: it is given the first --old-decisions
(default 300) of the same flood, and its rate is over those.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LABELS = ("gold", "not_relevant", "evidence")


def small_file(path: Path, queries: int = 30) -> Path:
    lines = ["# a 30-query label file", "queries:"]
    for i in range(queries):
        lines += [f"  - id: q{i:02d}", f"    text: query number {i}", f"    gold: [g-{i}]"]
    path.write_text("\n".join(lines) + "\n")
    return path


def trial_set(folder: Path, queries: int = 30) -> dict[str, Path]:
    """30 queries, two runs of 10 chunks each whose union is 516 chunks (6 queries pool 18, 24 pool 17),
    none of them judged; and a corpus."""
    folder.mkdir(parents=True, exist_ok=True)
    gold = small_file(folder / "gold.yaml", queries)
    runs = {"a": [], "b": []}
    corpus = []
    for i in range(queries):
        shared = 2 if i < 6 else 3
        a = [f"c{i}-{n}" for n in range(10)]
        b = a[:shared] + [f"c{i}-b{n}" for n in range(10 - shared)]
        for side, ids in (("a", a), ("b", b)):
            runs[side].append(json.dumps({"query_id": f"q{i:02d}", "query": f"query number {i}",
                                          "results": [{"id": c, "score": 1.0 - r / 20} for r, c in enumerate(ids)]}))
        corpus += [json.dumps({"id": c, "text": f"the text of {c}"}) for c in dict.fromkeys(a + b)]
    out = {"gold": gold, "corpus": folder / "corpus.jsonl"}
    out["corpus"].write_text("\n".join(corpus) + "\n")
    for side in "ab":
        out[side] = folder / f"run_{side}.jsonl"
        out[side].write_text("\n".join(runs[side]) + "\n")
    return out


# ---- 1. the flood, in a child process of one tree ------------------------------------------------------------


def flood(gold: Path, decisions: int, seed: int) -> dict:
    from ragdiff.app.session import LabelSession, Target
    from ragdiff.core.labels.gold import load_gold

    queries = load_gold(gold).queries.get_column("query_id").to_list()
    rng = random.Random(seed)
    plan = [(rng.choice(queries), f"bench-{i}", LABELS[i % 3]) for i in range(decisions)]
    durable: list[float] = []

    def post(message) -> None:
        if type(message).__name__ == "MarkDone" and getattr(message, "target", None) is not None:
            assert not message.error, message.status
            durable.append(time.perf_counter())

    session = LabelSession(gold, "bench", post)
    session.open(None)
    while session.jobs_done < 1:  # the file read (and its document parsed) before the clock starts
        time.sleep(0.01)
    started = time.perf_counter()
    for qid, chunk, label in plan:
        session.mark(Target(qid, chunk, "A", 1), label)
    sent = time.perf_counter()
    while len(durable) < decisions:
        time.sleep(0.001)
    session.close()
    closed = time.perf_counter()
    written = load_gold(gold).judgments
    held = set(zip(written["query_id"].to_list(), written["chunk_id"].to_list()))
    missing = sum((q, c) not in held for q, c, _label in plan)
    return {"decisions": decisions, "send_s": sent - started, "durable_s": durable[-1] - started,
            "closed_s": closed - started, "missing": missing}


# ---- 2. q after 516 decisions in `ragdiff judge`, in a child process of one tree ------------------------------


def judge_quit(folder: Path) -> dict:
    from ragdiff.app.judge import JudgeScreen
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs
    from ragdiff.core.labels.gold import load_gold

    paths = trial_set(folder)
    times: dict[str, float] = {}

    class Timed(JudgeApp):
        def on_unmount(self) -> None:
            super().on_unmount()
            times["closed"] = time.perf_counter()

    original = JudgeScreen.action_close

    def close(screen) -> None:
        times["q"] = time.perf_counter()
        original(screen)

    JudgeScreen.action_close = close

    async def run() -> int:
        app = Timed(JudgeInputs([paths["a"], paths["b"]], paths["gold"], corpus=paths["corpus"], reviewer="bench"))
        async with app.run_test(size=(140, 40)) as pilot:
            while app.judge is None or not app.judge.is_mounted:
                await pilot.pause(0.05)
            total = app.judge.queue.progress()[1]
            for n in range(total):  # one decision a key, no pause: the queue moves on by itself
                _post(app, "x" if n % 2 else "g")
            _post(app, "q")
            while app.is_running:
                await asyncio.sleep(0.001)
        return total

    total = asyncio.run(run())
    judged = load_gold(paths["gold"]).judgments.height - 30  # the 30 gold chunks the file began with
    return {"pooled": total, "in_file": judged, "quit_s": times["closed"] - times["q"]}


def _post(app, name: str) -> None:
    """A key handed to the terminal driver, as typed (tests/test_app_keys.py's post_keys)."""
    from textual import events

    event = events.Key(name, name)
    event.set_sender(app)
    app._driver.send_message(event)


# ---- the parent: both trees, alternating ---------------------------------------------------------------------


def child(tree: Path, what: str, call: str) -> dict:
    """`what(call)` of this file in a fresh process whose ragdiff is `tree`'s."""
    code = (f"import sys, json; sys.path[:0] = [{str(tree)!r}, {str(HERE)!r}]; import bench_writer as b; "
            f"print(json.dumps(b.{what}({call})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tree)}, timeout=3600)
    if out.returncode:
        raise SystemExit(f"{what} in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a checkout of the writer before")
    parser.add_argument("--new", type=Path, default=ROOT, help="the checkout measured as new (default: this one)")
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--old-decisions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from labels_bench import generate

    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    rows: dict[tuple[str, str], list[dict]] = {}
    quits: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="ragdiff-bench-writer-") as tmp:
        tmp = Path(tmp)
        big, _run = generate(tmp / "big", 10_000, 10)
        small = small_file(tmp / "small.yaml")
        for r in range(args.rounds):
            for name, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
                n = args.decisions if name == "new" else args.old_decisions
                for label, source in (("10,000 queries", big), ("30 queries", small)):
                    work = tmp / f"{name}-{r}-{source.stem}"
                    work.mkdir()
                    gold = work / "gold.yaml"
                    shutil.copyfile(source, gold)
                    rows.setdefault((label, name), []).append(child(tree, "flood", f"b.Path({str(gold)!r}), {n}, {r}"))
                    shutil.rmtree(work)
                quits.setdefault(name, []).append(child(tree, "judge_quit", f"b.Path({str(tmp / f'judge-{name}-{r}')!r})"))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"python {platform.python_version()}; {args.rounds} rounds, trees alternating")
    print("\n| label file | writer | decisions | durable / s | in the file / s (closed) | missing |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (label, name), runs in rows.items():
        durable = statistics.median(r["decisions"] / r["durable_s"] for r in runs)
        closed = statistics.median(r["decisions"] / r["closed_s"] for r in runs)
        print(f"| {label} | {name} | {runs[0]['decisions']} | {durable:,.0f} | {closed:,.0f} | "
              f"{sum(r['missing'] for r in runs)} |")
    for label in ("10,000 queries", "30 queries"):
        old = statistics.median(r["decisions"] / r["durable_s"] for r in rows[(label, "old")])
        new = statistics.median(r["decisions"] / r["durable_s"] for r in rows[(label, "new")])
        print(f"\n{label}: new / old durable decisions a second = {new / old:.1f}x")
    print("\n| writer | pooled | decisions in the file after q | q to the app gone, s (each round) |")
    print("| --- | --- | --- | --- |")
    for name, runs in quits.items():
        print(f"| {name} | {runs[0]['pooled']} | {', '.join(str(r['in_file']) for r in runs)} | "
              f"{', '.join(format(r['quit_s'], '.2f') for r in runs)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
