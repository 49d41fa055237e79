"""The judging queue's `/`: corpus search results ranked with the BM25 index of `ragdiff bm25` (core/retrieval/bm25.py),
the same tokeniser, settings and order, so a chunk `/` finds first is the one `ragdiff bm25` would rank first.

The index is built once per corpus, in a thread of its own, on the first `/` (or handed over: `judge --bm25`
builds it for its run anyway); the screen keeps taking keys meanwhile. Until it is ready, or when it cannot be
built, a search matches the words as substrings (`core.judge.pool.search_corpus`), and the screen says so.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ragdiff.app.corpus import CorpusIndex
from ragdiff.core.errors import InputError
from ragdiff.core.judge.pool import Hit, hit_of, search_corpus, word_patterns

LIMIT = 20  # results a search shows


@dataclass(frozen=True)
class Found:
    hits: list[Hit]
    ranked: bool  # True: by BM25; False: by the words they hold (substrings)
    note: str  # how they were found, in words for the status line


class CorpusSearch:
    def __init__(self, corpus: CorpusIndex) -> None:
        self.corpus = corpus
        self.index = None  # core.retrieval.bm25.Bm25Index once built
        self.error: str | None = None  # why it could not be built
        self._thread: threading.Thread | None = None

    @property
    def building(self) -> bool:
        return self.index is None and self.error is None and self._thread is not None

    def give(self, index) -> None:
        """An index built already (judge --bm25's, over the same corpus)."""
        self.index = index

    def start(self) -> None:
        """Build the index in a thread of its own, once."""
        if self.index is None and self.error is None and self._thread is None:
            self._thread = threading.Thread(target=self._build, name="ragdiff-bm25-index", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the build is over (tests, benchmarks); True when the index is ready."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.index is not None

    def _build(self) -> None:
        from ragdiff.core.retrieval.bm25 import Bm25Index

        try:
            self.index = Bm25Index(self.corpus.path)
        except InputError as err:
            self.error = str(err)
        except Exception as err:  # noqa: BLE001 - said on screen, and the search falls back to words
            self.error = f"{type(err).__name__}: {err}"

    def search(self, text: str, limit: int = LIMIT) -> Found:
        """The chunks for `text` (call it from a worker: it reads the corpus). OSError when the file is gone."""
        index = self.index
        if index is None:
            why = "BM25 index being built" if self.error is None else f"no BM25 index: {self.error}"
            return Found(search_corpus(self.corpus.path, text, limit), False, f"matched by words ({why})")
        ranked = index.search(text, limit)
        chunks = self.corpus.get_many([chunk_id for chunk_id, _score in ranked])
        patterns = word_patterns(index.words(text))
        hits = [hit_of(chunk_id, chunks[chunk_id].title, chunks[chunk_id].text, patterns, score)
                for chunk_id, score in ranked if chunk_id in chunks]
        return Found(hits, True, "ranked by BM25")


def searcher(corpus: CorpusIndex) -> CorpusSearch:
    """The corpus's one search (its index built once, whichever screen asks)."""
    if corpus.ranker is None:
        corpus.ranker = CorpusSearch(corpus)
    return corpus.ranker
