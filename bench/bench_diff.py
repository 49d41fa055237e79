"""`ragdiff diff` on the seeded pairs against the reference peer, round by round, with the floor (issue 34).

    python bench/bench_diff.py                                   # 1M pair, depths 10/100/1000, 5 rounds
    python bench/bench_diff.py --pairs 1000x1000,10000x1000      # and the 10M pair (linearity)
    python bench/bench_diff.py --before /tmp/base                # also the tree at /tmp/base, same rounds

The pairs are ../shared/bench/gen_big.py's (seeded: N queries x 1,000 chunks a run, run B's scores with 2 decimals),
made into bench/data/NxD/ (qrels.txt, runA.txt, runB.txt) when missing. Each round runs, one process at a time and
each under `/usr/bin/time -v`:

  peer          ../shared/bench/peer_pytrec.py DIR: pytrec_eval's evaluator on both runs, a plain Python reader
  diff@D        ragdiff diff runA.txt runB.txt --gold qrels.txt --depth D --json   (D in --depths; default k)
  floor         python -c 'import polars' and polars' CSV reader on the two runs, nothing else

the order of the tools rotating from round to round, so that none always runs first or after the same one. The
table gives each tool's median wall time and its spread (min-max), median CPU time (user + system) and peak RSS,
and diff's ratio to the peer: of the median walls, the median of each round's own ratio, and of the median CPU
times (the peer runs on one core; diff uses two where it can, which a loaded machine does not give it). With two
pairs, the larger pair's times over the smaller's, divided by their size ratio (1.00 = linear). The load average
is printed before each process: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

from bytecode import compile_trees

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
PY = sys.executable

FLOOR = """
import sys
import polars as pl
schema = {"q": pl.String, "q0": pl.String, "chunk": pl.String, "rank": pl.Int64, "score": pl.Float64, "tag": pl.String}
for name in ("runA", "runB"):
    run = pl.read_csv(f"{sys.argv[1]}/{name}.txt", separator=" ", has_header=False, quote_char=None, schema=schema,
                      columns=[0, 2, 3, 4, 5])
    print(name, run.height)
"""

_WALL = re.compile(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")
_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_CPU = re.compile(r"(?:User|System) time \(seconds\): (\d+(?:\.\d+)?)")


def shared() -> Path:
    """The team's shared folder (gen_big.py, peer_pytrec.py): beside the repository or beside its worktrees."""
    for up in (ROOT.parent, ROOT.parent.parent):
        if (up / "shared" / "bench" / "peer_pytrec.py").exists():
            return up / "shared" / "bench"
    raise SystemExit("bench_diff: ../shared/bench/peer_pytrec.py not found; give --peer and --gen")


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s user + system, peak RSS MiB, exit code) of one process under /usr/bin/time -v."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, cwd=cwd)
    report = proc.stderr
    h, m, s = _WALL.search(report).groups()
    wall = int(h or 0) * 3600 + int(m) * 60 + float(s)
    cpu = sum(float(x) for x in _CPU.findall(report))
    return wall, cpu, int(_RSS.search(report).group(1)) / 1024, proc.returncode


def ensure_pair(name: str, gen: Path) -> Path:
    folder = DATA / name
    if all((folder / f).exists() for f in ("qrels.txt", "runA.txt", "runB.txt")):
        return folder
    queries, depth = name.split("x")
    print(f"generating {folder} with {gen} ...", flush=True)
    subprocess.run([PY, str(gen), str(folder), queries, depth], check=True)
    return folder


def spread(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f}–{max(values):.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default="1000x1000", help="comma-separated NxD pairs (default 1000x1000)")
    parser.add_argument("--depths", default="10,100,1000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another tree (git archive) to time beside this one")
    parser.add_argument("--peer", type=Path, help="the peer script (default ../shared/bench/peer_pytrec.py)")
    parser.add_argument("--gen", type=Path, help="the pair generator (default ../shared/bench/gen_big.py)")
    args = parser.parse_args()
    peer = args.peer or shared() / "peer_pytrec.py"
    gen = args.gen or shared() / "gen_big.py"
    depths = [int(d) for d in args.depths.split(",")]
    trees = {"diff": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    compile_trees(*trees.values())
    floor_script = DATA / "floor_read.py"
    DATA.mkdir(exist_ok=True)
    floor_script.write_text(FLOOR.lstrip())
    results: dict[str, dict[str, list[tuple[float, float, float, int]]]] = {}
    loads: dict[str, list[float]] = {}
    for pair in args.pairs.split(","):
        folder = ensure_pair(pair, gen)
        files = [str(folder / "runA.txt"), str(folder / "runB.txt"), "--gold", str(folder / "qrels.txt")]
        tools: dict[str, tuple[list[str], Path]] = {"peer": ([PY, str(peer), str(folder)], ROOT)}
        for label, tree in trees.items():
            for depth in depths:
                # `python -m` takes ragdiff from the working folder: each tree's own code
                tools[f"{label}@{depth}"] = ([PY, "-m", "ragdiff", "diff", *files, "--depth", str(depth), "--json"],
                                             tree)
        tools["floor"] = ([PY, str(floor_script), str(folder)], ROOT)
        samples = results[pair] = {t: [] for t in tools}
        loads[pair] = []
        names = list(tools)
        for round_ in range(args.rounds):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                load = os.getloadavg()[0]
                loads[pair].append(load)
                got = timed(*tools[name])
                samples[name].append(got)
                print(f"  {pair} round {round_ + 1} {name:13s} {got[0]:7.2f} s wall {got[1]:7.2f} s cpu "
                      f"{got[2]:7.1f} MiB rc={got[3]}  (load {load:.1f})", flush=True)
    print(render(results, loads, args, peer))
    return 0


def render(results: dict, loads: dict, args, peer: Path) -> str:
    out = [f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
           f"{platform.python_version()}; {args.rounds} rounds, tools rotating each round; peer {peer.name}", ""]
    out.append("| pair | tool | wall median (min–max) | CPU median | peak RSS median (max) | wall × peer (medians) | "
               "wall × peer (median of rounds, min–max) | CPU × peer | wall × floor |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for pair, samples in results.items():
        peer_walls = [s[0] for s in samples["peer"]]
        peer_cpu = statistics.median(s[1] for s in samples["peer"])
        floor = statistics.median(s[0] for s in samples["floor"])
        for name, got in samples.items():
            walls = [s[0] for s in got]
            wall = statistics.median(walls)
            cpu = statistics.median(s[1] for s in got)
            row = [pair, name, f"{wall:.2f} s ({spread(walls)})", f"{cpu:.2f} s",
                   f"{statistics.median(s[2] for s in got):.0f} MiB ({max(s[2] for s in got):.0f})"]
            if name == "peer":
                row += ["—", "—", "—", f"{wall / floor:.2f}×"]
            elif name == "floor":
                row += ["—", "—", f"{cpu / peer_cpu:.2f}×", "1.00"]
            else:
                per_round = [w / p for w, p in zip(walls, peer_walls)]
                row += [f"**{wall / statistics.median(peer_walls):.2f}×**",
                        f"{statistics.median(per_round):.2f}× ({spread(per_round)})", f"{cpu / peer_cpu:.2f}×",
                        f"{wall / floor:.2f}×"]
            bad = [s[3] for s in got if s[3]]
            if bad:
                row[1] += f" (exit {bad[0]}!)"
            out.append("| " + " | ".join(row) + " |")
        out.append(f"| {pair} | load average | {spread(loads[pair], 1)} (median {statistics.median(loads[pair]):.1f}) "
                   "| | | | | | |")
    pairs = list(results)
    if len(pairs) > 1:
        small, big = pairs[0], pairs[-1]
        size = int(big.split("x")[0]) * int(big.split("x")[1]) / (int(small.split("x")[0]) * int(small.split("x")[1]))
        out.append("")
        out.append(f"{big} over {small} ({size:.0f}× the lines), median wall and median CPU (under a changing load "
                   "the CPU's ratio is the steadier one; 1.00 = linear):")
        for name in results[big]:
            if name in results[small]:
                ratios = [statistics.median(s[i] for s in results[big][name])
                          / statistics.median(s[i] for s in results[small][name]) for i in (0, 1)]
                out.append(f"- {name}: wall {ratios[0]:.2f}× ({ratios[0] / size:.2f} of linear), "
                           f"CPU {ratios[1]:.2f}× ({ratios[1] / size:.2f} of linear)")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
