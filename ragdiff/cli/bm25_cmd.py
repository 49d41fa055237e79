"""`ragdiff bm25 GOLD --corpus C [--depth 50] -o bm25.jsonl`: a BM25 run over the corpus for the label file's
queries, to pool beside the team's own retriever (core/retrieval/bm25.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragdiff.cli.common import add_gold_format, positive_int
from ragdiff.core.errors import InputError


def add_parser(subparsers) -> None:
    bm25 = subparsers.add_parser(
        "bm25", help="a BM25 run over the corpus for the label file's queries (a second retriever to pool)",
        description="Write a BM25 run (bm25s, Lucene's variant) over the corpus for the gold set's queries: the "
                    "second, different retriever the lesson asks to label from, beside your own. Title and text "
                    "indexed, lower case, English stop words, no stemming, k1 1.5, b 0.75; chunks that score 0 are "
                    "left out. The settings are written beside the run (RUN.settings.json).")
    bm25.add_argument("gold", type=Path, metavar="GOLD", help="the gold set whose queries are asked")
    bm25.add_argument("--corpus", type=Path, required=True, help="corpus JSONL (id, text, optional title)")
    bm25.add_argument("--depth", type=positive_int, default=50, help="chunks per query (default 50)")
    bm25.add_argument("-o", "--output", type=Path, required=True, metavar="RUN.jsonl", help="where to write the run")
    add_gold_format(bm25)
    bm25.set_defaults(handler=run_bm25)


def run_bm25(args: argparse.Namespace) -> int:
    from ragdiff.core.retrieval import bm25
    from ragdiff.core.labels.gold import file_sha256, load_gold
    from ragdiff.core.io.textio import check_file, check_not_input, write_file
    from ragdiff.core.visible import visible

    if args.output.suffix.lower() != ".jsonl":
        raise InputError(args.output, "the run is written as JSONL; expected a name ending in .jsonl")
    check_not_input(args.output, (args.gold, args.corpus))  # before the work, not after it
    gold = load_gold(args.gold, args.gold_format)
    check_file(args.corpus)
    queries = gold.queries.sort("position").select("query_id", "text").rows()
    run = bm25.run_bm25(args.corpus, queries, args.depth)
    if not run.results:
        raise InputError(args.gold, "no query has a text to search for; expected queries with text (a qrels file "
                                    "has only ids)")
    settings = {**run.settings, "corpus": {"path": str(args.corpus), "sha256": file_sha256(args.corpus),
                                           "chunks": run.chunks},
                "gold": str(args.gold), "queries": len(run.results)}
    sidecar = args.output.with_name(args.output.name + ".settings.json")
    inputs = (args.gold, args.corpus)
    write_file(args.output, bm25.run_lines(run, dict(queries)).encode("utf-8"), inputs)
    write_file(sidecar, (json.dumps(settings, ensure_ascii=False, indent=2) + "\n").encode("utf-8"), inputs)
    print(visible(f"{args.output}: BM25 over {run.chunks:,} chunks for {len(run.results):,} queries, top "
                  f"{args.depth} (bm25s {run.settings['version']}, {bm25.METHOD} k1 {bm25.K1} b {bm25.B}); index "
                  f"{run.index_seconds:.2f} s, retrieve {run.retrieve_seconds:.2f} s; settings in {sidecar.name}"))
    if run.skipped:
        print(visible(f"{len(run.skipped)} quer{'y' if len(run.skipped) == 1 else 'ies'} without text left out "
                      f"(e.g. {run.skipped[0]!r})"))
    return 0
