"""`ragdiff review`: two runs side by side, gold highlighted, flipped queries first.

The app owns no numbers: `ReviewModel` (Textual-free) computes them from the core, and the widgets draw
them. File work (loading, the corpus index, the p-values, writing a label) runs in worker threads whose
results come back as messages (`ragdiff.app.messages`).

Every key acts on the state the reviewer saw when pressing it, at any typing speed. Textual hands a key to
the focused widget's queue and runs its non-priority binding only after the key has bubbled back up, so a
binding could act on a screen that keys queued behind it had not yet changed (`j` then `x` marked the new
query with the old query's chunk; `/ q29 Enter Tab` lost the search). Here every binding is a priority
binding, run as the key arrives and in arrival order; every state change a key causes (the query cursor,
the lists it fills, the focus, the search text) happens inside that key's action, not in a later message;
and a mark captures its query and chunk at the key press and carries them to the writer thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.worker import get_current_worker
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Static

from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.keys import OrderedKeysApp, key, label_keys
from ragdiff.app.housekeeping import Housekeeping
from ragdiff.app.judging import JudgingQueue
from ragdiff.app.loading import Loading
from ragdiff.app.marks import MarkPath
from ragdiff.app.search import SearchLine
from ragdiff.app.messages import CorpusReady, UnjudgedReady, VerdictsReady, ViewReady
from ragdiff.app.model import FILTERS, SORTS, ReviewModel
from ragdiff.app.session import LabelSession, Target
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.filter_bar import FilterBar
from ragdiff.app.widgets.header import HeaderBar
from ragdiff.app.widgets.help_screen import HelpScreen
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList, score_text
from ragdiff.app.widgets.search_bar import SearchBar
from ragdiff.app.widgets.searches import SearchesScreen, searches_text
from ragdiff.app.widgets.which_k import WhichKScreen
from ragdiff.core import vocab
from ragdiff.core.metrics import EvalSettings

# The layout (DESIGN: usable from 80x24 up). Three panes need a query list of 26 columns and two run lists
# of 37 (rank, a chunk id of 12, score, label, the other run's rank, border and scroll bar); below that the
# run lists take turns beside the query list (tab or o switches) rather than cutting ids and ranks.
THREE_PANES = 100
TALL = 30  # from this height the chunk pane gets its full height
PROCESS_FOR_VERDICTS = 2000  # scored queries from which the p-values are computed in another process
VERDICT_DELAY = 0.6  # seconds k must rest before the p-values are recomputed (they are slow on big sets)
NEIGHBOUR_KS = (1, -1)  # the k's beside the one shown that a worker scores ahead of + and - (see _build_views)


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


_key = key  # every review binding runs as its key arrives (see the module's docstring)


def _grade_bindings() -> list[Binding]:
    return [_key(str(n), f"mark('gold', {n})", "gold with grade 1-9", show=False, id=f"label.grade{n}",
                 tooltip="mark the highlighted chunk gold with this grade (1-9); right after g it grades that "
                         "one mark") for n in range(1, 10)]


class ReviewApp(Loading, Housekeeping, SearchLine, JudgingQueue, MarkPath, OrderedKeysApp):
    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses elsewhere (bench) find it too
    TITLE = "ragdiff review"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-one-run"), (THREE_PANES, "-three-panes")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]

    BINDINGS = [
        *label_keys("mark", "label", {
            vocab.GOLD: "mark the highlighted chunk gold (answers the query); a digit 1-9 gives a grade",
            vocab.EVIDENCE: "mark the highlighted chunk evidence (supports a step of the answer)",
            vocab.NOT_RELEVANT: "mark the highlighted chunk judged not relevant (grade 0)"}),
        *_grade_bindings(),
        _key("u", "undo", "undo", id="label.undo", tooltip="undo the last mark (from the journal)"),
        _key("r", "retry_marks", "retry unsaved", show=False, id="label.retry",
                tooltip="write again the marks a failed save left unsaved (read-only file, full disk, …)"),
        _key("D", "drop_marks", "drop unsaved", key_display="D", show=False, id="label.drop",
                tooltip="give up the marks a failed save left unsaved (r writes them instead)"),
        _key("f", "cycle_filter", "filter", id="queries.filter",
                tooltip="cycle the query filter: all, hit→miss, miss→hit, both miss, unanswerable, unjudged@k"),
        _key("s", "cycle_sort", "sort", id="queries.sort",
                tooltip="cycle the sort: flips first, Δ reciprocal rank, Δ nDCG@k (largest losses first)"),
        _key("slash", "search", "search", key_display="/", id="queries.search",
                tooltip="search the queries by id or text (enter keeps it, esc clears it)"),
        _key("right_square_bracket", "next_query", "next query", key_display="]", show=False,
                id="queries.next", tooltip="next query in the list, from any pane"),
        _key("left_square_bracket", "previous_query", "previous query", key_display="[", show=False,
                id="queries.previous", tooltip="previous query in the list, from any pane"),
        _key("plus,equals_sign", "change_k(1)", "k", key_display="+/-", id="k.up",
                tooltip="k + 1: recompute the header, the marks, the filters and their counts"),
        _key("minus", "change_k(-1)", "k", key_display="-", show=False, id="k.down",
                tooltip="k − 1: recompute the header, the marks, the filters and their counts"),
        _key("space", "read_on", "read on", key_display="space", show=False, id="text.read_on",
             tooltip="the chunk text a page on, from any pane"),  # (from its end: back to the top)
        _key("tab", "focus_next", "next pane", show=False, id="pane.next",
                tooltip="next pane: queries → A → B → chunk text"),
        _key("o", "other_run", "other run", show=False, id="pane.other_run",
             tooltip="the other run's list (below 100 columns the two lists take turns beside the queries)"),
        _key("shift+tab", "focus_previous", "previous pane", show=False, id="pane.previous",
                tooltip="previous pane"),
        _key("escape", "clear_search", "clear search", show=False, id="queries.clear_search",
                tooltip="clear the search and go back to the query list"),
        _key("v", "searches", "searches", show=False, id="view.searches",
                tooltip="an agent run's searches for this query: each search's query and what it returned"),
        _key("J", "judge", "judge", key_display="J", id="view.judge",
             tooltip="open the judging queue (ragdiff judge) over both runs' top 10 at this query: one key per "
                     "chunk, then the next unjudged chunk by itself"),
        _key("w", "which_k", "which k", id="view.which_k",
                tooltip="which k: recall@j of A and B for j = 1 … depth, k and depth marked (the reranker's room)"),
        _key("question_mark", "help", "help", key_display="?", id="app.help",
                tooltip="this list of keys, and the legend of the marks"),
        _key("q", "quit_review", "quit", id="app.quit",
             tooltip="quit, once the marks still saving are written (in one batch)"),
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
        self.session = LabelSession(inputs.gold, inputs.reviewer, self.post_message, track=self._track_job)
        self.searching = False  # keys go to the search line (the app types them in as they arrive)
        self._shown: Target | None = None  # the chunk the chunk pane shows
        self._chunk_text: tuple[ChunkView, Text] | None = None  # the pane and the text last shown in it
        self._status_one_line = False  # the status line shows one line that fits its width
        self._after_g: tuple[Target, int] | None = None
        self._stale = False  # marks came while another screen was shown: refresh on the way back
        self._listed_uncounted = False  # the query list is unjudged@k's, made before its rows were found
        self._verdict_timer = None
        self._views_timer = None
        self._pool = None
        self._judge_queue = None  # the judging queue (J): built at the first J, then kept in step with every mark
        self._judge_backlog: list | None = None  # while it is built: the outcomes (and changes) that come meanwhile
        self.store = None  # ragdiff.core.labels.store.Judgments of the label file: the one copy every view reads
        self._judge_wanted: str | None = None  # while it is built: the query it opens at (unless J is called off)
        self.verdict_error: str | None = None
        self.verdict_delay = VERDICT_DELAY
        self._started = time.perf_counter()
        self._collector_was_on: bool | None = None  # gc.isenabled() when on_mount turned the collector off

    # ---- layout -------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        yield FilterBar(id="filters")
        with Horizontal(id="panes"):
            yield QueryList(id="queries")
            yield RankedList("a", id="list-a")
            yield RankedList("b", id="list-b")
        yield ChunkView(id="chunk")
        yield SearchBar(id="search")
        yield Static(id="status")
        yield KeyBar(self.BINDINGS, id="keys")

    # ---- one run at a time on a narrow terminal ----------------------------------------------------------

    @property
    def one_run(self) -> bool:
        """Below THREE_PANES columns only the active run's list is shown beside the queries."""
        return self.size.width < THREE_PANES

    def _show_run(self, side: str, focus: bool = False) -> None:
        """Make `side` the active run: its list is the one shown when the lists take turns."""
        lists = {s: self.query_one(f"#list-{s}", RankedList) for s in ("a", "b")}
        for s, widget in lists.items():
            widget.set_class(s != side, "-hidden")
        changed = side != self.active_side
        self.active_side = side
        if focus:
            self.focus_now(lists[side])
        if changed:
            self.show_chunk()
        self._run_subtitles()

    def _run_subtitles(self) -> None:
        k = f"k={self.model.k}" if self.model is not None else ""
        for side, other in (("a", "B"), ("b", "A")):
            hint = f" · o: {other}" if self.one_run else ""
            self.query_one(f"#list-{side}", RankedList).set_border(subtitle=k + hint)

    def on_resize(self) -> None:
        self.call_after_refresh(self._run_subtitles)  # once the new size is the app's

    def action_other_run(self) -> None:
        self._show_run("b" if self.active_side == "a" else "a", focus=True)

    def on_mount(self) -> None:
        self._collector_off()
        self._load()  # first: the files are read while the rest of the screen is set up
        self._show_run("a")
        self.query_one("#queries", QueryList).set_border(title="queries")
        self.query_one("#list-a", RankedList).set_border(title="A")
        self.query_one("#list-b", RankedList).set_border(title="B")
        self.query_one("#chunk").border_title = "chunk"
        self.set_status(f"loading {self.inputs.run_a.name}, {self.inputs.run_b.name} and {self.inputs.gold.name} …")
        self.query_one(QueryList).follow = self._query_moved
        for ranked in self.query(RankedList):
            ranked.follow = self._chunk_moved
        self.focus_now(self.query_one(QueryList))
        self._exit_on_signals()
        self.screen_change_signal.subscribe(self, self._screen_changed)

    def _screen_changed(self, screen) -> None:
        """Back on the review from any screen over it (?, w, v, J): what came meanwhile and was not drawn under
        it (a mark saved, the corpus index, the unjudged rows: `_stale`) is drawn now. Only the judging queue
        caught up on its way back (its close callback): a mark saved while ? or w was open stayed off the
        review's numbers and lists until something else redrew them."""
        if screen is self.screen_stack[0] and self._stale and self.model is not None:
            self._stale = False
            self.show_numbers()
            self.show_chunk()

    # ---- background work (workers) ------------------------------------------------------------------------

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
        from ragdiff.core.gold import file_sha256

        count = self.corpus.build()
        note = None
        recorded = self.model.gold.corpus_sha256
        if recorded and self.corpus.error is None and file_sha256(self.corpus.path) != recorded:
            from ragdiff.core.errors import InputError
            from ragdiff.core.stale import chunk_check

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

    # ---- drawing ------------------------------------------------------------------------------------------

    def set_status(self, text: str | Text) -> None:
        status = self.screen_stack[0].query_one("#status", Static)
        text = Text(text) if isinstance(text, str) else text
        width = status.size.width
        one_line = width > 0 and "\n" not in text.plain and text.cell_len <= width
        # a layout of the screen (every scroll bar repainted) only when the line may wrap or did: a k change
        # says one line where one was
        status.update(text, layout=not (one_line and self._status_one_line))
        self._status_one_line = one_line

    @property
    def on_review(self) -> bool:
        """The review screen is the one shown (not the judging queue, help, …)."""
        return self.screen is self.screen_stack[0]

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
        self._listed_uncounted = model.filter_counts()[self.filter_key] is None
        label = dict(FILTERS)[self.filter_key].replace("@k", f"@{model.k}")
        # unjudged@k before its rows are found has no count yet (as the filter bar says), not 0
        queries.set_border(title=f"queries [{label} {'…' if self._listed_uncounted else len(ids)}]")
        self.show_query(keep_chunks=keep_chunks)

    def show_query(self, keep_chunks: bool = False) -> None:
        model = self.model
        queries = self.query_one(QueryList)
        qid = queries.selected
        for widget in (self.query_one("#list-a", RankedList), self.query_one("#list-b", RankedList)):
            widget.show(model, qid, keep_cursor=keep_chunks)
        self._run_subtitles()
        total = len(queries.ids)
        queries.set_border(subtitle=f"{queries.cursor + 1}/{total}" if total else "no query matches")
        self.show_chunk()

    def show_chunk(self) -> None:
        model = self.model
        view = self.query_one(ChunkView)
        if model is None:
            return
        self._shown = None
        qid = self.selected_query
        if qid is None:
            self._show_in_chunk(view, Text("no query matches the filter and search", style="dim"))
            return
        ranked = self.query_one(f"#list-{self.active_side}", RankedList)
        chunk_id = ranked.selected_chunk
        if chunk_id is not None:
            self._shown = self._target_of(ranked)
        dim = view.get_component_rich_style("chunk--dim")
        query_text = model.query_text(qid)
        head = Text.assemble(("query ", dim), (clean(qid), view.get_component_rich_style("chunk--id")),
                             "  ", clean(query_text), no_wrap=True, end="")
        if chunk_id is None:
            self._show_in_chunk(view, Text.assemble(head, "\n", ("this run returned nothing for this query", dim)))
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
        row = ranked.selected_item.row
        if getattr(row, "score", None) is not None:  # the score column gives way to the ids on a narrow pane
            meta.append(f" · score {score_text(row.score)}", style=dim)
        found = model.found_by(qid, self.active_side, chunk_id)
        if found is not None:  # an agent run: which of its searches collected this chunk
            number, total, search = found
            meta.append(f" · found by search {number} of {total}: ", style=dim)
            meta.append(clean(search))
        body = self._chunk_body(chunk_id, query_text, view)
        self._show_in_chunk(view, Text.assemble(head, "\n", meta, "\n", body))

    def _show_in_chunk(self, view: ChunkView, text: Text) -> None:
        """`text` in the chunk pane, from its top; nothing to do when the pane shows just that from its top
        already (a k change keeps the chunk: showing it again laid out and repainted the whole pane)."""
        shown = self._chunk_text
        if (shown is not None and shown[0] is view and view.scroll_offset.y == 0 and text == shown[1]
                and (text.style, text.no_wrap, text.end) == (shown[1].style, shown[1].no_wrap, shown[1].end)):
            return
        self._chunk_text = (view, text)
        view.show(text)

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

    # ---- keys and events from the widgets -----------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # the review's keys act on the review screen only: under `?` or another screen they fall through
        if self.screen is not self.screen_stack[0] and action in self._review_actions():
            return False
        return True

    def _review_actions(self) -> set[str]:
        actions = getattr(self, "_action_names", None)
        if actions is None:
            actions = self._action_names = {b.action.split("(")[0] for b in self.BINDINGS}
        return actions

    def _query_moved(self, widget: LineList, index: int) -> None:
        self.show_query()

    def _chunk_moved(self, widget: LineList, index: int) -> None:
        self.active_side = widget.side
        self.show_chunk()

    def _focus_moved(self) -> None:
        widget = self.focused
        if isinstance(widget, RankedList) and widget.side != self.active_side:
            self._show_run(widget.side)

    def focus_now(self, widget) -> None:
        """Focus a widget before the next key is handled (`Widget.focus()` waits for the message queue)."""
        self.screen.set_focus(widget)
        self._focus_moved()

    def on_descendant_focus(self, event) -> None:  # a click, or focus set by Textual itself
        self._focus_moved()

    def action_focus_next(self) -> None:
        focused = self.focused
        if self.one_run and isinstance(focused, RankedList) and focused.side == "a":
            self._show_run("b", focus=True)  # the hidden B list is next in the tab order
            return
        self.screen.focus_next()
        self._focus_moved()

    def action_focus_previous(self) -> None:
        focused = self.focused
        if self.one_run and isinstance(focused, RankedList) and focused.side == "b":
            self._show_run("a", focus=True)
            return
        self.screen.focus_previous()
        self._focus_moved()

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
        if self.model.filter_counts()[self.filter_key] is None:
            self.set_status(f"filter: {label} · finding the unjudged chunks …")
            return
        self.set_status(f"filter: {label} · {count} {'query' if count == 1 else 'queries'}")

    def action_cycle_sort(self) -> None:
        if self.model is None:
            return
        keys = [key for key, _ in SORTS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.refresh_all()
        self.set_status(f"sort: {dict(SORTS)[self.sort_key].replace('@k', f'@{self.model.k}')}"
                        + ("" if self.sort_key == "flips" else " · largest losses (B below A) first"))

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
        self.call_after_refresh(self._prefetch_views)  # once this k is on screen: the worker does not slow it

    def action_read_on(self) -> None:
        self.query_one(ChunkView).read_on()

    def action_help(self) -> None:
        groups = [("review", list(self.BINDINGS)), ("in a list", list(LineList.BINDINGS)),
                  ("chunk", list(ChunkView.BINDINGS))]
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

    def show_numbers(self) -> None:
        """After a mark: the numbers, marks and labels change in place; the query list keeps its order and
        its cursor, each ranked list its cursor (order changes only when the reviewer asks: s, f, /, +/-)."""
        model = self.model
        queries = self.query_one(QueryList)
        self.query_one(HeaderBar).show(model.header)
        self.query_one(FilterBar).show(model.filter_counts(), self.filter_key, self.sort_key, self.search, model.k)
        queries.redraw()
        self.show_query(keep_chunks=True)
