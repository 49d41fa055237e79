"""`ragdiff fuse` beside ranx (issue 32): the same scores and order, and the time, as users run them.

    python bench/bench_fusion.py                 # agreement + timings, median of 5
    python bench/bench_fusion.py --repeat 9

1. Agreement with ranx itself (ranx.fuse): random runs (seeded; 300 queries x 100 results x 3 runs, continuous
   scores) and the sample set's bm25 + dense (through `ragdiff export run`, whose scores are tie-free), every
   method x normalisation (ragdiff's fusion of the same files): the largest |score difference| and the queries whose order differs, ranx's fused
   scores ordered by ragdiff's rule (score descending, ties by chunk id descending).
2. Time, each a fresh process from the shell, turn by turn, median wall time:
   - `ragdiff fuse A B C --method M -o out.trec` against a driver that reads the TREC runs with ranx, fuses
     and writes the run (ranx's numba code warm: its cache is filled by a first untimed call);
   - `ragdiff fuse bm25 dense --method wsum|rrf --optimize --gold gold.yaml` on sample_runs (11 weight settings
     / 10 k's, 5 folds) against ranx.optimize_fusion on the same runs (in-sample only: what ranx offers).
Needs ranx (the `bench` extra). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
RAGDIFF = [sys.executable, "-m", "ragdiff"]
PAIRS = [(m, n) for m in ("rrf", "combsum", "combmnz", "wsum") for n in ("none", "minmax", "zscore", "rank")]
RANX_NORM = {"none": None, "minmax": "min-max", "zscore": "zmuv", "rank": "rank"}
RANX_METHOD = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "wsum": "wsum"}
WEIGHTS = [0.2, 0.5, 0.3]


def write_random_runs(folder: Path, queries: int = 300, depth: int = 100, runs: int = 3, seed: int = 32) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for r in range(runs):
        lines = []
        for q in range(queries):
            for c in rng.sample(range(depth * 3), depth):
                lines.append(f"q{q} Q0 d{c} 0 {rng.uniform(-5, 20)!r} r{r}\n")
        path = folder / f"r{r}.trec"
        path.write_text("".join(lines))
        paths.append(path)
    return paths


def ragdiff_fused(paths: list[Path], method: str, norm: str, out: Path) -> dict[str, list[tuple[str, float]]]:
    args = ["fuse", *map(str, paths), "--method", method, "--norm", norm, "-o", str(out)]
    if method == "wsum":
        args += ["--weights", ",".join(map(str, WEIGHTS[:len(paths)]))]
    subprocess.run(RAGDIFF + args, check=True, capture_output=True, cwd=ROOT)
    fused: dict[str, list[tuple[str, float]]] = {}
    for line in out.read_text().splitlines():
        q, _, c, _, s, _ = line.split()
        fused.setdefault(q, []).append((c, float(s)))
    return fused


def ranx_fused(paths: list[Path], method: str, norm: str) -> dict[str, list[tuple[str, float]]]:
    from ranx import Run, fuse

    runs = [Run.from_file(str(p), kind="trec") for p in paths]
    for run in runs:
        run.sort()  # ranx's rrf and rank norm read the dict order: best first
    params = {"weights": WEIGHTS[:len(paths)]} if method == "wsum" else {"k": 60} if method == "rrf" else {}
    fused = fuse(runs, norm=RANX_NORM[norm], method=RANX_METHOD[method], params=params).to_dict()
    return {q: sorted(sorted(d.items(), reverse=True), key=lambda x: -x[1]) for q, d in fused.items()}


def agreement(paths: list[Path], folder: Path) -> list[tuple[str, str, float, int, int]]:
    rows = []
    for method, norm in PAIRS:
        ours = ragdiff_fused(paths, method, norm, folder / "f.trec")
        theirs = ranx_fused(paths, method, norm)
        worst = max(abs(a[1] - b[1]) for q in theirs for a, b in zip(sorted(ours[q]), sorted(theirs[q])))
        differ = sum(1 for q in theirs if [c for c, _ in ours[q]] != [c for c, _ in theirs[q]])
        rows.append((method, norm, worst, differ, len(theirs)))
    return rows


RANX_FUSE_DRIVER = """
import sys
from ranx import Run, fuse
method, norm, out, *paths = sys.argv[1:]
runs = [Run.from_file(p, kind="trec") for p in paths]
for r in runs:
    r.sort()
params = {"weights": [1 / len(paths)] * len(paths)} if method == "wsum" else {"k": 60} if method == "rrf" else {}
fuse(runs, norm=None if norm == "none" else norm, method=method, params=params).save(out, kind="trec")
"""

RANX_OPTIMIZE_DRIVER = """
import json, sys
from ranx import Qrels, Run, optimize_fusion
method, qrels_path, *paths = sys.argv[1:]
qrels = Qrels.from_file(qrels_path, kind="trec")
runs = [Run.from_file(p, kind="trec") for p in paths]
for r in runs:
    r.sort()
best = optimize_fusion(qrels=qrels, runs=runs, norm="min-max" if method == "wsum" else None, method=method,
                       metric="ndcg@10", show_progress=False)
print(json.dumps(best))
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def median_times(commands: dict[str, list[str]], repeat: int) -> dict[str, float]:
    for command in commands.values():  # warm: ranx's numba cache, the OS's file cache
        timed(command)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            times[name].append(timed(command))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        drivers = folder / "fuse_driver.py", folder / "optimize_driver.py"
        drivers[0].write_text(RANX_FUSE_DRIVER)
        drivers[1].write_text(RANX_OPTIMIZE_DRIVER)
        random_paths = write_random_runs(folder)
        sample_paths = []
        for name in ("bm25", "dense"):
            out = folder / f"{name}.trec"
            subprocess.run(RAGDIFF + ["export", "run", str(SAMPLE / f"{name}.jsonl"), "-o", str(out)], check=True,
                           capture_output=True, cwd=ROOT)
            sample_paths.append(out)
        # for --optimize, ranx reads the runs' own scores (min-max needs them): the JSONL's results as TREC lines
        original_paths = []
        for name in ("bm25", "dense"):
            out = folder / f"{name}_scores.trec"
            records = map(json.loads, (SAMPLE / f"{name}.jsonl").read_text().splitlines())
            out.write_text("".join(f"{r['query_id']} Q0 {x['id']} {i} {x['score']!r} {name}\n"
                                   for r in records for i, x in enumerate(r["results"], 1)))
            original_paths.append(out)
        qrels = folder / "qrels.txt"
        subprocess.run(RAGDIFF + ["export", "qrels", str(SAMPLE / "gold.yaml"), "-o", str(qrels)], check=True,
                       capture_output=True, cwd=ROOT)

        print("## Agreement with ranx.fuse (max |Δ score|, queries ordered differently)\n")
        print("| method | norm | random 300 q × 100 × 3: max Δ | order differs | sample bm25+dense: max Δ | order differs |")
        print("|---|---|---|---|---|---|")
        for a, b in zip(agreement(random_paths, folder), agreement(sample_paths, folder)):
            print(f"| {a[0]} | {a[1]} | {a[2]:.1e} | {a[3]}/{a[4]} | {b[2]:.1e} | {b[3]}/{b[4]} |")

        print(f"\n## Time (median of {args.repeat}, each a fresh process)\n")
        print("| job | ragdiff | ranx | ragdiff / ranx |")
        print("|---|---|---|---|")
        out = str(folder / "timed.trec")
        for method in ("rrf", "combsum", "wsum"):
            ranx_method = RANX_METHOD[method]
            t = median_times({
                "ragdiff": RAGDIFF + ["fuse", *map(str, random_paths), "--method", method, "--norm", "minmax",
                                      "-o", out],
                "ranx": [sys.executable, str(drivers[0]), ranx_method, "min-max", out, *map(str, random_paths)],
            }, args.repeat)
            print(f"| fuse {method} (min-max), 3 runs × 300 q × 100 | {t['ragdiff']:.2f} s | {t['ranx']:.2f} s | "
                  f"{t['ragdiff'] / t['ranx']:.2f} |")
        for method in ("wsum", "rrf"):
            t = median_times({
                "ragdiff": RAGDIFF + ["fuse", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--method",
                                      method, "--optimize", "--gold", str(SAMPLE / "gold.yaml"), "-o", out],
                "ranx": [sys.executable, str(drivers[1]), method, str(qrels), *map(str, original_paths)],
            }, args.repeat)
            print(f"| --optimize {method} on sample_runs (ragdiff: 5-fold CV + paired test; ranx: in-sample) | "
                  f"{t['ragdiff']:.2f} s | {t['ranx']:.2f} s | {t['ragdiff'] / t['ranx']:.2f} |")
        for method in ("wsum", "rrf"):
            report = subprocess.run(RAGDIFF + ["fuse", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"),
                                               "--method", method, "--optimize", "--gold", str(SAMPLE / "gold.yaml"),
                                               "-o", out], check=True, capture_output=True, text=True, cwd=ROOT)
            ranx_best = subprocess.run([sys.executable, str(drivers[1]), method, str(qrels), *map(str, original_paths)],
                                       check=True, capture_output=True, text=True, cwd=ROOT).stdout.strip()
            print(f"\n`ragdiff fuse bm25 dense --method {method} --optimize --gold gold.yaml` (ranx.optimize_fusion "
                  f"chose {json.loads(ranx_best)}):\n\n```\n{report.stdout.strip()}\n```")
    print(f"\nmachine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
