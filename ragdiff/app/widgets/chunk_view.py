"""The selected chunk: its id, label, rank in each run, title, and text with the query's words marked."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static


class ChunkView(VerticalScroll, can_focus=True):
    COMPONENT_CLASSES = {"chunk--match", "chunk--meta", "chunk--id", "chunk--dim"}

    def compose(self):
        yield Static(id="chunk-text")

    def show(self, text: Text) -> None:
        self.query_one("#chunk-text", Static).update(text)
        self.scroll_home(animate=False)
