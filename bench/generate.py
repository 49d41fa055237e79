"""Seeded generator of a big run pair + graded qrels (+ optionally a corpus) in TREC format, for bench/.

    python bench/generate.py --queries 1000 --depth 1000 --out bench/data/1000x1000 [--seed 7] [--corpus 200000]

Writes into OUT:
  run_a.trec  `qid Q0 chunk rank score tag`, scores with 2 decimals (many exact ties inside a query)
  run_b.trec  full-precision float64 scores, all distinct inside a query -- also distinct as float32, so a tool
              that stores scores as 32-bit floats (pytrec_eval) orders it exactly as trec_eval does
  qrels.txt   `qid 0 chunk grade`: per query 3-7 relevant (grades 1-3) and 10 judged non-relevant (grade 0)
  corpus.jsonl (with --corpus N) N chunks {"id", "text"}, one per line

Every query draws its D chunks of each run from a private pool of 2*D distinct chunk ids; the judged chunks
are pool members, so each is retrieved by a run with probability ~1/2 and relevant chunks get a score
boost (run B a bigger one), so the metrics are neither 0 nor 1. The rank column is a random permutation that
disagrees with the scores, and the line order of each file is shuffled: a tool that trusts the rank column
or the file order instead of (score desc, chunk id desc) -- trec_eval's rule -- gets different numbers.

Same seed and sizes -> byte-identical files. Generation is numpy; formatting and writing is polars
(one vectorised string build and one write per file), ~2 s per million lines on one core.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import polars as pl

CORPUS_PRIME = 200_003  # chunk ids live in 0..CORPUS_PRIME-1; a prime so that a*j+b mod P is a bijection
NONREL_PER_QUERY = 10
WORDS = ("refund ebook window policy shipping mars expense approve invoice travel receipt manager account "
         "password reset login device warranty return label carrier delay tax region store credit gift card "
         "subscription cancel renew plan upgrade seat license audit export data privacy delete request").split()


def _padded(prefix: str, values: np.ndarray, width: int) -> pl.Series:
    """prefix + zero-padded decimal, vectorised: 7 -> 'c000007'."""
    return pl.select(pl.lit(prefix) + pl.Series(values).cast(pl.String).str.zfill(width)).to_series()


def generate(n_queries: int, depth: int, out: Path, seed: int = 7, corpus: int = 0) -> dict:
    if 2 * depth > CORPUS_PRIME:
        raise SystemExit(f"--depth {depth} too big: at most {CORPUS_PRIME // 2}")
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    pool = 2 * depth
    # per query a pool of 2*depth distinct chunk ids: (a*j + b) mod P, a != 0
    a = rng.integers(1, CORPUS_PRIME, size=(n_queries, 1), dtype=np.int64)
    b = rng.integers(0, CORPUS_PRIME, size=(n_queries, 1), dtype=np.int64)
    j = np.arange(pool, dtype=np.int64)[None, :]
    pool_ids = (a * j + b) % CORPUS_PRIME  # (Q, pool)

    # judged chunks: the first n_rel + 10 pool positions; grades 1..3 for the relevant ones
    n_rel = rng.integers(3, 8, size=n_queries)  # 3..7
    n_judged = n_rel + NONREL_PER_QUERY
    max_judged = int(n_judged.max())
    jpos = np.arange(max_judged)[None, :]
    judged_mask = jpos < n_judged[:, None]
    grades_full = np.where(jpos < n_rel[:, None], rng.integers(1, 4, size=(n_queries, max_judged)), 0)
    # grade of every pool position (0 for unjudged: only used for the score boost)
    pool_grade = np.zeros((n_queries, pool), dtype=np.int64)
    pool_grade[:, :max_judged] = np.where(judged_mask, grades_full, 0)

    qwidth = max(5, len(str(n_queries)))
    qid_of_row = np.repeat(np.arange(1, n_queries + 1), depth)

    # qrels
    qq, jj = np.nonzero(judged_mask)
    qrels = pl.DataFrame({
        "qid": _padded("q", qq + 1, qwidth),
        "chunk": _padded("c", pool_ids[qq, jj], 6),
        "grade": grades_full[qq, jj],
    })
    (qrels.select((pl.col("qid") + pl.lit(" 0 ") + pl.col("chunk") + pl.lit(" ")
                   + pl.col("grade").cast(pl.String)).alias("line"))
     .write_csv(out / "qrels.txt", include_header=False, quote_style="never"))

    for name, boost, tied in (("run_a", 0.25, True), ("run_b", 0.35, False)):
        # which `depth` of the 2*depth pool this run returns: a random subset per query
        pick = np.argsort(rng.random((n_queries, pool)), axis=1)[:, :depth]
        chunks = np.take_along_axis(pool_ids, pick, axis=1)
        grade = np.take_along_axis(pool_grade, pick, axis=1)
        base = rng.random((n_queries, depth)) + boost * grade
        if tied:
            # cents in 0..~1400 for 1000 chunks: many exact ties within a query
            cents = np.rint(base * 600).astype(np.int64).ravel()
            score = pl.select(pl.Series(cents // 100).cast(pl.String) + pl.lit(".")
                              + pl.Series(cents % 100).cast(pl.String).str.zfill(2)).to_series()
        else:
            # distinct: integer part = position in the order of `base`, plus a full-precision fraction < 0.5,
            # so that every pair differs by > 0.5 (distinct in float32 too) and prints 15-17 digits
            order = np.argsort(np.argsort(base, axis=1), axis=1)  # 0 = lowest
            value = order.astype(np.float64) + 1.0 + rng.random((n_queries, depth)) * 0.5
            score = pl.Series(value.ravel()).cast(pl.String)
        # the rank column: a random permutation of 1..depth that has nothing to do with the score
        rank = np.argsort(rng.random((n_queries, depth)), axis=1) + 1
        frame = pl.DataFrame({
            "qid": _padded("q", qid_of_row, qwidth),
            "chunk": _padded("c", chunks.ravel(), 6),
            "rank": pl.Series(rank.ravel()).cast(pl.String),
            "score": score,
        })
        # shuffle the line order of the whole file
        frame = frame[rng.permutation(frame.height)]
        (frame.select((pl.col("qid") + pl.lit(" Q0 ") + pl.col("chunk") + pl.lit(" ")
                       + pl.col("rank") + pl.lit(" ") + pl.col("score") + pl.lit(f" {name}")).alias("line"))
         .write_csv(out / f"{name}.trec", include_header=False, quote_style="never"))
        del frame

    if corpus:
        write_corpus(out / "corpus.jsonl", corpus, rng)
    info = {"queries": n_queries, "depth": depth, "seed": seed, "lines_per_run": n_queries * depth,
            "qrels_lines": int(judged_mask.sum()), "relevant": int(n_rel.sum()), "corpus": corpus,
            "seconds": round(time.perf_counter() - started, 2)}
    (out / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def write_corpus(path: Path, n: int, rng: np.random.Generator) -> None:
    """n chunks with ids c000000.. (the runs' id space) and 40-80 words of text each, one JSON object a line."""
    words = np.array(WORDS)
    lengths = rng.integers(40, 81, size=n)
    picks = rng.integers(0, len(words), size=int(lengths.sum()))
    texts = pl.Series(words[picks]).to_frame("w").with_columns(
        doc=pl.Series(np.repeat(np.arange(n), lengths))
    ).group_by("doc", maintain_order=True).agg(pl.col("w").str.join(" "))
    frame = pl.DataFrame({"id": _padded("c", np.arange(n), 6), "text": texts.get_column("w")})
    frame.write_ndjson(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000, help="chunks per query in each run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", type=int, default=0, help="also write corpus.jsonl with this many chunks")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    info = generate(args.queries, args.depth, args.out, args.seed, args.corpus)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
