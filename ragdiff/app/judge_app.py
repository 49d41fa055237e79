"""`ragdiff judge` on its own: the inputs read and the queue built in a worker, then the judging queue's screen
(`ragdiff.app.judge.JudgeScreen`); the label writer's outcomes are routed to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.widgets import Static

from ragdiff.app import corpus_search
from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.judge import JudgeScreen
from ragdiff.app.judging import apply_outcome
from ragdiff.app.keys import OrderedKeysApp
from ragdiff.app.messages import LoadFailed, MarkDone, Saved
from ragdiff.app.session import LabelSession
from ragdiff.app.threads import detached
from ragdiff.app.widgets.pool_list import RUN_LETTERS
from ragdiff.core.errors import InputError
from ragdiff.core.judge.pool import JudgeQueue

@dataclass
class JudgeInputs:
    runs: list[Path]
    gold: Path
    pool: int = 10
    corpus: Path | None = None
    run_format: str | None = None
    gold_format: str | None = None
    reviewer: str | None = None
    bm25: bool = False  # pool a BM25 run over the corpus too (core/retrieval/bm25.py), made here, no file
    # the queue's order (core/judge/pool_order.py); the command line's default is DEFAULT_POOL_ORDER
    order: str = "rank"
    against: Path | None = None  # another reviewer's label file: a queue of the disagreements with it only


class JudgeApp(OrderedKeysApp):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "ragdiff judge"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, inputs: JudgeInputs) -> None:
        super().__init__()
        self.inputs = inputs
        self.failure: str | None = None
        self.corpus: CorpusIndex | None = CorpusIndex(inputs.corpus) if inputs.corpus else None
        self.session = LabelSession(inputs.gold, inputs.reviewer, self.post_message, track=self._track_job)
        self.judge: JudgeScreen | None = None
        self.bounds: list = []
        self._started = time.perf_counter()

    def compose(self) -> ComposeResult:
        yield Static(f"ragdiff judge: loading {', '.join(p.name for p in self.inputs.runs)} and "
                     f"{self.inputs.gold.name} …", id="judge-loading")

    def on_mount(self) -> None:
        self._load()

    @work(exclusive=True, group="load")
    async def _load(self) -> None:
        """The inputs read and the queue built, `detached`: ctrl+q while they load ends the process at once."""
        loaded = await detached(self._read_inputs, "ragdiff-judge-load")
        if isinstance(loaded, InputError):
            self.post_message(LoadFailed(str(loaded)))
        elif isinstance(loaded, BaseException):  # one message, never a traceback on screen
            self.post_message(LoadFailed(f"cannot open the judging queue: {type(loaded).__name__}: {loaded}"))
        else:
            self._open(*loaded)

    def _read_inputs(self) -> tuple[JudgeQueue, str]:
        from ragdiff.core.io.runs import load_run
        from ragdiff.core.judge.pool import read_flags
        from ragdiff.core.labels.gold import load_gold

        inputs = self.inputs
        gold = load_gold(inputs.gold, inputs.gold_format)
        if self.corpus is None and gold.corpus_path and gold.recorded_corpus().is_file():
            self.corpus = CorpusIndex(gold.recorded_corpus())
        runs = [load_run(path, inputs.run_format) for path in inputs.runs]
        if inputs.bm25 and inputs.corpus is not None:
            from ragdiff.core.retrieval.bm25 import Bm25Index, bm25_run

            index = Bm25Index(inputs.corpus)
            runs.append(bm25_run(gold, inputs.corpus, inputs.pool, index))
            corpus_search.searcher(self.corpus).give(index)  # `/` ranks with it: built once
        names = [run.name for run in runs]
        for i, run in enumerate(runs):  # two runs with one name (a.jsonl in two folders): say which is which
            if names.count(run.name) > 1:
                run.name = f"{RUN_LETTERS[i]} {run.name}"
        if inputs.against is not None:  # the disagreements with another reviewer's file, to settle
            from ragdiff.core.judge.agreement import agree
            from ragdiff.core.judge.settle import SettleQueue

            found = agree(gold, load_gold(inputs.against, inputs.gold_format)).disagreements
            queue = SettleQueue.of(runs, gold, found, inputs.against.name, read_flags(inputs.gold))
        else:
            from ragdiff.core.judge.stopping import bounds

            queue = JudgeQueue.build(runs, gold, inputs.pool, read_flags(inputs.gold))
            queue.use_order(inputs.order)
            self.bounds = bounds(runs, gold)  # the stopping suggestion's, as the file stands at opening
        if self.corpus is not None:
            self.corpus.build()
        return queue, gold.format

    def _open(self, queue: JudgeQueue, fmt: str) -> None:
        self.session.open(fmt)
        name = self.inputs.gold.name
        if self.inputs.against is not None:
            name += f", its disagreements with {self.inputs.against.name}"
        self.judge = JudgeScreen(queue, self.session, self.corpus, name, standalone=True)
        self.push_screen(self.judge)

    def on_load_failed(self, message: LoadFailed) -> None:
        self.failure = message.text
        self.exit(return_code=2)

    def on_mark_done(self, message: MarkDone) -> None:
        if self.judge is not None:
            apply_outcome(self.judge.queue, message)
            self.judge.mark_done(message)

    def on_saved(self, message: Saved) -> None:
        if self.judge is not None:
            self.judge.saved(message)

    def _track_job(self, future) -> None:
        self.run_worker(future.result, thread=True, group="labels", exit_on_error=False)

    def on_unmount(self) -> None:
        self.session.close()
