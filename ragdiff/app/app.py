"""`ragdiff review`: two runs side by side, gold highlighted, flipped queries first.

The app owns no numbers: `ReviewModel` (Textual-free) computes them from the core, and the widgets draw
them. File work (loading, the corpus index, the p-values, writing a label) runs in worker threads whose
results come back as messages (`ragdiff.app.messages`).
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Static

from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.messages import CorpusReady, LoadFailed, Loaded, LoadProgress, MarkDone, VerdictsReady
from ragdiff.app.model import FILTERS, SORTS, ReviewModel
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.filter_bar import FilterBar
from ragdiff.app.widgets.header import HeaderBar
from ragdiff.app.widgets.help_screen import HelpScreen
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.app.widgets.searches import SearchesScreen, searches_text
from ragdiff.app.widgets.which_k import WhichKScreen
from ragdiff.core import vocab
from ragdiff.core.metrics import EvalSettings

PROCESS_FOR_VERDICTS = 2000  # scored queries from which the p-values are computed in another process
VERDICT_DELAY = 0.6  # seconds k must rest before the p-values are recomputed (they are slow on big sets)


@dataclass
class ReviewInputs:
    """What to open: file paths and settings (the app reads the files itself, in a worker)."""

    run_a: Path
    run_b: Path
    gold: Path
    settings: EvalSettings
    corpus: Path | None = None
    run_format: str | None = None
    gold_format: str | None = None
    keep_first: bool = False
    reviewer: str | None = None
    note: str | None = None  # a sentence for the status line once loaded (e.g. the demo's temporary copy)


def _error_text(err: Exception, label_path: Path, pending: int = 0) -> str:
    """One status line: what happened first (it is cut at the screen's edge), the file by its name."""
    name = type(err).__name__
    words = {"LabelFormatError": "not written", "UnknownQueryError": "not written",
             "LabelConflictError": "not written (the file changed)", "LabelWriteError": "not written"}
    head = words.get(name, "not written: " + name)
    if pending:
        head += f" ({pending} unsaved, r retries)"
    text = str(err).replace(str(label_path), label_path.name)
    if label_path.parent.name:  # a bare file name's parent is "." : replacing "." would drop every dot
        text = text.replace(str(label_path.parent), label_path.parent.name)
    return f"{head}: {text}"


def _grade_bindings() -> list[Binding]:
    return [Binding(str(n), f"mark('gold', {n})", "gold with grade 1-9", show=False, id=f"label.grade{n}",
                    tooltip="mark the highlighted chunk gold with this grade (1-9)") for n in range(1, 10)]


class ReviewApp(App[int]):
    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses elsewhere (bench) find it too
    TITLE = "ragdiff review"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS = [
        Binding("g", "mark('gold')", vocab.word(vocab.GOLD), id="label.gold",
                tooltip="mark the highlighted chunk gold (answers the query); a digit 1-9 gives a grade"),
        Binding("e", "mark('evidence')", vocab.word(vocab.EVIDENCE), id="label.evidence",
                tooltip="mark the highlighted chunk evidence (supports a step of the answer)"),
        Binding("x", "mark('not_relevant')", vocab.word(vocab.NOT_RELEVANT), id="label.not_relevant",
                tooltip="mark the highlighted chunk judged not relevant (grade 0)"),
        *_grade_bindings(),
        Binding("u", "undo", "undo", id="label.undo", tooltip="undo the last mark (from the journal)"),
        Binding("r", "retry_marks", "retry unsaved", show=False, id="label.retry",
                tooltip="write again the marks a failed save left unsaved (read-only file, full disk, …)"),
        Binding("f", "cycle_filter", "filter", id="queries.filter",
                tooltip="cycle the query filter: all, hit→miss, miss→hit, both miss, unanswerable, unjudged@k"),
        Binding("s", "cycle_sort", "sort", id="queries.sort",
                tooltip="cycle the sort: flips first, Δ reciprocal rank, Δ nDCG@k (largest losses first)"),
        Binding("slash", "search", "search", key_display="/", id="queries.search",
                tooltip="search the queries by id or text (enter keeps it, esc clears it)"),
        Binding("right_square_bracket", "next_query", "next query", key_display="]", show=False,
                id="queries.next", tooltip="next query in the list, from any pane"),
        Binding("left_square_bracket", "previous_query", "previous query", key_display="[", show=False,
                id="queries.previous", tooltip="previous query in the list, from any pane"),
        Binding("plus,equals_sign", "change_k(1)", "k", key_display="+/-", id="k.up",
                tooltip="k + 1: recompute the header, the marks, the filters and their counts"),
        Binding("minus", "change_k(-1)", "k", key_display="-", show=False, id="k.down",
                tooltip="k − 1: recompute the header, the marks, the filters and their counts"),
        Binding("tab", "focus_next", "next pane", show=False, id="pane.next",
                tooltip="next pane: queries → A → B → chunk text"),
        Binding("shift+tab", "focus_previous", "previous pane", show=False, id="pane.previous",
                tooltip="previous pane"),
        Binding("escape", "clear_search", "clear search", show=False, id="queries.clear_search",
                tooltip="clear the search and go back to the query list"),
        Binding("v", "searches", "searches", show=False, id="view.searches",
                tooltip="an agent run's searches for this query: each search's query and what it returned"),
        Binding("w", "which_k", "which k", id="view.which_k",
                tooltip="which k: recall@j of A and B for j = 1 … depth, k and depth marked (the reranker's room)"),
        Binding("question_mark", "help", "help", key_display="?", id="app.help",
                tooltip="this list of keys"),
        Binding("q", "quit_review", "quit", id="app.quit", tooltip="quit (every mark is already saved)"),
    ]

    def __init__(self, inputs: ReviewInputs) -> None:
        super().__init__()
        self.inputs = inputs
        self.model: ReviewModel | None = None
        self.corpus: CorpusIndex | None = CorpusIndex(inputs.corpus) if inputs.corpus else None
        self.corpus_error: str | None = None
        self.filter_key = "all"
        self.sort_key = "flips"
        self.search = ""
        self.active_side = "a"
        self.failure: str | None = None
        self.load_seconds: float | None = None
        self._label_file = None
        self._label_lock = threading.Lock()
        self._verdict_timer = None
        self._pool = None
        self.verdict_error: str | None = None
        self.verdict_delay = VERDICT_DELAY
        self._started = time.perf_counter()

    # ---- layout -------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        yield FilterBar(id="filters")
        with Horizontal(id="panes"):
            yield QueryList(id="queries")
            yield RankedList("a", id="list-a")
            yield RankedList("b", id="list-b")
        yield ChunkView(id="chunk")
        yield Input(id="search", placeholder="search queries by id or text · enter keeps it · esc clears it")
        yield Static(id="status")
        yield KeyBar(self.BINDINGS, id="keys")

    def on_mount(self) -> None:
        self.query_one("#queries").border_title = "queries"
        self.query_one("#list-a").border_title = "A"
        self.query_one("#list-b").border_title = "B"
        self.query_one("#chunk").border_title = "chunk"
        self.set_status(f"loading {self.inputs.run_a.name}, {self.inputs.run_b.name} and {self.inputs.gold.name} …")
        self.query_one(QueryList).focus()
        self._exit_on_signals()
        self._load()

    def _exit_on_signals(self) -> None:
        """SIGTERM, SIGHUP, or a SIGINT sent from outside (Ctrl+C itself arrives as a key): leave the way `q`
        does, so the terminal is restored. Every mark is already saved, each one atomically."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, partial(self.exit, return_code=128 + signum))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests), or no signals
                return

    # ---- loading (worker) ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        from ragdiff.core.errors import InputError
        from ragdiff.core.gold import load_gold
        from ragdiff.core.runs import load_run

        inputs = self.inputs
        started = time.perf_counter()
        try:
            self.post_message(LoadProgress(f"loading {inputs.gold.name} …"))
            gold = load_gold(inputs.gold, inputs.gold_format)
            if self.corpus is None and gold.corpus_path:
                # no --corpus: the corpus the label file names, beside it, when it is there
                named = inputs.gold.parent / gold.corpus_path
                if named.is_file():
                    self.corpus = CorpusIndex(named)
            self.post_message(LoadProgress(f"loading {inputs.run_a.name} …"))
            run_a = load_run(inputs.run_a, inputs.run_format, keep_first=inputs.keep_first)
            self.post_message(LoadProgress(f"loading {inputs.run_b.name} …"))
            run_b = load_run(inputs.run_b, inputs.run_format, keep_first=inputs.keep_first)
            if run_a.name == run_b.name:
                run_a.name, run_b.name = f"A {run_a.name}", f"B {run_b.name}"
            self.post_message(LoadProgress("scoring both runs …"))
            model = ReviewModel(run_a, run_b, gold, inputs.settings)
        except InputError as err:
            self.post_message(LoadFailed(str(err)))
            return
        except Exception as err:  # noqa: BLE001 - shown as one message, never a traceback on screen
            self.post_message(LoadFailed(f"cannot open the review: {type(err).__name__}: {err}"))
            return
        self.post_message(Loaded(model, time.perf_counter() - started))
        # open the label writer now, off the screen's thread: a later mark finds it ready (and a label file
        # deleted mid-review is then a failed save the reviewer can retry), and the journal's recovery notes
        # from an earlier crash are said at once
        with self._label_lock:
            try:
                self._labels(model.gold.format)
            except Exception:  # noqa: BLE001 - the first mark tries again and says why
                self._label_file = None

    def on_load_progress(self, message: LoadProgress) -> None:
        self.set_status(message.text)
        self.query_one(HeaderBar).loading_text = message.text
        self.query_one(HeaderBar).refresh()

    def on_load_failed(self, message: LoadFailed) -> None:
        self.failure = message.text
        self.exit(return_code=2)

    def on_loaded(self, message: Loaded) -> None:
        self.model = message.model
        self.load_seconds = message.seconds
        self.query_one("#list-a").border_title = Text.assemble("A ", clean(self.model.run_a.name))
        self.query_one("#list-b").border_title = Text.assemble("B ", clean(self.model.run_b.name))
        self.refresh_all(select_first=True)
        counts = self.model.filter_counts()
        status = (f"{counts['hit_to_miss']} hit→miss, {counts['miss_to_hit']} miss→hit at k={self.model.k} · "
                  "tab changes pane, ] next query, ? every key")
        if self.inputs.note:
            status = f"{self.inputs.note} · {status}"
        self.set_status(status)
        if self.corpus is not None:
            self._index_corpus()
        self._start_verdicts()

    @work(thread=True, exclusive=True, group="corpus")
    def _index_corpus(self) -> None:
        from ragdiff.core.gold import file_sha256

        count = self.corpus.build()
        note = None
        recorded = self.model.gold.corpus_sha256
        if recorded and self.corpus.error is None and file_sha256(self.corpus.path) != recorded:
            note = (f"{self.corpus.path.name} is not the corpus snapshot {self.inputs.gold.name} records: a score "
                    "change may be the data's, not the retriever's")
        self.post_message(CorpusReady(count, self.corpus.error, note))

    def on_corpus_ready(self, message: CorpusReady) -> None:
        self.corpus_error = message.error
        if message.snapshot_note:
            self.set_status(Text(clean(message.snapshot_note), style="bold"))
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

    def _process_pool(self):
        if self._pool is None:
            import multiprocessing
            import sys
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import resource_tracker

            from ragdiff.app.model import quiet_process

            # Textual replaces sys.stderr with a capture that has no file descriptor, and multiprocessing's
            # resource tracker hands its child sys.stderr's: start the tracker with the real one
            captured = sys.stderr
            try:
                sys.stderr = sys.__stderr__ or captured
                resource_tracker.ensure_running()
            finally:
                sys.stderr = captured
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=quiet_process)
        return self._pool

    def on_unmount(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def on_verdicts_ready(self, message: VerdictsReady) -> None:
        if self.model is not None and self.model.apply_verdicts(message.key, message.result):
            self.query_one(HeaderBar).show(self.model.header)

    # ---- drawing ------------------------------------------------------------------------------------------

    def set_status(self, text: str | Text) -> None:
        self.query_one("#status", Static).update(Text(text) if isinstance(text, str) else text)

    @property
    def visible_ids(self) -> list[str]:
        return self.model.visible(self.filter_key, self.sort_key, self.search) if self.model else []

    @property
    def selected_query(self) -> str | None:
        return self.query_one(QueryList).selected

    def refresh_all(self, select_first: bool = False, keep_chunks: bool = False) -> None:
        """Header, filter bar, query list (keeping the selected query when it is still listed), both lists."""
        model = self.model
        if model is None:
            return
        queries = self.query_one(QueryList)
        previous = None if select_first else queries.selected
        self.query_one(HeaderBar).show(model.header)
        self.query_one(FilterBar).show(model.filter_counts(), self.filter_key, self.sort_key, self.search, model.k)
        delta = None if self.sort_key == "flips" else self.sort_key
        ids = self.visible_ids
        queries.show(model, ids, previous, delta)
        label = dict(FILTERS)[self.filter_key].replace("@k", f"@{model.k}")
        queries.border_title = f"queries [{label} {len(ids)}]"
        self.show_query(keep_chunks=keep_chunks)

    def show_query(self, keep_chunks: bool = False) -> None:
        model = self.model
        queries = self.query_one(QueryList)
        qid = queries.selected
        for widget in (self.query_one("#list-a", RankedList), self.query_one("#list-b", RankedList)):
            widget.show(model, qid, keep_cursor=keep_chunks)
            widget.border_subtitle = f"k={model.k}"
        total = len(queries.ids)
        queries.border_subtitle = f"{queries.cursor + 1}/{total}" if total else "no query matches"
        self.show_chunk()

    def show_chunk(self) -> None:
        model = self.model
        view = self.query_one(ChunkView)
        if model is None:
            return
        qid = self.selected_query
        if qid is None:
            view.show(Text("no query matches the filter and search", style="dim"))
            return
        ranked = self.query_one(f"#list-{self.active_side}", RankedList)
        chunk_id = ranked.selected_chunk
        dim = view.get_component_rich_style("chunk--dim")
        query_text = model.query_text(qid)
        head = Text.assemble(("query ", dim), (clean(qid), view.get_component_rich_style("chunk--id")),
                             "  ", clean(query_text), no_wrap=True, end="")
        if chunk_id is None:
            view.show(Text.assemble(head, "\n", ("this run returned nothing for this query", dim)))
            return
        level, grade = model.label_of(qid, chunk_id)
        label = vocab.word(level, grade)
        rank_a = model.rank_in(qid, "a", chunk_id)
        rank_b = model.rank_in(qid, "b", chunk_id)
        meta = Text.assemble(
            (clean(chunk_id), view.get_component_rich_style("chunk--id")), " · ",
            (label, view.get_component_rich_style("chunk--meta")), " · ",
            f"A{'#' + str(rank_a) if rank_a else ' —'}  B{'#' + str(rank_b) if rank_b else ' —'}",
            no_wrap=True, end="",
        )
        found = model.found_by(qid, self.active_side, chunk_id)
        if found is not None:  # an agent run: which of its searches collected this chunk
            number, total, search = found
            meta.append(f" · found by search {number} of {total}: ", style=dim)
            meta.append(clean(search))
        body = self._chunk_body(chunk_id, query_text, view)
        view.show(Text.assemble(head, "\n", meta, "\n", body))

    def _chunk_body(self, chunk_id: str, query_text: str, view: ChunkView) -> Text:
        dim = view.get_component_rich_style("chunk--dim")
        if self.corpus is None:
            return Text("no corpus given: run with --corpus corpus.jsonl to read the chunk text here", style=dim)
        if self.corpus_error:
            return Text(clean(self.corpus_error), style=dim)
        if not self.corpus.ready:
            return Text(f"indexing {self.corpus.path.name} …", style=dim)
        chunk = self.corpus.get(chunk_id)
        if chunk is None:
            if self.corpus.error:  # the file could not be read just now (moved, deleted, a bad line)
                return Text(clean(self.corpus.error), style=dim)
            return Text(f"{clean(chunk_id)} is not in {clean(self.corpus.path.name)}", style=dim)
        body = Text(end="")
        if chunk.title:
            body.append_text(literal(chunk.title, style="bold"))
            body.append("\n")
        body.append_text(literal(chunk.text, multiline=True))
        return mark_words(body, query_words(query_text), view.get_component_rich_style("chunk--match"))

    # ---- events from the widgets --------------------------------------------------------------------------

    @on(LineList.Moved)
    def _moved(self, message: LineList.Moved) -> None:
        if isinstance(message.sender, QueryList):
            self.show_query()
        elif isinstance(message.sender, RankedList):
            self.active_side = message.sender.side
            self.show_chunk()

    def on_descendant_focus(self, event) -> None:
        widget = event.widget if hasattr(event, "widget") else None
        if isinstance(widget, RankedList) and widget.side != self.active_side:
            self.active_side = widget.side
            self.show_chunk()

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.search = event.value.strip()
        self.refresh_all()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self.query_one(QueryList).focus()
        if not self.search:
            self.query_one("#search").remove_class("-show")

    # ---- actions ------------------------------------------------------------------------------------------

    def action_next_query(self) -> None:
        queries = self.query_one(QueryList)
        queries.move_to(queries.cursor + 1, 1)

    def action_previous_query(self) -> None:
        queries = self.query_one(QueryList)
        queries.move_to(queries.cursor - 1, -1)

    def action_cycle_filter(self) -> None:
        if self.model is None:
            return
        keys = [key for key, _ in FILTERS]
        self.filter_key = keys[(keys.index(self.filter_key) + 1) % len(keys)]
        self.refresh_all()
        count = len(self.visible_ids)
        label = dict(FILTERS)[self.filter_key].replace("@k", f"@{self.model.k}")
        self.set_status(f"filter: {label} · {count} {'query' if count == 1 else 'queries'}")

    def action_cycle_sort(self) -> None:
        if self.model is None:
            return
        keys = [key for key, _ in SORTS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.refresh_all()
        self.set_status(f"sort: {dict(SORTS)[self.sort_key].replace('@k', f'@{self.model.k}')}"
                        + ("" if self.sort_key == "flips" else " · largest losses (B below A) first"))

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-show")
        search.focus()

    def action_clear_search(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("-show") or self.search:
            search.value = ""
            search.remove_class("-show")
            self.search = ""
            self.refresh_all()
            self.query_one(QueryList).focus()

    def action_change_k(self, step: int) -> None:
        model = self.model
        if model is None:
            return
        k = model.k + step
        if k < 1 or k > model.depth:
            self.set_status(f"k stays {model.k}: it runs from 1 to depth={model.depth}")
            return
        model.set_k(k)
        self.refresh_all(keep_chunks=True)
        counts = model.filter_counts()
        self.set_status(f"k={k}: {counts['hit_to_miss']} hit→miss, {counts['miss_to_hit']} miss→hit")
        self._start_verdicts(delay=self.verdict_delay)

    def action_help(self) -> None:
        groups = [("review", list(self.BINDINGS)), ("in a list", list(LineList.BINDINGS))]
        self.push_screen(HelpScreen(groups))

    def action_which_k(self) -> None:
        model = self.model
        if model is not None:
            self.push_screen(WhichKScreen(model.run_a.name, model.run_b.name, model.which_k(), model.k,
                                          len(model.eval_a.queries.scored)))

    def action_searches(self) -> None:
        model, qid = self.model, self.selected_query
        if model is None or qid is None:
            return
        runs = [(run.name, run.searches.get(qid, [])) for run in (model.run_a, model.run_b)]
        if not any(searches for _, searches in runs):
            self.set_status("neither run is an agent run (several searches per query): nothing to break down")
            return
        self.push_screen(SearchesScreen(searches_text(qid, runs, lambda chunk: model.label_of(qid, chunk))))

    def action_quit_review(self) -> None:
        self.exit(return_code=0)

    # ---- marking labels -----------------------------------------------------------------------------------

    def _mark_target(self):
        focused = self.focused
        if isinstance(focused, RankedList):
            ranked = focused
        else:
            ranked = self.query_one(f"#list-{self.active_side}", RankedList)
        item = ranked.selected_item
        qid = self.selected_query
        if qid is None or item is None:
            return None
        rank = getattr(item.row, "rank", None)
        run = self.model.run_a if ranked.side == "a" else self.model.run_b
        return qid, item.row.chunk_id, run.name, rank

    def action_mark(self, label: str, grade: int | None = None) -> None:
        if self.model is None:
            return
        target = self._mark_target()
        if target is None:
            self.set_status("no chunk is highlighted: tab to list A or B and pick one first")
            return
        qid, chunk_id, run_name, rank = target
        if label != "gold":
            grade = None  # grades belong to gold; None = the file's own default for a gold entry
        what = vocab.word(label, grade)
        self.set_status(Text(f"writing: {clean(chunk_id)} {what} for {clean(qid)} …"))
        self._write_mark(qid, chunk_id, label, grade, run_name, rank)

    def _labels(self, fmt: str | None = None):
        """The label writer, opened once (its recovery notes go to the status line)."""
        from ragdiff.core import labels

        if self._label_file is None:
            fmt = fmt or self.model.gold.format
            self._label_file = labels.LabelFile(self.inputs.gold, fmt, self.inputs.reviewer)
            notes = self._label_file.recovery_notes
            if notes:
                self.post_message(MarkDone(" ".join(str(n) for n in notes), None))
        return labels

    @work(thread=True, group="labels")
    def _write_mark(self, qid, chunk_id, label, grade, run_name, rank) -> None:
        with self._label_lock:  # one write at a time, in the order the keys were pressed
            try:
                labels = self._labels()
                change = self._label_file.apply(labels.Mark(query_id=qid, chunk_id=chunk_id, label=label,
                                                            grade=grade, run=run_name, rank=rank))
            except Exception as err:  # noqa: BLE001 - LabelFormatError/ConflictError/WriteError: said, not raised
                pending = len(self._label_file.pending) if self._label_file is not None else 0
                self.post_message(MarkDone(_error_text(err, self.inputs.gold, pending), None, error=True))
                return
            self.post_message(MarkDone(change.message, self._reload_gold()))

    def action_undo(self) -> None:
        if self.model is None:
            return
        self._undo()

    @work(thread=True, group="labels")
    def _undo(self) -> None:
        with self._label_lock:
            try:
                self._labels()
                change = self._label_file.undo()
            except Exception as err:  # noqa: BLE001
                self.post_message(MarkDone(_error_text(err, self.inputs.gold), None, error=True))
                return
            if change is None:
                self.post_message(MarkDone("nothing to undo", None))
                return
            self.post_message(MarkDone(change.message, self._reload_gold()))

    def action_retry_marks(self) -> None:
        if self.model is not None:
            self._retry()

    @work(thread=True, group="labels")
    def _retry(self) -> None:
        with self._label_lock:
            if self._label_file is None or not self._label_file.pending:
                self.post_message(MarkDone("no unsaved mark to retry", None))
                return
            try:
                changes = self._label_file.retry()
            except Exception as err:  # noqa: BLE001 - still failing: say so, keep the marks pending
                self.post_message(MarkDone(_error_text(err, self.inputs.gold, len(self._label_file.pending)), None,
                                           error=True))
                return
            self.post_message(MarkDone("; ".join(c.message for c in changes), self._reload_gold()))

    def _reload_gold(self):
        from ragdiff.core.gold import load_gold

        try:
            return load_gold(self.inputs.gold, self.inputs.gold_format)
        except Exception:  # noqa: BLE001 - the mark is saved; the screen keeps the old labels until reload
            return None

    def on_mark_done(self, message: MarkDone) -> None:
        if message.gold is not None and self.model is not None:
            self.model.set_gold(message.gold)
            self.refresh_all(keep_chunks=True)
            self._start_verdicts()
        self.set_status(Text(clean(message.status), style="bold red" if message.error else ""))
