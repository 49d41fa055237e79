"""`/` in the judging queue ranks the corpus with the BM25 index of `ragdiff bm25` (issue 31, part 5): the same
chunks in the same order as that run for the same words; until the index is built, or when it cannot be, the
search matches words as substrings and the screen says so."""

from __future__ import annotations

import threading

from ragdiff.app import corpus_search
from ragdiff.app.judge_search import HitsScreen
from ragdiff.core.retrieval.bm25 import Bm25Index, run_bm25
from ragdiff.core.judge.pool import search_corpus

from test_app_keys import demo_copy, type_fast
from test_app_pilot import SIZE
from test_judge import judge_app, opened, strip_judgments

WORDS = "base64 encode bytes"


async def _search(pilot, screen, words: str) -> HitsScreen:
    await type_fast(pilot, "/", "ctrl+u", *words, "enter")
    for _ in range(500):  # the search runs in a worker, then lists what it found
        if isinstance(pilot.app.screen, HitsScreen):
            break
        await pilot.pause(0.01)
    assert isinstance(pilot.app.screen, HitsScreen), str(screen.query_one("#judge-status").render())
    return pilot.app.screen


async def _index_built(pilot, search) -> None:
    for _ in range(1000):
        if search.index is not None or search.error is not None:
            return
        await pilot.pause(0.01)


async def test_slash_ranks_the_corpus_as_ragdiff_bm25_does(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 1)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await type_fast(pilot, "/", "escape")  # the first `/` starts building the index, in its own thread
        search = corpus_search.searcher(screen.corpus)
        await _index_built(pilot, search)
        assert search.index is not None, search.error
        hits = await _search(pilot, screen, WORDS)
        assert "BM25" in str(hits.query_one("#hits-box").border_title)
        shown = [h.chunk_id for h in hits.hits]
        await type_fast(pilot, "escape", "q")
    # what `ragdiff bm25` returns for a query with these words: the same chunks, the same order
    run = run_bm25(folder / "corpus.jsonl", [("q", WORDS)], depth=20)
    assert shown == [chunk for chunk, _score in run.results["q"]]
    assert shown != [h.chunk_id for h in search_corpus(folder / "corpus.jsonl", WORDS)]  # not the substring order


async def test_while_the_index_is_built_the_search_matches_words_and_says_so(sample_runs, tmp_path, monkeypatch):
    folder = demo_copy(sample_runs, tmp_path)
    release = threading.Event()
    built = corpus_search.CorpusSearch._build

    def slow_build(self):
        release.wait(30)
        built(self)

    monkeypatch.setattr(corpus_search.CorpusSearch, "_build", slow_build)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        hits = await _search(pilot, screen, WORDS)
        assert "words" in str(hits.query_one("#hits-box").border_title)
        assert [h.chunk_id for h in hits.hits] == [h.chunk_id for h in search_corpus(folder / "corpus.jsonl", WORDS)]
        status = str(screen.query_one("#judge-status").render())
        assert status.startswith("matched by words (BM25 index being built): 20 chunks for base64 encode bytes")
        # the screen takes keys meanwhile: the hits move, then close
        await type_fast(pilot, "down", "escape")
        assert pilot.app.screen is screen
        release.set()
        search = corpus_search.searcher(screen.corpus)
        await _index_built(pilot, search)
        hits = await _search(pilot, screen, WORDS)  # the next search ranks by BM25
        assert "BM25" in str(hits.query_one("#hits-box").border_title)
        await type_fast(pilot, "escape", "q")


async def test_an_index_that_cannot_be_built_leaves_the_word_search_and_says_why(sample_runs, tmp_path, monkeypatch):
    folder = demo_copy(sample_runs, tmp_path)

    def broken(self, *args, **kwargs):
        raise MemoryError("no room for the index")

    monkeypatch.setattr(Bm25Index, "__init__", broken)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await type_fast(pilot, "/", "escape")
        await _index_built(pilot, corpus_search.searcher(screen.corpus))
        hits = await _search(pilot, screen, WORDS)
        assert "words" in str(hits.query_one("#hits-box").border_title)
        assert str(screen.query_one("#judge-status").render()).startswith(
            "matched by words (no BM25 index: MemoryError: no room for the index)")
        await type_fast(pilot, "escape", "q")


async def test_judge_bm25_hands_its_index_to_the_search(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder, bm25=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        search = corpus_search.searcher(screen.corpus)
        assert search.index is not None and search._thread is None  # built once, for the run, not again
        hits = await _search(pilot, screen, WORDS)
        assert "BM25" in str(hits.query_one("#hits-box").border_title)
        await type_fast(pilot, "escape", "q")
