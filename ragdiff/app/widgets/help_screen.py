"""`?`: every key and what it does, generated from the Binding objects themselves (ids and descriptions)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def key_names(binding: Binding) -> str:
    names = {"up": "↑", "down": "↓", "left": "←", "right": "→", "pageup": "PgUp", "pagedown": "PgDn",
             "home": "Home", "end": "End", "tab": "tab", "shift+tab": "shift+tab", "escape": "esc",
             "question_mark": "?", "slash": "/", "plus": "+", "minus": "-", "left_square_bracket": "[",
             "right_square_bracket": "]", "enter": "enter", "equals_sign": "="}
    keys = [names.get(k.strip(), k.strip()) for k in binding.key.split(",")]
    return " ".join(dict.fromkeys(keys))


def bindings_table(groups: list[tuple[str, list[Binding]]]) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, expand=False)
    table.add_column("key", no_wrap=True)
    table.add_column("does", no_wrap=False)
    table.add_column("id", style="dim", no_wrap=True)
    for title, bindings in groups:
        table.add_row(Text(title, style="bold underline"), "", "")
        # bindings that do the same thing with different keys (the grade digits) share one row
        rows: dict[str, list[Binding]] = {}
        for binding in bindings:
            rows.setdefault(binding.tooltip or binding.description or binding.action, []).append(binding)
        for does, same in rows.items():
            keys = " ".join(dict.fromkeys(key_names(b) for b in same))
            if len(same) > 3:
                keys = f"{key_names(same[0])}…{key_names(same[-1])}"
            ids = same[0].id or same[0].action
            if len(same) > 1:
                ids = f"{ids}…{same[-1].id or same[-1].action}" if ids != (same[-1].id or same[-1].action) else ids
            table.add_row(Text(keys, style="bold"), Text(does), Text(ids))
        table.add_row("", "", "")
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close help", id="help.close")]

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(bindings_table(self.groups + [("help", self.BINDINGS)]), id="help-table")

    def on_mount(self) -> None:
        self.query_one("#help-box").border_title = "keys"
        self.query_one("#help-box").border_subtitle = "esc / ? / q close"
