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

`ReviewApp` composes the screen, holds the bindings and routes messages; each concern is a class of its own,
mixed in, in a module of its own: `loading` (the files read, the first screen), `background` (the workers
after it: unjudged rows, corpus index, p-values, the k's ahead), `drawing` (the widgets filled from the
model), `panes` (one run at a time, focus), `marks` (a key to the label writer to the judgment store),
`judging` (J), `search` (/), `housekeeping` (the collector, signals, the p-value process).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Static

from ragdiff.app.background import VERDICT_DELAY, BackgroundWork
from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.drawing import Drawing
from ragdiff.app.housekeeping import Housekeeping
from ragdiff.app.judging import JudgingQueue
from ragdiff.app.keys import OrderedKeysApp, key, label_keys
from ragdiff.app.loading import Loading
from ragdiff.app.marks import MarkPath
from ragdiff.app.model import FILTERS, SORTS, ReviewModel
from ragdiff.app.panes import THREE_PANES, Panes
from ragdiff.app.search import SearchLine
from ragdiff.app.session import LabelSession, Target
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.filter_bar import FilterBar
from ragdiff.app.widgets.header import HeaderBar
from ragdiff.app.widgets.help_screen import HelpScreen
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.app.widgets.search_bar import SearchBar
from ragdiff.app.widgets.searches import SearchesScreen, searches_text
from ragdiff.app.widgets.which_k import WhichKScreen
from ragdiff.core import vocab
from ragdiff.core.io.choices import DEFAULT_POOL_ORDER
from ragdiff.core.metrics.specs import EvalSettings

TALL = 30  # from this height the chunk pane gets its full height


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
    order: str = DEFAULT_POOL_ORDER  # the judging queue's (J) order, as `ragdiff judge --order`


_key = key  # every review binding runs as its key arrives (see the module's docstring)


def _grade_bindings() -> list[Binding]:
    return [_key(str(n), f"mark('gold', {n})", "gold with grade 1-9", show=False, id=f"label.grade{n}",
                 tooltip="mark the highlighted chunk gold with this grade (1-9); right after g it grades that "
                         "one mark") for n in range(1, 10)]


class ReviewApp(Loading, BackgroundWork, Drawing, Panes, Housekeeping, SearchLine, JudgingQueue, MarkPath,
                OrderedKeysApp):
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
             tooltip="open the judging queue (ragdiff judge) over both runs' top 10: one key per chunk, this "
                     "query's unjudged ones first, then --order's"),
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
        self._judge_from: int | None = None  # while it is built: the store's generation it is built from
        self.store = None  # ragdiff.core.labels.store.Judgments of the label file: the one copy every view reads
        self._judge_wanted: str | None = None  # while it is built: the query it opens at (unless J is called off)
        self.verdict_error: str | None = None
        self.verdict_delay = VERDICT_DELAY
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
