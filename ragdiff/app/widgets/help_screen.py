"""`?`: every key and what it does, generated from the Binding objects themselves, and the legend of the marks
the screen draws (the judgment glyphs come from ragdiff.core.vocab, the one home of their words)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

from ragdiff.app.keys import key  # priority: run as the key arrives, before the keys after it
from ragdiff.core import vocab


NAMES = {"up": "↑", "down": "↓", "left": "←", "right": "→", "pageup": "PgUp", "pagedown": "PgDn", "home": "Home",
         "end": "End", "tab": "tab", "shift+tab": "shift+tab", "escape": "esc", "enter": "enter", "space": "space"}


def key_names(binding: Binding) -> str:
    """How the binding's keys are written: its key_display for a single key (`!`, not exclamation_mark), else
    each key's own name (`space PgDn`), a punctuation key as its character."""
    keys = [k.strip() for k in binding.key.split(",")]
    if binding.key_display and len(keys) == 1:
        return binding.key_display
    return " ".join(dict.fromkeys(NAMES.get(k) or format_key(k) for k in keys))


def bindings_table(groups: list[tuple[str, list[Binding]]]) -> Table:
    """Key and what it does; the does column wraps, so nothing is cut at any width."""
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, expand=True)
    table.add_column("key", no_wrap=True)
    table.add_column("does", no_wrap=False, ratio=1)
    for title, bindings in groups:
        # bindings that do the same thing with different keys (the grade digits) share one row, and the plain
        # ones (no tooltip: moving in a list) share one row of "key description" pairs — beside the group's
        # title when they are all it has (one line, not two: the keys and marks fit whole at 140x40)
        rows: dict[str, list[Binding]] = {}
        plain = [b for b in bindings if not b.tooltip]
        for binding in bindings:
            if binding.tooltip:
                rows.setdefault(binding.tooltip, []).append(binding)
        heading = Text(title, style="bold underline")
        if rows:
            table.add_row(heading, "")
        for does, same in rows.items():
            keys = " ".join(dict.fromkeys(key_names(b) for b in same))
            if len(same) > 3:
                keys = f"{key_names(same[0])}…{key_names(same[-1])}"
            table.add_row(Text(keys, style="bold"), Text(does))
        if plain:
            pairs = Text(", ").join(Text.assemble((key_names(b), "bold"), " ", b.description or b.action)
                                    for b in plain)
            table.add_row(Text("") if rows else heading, pairs)
    return table


# The marks of the review screen that are not judgments (those come from vocab.legend()): (mark, meaning).
SCREEN_MARKS = [
    ("B#n  A#n", "the chunk's rank in the other run (A's list shows B's rank, B's list A's)"),
    ("B —  A —", "the other run did not return the chunk"),
    ("── k=5 ──", "the cut at k: above it, what is pasted into the prompt"),
    ("rank 12", "under the cut: a relevant chunk this run put below k (or: not retrieved)"),
]
QUERY_MARKS = [
    ("✓ ✗", "the query's hit (a relevant chunk in the top k) or miss, in A then B"),
    ("✓→✗", "a flip: hit in A, miss in B (✗→✓ the other way)"),
    ("∅", "unanswerable: the gold set has no relevant chunk for it"),
    ("–", "the run lacks the query (scored 0)"),
]
WHICH_K_MARKS = [
    ("● ○", "which k (w): recall@j of A (●) and B (○) at each j"),
    ("◉", "A and B at the same height"),
    ("┊", "the k the header is at"),
]
# how judged-not-relevant and unjudged differ besides their glyph (app.tcss draws them so)
LOOK = {vocab.NOT_RELEVANT: "; its id is dimmed", vocab.UNJUDGED: "; the ? is reversed and the id in italics"}


Legend = list[tuple[str, list[tuple[str, str]]]]


def legend_rows() -> Legend:
    """Every mark the review screen draws with its meaning, in groups: the `?` screen shows these and
    tests/test_legend.py holds docs/keys.md to them."""
    judgments = [(mark, meaning + LOOK.get(name, ""))
                 for name, (mark, meaning) in zip(vocab.KINDS, vocab.legend())]
    return [("a chunk's label", judgments), ("in a run's list", SCREEN_MARKS), ("in the query list", QUERY_MARKS),
            ("in the which-k plot", WHICH_K_MARKS)]


# The marks of the judging queue that are not judgments: (mark, meaning)
POOL_MARKS = [
    ("A3  B—", "the chunk's rank in each run (the letters are named under the pool); — : that run did not "
               "return it"),
    ("from search", "found by searching the corpus (/), in no run's results"),
    ("⚑", "flagged for a second opinion (!); it stays unjudged"),
    ("…", "decided, being saved"),
]
PROGRESS_MARKS = [
    ("N/M judged", "the pool's chunks judged (header), and this query's (beside the query and over the pool)"),
]


def judge_legend_rows() -> Legend:
    """Every mark the judging queue draws: the judgment marks and words (vocab), the pool's own marks."""
    judgments = [(mark, meaning) for mark, meaning in vocab.legend()]
    return [("a chunk's label", judgments), ("in the pool", POOL_MARKS), ("progress", PROGRESS_MARKS)]


def legend_table(legend: Legend) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, expand=True)
    table.add_column("mark", no_wrap=True)
    table.add_column("means", no_wrap=False, ratio=1)
    for title, rows in legend:
        table.add_row("", Text(title, style="bold underline"))
        for mark, meaning in rows:
            table.add_row(Text(mark, style="bold"), Text(meaning))
    return table


class HelpScreen(ModalScreen[None]):
    """Keys and legend. Below 130 columns they stand one above the other and are taller than a small terminal
    (69 lines at 80x24): the box scrolls on purpose — it has the focus, so ↑↓ PgUp PgDn Home End scroll it,
    and j k space as in the judging queue's chunk text — and its subtitle says which lines are showing of how many
    (only when it scrolls: where it all fits, it says so by saying nothing about scrolling)."""

    # keys and legend side by side from 130 columns, the legend under the keys below that
    HORIZONTAL_BREAKPOINTS = [(0, "-stacked"), (130, "-side-by-side")]
    BINDINGS = [
        key("escape,question_mark,q", "dismiss", "close help", id="help.close"),
        key("j", "scroll_help(1)", "down", show=False, id="help.down"),
        key("k", "scroll_help(-1)", "up", show=False, id="help.up"),
        key("space", "page_help(1)", "page down", show=False, id="help.page"),
    ]

    def __init__(self, groups: list[tuple[str, list[Binding]]], legend: Legend | None = None) -> None:
        """`groups`: the screen's bindings by group; `legend`: the marks it draws (the review's by default)."""
        super().__init__()
        self.groups = groups
        self.legend = legend if legend is not None else legend_rows()

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            with Horizontal(id="help-columns"):
                yield Static(bindings_table(self.groups + [("help", self.BINDINGS)]), id="help-keys")
                yield Static(legend_table(self.legend), id="help-legend")

    def on_mount(self) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.border_title = "keys and marks"
        box.border_subtitle = "esc / ? / q close"
        self.watch(box, "scroll_y", lambda _y: self._where(), init=False)
        self.call_after_refresh(self._where)  # once the box has its size

    def on_resize(self) -> None:
        self.call_after_refresh(self._where)

    def _where(self) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        total, shown = box.virtual_size.height, box.scrollable_content_region.height
        if total <= shown or shown <= 0:
            box.border_subtitle = "esc / ? / q close"
            return
        top = min(int(box.scroll_y), total - shown)
        box.border_subtitle = f"lines {top + 1}–{top + shown} of {total} · ↑↓ j k space scroll · esc close"

    def action_scroll_help(self, lines: int) -> None:
        self.query_one("#help-box", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_page_help(self, pages: int) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.scroll_relative(y=pages * box.scrollable_content_region.height, animate=False)
