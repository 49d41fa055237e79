"""`ragdiff bm25` beside bm25s used directly in a ten-line script, on the sample set and on a 200,000-chunk corpus
(issue 31).

    python bench/bm25_bench.py [--chunks 200000] [--queries 1000] [--repeat 3] [--out bench/data/bm25]

1. Sample set (1,148 chunks, 72 queries): `ragdiff bm25` and DIRECT (below, bm25s with the same settings) each
   write a run; the two are compared query by query (equal results), and beside the shipped
   sample_runs/bm25.jsonl; recall@10 of each by `ragdiff eval`. Index and retrieve seconds as each reports them,
   and the wall time of the whole command.
2. Synthetic corpus: CHUNKS chunks of 20-120 words drawn Zipf-like from a 50,000-word vocabulary, QUERIES
   queries of 2-6 words; the same two commands, REPEAT rounds alternated, medians.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"

# bm25s used directly: what a person would write in ten lines (prints index / retrieve seconds on stderr)
DIRECT = r'''
import json, sys, time, bm25s, yaml
corpus = [json.loads(l) for l in open(sys.argv[2])]
queries = [(q["id"], q["text"]) for q in yaml.safe_load(open(sys.argv[1]))["queries"]]
t0 = time.perf_counter(); tok = bm25s.tokenize([f"{c['title']}\n{c['text']}" if c.get("title") else c["text"] for c in corpus], lower=True, stopwords="en", show_progress=False)
bm = bm25s.BM25(method="lucene", k1=1.5, b=0.75); bm.index(tok, show_progress=False); t1 = time.perf_counter()
ids = [str(c["id"]) for c in corpus]; out = open(sys.argv[3], "w")
for qid, text in queries:
    words = [w for w in bm25s.tokenize([text], lower=True, stopwords="en", show_progress=False, return_ids=False)[0] if w in tok.vocab]
    s = bm.get_scores(words) if words else [0.0] * len(ids); top = sorted(((round(float(x), 4), i) for i, x in zip(ids, s) if x > 0), key=lambda r: (-r[0], r[1]))[:50]
    out.write(json.dumps({"query_id": qid, "query": text, "results": [{"id": i, "score": x} for x, i in top]}) + "\n")
print(f"index {t1 - t0:.3f} retrieve {time.perf_counter() - t1:.3f}", file=sys.stderr)
'''


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - start, done.stdout + done.stderr


def phases(said: str) -> tuple[float, float]:
    """(index, retrieve) seconds from either command's own line."""
    words = said.replace(",", " ").replace(";", " ").split()
    return float(words[words.index("index") + 1]), float(words[words.index("retrieve") + 1])


def recall10(run: Path, gold: Path) -> float:
    out = subprocess.run([PY, "-m", "ragdiff", "eval", str(run), "--gold", str(gold), "--metrics", "recall@10", "--json"],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out)["runs"][0]["metrics"]["recall@10"]


def same(a: Path, b: Path, drop_zero: bool = False) -> int:
    """Queries whose results are equal (ids and scores, in order)."""
    def read(p):
        return {r["query_id"]: [x for x in r["results"] if not drop_zero or x["score"] > 0]
                for r in map(json.loads, p.read_text().splitlines())}
    ra, rb = read(a), read(b)
    return sum(ra[q] == rb.get(q) for q in ra)


def synthetic(out: Path, chunks: int, queries: int, seed: int = 31) -> tuple[Path, Path]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(50_000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    corpus, gold = out / f"corpus_{chunks}.jsonl", out / f"gold_{chunks}.yaml"
    if not corpus.exists():
        with corpus.open("w") as fh:
            for i in range(chunks):
                words = rng.choices(vocab, weights, k=rng.randint(20, 120))
                fh.write(json.dumps({"id": f"c{i}", "title": f"doc {i // 4}", "text": " ".join(words)}) + "\n")
    gold.write_text("queries:\n" + "".join(
        f"  - id: q{i}\n    text: {' '.join(rng.choices(vocab[100:5000], k=rng.randint(2, 6)))}\n" for i in range(queries)))
    return corpus, gold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "bm25")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    direct = args.out / "direct.py"
    direct.write_text(DIRECT)

    mine, theirs = args.out / "sample_ragdiff.jsonl", args.out / "sample_direct.jsonl"
    t_mine, said_mine = timed([PY, "-m", "ragdiff", "bm25", str(SAMPLE / "gold.yaml"), "--corpus",
                               str(SAMPLE / "corpus.jsonl"), "-o", str(mine)])
    t_direct, said_direct = timed([PY, str(direct), str(SAMPLE / "gold.yaml"), str(SAMPLE / "corpus.jsonl"), str(theirs)])
    print("sample set: 1,148 chunks, 72 queries\n")
    print("| run | recall@10 | index s | retrieve s | whole command s | equal to ragdiff bm25 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| ragdiff bm25 | {recall10(mine, SAMPLE / 'gold.yaml'):.4f} | {phases(said_mine)[0]:.2f} | "
          f"{phases(said_mine)[1]:.2f} | {t_mine:.2f} | - |")
    print(f"| bm25s direct (ten lines) | {recall10(theirs, SAMPLE / 'gold.yaml'):.4f} | {phases(said_direct)[0]:.2f} | "
          f"{phases(said_direct)[1]:.2f} | {t_direct:.2f} | {same(mine, theirs)} of 72 queries |")
    print(f"| shipped sample_runs/bm25.jsonl | {recall10(SAMPLE / 'bm25.jsonl', SAMPLE / 'gold.yaml'):.4f} | | | | "
          f"{same(SAMPLE / 'bm25.jsonl', mine, drop_zero=True)} of 72 queries (its zero-score padding left out) |")

    corpus, gold = synthetic(args.out, args.chunks, args.queries)
    rows = {"ragdiff": [], "direct": []}
    for _ in range(args.repeat):
        t, said = timed([PY, "-m", "ragdiff", "bm25", str(gold), "--corpus", str(corpus), "-o", str(args.out / "big_r.jsonl")])
        rows["ragdiff"].append((t, *phases(said)))
        t, said = timed([PY, str(direct), str(gold), str(corpus), str(args.out / "big_d.jsonl")])
        rows["direct"].append((t, *phases(said)))
    print(f"\nsynthetic: {args.chunks:,} chunks, {args.queries:,} queries, medians of {args.repeat}\n")
    print("| run | index s | retrieve s | whole command s | equal results |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, label in (("ragdiff", "ragdiff bm25"), ("direct", "bm25s direct (ten lines)")):
        t, i, r = (statistics.median(x[j] for x in rows[name]) for j in range(3))
        eq = "-" if name == "ragdiff" else f"{same(args.out / 'big_r.jsonl', args.out / 'big_d.jsonl')} of {args.queries:,}"
        print(f"| {label} | {i:.2f} | {r:.2f} | {t:.2f} | {eq} |")


if __name__ == "__main__":
    main()
