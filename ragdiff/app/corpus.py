"""The chunk pane's view of the corpus: `ragdiff.core.io.corpus.Corpus` (an offset index, one line read on
demand, an LRU cache) plus what the screen needs: is the index ready, and what went wrong, in words.

`build()` runs in a worker thread; until it returns the pane says it is indexing, and a corpus that cannot
be read says so in the pane instead of stopping the app.
"""

from __future__ import annotations

from pathlib import Path

from ragdiff.core.io.corpus import Chunk, Corpus
from ragdiff.core.errors import InputError

__all__ = ["Chunk", "CorpusIndex"]


class CorpusIndex:
    def __init__(self, path: str | Path, cache_size: int = 256):
        self.path = Path(path)
        self.ready = False
        self.error: str | None = None
        self._cache_size = cache_size
        self._corpus: Corpus | None = None
        self.ranker = None  # the `/` search's BM25 index, built on first use (app.corpus_search.searcher)

    def build(self) -> int:
        """Index the file (ids and byte offsets only). Returns the number of chunks; sets .error, never raises."""
        try:
            corpus = Corpus(self.path, cache_size=self._cache_size)
            count = len(corpus.index())
        except InputError as err:
            self.error = f"cannot read the corpus: {err}"
            return 0
        except OSError as err:
            self.error = f"cannot read the corpus {self.path.name}: {err.strerror or err}"
            return 0
        self._corpus = corpus
        self.ready = True
        if not count:
            self.error = f"{self.path.name} has no chunks; expected JSONL {{\"id\", \"text\"}}"
        return count

    def __contains__(self, chunk_id: str) -> bool:
        return self._corpus is not None and chunk_id in self._corpus

    def get(self, chunk_id: str) -> Chunk | None:
        """The chunk (None when the corpus has no such id, or is not indexed yet)."""
        if self._corpus is None:
            return None
        try:
            chunk = self._corpus.get(chunk_id)
            self.error = None
            return chunk
        except InputError as err:
            self.error = f"cannot read {chunk_id} from the corpus: {err}"
            return None

    def get_many(self, chunk_ids) -> dict[str, Chunk]:
        """Several chunks in one pass over the file (InputError when it cannot be read; {} before the index)."""
        return {} if self._corpus is None else self._corpus.get_many(chunk_ids)

    @property
    def cache_size(self) -> int:
        return len(self._corpus._cache) if self._corpus is not None else 0
