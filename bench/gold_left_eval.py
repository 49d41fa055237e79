"""What `ragdiff eval --gold-left` costs: eval of a 10,000-query pair with and without the estimate, interleaved.

    .venv/bin/python bench/gold_left_eval.py [--queries 10000] [--depth 100] [--rounds 7] [--before /tmp/base]

The pair is bench/generate.py's (seed 7, into bench/data/QxD/): two TREC runs of `--depth` chunks a query and
qrels judging 13-17 chunks a query, so most of the runs' top 10 is unjudged (the estimate's work is all there).
Each round runs, one process each under /usr/bin/time -v, `ragdiff eval run_a run_b --gold qrels` and the same
with `--gold-left` (and with `--before`, another tree's `labels stale --runs --json`, beside this tree's: the
gold-left estimate alone, before and after). Medians over the rounds, the ratio of the medians, the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_bench  # noqa: E402  (its timed() and ensure_data())
from bytecode import compile_trees  # noqa: E402

PY = sys.executable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", type=Path, help="another source tree: its `labels stale --runs` beside this one's")
    args = parser.parse_args()
    folder = run_bench.ensure_data(args.queries, args.depth, 7)
    compile_trees(run_bench.ROOT, *([args.before] if args.before else []))
    runs, gold = [str(folder / "run_a.trec"), str(folder / "run_b.trec")], str(folder / "qrels.txt")
    commands = {
        "eval": ([PY, "-m", "ragdiff", "eval", *runs, "--gold", gold], run_bench.ROOT),
        "eval --gold-left": ([PY, "-m", "ragdiff", "eval", *runs, "--gold", gold, "--gold-left"], run_bench.ROOT),
    }
    stale = [PY, "-m", "ragdiff", "labels", "stale", gold, "--runs", *runs, "--json"]
    if args.before:
        commands["labels stale --runs (before)"] = (stale, args.before.resolve())
        commands["labels stale --runs"] = (stale, run_bench.ROOT)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="ragdiff-bench-gold-left-") as tmp:
        for _ in range(args.rounds):
            for name, (cmd, cwd) in commands.items():
                wall, _, code, _ = run_bench.timed(cmd, Path(tmp) / "out.txt", cwd=cwd)
                if code:
                    print(f"{name}: exit {code}: {(Path(tmp) / 'out.txt').read_text()[-300:]}")
                    return 1
                walls[name].append(wall)
            loads.append(os.getloadavg()[0])
    print(f"{args.queries:,} queries x {args.depth} chunks, two runs; {args.rounds} rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f}")
    base = statistics.median(walls["eval"])
    for name, times in walls.items():
        median = statistics.median(times)
        print(f"{name:32} median {median:.2f} s  ({', '.join(f'{t:.2f}' for t in times)})"
              + (f"  {median / base:.2f}x eval" if name.startswith("eval") else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
