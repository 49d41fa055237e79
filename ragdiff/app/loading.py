"""The review's loading: the three files read and the model built in a worker (`detached`, so quitting while
they load ends the process at once), its progress on the status line, and the first screen once `Loaded`
comes (or the way out once `LoadFailed` does); then what the first screen does not wait for.

Mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_loaded`, `on_load_failed` and `on_load_progress` on
this class too).
"""

from __future__ import annotations

import time
from functools import partial

from rich.text import Text
from textual import work

from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.messages import LoadFailed, Loaded, LoadProgress
from ragdiff.app.model import ReviewModel
from ragdiff.app.text import clean
from ragdiff.app.threads import detached, side_by_side
from ragdiff.app.widgets.header import HeaderBar
from ragdiff.app.widgets.ranked_list import RankedList


class Loading:
    @work(exclusive=True, group="load")
    async def _load(self) -> None:
        """The files read and the model built, `detached`: quitting while they load ends the process at once
        (it waited for the load to end: for ever on a file that does not, tests/test_app_load_quit.py)."""
        outcome = await detached(self._read_inputs, "ragdiff-review-load")
        if isinstance(outcome, BaseException):  # _read_inputs says every Exception itself: a KeyboardInterrupt
            outcome = LoadFailed(f"cannot open the review: {type(outcome).__name__}: {outcome}")
        self.post_message(outcome)

    def _read_inputs(self) -> Loaded | LoadFailed:
        from ragdiff.core.errors import InputError
        from ragdiff.core.labels.gold import load_gold
        from ragdiff.core.io.runs import load_run

        inputs = self.inputs
        started = time.perf_counter()
        try:
            self.post_message(LoadProgress(f"loading {inputs.gold.name}, {inputs.run_a.name} and {inputs.run_b.name} …"))
            # the three files side by side (polars reads without the GIL): ~70 ms less than one after another
            # at 10,000 queries; a bad file is reported in the order gold, A, B, as one after another would
            read_run = partial(load_run, fmt=inputs.run_format, keep_first=inputs.keep_first)
            gold, run_a, run_b = side_by_side(partial(load_gold, inputs.gold, inputs.gold_format),
                                              partial(read_run, inputs.run_a), partial(read_run, inputs.run_b))
            if self.corpus is None and gold.corpus_path:
                # no --corpus: the corpus the label file names, beside it, when it is there
                named = gold.recorded_corpus()
                if named.is_file():
                    self.corpus = CorpusIndex(named)
            if run_a.name == run_b.name:
                run_a.name, run_b.name = f"A {run_a.name}", f"B {run_b.name}"
            self.post_message(LoadProgress("scoring both runs …"))
            model = ReviewModel(run_a, run_b, gold, inputs.settings, unjudged_later=True)
        except InputError as err:
            return LoadFailed(str(err))
        except Exception as err:  # noqa: BLE001 - shown as one message, never a traceback on screen
            return LoadFailed(f"cannot open the review: {type(err).__name__}: {err}")
        return Loaded(model, time.perf_counter() - started, model.store)

    def on_load_progress(self, message: LoadProgress) -> None:
        self.set_status(message.text)
        self.query_one(HeaderBar).loading_text = message.text
        self.query_one(HeaderBar).refresh()

    def on_load_failed(self, message: LoadFailed) -> None:
        self.failure = message.text
        self._collector_back(freeze=False)
        self.exit(return_code=2)

    def on_loaded(self, message: Loaded) -> None:
        self.model = message.model
        self.store = message.store
        self.store.listen(self.relabelled)  # after the model, which rescores each changed query: the screen
        self.load_seconds = message.seconds
        self.query_one("#list-a", RankedList).set_border(title=Text.assemble("A ", clean(self.model.run_a.name)))
        self.query_one("#list-b", RankedList).set_border(title=Text.assemble("B ", clean(self.model.run_b.name)))
        self.refresh_all(select_first=True)
        counts = self.model.filter_counts()
        status = (f"{counts['hit_to_miss']} hit→miss, {counts['miss_to_hit']} miss→hit at k={self.model.k} · "
                  "tab changes pane, ] next query, ? every key")
        if self.inputs.note:
            status = f"{self.inputs.note} · {status}"
        self.set_status(status)
        # open the label writer now, on its own thread: a later mark finds it ready (and a label file deleted
        # mid-review is then a failed save the reviewer can retry), and the journal's recovery notes from an
        # earlier crash are said at once
        self.session.open(self.model.gold.format)
        self.call_after_refresh(self._after_first_screen)

    def _after_first_screen(self) -> None:
        """What the first screen does not wait for, started once it is drawn (each in a worker, each drawn when
        it arrives): the corpus index, the p-values, the k's beside this one. Started with the screen, their
        threads held the GIL through its first paint (~0.1 s of the first screen at 10,000 queries)."""
        if self.model is None:
            return
        self._collector_back(freeze=True)  # before the workers: what they make is not frozen
        job = self.model.unjudged_job()
        if job is not None:
            self._find_unjudged(*job)  # unjudged@k's count (~65 ms at 10,000 queries); then the k's beside
        if self.corpus is not None:
            self._index_corpus()
        self._start_verdicts()
        if job is None:
            self._prefetch_views()
