"""A second retriever built in: BM25 over the corpus for the label file's queries (`ragdiff bm25`).

The lesson's trap is labelling from one retriever's results, so the set holds only what it already finds: label
from the merged results of two different retrievers, such as BM25 and vectors. A team often has only its vector
retriever; this gives it the other one, with nothing to set up.

The library is bm25s (Lucene's BM25 variant, sparse matrices in numpy): a pure-Python wheel whose one dependency
is numpy, which ragdiff needs anyway, and what scripts/build_sample_runs.py made sample_runs/bm25.jsonl with. The
settings are those of that run, so `ragdiff bm25` on the sample set gives its results again:

- indexed: the chunk's title (when it has one), a line break, its text;
- tokeniser: bm25s.tokenize — lower case, words of two or more word characters, bm25s's English stop words,
  no stemming; a query's words the corpus never uses are dropped;
- scoring: method lucene, k1 = 1.5, b = 0.75;
- order: score rounded to 4 decimals, descending, ties by chunk id; chunks that score 0 (no query word in
  them) are left out, where the sample run padded to 50 with them in id order.

Everything needed to make the run again is written beside it (RUN.settings.json).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

K1, B, METHOD, NDIGITS = 1.5, 0.75, "lucene", 4
TOKENISER = ("bm25s.tokenize(lower=True, stopwords='en'): lower case, words of two or more word characters "
             "(regex (?u)\\b\\w\\w+\\b), bm25s's English stop words, no stemming; query words not in the corpus dropped")
FIELDS = "title + newline + text (text alone when the chunk has no title)"
ORDER = f"score rounded to {NDIGITS} decimals descending, ties by chunk id; chunks scoring 0 left out"


@dataclass
class Bm25Run:
    results: dict[str, list[tuple[str, float]]]  # query id -> (chunk id, score), best first
    settings: dict
    index_seconds: float
    retrieve_seconds: float
    chunks: int
    skipped: list[str] = field(default_factory=list)  # queries without text


def chunk_texts(corpus_path: Path) -> tuple[list[str], list[str]]:
    """Every chunk's id and what is indexed, in the corpus's order (read by the one corpus reader)."""
    from ragdiff.core.io.corpus import Corpus

    corpus = Corpus(corpus_path)
    ids = list(corpus.index())
    chunks = corpus.get_many(ids)
    return ids, [f"{c.title}\n{c.text}" if c.title else c.text for c in (chunks[i] for i in ids)]


class Bm25Index:
    """The corpus indexed once (the settings above), asked many times: by `ragdiff bm25` and `judge --bm25` for
    every gold query, and by the judging queue's `/` for what the reviewer types."""

    def __init__(self, corpus_path: Path, k1: float = K1, b: float = B):
        import bm25s
        import numpy as np

        self.ids, texts = chunk_texts(corpus_path)
        start = time.perf_counter()
        tokens = bm25s.tokenize(texts, lower=True, stopwords="en", show_progress=False)
        del texts
        self.retriever = bm25s.BM25(method=METHOD, k1=k1, b=b)
        self.retriever.index(tokens, show_progress=False)
        self.vocab = tokens.vocab
        order = np.argsort(np.array(self.ids, dtype=object), kind="stable")  # each id's rank among ids, for ties
        self.id_rank = np.empty(len(self.ids), dtype=np.int64)
        self.id_rank[order] = np.arange(len(self.ids))
        self.seconds = time.perf_counter() - start
        self.settings = {"retriever": "bm25", "library": "bm25s", "version": bm25s.__version__, "method": METHOD,
                         "k1": k1, "b": b, "tokeniser": TOKENISER, "stopwords": "en", "stemmer": None,
                         "fields": FIELDS, "order": ORDER}

    def words(self, text: str) -> list[str]:
        """The query's words as the index reads them (those the corpus never uses dropped)."""
        import bm25s

        return [w for w in bm25s.tokenize([text], lower=True, stopwords="en", show_progress=False,
                                          return_ids=False)[0] if w in self.vocab]

    def search(self, text: str, depth: int) -> list[tuple[str, float]]:
        """The `depth` best chunks for the text, (chunk id, score) best first; none when no word scores."""
        import numpy as np

        words = self.words(text)
        if not words:
            return []
        scores = np.asarray(self.retriever.get_scores(words), dtype=np.float64)
        return _top(self.ids, self.id_rank, scores, depth)


def run_bm25(corpus_path: Path, queries: list[tuple[str, str | None]], depth: int = 50,
             k1: float = K1, b: float = B, index: Bm25Index | None = None) -> Bm25Run:
    index = index if index is not None else Bm25Index(corpus_path, k1, b)
    start = time.perf_counter()
    results: dict[str, list[tuple[str, float]]] = {}
    skipped = []
    for qid, text in queries:
        if not text:
            skipped.append(qid)
            continue
        results[qid] = index.search(text, depth)
    done = time.perf_counter()
    return Bm25Run(results, {**index.settings, "depth": depth}, index.seconds, done - start, len(index.ids), skipped)


def _top(ids: list[str], id_rank, scores, depth: int) -> list[tuple[str, float]]:
    """The `depth` best by rounded score, ties by id — Python's round() on the few candidates (numpy's rounding
    can differ in the last place), chosen first by numpy among the scores near the cut."""
    import numpy as np

    positive = np.flatnonzero(scores > 0)
    if positive.size > depth:
        cut = np.partition(scores[positive], positive.size - depth)[positive.size - depth]
        positive = positive[scores[positive] >= cut - 10 ** -NDIGITS]
    ranked = sorted(((round(float(scores[i]), NDIGITS), int(i)) for i in positive),
                    key=lambda si: (-si[0], id_rank[si[1]]))
    return [(ids[i], s) for s, i in ranked[:depth] if s > 0]


def run_lines(run: Bm25Run, texts: dict[str, str | None]) -> str:
    """The run as JSONL, one query a line: {"query_id", "query", "results": [{"id", "score"}]}."""
    import json

    return "".join(json.dumps({"query_id": q, "query": texts.get(q), "results": [{"id": c, "score": s} for c, s in r]},
                              ensure_ascii=False) + "\n" for q, r in run.results.items())


def bm25_run(gold, corpus_path: Path, depth: int, index: Bm25Index | None = None):
    """The BM25 run of a gold set's queries as a Run (what `judge --bm25` pools, no file written)."""
    from ragdiff.core.io.runs import jsonl_run

    queries = gold.queries.sort("position").select("query_id", "text").rows()
    return jsonl_run("bm25", run_lines(run_bm25(corpus_path, queries, depth, index=index), dict(queries)))
