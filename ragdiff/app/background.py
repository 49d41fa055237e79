"""The review's background work: each worker runs off the UI thread and posts its result as a message
(`ragdiff.app.messages`), which its handler here draws when it arrives — the unjudged rows (unjudged@k's
count), the corpus index, the header's p-values (in another process on a big set), and the k's beside the
one shown, scored ahead of `+` and `-`.

Mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_unjudged_ready`, `on_corpus_ready`, `on_view_ready`
and `on_verdicts_ready` on this class too).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.worker import get_current_worker

from ragdiff.app.messages import CorpusReady, UnjudgedReady, VerdictsReady, ViewReady
from ragdiff.app.text import clean
from ragdiff.app.widgets.filter_bar import FilterBar
from ragdiff.app.widgets.header import HeaderBar

PROCESS_FOR_VERDICTS = 2000  # scored queries from which the p-values are computed in another process
VERDICT_DELAY = 0.6  # seconds k must rest before the p-values are recomputed (they are slow on big sets)
NEIGHBOUR_KS = (1, -1)  # the k's beside the one shown that a worker scores ahead of + and - (see _build_views)


class BackgroundWork:
    @work(thread=True, exclusive=True, group="unjudged")
    def _find_unjudged(self, generation: int, function, args) -> None:
        self.post_message(UnjudgedReady(generation, function(*args)))

    def on_unjudged_ready(self, message: UnjudgedReady) -> None:
        model = self.model
        if model is None:
            return
        if not model.apply_unjudged(message.generation, message.result):
            # a mark came first and found them itself; a list of unjudged@k made before that is empty: fill it
            if self._listed_uncounted and self.on_review and self.filter_key == "unjudged":
                self.refresh_all(keep_chunks=True)
            return
        if self.on_review:
            if self.filter_key == "unjudged":
                self.refresh_all(keep_chunks=True)
            else:
                self.query_one(FilterBar).show(model.filter_counts(), self.filter_key, self.sort_key, self.search,
                                               model.k)
        else:
            self._stale = True
        self._prefetch_views()  # the views built before them counted nothing unjudged

    @work(thread=True, exclusive=True, group="corpus")
    def _index_corpus(self) -> None:
        from ragdiff.core.labels.gold import file_sha256

        count = self.corpus.build()
        note = None
        recorded = self.model.gold.corpus_sha256
        if recorded and self.corpus.error is None and file_sha256(self.corpus.path) != recorded:
            from ragdiff.core.errors import InputError
            from ragdiff.core.judge.stale import chunk_check

            try:  # with the chunk fingerprints, only a judged chunk that changed or vanished is worth a word
                check = chunk_check(self.model.gold, self.corpus.path)
            except InputError as err:
                check, note = None, str(err)
            if note is None and (check is None or check.flagged):
                note = (f"{self.corpus.path.name} is not the corpus snapshot {self.inputs.gold.name} records: a "
                        "score change may be the data's, not the retriever's")
        self.post_message(CorpusReady(count, self.corpus.error, note))

    def on_corpus_ready(self, message: CorpusReady) -> None:
        self.corpus_error = message.error
        if message.snapshot_note:
            self.set_status(Text(clean(message.snapshot_note), style="bold"))
        judge = self._judge_screen()
        if judge is not None:  # the queue's chunk text, also under ? opened over it
            judge.corpus_ready()
        if not self.on_review:
            self._stale = True
            return
        self.show_chunk()

    def _start_verdicts(self, delay: float = 0.0) -> None:
        """Compute the header's p-values in the background; after k changes, wait until k rests a moment."""
        if self._verdict_timer is not None:
            self._verdict_timer.stop()
            self._verdict_timer = None
        if self.model is None:
            return
        if delay:
            self._verdict_timer = self.set_timer(delay, self._start_verdicts)
            return
        key, function, args = self.model.verdict_job()
        if self.model.has_verdicts(key):
            return
        big = len(self.model.eval_a.queries.scored) >= PROCESS_FOR_VERDICTS
        self._verdicts(key, function, args, big)

    @work(thread=True, exclusive=True, group="verdicts")
    def _verdicts(self, key, function, args, big: bool) -> None:
        try:
            if big:
                # numpy's resampling holds the GIL for long stretches: in a thread it would freeze the keys
                # for seconds on a big set, so it runs in a process of its own
                result = self._process_pool().submit(function, *args).result()
            else:
                result = function(*args)
        except Exception as err:  # noqa: BLE001 - no verdict is better than a broken header
            self.verdict_error = f"{type(err).__name__}: {err}"
            result = ({}, False)
        self.post_message(VerdictsReady(key, result))

    def _prefetch_views(self) -> None:
        """Score the k's beside the one shown in a worker, so `+` or `-` finds its numbers ready (a new k at
        10,000 queries: ~60 ms of scoring that the key then does not wait for)."""
        model = self.model
        if model is None:
            return
        jobs = [job for step in NEIGHBOUR_KS if (job := model.view_job(model.k + step)) is not None]
        if jobs:
            self._build_views(jobs)

    @work(thread=True, exclusive=True, group="views")
    def _build_views(self, jobs) -> None:
        worker = get_current_worker()
        for _key, function, args in jobs:
            if worker.is_cancelled:  # k moved on: a newer job asks for the k's beside it
                return
            self.post_message(ViewReady(function(*args)))

    def on_view_ready(self, message: ViewReady) -> None:
        if self.model is not None:
            self.model.store_view(message.view)  # dropped when a mark came since it was asked for

    def on_verdicts_ready(self, message: VerdictsReady) -> None:
        if self.model is not None and self.model.apply_verdicts(message.key, message.result):
            self.screen_stack[0].query_one(HeaderBar).show(self.model.header)
