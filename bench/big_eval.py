"""`ragdiff eval` of runs bigger than memory (issue 12), under a memory limit set in this script.

    python bench/big_eval.py [--sizes 1000x1000,10000x1000,30000x1000] [--limit-gib 3] [--sample 300] [--peer]

For each size (generated once by bench/generate.py into bench/data/NxD/, reused after):
- `ragdiff eval A B --gold qrels --json --per-query` under `ulimit -v` = the limit (RLIMIT_AS, set before the
  process starts): read in parts, by itself for the largest size (the runs do not fit) and with --low-memory
  for the others, timed with /usr/bin/time -v (wall, CPU, peak RSS);
- the same command in memory without a limit where that fits (the smaller sizes), and the two documents
  compared value for value;
- for the largest size, a seeded sample of queries: their lines cut out of both runs and the qrels (polars'
  streaming engine), scored in memory, and each sampled query's values compared with the parts run's;
- with --peer, pytrec_eval on the largest pair under the same limit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_bench  # noqa: E402  (its timed() and ensure_data())

PY = sys.executable


def limited(gib: float):
    def set_limit() -> None:
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return set_limit


def timed(cmd: list[str], log: Path, limit_gib: float | None) -> tuple[float, float, int, float]:
    """run_bench.timed, optionally under an address-space limit."""
    timefile = log.with_suffix(".time")
    with log.open("w") as out:
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", str(timefile), *cmd], stdout=out, stderr=subprocess.PIPE,
                              cwd=run_bench.ROOT, preexec_fn=limited(limit_gib) if limit_gib else None)
    report = timefile.read_text()
    h, m, s = run_bench._WALL.search(report).groups()
    wall = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(run_bench._RSS.search(report).group(1)) / 1024
    cpu = sum(float(x) for x in run_bench._CPU.findall(report))
    if proc.returncode:
        print(f"    exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[-300:]}", flush=True)
    return wall, rss, proc.returncode, cpu


def eval_cmd(folder: Path, *extra: str) -> list[str]:
    return [PY, "-m", "ragdiff", "eval", str(folder / "run_a.trec"), str(folder / "run_b.trec"), "--gold",
            str(folder / "qrels.txt"), "--json", "--per-query", *extra]


def per_query(doc: dict) -> dict[tuple[str, str], dict]:
    return {(Path(r["path"]).name, q): v for r in doc["runs"] for q, v in r["per_query"].items()}


def sample_files(folder: Path, out: Path, queries: list[str]) -> None:
    import polars as pl

    ids = pl.Series(queries)
    for name in ("run_a.trec", "run_b.trec", "qrels.txt"):
        (pl.scan_csv(folder / name, separator="\t", has_header=False, quote_char=None, schema={"line": pl.String})
         .filter(pl.col("line").str.split(" ").list.first().is_in(ids.implode()))
         .sink_csv(out / name, include_header=False, quote_style="never"))


def line(label: str, got: tuple[float, float, int, float], load: float) -> str:
    wall, rss, rc, cpu = got
    return f"| {label} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {rc} | {load:.1f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000x1000,10000x1000,30000x1000")
    parser.add_argument("--limit-gib", type=float, default=3.0)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--peer", action="store_true", help="also pytrec_eval on the largest pair under the limit")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    rows = ["| what | wall s | CPU s | peak RSS MiB | exit | load before |", "|---|---:|---:|---:|---:|---:|"]
    notes = []
    logs = Path(tempfile.mkdtemp(prefix="ragdiff-big-"))
    for i, (n, d) in enumerate(sizes):
        folder = run_bench.ensure_data(n, d, args.seed)
        largest = i == len(sizes) - 1
        lines = f"{n * d / 1e6:.0f}M"
        extra = () if largest else ("--low-memory",)
        load = os.getloadavg()[0]
        label = f"{lines}-line pair, {'no flag' if largest else '--low-memory'}, ulimit -v {args.limit_gib:g} GiB"
        got = timed(eval_cmd(folder, *extra), logs / f"parts_{n}x{d}.json", args.limit_gib)
        rows.append(line(label, got, load))
        print(rows[-1], flush=True)
        parts_doc = json.loads((logs / f"parts_{n}x{d}.json").read_text()) if got[2] == 0 else None
        if not largest:
            load = os.getloadavg()[0]
            whole = timed(eval_cmd(folder), logs / f"whole_{n}x{d}.json", None)
            rows.append(line(f"{lines}-line pair, in memory, no limit", whole, load))
            print(rows[-1], flush=True)
            if parts_doc and whole[2] == 0:
                whole_doc = json.loads((logs / f"whole_{n}x{d}.json").read_text())
                same = parts_doc == whole_doc
                values = sum(len(v) for v in per_query(whole_doc).values())
                notes.append(f"- {lines}: the parts run's document {'equals' if same else 'DIFFERS FROM'} the in-memory "
                             f"one ({values:,} per-query values and every mean)")
        elif parts_doc:
            qrels_ids = sorted({ln.split(" ", 1)[0] for ln in (folder / "qrels.txt").read_text().splitlines()})
            picked = sorted(random.Random(args.seed).sample(qrels_ids, min(args.sample, len(qrels_ids))))
            small = logs / "sample"
            small.mkdir()
            sample_files(folder, small, picked)
            whole = timed(eval_cmd(small), logs / "sample.json", None)
            theirs = per_query(json.loads((logs / "sample.json").read_text()))
            ours = per_query(parts_doc)
            agree = sum(1 for key, values in theirs.items() if ours.get(key) == values)
            count = sum(len(v) for v in theirs.values())
            notes.append(f"- {lines}: {len(picked)} sampled queries (seed {args.seed}) cut out and scored in memory: "
                         f"{agree}/{len(theirs)} query × run rows identical ({count:,} values)")
            if args.peer:
                drivers = run_bench.write_drivers(run_bench.DATA / "drivers")
                load = os.getloadavg()[0]
                peer = timed([PY, str(drivers["pytrec_eval"]), str(folder / "qrels.txt"), str(folder / "run_a.trec"),
                              str(folder / "run_b.trec")], logs / "pytrec.log", args.limit_gib)
                rows.append(line(f"pytrec_eval, {lines}-line pair, ulimit -v {args.limit_gib:g} GiB", peer, load))
                print(rows[-1], flush=True)
    print("\n".join(rows))
    print()
    print("\n".join(notes))
    print(f"(logs in {logs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
