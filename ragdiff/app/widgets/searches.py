"""`v`: an agent run's searches for the selected query — each search's own query and what it returned.

An agent searches several times for one question and is scored on the union of what it collected (first seen
first); this view shows where each chunk of that union came from.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ragdiff.app.keys import key  # priority: run as the key arrives, before the keys after it
from ragdiff.app.text import clean
from ragdiff.app.widgets.ranked_list import label_cell

STYLES = {"rank--gold": "bold green", "rank--gold-low": "green", "rank--evidence": "bold magenta",
          "rank--notrel": "dim", "rank--unjudged": "bold reverse yellow"}


def searches_text(query_id: str, runs: list[tuple[str, list[tuple[str, list[str]]]]], label_of) -> Text:
    """One block per agent run: `search n «query»` then its results with their labels."""
    out = Text(no_wrap=True, end="")
    out.append("query ", style="dim")
    out.append(clean(query_id), style="bold")
    for name, searches in runs:
        out.append("\n\n")
        out.append(clean(name), style="bold underline")
        if not searches:
            out.append("  not an agent run: one ranked list, nothing to break down", style="dim")
            continue
        seen: set[str] = set()
        for number, (search, chunks) in enumerate(searches, start=1):
            new = [c for c in chunks if c not in seen]
            out.append(f"\n search {number} ", style="bold")
            out.append(f"«{clean(search)}»")
            out.append(f"  {len(chunks)} results, {len(new)} new", style="dim")
            for rank, chunk in enumerate(chunks, start=1):
                level, grade = label_of(chunk)
                cell, style = label_cell(level, grade)
                out.append(f"\n   {rank:>3} ")
                out.append(cell, style=STYLES[style])
                out.append(clean(chunk), style="" if chunk not in seen else "dim")
                if chunk in seen:
                    out.append("  (seen in an earlier search)", style="dim")
            seen.update(chunks)
    return out


class SearchesScreen(ModalScreen[None]):
    BINDINGS = [key("escape,v,q", "dismiss", "close", id="searches.close")]

    def __init__(self, text: Text):
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="searches-box"):
            yield Static(self.text, id="searches-text")

    def on_mount(self) -> None:
        box = self.query_one("#searches-box")
        box.border_title = "the searches of an agent run"
        box.border_subtitle = "esc / v / q close"
