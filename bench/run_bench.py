"""ragdiff at scale, side by side with pytrec_eval, ir_measures and ranx (issue 7).

    python bench/run_bench.py                       # 1000 queries x 1000 chunks, 3 repeats, agreement check
    python bench/run_bench.py --sizes 1000x1000,10000x1000 --repeat 3
    python bench/run_bench.py --sizes 10000x1000 --repeat 1 --tools ragdiff-diff,ragdiff-eval --no-check
    python bench/run_bench.py --profile             # also writes bench/profile_diff.txt
    python bench/run_bench.py --depths 10,100,1000 --before /tmp/base   # depth sweep, before/after in the same rounds

For each size it generates (once, seeded) two runs and graded qrels into bench/data/NxD/ with
bench/generate.py, then runs -- one process at a time, turn by turn, every tool once per round -- each tool
under `/usr/bin/time -v`, taking the median wall time and the median peak RSS over the rounds:

  ragdiff-diff   ragdiff diff run_a run_b --gold qrels -k 5 --depth D --json (every default metric, flips, tests,
                 overlap; one row per D in --depths, default 10)
  ragdiff-eval   ragdiff eval run_a run_b --gold qrels --metrics <the five below>
  pytrec_eval    pytrec_eval.parse_qrel/parse_run + RelevanceEvaluator on both runs
  ir_measures    read_trec_qrels/read_trec_run + calc_aggregate on both runs
  ranx           Qrels/Run.from_file + evaluate on both runs
  polars-read    the floor: polars' CSV reader on the qrels and both runs, as ragdiff reads them, nothing else

The measures asked of every tool: P@5, recall@5 (trec recall_5 = ragdiff recall_frac@5), success@5 (= ragdiff
recall@5), MRR (recip_rank), nDCG@10. Every peer runs from a small driver script written into bench/data/drivers/
that parses its input files itself: parsing is part of the job. All tools run on this interpreter
(sys.executable), so `make bench` (.venv with .[bench]) and /tmp/bench-venv both work.

The agreement check compares per-query values: ragdiff `eval --per-query --json` against a small reference
implementation of trec_eval written here (exact to 1e-9, both runs), and against each peer on both runs
(the share of query x measure values that agree to 1e-9, and where they differ, why).

Results: a markdown table on stdout and in bench/data/NxD/results.md, raw numbers in bench/data/NxD/results.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bytecode import compile_trees

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
PY = sys.executable

# (ragdiff name, pytrec_eval name, ir_measures name, ranx name)
MEASURES = [
    ("precision@5", "P_5", "P@5", "precision@5"),
    ("recall_frac@5", "recall_5", "R@5", "recall@5"),
    ("recall@5", "success_5", "Success@5", "hit_rate@5"),
    ("mrr", "recip_rank", "RR", "mrr"),
    ("ndcg@10", "ndcg_cut_10", "nDCG@10", "ndcg@10"),
]
RAGDIFF_METRICS = ",".join(m[0] for m in MEASURES)
K, DEPTH = 5, 10  # ragdiff diff: every default metric at k=5 and at depth=10 (so nDCG@10 is among them)
# `ragdiff-diff` runs once per --depths value (ragdiff-diff@D); `polars-read` is the floor: polars reading the
# qrels and both runs with the reader ragdiff uses, nothing else
ALL_TOOLS = ("ragdiff-diff", "ragdiff-eval", "pytrec_eval", "ir_measures", "ranx", "polars-read")
DEFAULT_TOOLS = ALL_TOOLS

# ---------------------------------------------------------------------------------------------------------------
# peer drivers: each reads qrels + both runs from disk, computes the five measures per query, prints the means;
# with --dump OUT.json it also writes {run: {qid: {ragdiff metric name: value}}} (only in the agreement check)
DRIVERS = {
    "pytrec_eval": '''
import json, sys
import pytrec_eval

NAMES = {names}
qrels_path, runs, dump = sys.argv[1], sys.argv[2:4], (sys.argv[5] if len(sys.argv) > 5 else None)
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {{"P.5", "recall.5", "success.5", "recip_rank", "ndcg_cut.10"}})
out = {{}}
for path in runs:
    with open(path) as f:
        run = pytrec_eval.parse_run(f)
    per_query = evaluator.evaluate(run)
    del run
    means = {{m: sum(v[m] for v in per_query.values()) / len(per_query) for m in NAMES}}
    print(path, json.dumps({{NAMES[m]: round(v, 4) for m, v in means.items()}}))
    out[path] = {{q: {{NAMES[m]: v[m] for m in NAMES}} for q, v in per_query.items()}}
if dump:
    json.dump(out, open(dump, "w"))
''',
    "ir_measures": '''
import json, sys
import ir_measures
from ir_measures import P, R, Success, RR, nDCG

NAMES = {names}
MEASURES = [P@5, R@5, Success@5, RR, nDCG@10]
qrels_path, runs, dump = sys.argv[1], sys.argv[2:4], (sys.argv[5] if len(sys.argv) > 5 else None)
qrels = list(ir_measures.read_trec_qrels(qrels_path))
evaluator = ir_measures.evaluator(MEASURES, qrels)
out = {{}}
for path in runs:
    if dump:
        per_query = {{}}
        for m in evaluator.iter_calc(ir_measures.read_trec_run(path)):
            per_query.setdefault(m.query_id, {{}})[NAMES[str(m.measure)]] = m.value
        out[path] = per_query
    means = evaluator.calc_aggregate(ir_measures.read_trec_run(path))
    print(path, json.dumps({{NAMES[str(m)]: round(v, 4) for m, v in means.items()}}))
if dump:
    json.dump(out, open(dump, "w"))
''',
    "ranx": '''
import json, sys, warnings
warnings.simplefilter("ignore")
from ranx import Qrels, Run, evaluate

NAMES = {names}
qrels_path, runs, dump = sys.argv[1], sys.argv[2:4], (sys.argv[5] if len(sys.argv) > 5 else None)
qrels = Qrels.from_file(qrels_path, kind="trec")
out = {{}}
for path in runs:
    run = Run.from_file(path, kind="trec")
    means = evaluate(qrels, run, list(NAMES))
    print(path, json.dumps({{NAMES[m]: round(float(v), 4) for m, v in means.items()}}))
    if dump:
        out[path] = {{}}
        for m in NAMES:
            for q, v in run.scores[m].items():
                out[path].setdefault(q, {{}})[NAMES[m]] = float(v)
if dump:
    json.dump(out, open(dump, "w"))
''',
}




FLOOR_DRIVER = '''
import sys
import polars as pl
schema = {"q": pl.String, "q0": pl.String, "chunk": pl.String, "rank": pl.Int64, "score": pl.Float64, "tag": pl.String}
qrels = pl.read_csv(sys.argv[1], separator=" ", has_header=False, quote_char=None,
                    schema={"q": pl.String, "it": pl.String, "chunk": pl.String, "grade": pl.Int64})
for path in sys.argv[2:4]:
    run = pl.read_csv(path, separator=" ", has_header=False, quote_char=None, schema=schema, columns=[0, 2, 3, 4, 5])
    print(path, run.height)
'''


def write_drivers(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"polars-read": folder / "polars_read_driver.py"}
    paths["polars-read"].write_text(FLOOR_DRIVER.lstrip())
    for tool, template in DRIVERS.items():
        column = {"pytrec_eval": 1, "ir_measures": 2, "ranx": 3}[tool]
        names = {m[column]: m[0] for m in MEASURES}
        path = folder / f"{tool}_driver.py"
        path.write_text(textwrap.dedent(template).format(names=repr(names)).lstrip())
        paths[tool] = path
    return paths


# ---------------------------------------------------------------------------------------------------------------
def commands(tool: str, folder: Path, drivers: dict[str, Path]) -> list[str]:
    qrels, a, b = (str(folder / n) for n in ("qrels.txt", "run_a.trec", "run_b.trec"))
    if tool.startswith("ragdiff-diff"):
        depth = tool.partition("@")[2] or str(DEPTH)
        # the command, --json included (the text report costs a little more)
        return [PY, "-m", "ragdiff", "diff", a, b, "--gold", qrels, "-k", str(K), "--depth", depth, "--json"]
    if tool == "ragdiff-eval":
        return [PY, "-m", "ragdiff", "eval", a, b, "--gold", qrels, "--metrics", RAGDIFF_METRICS]
    return [PY, str(drivers[tool]), qrels, a, b]


_WALL = re.compile(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")
_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_CPU = re.compile(r"(?:User|System) time \(seconds\): (\d+(?:\.\d+)?)")


def timed(cmd: list[str], log: Path, cwd: Path = ROOT) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB, exit code, CPU seconds user+sys) of one process under /usr/bin/time -v."""
    timefile = log.with_suffix(".time")
    with log.open("w") as out:
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", str(timefile), *cmd], stdout=out,
                              stderr=subprocess.STDOUT, cwd=cwd)
    report = timefile.read_text()
    h, m, s = _WALL.search(report).groups()
    wall = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(_RSS.search(report).group(1)) / 1024
    cpu = sum(float(x) for x in _CPU.findall(report))
    return wall, rss, proc.returncode, cpu


def ensure_data(n: int, d: int, seed: int) -> Path:
    folder = DATA / f"{n}x{d}"
    info = folder / "info.json"
    if info.exists():
        got = json.loads(info.read_text())
        if (got["queries"], got["depth"], got["seed"]) == (n, d, seed):
            return folder
    print(f"generating {n} x {d} (seed {seed}) into {folder} ...", flush=True)
    subprocess.run([PY, str(HERE / "generate.py"), "--queries", str(n), "--depth", str(d), "--seed", str(seed),
                    "--out", str(folder)], check=True)
    return folder


# ---------------------------------------------------------------------------------------------------------------
# the reference: trec_eval's rules, written out plainly (score desc as float64, then docno desc; -c; rel >= 1)
def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open() as f:
        for line in f:
            q, _, c, g = line.split()
            qrels.setdefault(q, {})[c] = int(g)
    return qrels


def reference_eval(qrels: dict[str, dict[str, int]], run_path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, list[tuple[float, str]]] = {}
    with run_path.open() as f:
        for line in f:
            q, _, c, _rank, s, _tag = line.split()
            run.setdefault(q, []).append((float(s), c))
    out = {}
    for q, judged in qrels.items():
        ranked = [c for _, c in sorted(run.get(q, []), reverse=True)]  # score desc, then chunk id desc
        rel = [judged.get(c, 0) >= 1 for c in ranked]
        num_rel = sum(1 for g in judged.values() if g >= 1)
        if num_rel == 0:
            continue  # unanswerable: ragdiff leaves it out (none are generated)
        hits5 = sum(rel[:5])
        first = next((i + 1 for i, r in enumerate(rel) if r), None)
        dcg = sum(max(judged.get(c, 0), 0) / math.log2(i + 2) for i, c in enumerate(ranked[:10]))
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        out[q] = {"precision@5": hits5 / 5, "recall_frac@5": hits5 / num_rel, "recall@5": float(hits5 > 0),
                  "mrr": 1.0 / first if first else 0.0, "ndcg@10": dcg / idcg if idcg > 0 else 0.0}
    return out


def compare(ours: dict, theirs: dict, tol: float = 1e-9) -> tuple[int, int, list[str]]:
    """(agreeing values, total values, a few examples of disagreement) over ours' queries x measures."""
    agree = total = 0
    examples = []
    for q, values in ours.items():
        for m, v in values.items():
            total += 1
            w = theirs.get(q, {}).get(m)
            if w is not None and v is not None and abs(v - w) <= tol:
                agree += 1
            elif len(examples) < 3:
                examples.append(f"{q} {m}: ragdiff {v} vs {w}")
    return agree, total, examples


def agreement(folder: Path, drivers: dict[str, Path], tools: list[str]) -> list[str]:
    qrels_path = folder / "qrels.txt"
    runs = [folder / "run_a.trec", folder / "run_b.trec"]
    proc = subprocess.run([PY, "-m", "ragdiff", "eval", *map(str, runs), "--gold", str(qrels_path), "--metrics",
                           RAGDIFF_METRICS, "--per-query", "--json"], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        return [f"ragdiff eval --per-query --json failed: {proc.stderr.strip()[:300]}"]
    doc = json.loads(proc.stdout)
    ours = {Path(r["path"]).name: r["per_query"] for r in doc["runs"]}
    lines = []
    qrels = read_qrels(qrels_path)
    for run in runs:
        ref = reference_eval(qrels, run)
        a, t, ex = compare(ours[run.name], ref)
        a2, t2, _ = compare(ref, ours[run.name])
        lines.append(f"| reference trec_eval (in run_bench.py) | {run.name} | {a}/{t} ({a / t:.2%}) |"
                     f" {'exact' if a == t and a2 == t2 else '; '.join(ex)} |")
    for tool in tools:
        if tool not in DRIVERS:
            continue
        dump = folder / f"{tool}_per_query.json"
        proc = subprocess.run([PY, str(drivers[tool]), str(qrels_path), *map(str, runs), "--dump", str(dump)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            lines.append(f"| {tool} | both | failed | {proc.stderr.strip()[-200:]} |")
            continue
        peer = json.loads(dump.read_text())
        for run in runs:
            a, t, ex = compare(ours[run.name], peer[str(run)])
            lines.append(f"| {tool} | {run.name} | {a}/{t} ({a / t:.2%}) | {'exact' if a == t else '; '.join(ex)} |")
    return lines


# ---------------------------------------------------------------------------------------------------------------
def bench_size(n: int, d: int, args) -> dict:
    folder = ensure_data(n, d, args.seed)
    drivers = write_drivers(DATA / "drivers")
    tools = list(args.tools)
    logs = folder / "logs"
    logs.mkdir(exist_ok=True)
    samples: dict[str, list[tuple[float, float, int, float]]] = {t: [] for t in tools}
    for round_ in range(1, args.repeat + 1):
        for tool in tools:
            load = os.getloadavg()[0]
            # `before:TOOL` runs ragdiff from the --before tree (`python -m` takes it from the working folder)
            before = tool.startswith("before:")
            cmd = commands(tool.removeprefix("before:"), folder, drivers)
            wall, rss, rc, cpu = timed(cmd, logs / f"{tool.replace(':', '_')}.{round_}.log",
                                       cwd=args.before.resolve() if before else ROOT)
            samples[tool].append((wall, rss, rc, cpu))
            print(f"  {n}x{d} round {round_} {tool:13s} {wall:8.2f} s wall {cpu:8.2f} s cpu {rss:8.1f} MiB rc={rc}"
                  f"  (load avg before: {load:.1f})", flush=True)
    rows = {}
    for tool, got in samples.items():
        rows[tool] = {"wall_median": statistics.median(g[0] for g in got),
                      "rss_median": statistics.median(g[1] for g in got),
                      "cpu_median": statistics.median(g[3] for g in got),
                      "walls": [g[0] for g in got], "rss": [g[1] for g in got], "cpus": [g[3] for g in got],
                      "exit_codes": [g[2] for g in got]}
    check = agreement(folder, drivers, tools) if args.check else []
    result = {"size": f"{n}x{d}", "lines_per_run": n * d, "repeat": args.repeat, "rows": rows,
              "agreement": check, "command": " ".join(commands("ragdiff-diff", folder, drivers))}
    (folder / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    md = render(result)
    (folder / "results.md").write_text(md)
    print(md, flush=True)
    return result


def render(result: dict) -> str:
    rows = result["rows"]
    peers = [t for t in ("pytrec_eval", "ir_measures", "ranx", "polars-read") if t in rows]
    out = [f"### {result['size']} ({result['lines_per_run']:,} lines per run, two runs; median of {result['repeat']})",
           "", "| tool | wall s | CPU s (user+sys) | peak RSS MiB | wall of each round (s) |"
           + "".join(f" ragdiff ÷ {p} (wall / RSS) |" for p in peers),
           "|---|---:|---:|---:|---|" + "---:|" * len(peers)]
    for tool, row in rows.items():
        ratios = [f"{row['wall_median'] / rows[p]['wall_median']:.2f} / {row['rss_median'] / rows[p]['rss_median']:.2f}"
                  if tool.startswith(("ragdiff", "before:")) else "" for p in peers]
        bad = "" if all(c == 0 for c in row["exit_codes"]) else f" (exit {row['exit_codes']})"
        out.append(f"| {tool}{bad} | {row['wall_median']:.2f} | {row.get('cpu_median', math.nan):.2f} | "
                   f"{row['rss_median']:.0f} | " + ", ".join(f"{w:.2f}" for w in row["walls"]) + " |"
                   + "".join(f" {r} |" for r in ratios))
    if result["agreement"]:
        out += ["", "Per-query agreement with ragdiff `eval --per-query --json` (values within 1e-9):", "",
                "| against | run | agree | notes |", "|---|---|---|---|", *result["agreement"]]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------------------
PROFILE_SCRIPT = r'''
import cProfile, io, pstats, sys, time, contextlib
sys.argv = ["ragdiff"] + sys.argv[1:]
from ragdiff.cli.main import main
prof = cProfile.Profile()
sink = io.StringIO()
t = time.perf_counter()
with contextlib.redirect_stdout(sink):
    prof.enable(); rc = main(sys.argv[1:]); prof.disable()
wall = time.perf_counter() - t
s = io.StringIO()
st = pstats.Stats(prof, stream=s)
st.sort_stats("cumulative").print_stats(45)
st.sort_stats("tottime").print_stats(25)
print(f"# {' '.join(sys.argv)}\n# exit {rc}, wall {wall:.2f} s under cProfile\n")
print(s.getvalue())
'''


def profile(folder: Path, tool: str, target: Path) -> None:
    drivers = write_drivers(DATA / "drivers")
    cmd = commands(tool, folder, drivers)
    script = DATA / "profile_cli.py"
    script.write_text(PROFILE_SCRIPT)
    proc = subprocess.run([PY, str(script), *cmd[3:]], capture_output=True, text=True, cwd=ROOT)
    depth = tool.partition("@")[2] or str(DEPTH)
    phases = subprocess.run([PY, str(HERE / "run_bench.py"), "--phases", str(folder), "--depths", depth],
                            capture_output=True, text=True, cwd=ROOT)
    target.write_text(f"# cProfile of `ragdiff {' '.join(cmd[3:])}` (paths under bench/data/)\n"
                      + phases.stdout + phases.stderr[-2000:] + "\n" + proc.stdout + proc.stderr[-2000:])
    print(f"wrote {target}")


def phases(folder: Path, depth: int = DEPTH) -> None:
    """Wall time of each phase of `ragdiff diff`, called step by step in this process (no profiler overhead)."""
    t0 = time.perf_counter()
    import polars as pl

    from ragdiff.core.io import run_order as order_mod
    from ragdiff.core.io import runs as runs_mod
    from ragdiff.core.io import trec_run as trec_mod
    from ragdiff.core.metrics.diff import compare
    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings
    from ragdiff.core.metrics import stats as stats_mod

    def lap(label, fn):
        t = time.perf_counter()
        value = fn()
        print(f"#   {label:62s} {time.perf_counter() - t:7.3f} s")
        return value

    print(f"# phases of ragdiff diff on {folder.name} (polars {pl.__version__}, {pl.thread_pool_size()} threads); "
          f"imports {time.perf_counter() - t0:.3f} s")
    gold = lap("load_gold(qrels.txt)", lambda: load_gold(folder / "qrels.txt"))
    path = folder / "run_b.trec"
    lap("run_b: _load_trec (plain file: pl.read_csv + checks)", lambda: trec_mod._load_trec(path))
    lap("run_b:   (the general path: whitespace_columns regex + casts)", lambda: trec_mod._load_any_trec(path))
    frame = trec_mod._load_trec(path).with_columns(pl.col("query_id").cast(pl.Categorical))
    frame = lap("run_b: _dedupe (distinct chunks per query)", lambda: order_mod._dedupe(path, frame, False, False))
    lap("run_b: _order (sort qid, score desc, chunk desc; rank)", lambda: order_mod._order(frame, True))
    del frame
    run_a = lap("load_run(run_a) total", lambda: runs_mod.load_run(folder / "run_a.trec"))
    run_b = lap("load_run(run_b) total", lambda: runs_mod.load_run(path))
    settings = EvalSettings(k=K, depth=depth)
    metrics = default_metrics(K, depth, "diff")
    ev_a = lap(f"evaluate(run_a), {len(metrics)} metrics at k={K}, depth={depth}",
               lambda: evaluate(run_a, gold, settings, metrics))
    ev_b = lap("evaluate(run_b)", lambda: evaluate(run_b, gold, settings, metrics))
    import ragdiff.core.metrics.diff as diff_mod
    import ragdiff.core.metrics.overlap as overlap_mod

    spent = {"paired_tests": 0.0, "overlap_of": 0.0}
    originals = {"paired_tests": stats_mod.paired_tests, "overlap_of": overlap_mod.overlap_of}

    def timing(name):
        def timed(*a, **kw):
            t = time.perf_counter()
            try:
                return originals[name](*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        return timed

    for name in originals:
        setattr(diff_mod, name, timing(name))
    lap("compare(ev_a, ev_b): tests, flips, which-k, overlap", lambda: compare(ev_a, ev_b, gold=gold))
    for name, fn in originals.items():
        setattr(diff_mod, name, fn)
    print(f"#     of which paired_tests (sign flips + bootstrap, all metrics in one batch) "
          f"{spent['paired_tests']:7.3f} s")
    print(f"#     of which the overlap (Jaccard, RBO at k and at depth {depth})"
          f"{'':21s}{spent['overlap_of']:7.3f} s")
    print(f"# total in this process {time.perf_counter() - t0:.3f} s")


# ---------------------------------------------------------------------------------------------------------------
# target 3: one chunk's text out of a big corpus without reading the corpus into memory
CORPUS_DRIVER = r'''
import json, sys, time
mode, path, chunk_id = sys.argv[1:4]
t = time.perf_counter()
if mode == "whole":  # the baseline: every line parsed into a dict
    with open(path) as f:
        corpus = {(r := json.loads(line))["id"]: r for line in f}
    text = corpus[chunk_id]["text"]
    first = time.perf_counter() - t
elif mode == "core":
    from ragdiff.core.io.corpus import Corpus
    corpus = Corpus(path)
    text = corpus.get(chunk_id).text
    first = time.perf_counter() - t
elif mode == "app":
    from ragdiff.app.corpus import CorpusIndex
    corpus = CorpusIndex(path)
    corpus.build()
    text = corpus.get(chunk_id).text
    first = time.perf_counter() - t
t2 = time.perf_counter()
again = corpus[chunk_id]["text"] if mode == "whole" else corpus.get(chunk_id).text  # cached
print(json.dumps({"mode": mode, "first_get_s": round(first, 3), "chars": len(text)}))
'''


def corpus_bench(n: int, seed: int, repeat: int) -> str:
    folder = DATA / f"corpus{n}"
    path = folder / "corpus.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([PY, "-c", "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import generate; "
                        "generate.write_corpus(__import__('pathlib').Path(sys.argv[2]), int(sys.argv[3]), "
                        "np.random.default_rng(int(sys.argv[4])))", str(HERE), str(path), str(n), str(seed)],
                       check=True)
    driver = DATA / "drivers" / "corpus_driver.py"
    driver.parent.mkdir(parents=True, exist_ok=True)
    driver.write_text(CORPUS_DRIVER.lstrip())
    chunk = f"c{n // 2:06d}"  # one in the middle of the file
    size = path.stat().st_size / 2 ** 20
    lines = [f"### corpus: {n:,} chunks, {size:.0f} MiB JSONL; one chunk ({chunk}) read, median of {repeat}", "",
             "| reader | wall s | peak RSS MiB | index + first get (in-process s) |", "|---|---:|---:|---:|"]
    modes = [("whole", "json.loads of every line into a dict (baseline)"),
             ("core", "ragdiff.core.io.corpus.Corpus (offset index, seek)"),
             ("app", "ragdiff.app.corpus.CorpusIndex (offset index, seek)")]
    for mode, label in modes:
        got = []
        for r in range(repeat):
            log = folder / f"{mode}.{r}.log"
            wall, rss, rc, _ = timed([PY, str(driver), mode, str(path), chunk], log)
            first = json.loads(log.read_text().strip().splitlines()[-1])["first_get_s"] if rc == 0 else math.nan
            got.append((wall, rss, first, rc))
        bad = "" if all(g[3] == 0 for g in got) else f" (exit {[g[3] for g in got]})"
        lines.append(f"| {label}{bad} | {statistics.median(g[0] for g in got):.2f} | "
                     f"{statistics.median(g[1] for g in got):.0f} | {statistics.median(g[2] for g in got):.2f} |")
    md = "\n".join(lines) + "\n"
    (folder / "results.md").write_text(md)
    print(md, flush=True)
    return md


def machine() -> str:
    import importlib.metadata as md

    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    free = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout
    versions = []
    for pkg in ("ragdiff", "polars", "numpy", "pytrec-eval-terrier", "ir_measures", "ranx", "numba"):
        try:
            versions.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            versions.append(f"{pkg} (not installed)")
    return (f"nproc {os.cpu_count()} · CPU {cpu} · Python {platform.python_version()} ({PY})\n"
            f"{', '.join(versions)}\n{free}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000x1000", help="comma-separated QUERIESxCHUNKS (default 1000x1000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size; the table shows the median")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--depths", default=str(DEPTH),
                        help=f"comma-separated --depth values for ragdiff-diff, each its own row (default {DEPTH})")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="also run the ragdiff commands from this source tree (e.g. `git archive main | tar -x "
                             "-C DIR`), interleaved in the same rounds: a before/after")
    parser.add_argument("--tools", default=",".join(DEFAULT_TOOLS),
                        help=f"comma-separated, from {','.join(ALL_TOOLS)} (default: all)")
    parser.add_argument("--no-check", dest="check", action="store_false", help="skip the per-query agreement check")
    parser.add_argument("--corpus", type=int, default=0, metavar="N",
                        help="also measure reading one chunk from a generated corpus of N chunks (e.g. 200000)")
    parser.add_argument("--profile", action="store_true", help="write bench/profile_diff.txt for the first size")
    parser.add_argument("--profile-only", action="store_true", help="only write the profile (no timing rounds)")
    parser.add_argument("--render", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--phases", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phases:
        phases(args.phases, int(args.depths.split(",")[0]))
        return 0
    if args.render:  # re-print a saved results.json
        print(render(json.loads(args.render.read_text())))
        return 0
    if not Path("/usr/bin/time").exists():
        sys.exit("needs /usr/bin/time (GNU time): apt-get install -y time")
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = {t.partition("@")[0] for t in args.tools} - set(ALL_TOOLS)
    if unknown:
        sys.exit(f"unknown tools {sorted(unknown)}; expected {ALL_TOOLS}")
    depths = [d.strip() for d in args.depths.split(",") if d.strip()]
    args.tools = [x for t in args.tools for x in ([f"{t}@{d}" for d in depths] if t == "ragdiff-diff" else [t])]
    if args.before:  # the same ragdiff commands from another source tree, in the same rounds
        args.tools += [f"before:{t}" for t in args.tools if t.startswith("ragdiff")]
    print(machine(), flush=True)
    compile_trees(ROOT, *([args.before] if args.before else []))
    sizes = []
    for size in filter(None, args.sizes.split(",")):
        n, d = (int(x) for x in size.lower().split("x"))
        sizes.append((n, d))
    for n, d in sizes:
        if not args.profile_only:
            bench_size(n, d, args)
        else:
            ensure_data(n, d, args.seed)
    if args.corpus and not args.profile_only:
        corpus_bench(args.corpus, args.seed, args.repeat)
    if args.profile or args.profile_only:
        n, d = sizes[0]
        depth = max(int(x) for x in args.depths.split(","))
        profile(DATA / f"{n}x{d}", f"ragdiff-diff@{depth}", HERE / "profile_diff.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
