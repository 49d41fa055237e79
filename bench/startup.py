"""Start-up time of the CLI beside a bare interpreter (issue 12): each command as a fresh process, interleaved
round by round so load on the machine hits every command alike; the median of the rounds.

    python bench/startup.py [--rounds 21] [--before DIR]

--before DIR also times `python -m ragdiff --help` and `eval --help` from another source tree (e.g. `git archive
main | tar -x -C DIR`), in the same rounds, for a before/after.

The yardstick is `python -c "import argparse, json, pathlib"` on the same interpreter; the target is
`ragdiff --help` and `ragdiff eval --help` within 3x of it. It also lists the heavy libraries each command
loaded (none should, for --help).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bytecode import compile_trees

PY = sys.executable
RAGDIFF = str(Path(PY).with_name("ragdiff"))
HEAVY = ("polars", "numpy", "rich", "textual", "ruamel")
PROBE = ("import runpy, sys; sys.argv = ['ragdiff', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('ragdiff', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})), file=sys.stderr)")

COMMANDS = {
    'python -c "import argparse, json, pathlib"': [PY, "-c", "import argparse, json, pathlib"],
    "ragdiff --help": [RAGDIFF, "--help"],
    "ragdiff eval --help": [RAGDIFF, "eval", "--help"],
    "ragdiff diff --help": [RAGDIFF, "diff", "--help"],
    "ragdiff --version": [RAGDIFF, "--version"],
    'python -c "import pytrec_eval"': [PY, "-c", "import pytrec_eval"],
}


def once(cmd: list[str], env: dict | None = None) -> float:
    t = time.perf_counter()
    # `python -m` puts the working folder first on the path: run the other tree's commands from inside it
    cwd = env["PYTHONPATH"] if env else None
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env, cwd=cwd)
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--before", type=Path, help="another source tree to time beside this one")
    args = parser.parse_args()
    envs: dict[str, dict | None] = {name: None for name in COMMANDS}
    if args.before:
        env = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
        for sub in ([], ["eval"]):
            name = f"ragdiff {' '.join([*sub, '--help'])} (before: {args.before})"
            COMMANDS[name] = [PY, "-m", "ragdiff", *sub, "--help"]
            envs[name] = env
    compile_trees(Path(__file__).resolve().parent.parent, *([args.before] if args.before else []))
    loads = [os.getloadavg()[0]]
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for name, cmd in COMMANDS.items():  # one warm-up each: the page cache, not the code, is cold on the first
        once(cmd, envs[name])
    for _ in range(args.rounds):
        for name, cmd in COMMANDS.items():
            times[name].append(once(cmd, envs[name]))
    loads.append(os.getloadavg()[0])
    base = statistics.median(times[next(iter(COMMANDS))])
    print(f"median of {args.rounds} interleaved rounds; load average {loads[0]:.2f} before, {loads[1]:.2f} after\n")
    print("| command | median ms | min–max ms | × bare interpreter | heavy modules loaded |")
    print("|---|---:|---:|---:|---|")
    for name, got in times.items():
        heavy = ""
        if name.startswith("ragdiff"):
            probe = subprocess.run([PY, "-c", PROBE, *name.split(" (")[0].split()[1:]], capture_output=True,
                                   text=True, env=envs[name], cwd=(envs[name] or {}).get("PYTHONPATH"))
            heavy = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "?"
        med = statistics.median(got)
        print(f"| `{name}` | {med * 1000:.1f} | {min(got) * 1000:.1f}–{max(got) * 1000:.1f} | {med / base:.2f} | {heavy} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
