"""Reading a label file: the JSON label file beside the YAML one of the same content, at several sizes.

    python bench/labels_formats_bench.py [--queries 1000,10000,50000] [--repeat 5] [--before SRC] [--out DIR]

For each size, bench/labels_bench.py's generator writes gold.yaml (the shapes people write: flow and block
lists, graded maps, comments, quoted ids) and this script writes gold.json, the same content as a JSON label
file (json.dumps, indent 2). Then, per source tree (this one, and --before if given), one fresh process per
size times, median of REPEAT rounds, alternating YAML and JSON:

  compose   the node tree with positions (YAML: PyYAML's C composer; JSON: the span scanner), collector
            paused as ragdiff's reader pauses it
  parse     parse_document: the tree read into judgments (what the writer and the loader share)
  load      load_gold: the whole gold set as the commands load it

and checks that the two files read as the same judgments (else it says so: a speed-up that changes what is
read is a bug). Prints a Markdown table with the load average of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

DRIVER = r"""
import gc, json, statistics, sys, time
from pathlib import Path
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.reader import parse_document
from ragdiff.core.labels.spans import compose_json, compose_yaml
folder, repeat = Path(sys.argv[1]), int(sys.argv[2])
texts = {fmt: (folder / f"gold.{fmt}").read_text(encoding="utf-8") for fmt in ("yaml", "json")}
steps = {
    "compose": lambda fmt: (compose_json if fmt == "json" else compose_yaml)(texts[fmt]),
    "parse": lambda fmt: parse_document(Path(f"gold.{fmt}"), fmt, texts[fmt]),
    "load": lambda fmt: load_gold(folder / f"gold.{fmt}"),
}
got = {(s, f): [] for s in steps for f in texts}
for _ in range(repeat):
    for step, run in steps.items():
        for fmt in texts:
            paused = step != "load"  # load_gold pauses the collector itself, where it reads
            if paused:
                gc.disable()
            t = time.perf_counter()
            run(fmt)
            got[(step, fmt)].append(time.perf_counter() - t)
            gc.enable()
a, b = load_gold(folder / "gold.yaml"), load_gold(folder / "gold.json")
cols = ["query_id", "chunk_id", "grade", "level"]
same = a.judgments.select(cols).equals(b.judgments.select(cols)) and \
    a.queries.select("query_id", "text", "regression").equals(b.queries.select("query_id", "text", "regression"))
print(json.dumps({"median": {f"{s} {f}": statistics.median(v) for (s, f), v in got.items()}, "same": same,
                  "judgments": a.judgments.height}))
"""


def write_json(folder: Path) -> Path:
    import yaml

    data = yaml.load((folder / "gold.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)

    def strings(x):  # ids are strings in ragdiff however YAML would type them
        if isinstance(x, dict):
            return {str(k): strings(v) for k, v in x.items()}
        if isinstance(x, list):
            return [strings(v) for v in x]
        return x

    out = folder / "gold.json"
    out.write_text(json.dumps(strings(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    from labels_bench import generate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default="1000,10000,50000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", type=Path, help="another ragdiff source tree, timed in the same rounds")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "label_formats")
    args = ap.parse_args(argv)
    sizes = [int(n) for n in args.queries.split(",")]
    trees = [("this tree", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rows, loads = [], [os.getloadavg()[0]]
    for n in sizes:
        folder = args.out / str(n)
        generate(folder, n, 10)
        write_json(folder)
        mb = {fmt: (folder / f"gold.{fmt}").stat().st_size / 1e6 for fmt in ("yaml", "json")}
        for label, tree in trees:
            proc = subprocess.run([PY, "-c", DRIVER, str(folder), str(args.repeat)], capture_output=True, text=True,
                                  cwd=folder, env=dict(os.environ, PYTHONPATH=str(tree)))
            loads.append(os.getloadavg()[0])
            if proc.returncode:
                rows.append(f"| {n:,} | {label} | failed: {proc.stderr.strip().splitlines()[-1][:60]} |")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            m = r["median"]
            cells = [f"{m[f'{s} yaml']:.3f} / {m[f'{s} json']:.3f} ({m[f'{s} json'] / m[f'{s} yaml']:.2f}x)"
                     for s in ("compose", "parse", "load")]
            rows.append(f"| {n:,} ({mb['yaml']:.1f} / {mb['json']:.1f} MB) | {label} | " + " | ".join(cells)
                        + f" | {'yes' if r['same'] else 'NO'} |")
    print(f"Label file read, YAML / JSON seconds (JSON ÷ YAML), median of {args.repeat}; load average "
          f"{min(loads):.1f}–{max(loads):.1f}\n")
    print("| queries (YAML / JSON size) | tree | compose | parse_document | load_gold | same judgments |")
    print("|---|---|---:|---:|---:|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
