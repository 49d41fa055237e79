"""`/` in the judging queue: one corpus search ranked by BM25 (app/corpus_search.py, the index of `ragdiff bm25`)
beside the substring search it replaces (core/pool.search_corpus, one pass over the JSONL a search), on the sample
corpus and on a synthetic 200,000-chunk corpus (bench/bm25_bench.py's).

    python bench/search_bench.py [--chunks 200000] [--searches 10] [--out bench/data/bm25]

Per corpus: the BM25 index's build (once per judging session, in its own thread), how late a 5 ms timer in the
main thread wakes meanwhile (what the screen's event loop feels: keys wait that long at most), and the median seconds of one search each way, over SEARCHES searches of 2-4 words taken from the
corpus's own vocabulary, alternated; the chunks each returns are the 20 the results screen lists, with snippets.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bm25_bench import synthetic  # noqa: E402


def measure(corpus: Path, searches: int, seed: int = 5) -> dict:
    from ragdiff.app.corpus import CorpusIndex
    from ragdiff.app.corpus_search import CorpusSearch
    from ragdiff.core.judge.pool import search_corpus

    index = CorpusIndex(corpus)
    index.build()
    search = CorpusSearch(index)
    start = time.perf_counter()
    search.start()
    # what the screen's event loop feels meanwhile: how late a 5 ms timer wakes while the index is built
    late = []
    while search.building:
        t0 = time.perf_counter()
        time.sleep(0.005)
        late.append(time.perf_counter() - t0 - 0.005)
    search.wait()
    built = time.perf_counter() - start
    words = sorted(search.index.vocab)
    rng = random.Random(seed)
    texts = [" ".join(rng.sample(words[: max(50, len(words) // 10)], rng.randint(2, 4))) for _ in range(searches)]
    bm25, substring = [], []
    for text in texts:
        t0 = time.perf_counter()
        found = search.search(text)
        t1 = time.perf_counter()
        search_corpus(corpus, text)
        t2 = time.perf_counter()
        assert found.ranked
        bm25.append(t1 - t0)
        substring.append(t2 - t1)
    late.sort()
    return {"chunks": len(search.index.ids), "build": built, "bm25": statistics.median(bm25),
            "substring": statistics.median(substring), "late_p99": late[int(0.99 * (len(late) - 1))] if late else 0.0,
            "late_max": late[-1] if late else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=200_000)
    ap.add_argument("--searches", type=int, default=10)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "bm25")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    big, _gold = synthetic(args.out, args.chunks, 1)
    print("| corpus | chunks | BM25 index built s | a 5 ms timer late meanwhile, p99 / max ms | one search, BM25 s | "
          "one search, substrings s | substrings / BM25 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, corpus in (("sample_runs/corpus.jsonl", ROOT / "ragdiff" / "sample_runs" / "corpus.jsonl"),
                         (f"synthetic {args.chunks:,}", big)):
        m = measure(corpus, args.searches)
        print(f"| {name} | {m['chunks']:,} | {m['build']:.2f} | {m['late_p99'] * 1000:.1f} / {m['late_max'] * 1000:.1f} | "
              f"{m['bm25']:.4f} | {m['substring']:.4f} | {m['substring'] / m['bm25']:.1f}× |")


if __name__ == "__main__":
    main()
