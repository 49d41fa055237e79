"""Write every `ragdiff diff` output a speed change must keep byte-identical into a folder, or compare with one.

    python bench/diff_outputs.py write /tmp/before [--root TREE]   # the outputs of TREE (default: this tree)
    python bench/diff_outputs.py check /tmp/before                 # this tree's outputs against them (exit 1 if any differ)

The outputs: `diff --json`, the text report and `--markdown` on ragdiff/sample_runs (one run, several runs,
--fail-on-regression, --by-tag and --drafted as-labels), and `diff --json`, the text report and `--markdown` of the seeded 1M pair
(bench/data/1000x1000, made by ../shared/bench/gen_big.py) at depths 10, 100 and 1000. Each command's stdout,
stderr and exit code are kept.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PAIR = HERE / "data" / "1000x1000"


def cases() -> dict[str, list[str]]:
    s = "ragdiff/sample_runs"
    one = [f"{s}/bm25.jsonl", f"{s}/dense.jsonl", "--gold", f"{s}/gold.yaml"]
    out = {
        "sample.json": [*one, "--json"],
        "sample.txt": one,
        "sample.md": [*one, "--markdown"],
        "sample_many.json": [f"{s}/bm25.jsonl", f"{s}/dense.jsonl", f"{s}/rrf.jsonl", "--gold", f"{s}/gold.yaml",
                             "--json"],
        "sample_many.txt": [f"{s}/bm25.jsonl", f"{s}/dense.jsonl", f"{s}/rrf.jsonl", "--gold", f"{s}/gold.yaml"],
        "sample_gate.json": [*one, "--json", "--fail-on-regression"],
        "sample_gate.txt": [*one, "--fail-on-regression"],
        "sample_k3_d20.json": [*one, "-k", "3", "--depth", "20", "--json"],
        "sample_tags.json": [*one, "--json", "--by-tag", "--drafted", "as-labels"],
        "sample_tags.txt": [*one, "--by-tag", "--drafted", "as-labels"],
        "sample_rev.json": [f"{s}/dense.jsonl", f"{s}/bm25.jsonl", "--gold", f"{s}/gold.yaml", "--json"],
    }
    if PAIR.is_dir():
        pair = [str(PAIR / "runA.txt"), str(PAIR / "runB.txt"), "--gold", str(PAIR / "qrels.txt")]
        for depth in (10, 100, 1000):
            out[f"pair_d{depth}.json"] = [*pair, "--depth", str(depth), "--json"]
            out[f"pair_d{depth}.txt"] = [*pair, "--depth", str(depth)]
            out[f"pair_d{depth}.md"] = [*pair, "--depth", str(depth), "--markdown"]
    return out


def run(root: Path, args: list[str]) -> bytes:
    proc = subprocess.run([str(root / ".venv/bin/python"), "-m", "ragdiff", "diff", *args], cwd=root,
                          capture_output=True, env={"PATH": "/usr/bin:/bin", "COLUMNS": "120", "TERM": "dumb"})
    return proc.stdout + b"\n--- stderr\n" + proc.stderr + f"\n--- exit {proc.returncode}\n".encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("write", "check"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree whose ragdiff runs (default: this one)")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    differ = 0
    for name, case in cases().items():
        got = run(args.root.resolve(), case)
        path = args.folder / name
        if args.action == "write":
            path.write_bytes(got)
            print(f"wrote {path} ({len(got)} bytes)")
        elif not path.exists():
            print(f"{name}: no output to compare with in {args.folder}")
            differ += 1
        elif path.read_bytes() != got:
            (args.folder / f"{name}.now").write_bytes(got)
            print(f"{name}: DIFFERS (now in {name}.now)")
            differ += 1
        else:
            print(f"{name}: identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
