"""`ragdiff labels init GOLD --from LOG` on a 100,000-line query log beside reading the same log with polars
(issue 31; the target: init under 2 s).

    python bench/querylog_bench.py [--lines 100000] [--repeat 5] [--out bench/data/querylog]

Writes LOG into OUT (git-ignored): a CSV of LINES rows `timestamp,conversation_id,query,status` drawn from a
Zipf-like mix of DISTINCT base questions (frequency of the i-th ~ 1/i), each asked in a few spellings (case,
punctuation, a dropped letter in a long word, words reordered), about one row in ten a follow-up in the same
conversation ("and for X?"), one in fifty marked failed. Then, in one sitting, alternating for REPEAT rounds,
each a fresh process timed from outside:

  polars-read   python -c "polars.read_csv(LOG)"                        the floor: reading the same file
  init          ragdiff labels init GOLD --from LOG                     every query (the whole log folded)
  init-sample   ragdiff labels init GOLD --from LOG --sample 50         what the lesson asks for: fifty

for DISTINCT in 2,000 / 20,000 base questions (a log of mostly repeats, and one of mostly distinct queries). It
prints a Markdown table of medians and the ratio to polars-read.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
WORDS = ("python json csv datetime timezone subprocess output error password reset token certificate hostname "
         "socket thread queue logging rotate archive extract compress decimal rounding random sample regex group "
         "config parse header dictionary encoding unicode surrogate escape signal handler process timeout child "
         "directory recursive glob pattern temporary file delete mutex concurrent async task gather cancel").split()
OPENERS = ("how do i", "how to", "what is", "", "", "best way to", "why does")


def generate(path: Path, lines: int, distinct: int, seed: int = 31) -> None:
    rng = random.Random(seed)
    base = []
    for i in range(distinct):
        words = rng.sample(WORDS, rng.randint(2, 5))
        base.append((rng.choice(OPENERS) + " " + " ".join(words)).strip() + f" {i % 97}" * (i % 3 == 0))
    weights = [1 / (i + 1) for i in range(distinct)]
    rows = ["timestamp,conversation_id,query,status"]
    picks = rng.choices(range(distinct), weights, k=lines)
    conv = 0
    for n, i in enumerate(picks):
        text = base[i]
        r = rng.random()
        if r < 0.1:
            text = text.upper()
        elif r < 0.15:
            text = text + "?"
        elif r < 0.18:
            long = [w for w in text.split() if len(w) >= 7]
            if long:
                w = rng.choice(long)
                cut = rng.randrange(1, len(w) - 1)
                text = text.replace(w, w[:cut] + w[cut + 1:], 1)
        elif r < 0.2:
            words = text.split()
            rng.shuffle(words)
            text = " ".join(words)
        if rng.random() < 0.1 and n:
            text = "and for " + rng.choice(WORDS) + "?"
        else:
            conv += 1
        status = "failed" if rng.random() < 0.02 else "ok"
        rows.append(f"2026-11-{1 + n * 30 // lines:02d}T00:00,c{conv},\"{text}\",{status}")
    path.write_text("\n".join(rows) + "\n")


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "querylog")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"| log | lines | queries written | polars-read s | init s | init / read | init --sample 50 s | sample / read |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for distinct in (2_000, 20_000):
        log = args.out / f"log_{args.lines}_{distinct}.csv"
        generate(log, args.lines, distinct)
        gold = args.out / "gold.yaml"
        times: dict[str, list[float]] = {"read": [], "init": [], "sample": []}
        written = 0
        for _ in range(args.repeat):
            times["read"].append(timed([PY, "-c", f"import polars; polars.read_csv({str(log)!r})"]))
            for name, extra in (("init", []), ("sample", ["--sample", "50"])):
                gold.unlink(missing_ok=True)
                times[name].append(timed([PY, "-m", "ragdiff", "labels", "init", str(gold), "--from", str(log), *extra]))
                if name == "init":
                    written = gold.read_text().count("\n  - id: ")
        read, init, sample = (statistics.median(times[k]) for k in ("read", "init", "sample"))
        print(f"| {distinct:,} base questions | {args.lines:,} | {written:,} | {read:.2f} | {init:.2f} | "
              f"{init / read:.1f}x | {sample:.2f} | {sample / read:.1f}x |")


if __name__ == "__main__":
    main()
