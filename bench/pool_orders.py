"""Pool orders: judgments each order of `ragdiff judge` needs to find 80/90/95/100% of the pool's gold, as ratios
of the `rank` order, the gold-left estimate's error along the way, and how often the order moves to another
query on the way to 80% (each move a new query for the reviewer to read) (bench/RESULTS.md, "Pool orders").

    python bench/pool_orders.py [--pools 10,30] [--out bench/data/pool_orders] [--orders ...] [--drafts C:E]

Every number comes from `ragdiff judge RUN... --gold START --simulate ORACLE --order O --pool N --json`, the
command a team runs on its own finished labels, with START a label file holding the queries and no judgment.

Collections:
- sample: ragdiff/sample_runs (bm25, dense, rrf; gold.yaml as the oracle). Its labels cover the merged top 10
  of bm25 and dense (plus 14 chunks found while reading): deeper chunks are unjudged, so not relevant to the
  oracle, and a pool deeper than 10 holds little gold past rank 10 by construction.
- synthetic-a, synthetic-b: fully judged by construction (`synthetic` below), every chunk's relevance known.

`--drafts C:E` starts every replay from drafted labels instead (`drafted_start`): a simulated model drafts a share C
of each query's chunks in the runs' merged top 10, the oracle's grade (0 where it has none) flipped with
probability E (gold to 0, not gold to 1), seeded. The queue offers drafted chunks like any other; the gold-left
model takes the drafts as soft evidence (core/judge/pool_order.py, GoldModel).

The generator (`synthetic`, seeded; same seed, same files): per query a private set of 400 candidate chunks;
12% of the queries have no gold (the "none" queries), the rest 1 + NegBin(2, 0.3) gold chunks (mean ~5.7,
long tail, at most 40) with grades 1/2/3 at 45/30/25%. A query's difficulty a ~ LogNormal(0, 0.5). Each
candidate has a surface score u ~ N(0, 1) that every run sees (topical but wrong chunks rank high in all runs
at once) and each run its own noise e ~ N(0, 1); run r scores a chunk a * quality_r * (0.6 + 0.4 * grade) *
[gold] + rho_r * u + sqrt(1 - rho_r^2) * e and returns its top 100. Runs "lexical" and "dense" plus their
reciprocal rank fusion (k = 60), as in the sample. synthetic-a: quality 2.2 / 2.6, rho 0.6 / 0.5 (runs about
as good as the sample's); synthetic-b: quality 1.2 / 1.4, rho 0.7 / 0.7 (weak, correlated runs, gold spread
deep: where ordering has the least to go on).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RAGDIFF = [sys.executable, "-m", "ragdiff"]
ORDERS = ("rank", "mtf", "bandit", "bandit-stationary", "global")
PERCENTS = ("50", "80", "90", "95", "100")
SYNTHETIC = {
    "synthetic-a": dict(seed=11, quality=(2.2, 2.6), rho=(0.6, 0.5)),
    "synthetic-b": dict(seed=12, quality=(1.2, 1.4), rho=(0.7, 0.7)),
}


def _yaml_id(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML string: ids stay strings


def write_start(queries: list[tuple[str, str]], path: Path) -> None:
    """A label file with the queries and no judgment: where the replayed queue starts."""
    lines = ["queries:"]
    for qid, text in queries:
        lines += [f"  - id: {_yaml_id(qid)}", f"    text: {_yaml_id(text)}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def synthetic(out: Path, seed: int, quality: tuple[float, float], rho: tuple[float, float],
              n_queries: int = 80, candidates: int = 400, depth: int = 100) -> dict:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    names = ("lexical", "dense")
    ranked: dict[str, list[tuple[str, list[str]]]] = {n: [] for n in names}
    gold_lines = ["queries:"]
    queries = []
    total_gold = 0
    for q in range(n_queries):
        qid = f"s{q:03d}"
        queries.append((qid, f"synthetic query {q}"))
        n_gold = 0 if rng.random() < 0.12 else min(40, 1 + int(rng.negative_binomial(2, 0.3)))
        grades = np.zeros(candidates, dtype=int)
        grades[:n_gold] = rng.choice([1, 2, 3], size=n_gold, p=[0.45, 0.30, 0.25])
        rng.shuffle(grades)
        ids = [f"{qid}-c{j:03d}" for j in range(candidates)]
        a = rng.lognormal(0.0, 0.5)
        surface = rng.normal(size=candidates)
        for name, qual, r in zip(names, quality, rho):
            signal = np.where(grades > 0, a * qual * (0.6 + 0.4 * grades), 0.0)
            score = signal + r * surface + np.sqrt(1 - r * r) * rng.normal(size=candidates)
            top = np.argsort(-score, kind="stable")[:depth]
            ranked[name].append((qid, [ids[j] for j in top]))
        gold = {ids[j]: int(grades[j]) for j in np.flatnonzero(grades)}
        total_gold += len(gold)
        gold_lines += [f"  - id: {_yaml_id(qid)}", f"    text: {_yaml_id(queries[-1][1])}",
                       "    gold: {" + ", ".join(f"{_yaml_id(c)}: {g}" for c, g in gold.items()) + "}"]
    (out / "gold.yaml").write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    write_start(queries, out / "start.yaml")
    fused = []
    for (qid, a_list), (_, b_list) in zip(ranked["lexical"], ranked["dense"]):
        score: dict[str, float] = {}
        for lst in (a_list, b_list):
            for rank, c in enumerate(lst, 1):
                score[c] = score.get(c, 0.0) + 1.0 / (60 + rank)
        fused.append((qid, sorted(score, key=lambda c: (-score[c], c))[:depth]))
    ranked["rrf"] = fused
    for name, lists in ranked.items():
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for qid, lst in lists:
                handle.write(json.dumps({"query_id": qid, "results": lst}) + "\n")
    return {"queries": n_queries, "gold": total_gold}


def collections(out: Path) -> dict[str, dict]:
    sample = ROOT / "ragdiff" / "sample_runs"
    import yaml

    labels = yaml.safe_load((sample / "gold.yaml").read_text(encoding="utf-8"))
    (out / "sample").mkdir(parents=True, exist_ok=True)
    write_start([(str(q["id"]), str(q["text"])) for q in labels["queries"]], out / "sample" / "start.yaml")
    found = {"sample": {"runs": [sample / f"{n}.jsonl" for n in ("bm25", "dense", "rrf")],
                        "start": out / "sample" / "start.yaml", "oracle": sample / "gold.yaml"}}
    for name, spec in SYNTHETIC.items():
        synthetic(out / name, **spec)
        found[name] = {"runs": [out / name / f"{n}.jsonl" for n in ("lexical", "dense", "rrf")],
                       "start": out / name / "start.yaml", "oracle": out / name / "gold.yaml"}
    return found


def drafted_start(spec: dict, coverage: float, error: float, out: Path, seed: int = 5) -> Path:
    """START with drafted labels over the runs' merged top 10 (the module's docstring)."""
    import polars as pl

    from ragdiff.core.io.runs import load_run
    from ragdiff.core.labels.gold import load_gold

    rng = np.random.default_rng(seed)
    oracle = load_gold(spec["oracle"]).qrels("gold")
    grade = {(q, c): g for q, c, g in oracle.iter_rows()}
    top = pl.concat([load_run(path).frame.filter(pl.col("rank") <= 10).select("query_id", "chunk_id")
                     for path in spec["runs"]]).unique(maintain_order=True)
    drafts: dict[str, dict[str, int]] = {}
    for qid, chunk in top.iter_rows():
        if rng.random() >= coverage:
            continue
        true = max(grade.get((qid, chunk), 0), 0)
        said = (0 if true else 1) if rng.random() < error else true
        drafts.setdefault(qid, {})[chunk] = said
    lines = spec["start"].read_text(encoding="utf-8").splitlines()
    out_lines, current = [], None
    for line in lines:
        out_lines.append(line)
        if line.startswith("  - id: "):
            qid = json.loads(line[len("  - id: "):])
            current = drafts.get(qid)
        elif line.startswith("    text: ") and current:
            out_lines.append("    drafted: {" + ", ".join(f"{_yaml_id(c)}: {g}" for c, g in sorted(current.items()))
                             + "}")
    path = out / f"start-drafted-{coverage}-{error}.yaml"
    path.write_text("\n".join(out_lines) + "\n", encoding="utf-8")
    return path


def replay(spec: dict, order: str, pool: int) -> dict:
    cmd = [*RAGDIFF, "judge", *map(str, spec["runs"]), "--gold", str(spec["start"]), "--simulate",
           str(spec["oracle"]), "--order", order, "--pool", str(pool), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", default="10,30")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "pool_orders")
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--drafts", metavar="C:E", help="start from drafted labels: share C drafted, share E wrong")
    args = parser.parse_args()
    found = collections(args.out)
    if args.drafts:
        coverage, error = (float(x) for x in args.drafts.split(":"))
        for name, spec in found.items():
            spec["start"] = drafted_start(spec, coverage, error, spec["start"].parent)
    rows = []
    for name, spec in found.items():
        for pool in (int(p) for p in args.pools.split(",")):
            base = None
            for order in args.orders.split(","):
                started = time.perf_counter()
                doc = replay(spec, order, pool)
                seconds = time.perf_counter() - started
                base = base or doc
                rows.append((name, pool, order, doc, base, seconds))
                print(f"{name} pool {pool} {order}: {doc['judgments_to']} ({seconds:.1f} s)", file=sys.stderr)
    print("| collection | pool | gold / pooled | order | 50% | 80% | 90% | 95% | 100% | estimate error mean / mean abs "
          "| estimate / truth at 80% | at 90% | query switches to 80% |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, pool, order, doc, base, _ in rows:
        cells = []
        for p in PERCENTS:
            n, b = doc["judgments_to"][p], base["judgments_to"][p]
            cells.append(f"{n}" if order == "rank" else f"{n} ({n / b:.2f}x)" if n is not None and b else str(n))
        err = doc["estimate_error"]
        at = [err["at"].get(p) for p in ("80", "90")]
        at_cells = [f"{a['estimate']:.1f} / {a['truth']}" if a else "-" for a in at]
        # a new query to read per judgment, on the way to 80% of the gold
        switches, n80 = doc["query_switches_to"]["80"], doc["judgments_to"]["80"]
        switch_cell = f"{switches} ({switches / n80:.2f} a judgment)" if switches is not None and n80 else "-"
        print(f"| {name} | {pool} | {doc['gold_in_pool']} / {doc['pool_size']} | {order} | " + " | ".join(cells)
              + f" | {err['mean_signed']:+.1f} / {err['mean_abs']:.1f} | " + " | ".join(at_cells)
              + f" | {switch_cell} |")
    # depth apart from effort: in a deeper pool, the gold found with as many judgments as the shallowest pool holds
    pools = sorted({pool for _, pool, *_ in rows})
    if len(pools) > 1:
        print()
        print(f"| collection | order | gold in the top-{pools[0]} pool | judgments | gold found in the top-{pools[-1]} pool "
              "with that many judgments |")
        print("|---|---|---|---|---|")
        shallow = {(n, o): d for n, p, o, d, *_ in rows if p == pools[0]}
        for name, pool, order, doc, *_ in rows:
            if pool != pools[-1]:
                continue
            budget = shallow[name, order]["pool_size"]
            found = max(f for j, f in doc["curve"] if j <= budget)
            print(f"| {name} | {order} | {shallow[name, order]['gold_in_pool']} | {budget} | {found} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
