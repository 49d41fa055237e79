"""The query search line under the panes: `/` opens it, the app types each key into it as the key arrives.

Not a Textual `Input`: an Input edits its text in its own message queue, so a Tab or an `x` typed right
after Enter could act before the search text had narrowed the list (`/ q29 Enter Tab x` marked a chunk of
the query listed before the search). The app owns the text and the list it filters; this only draws it.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from ragdiff.app.text import clean

HINT = "enter keeps it · esc clears it · tab goes on to the lists"
SHORT_HINT = "enter keeps · esc clears · tab: lists"
CURSOR = 1
GAP = "   "  # between the text and the hint


class SearchBar(Widget):
    """One line at any width (from 80 columns): the label, the text typed so far with its cursor, the hint.
    Where the whole line does not fit, the hint and then the label take their short forms, and then the text
    shows its end (where the cursor is) after an ellipsis — the hint is never the part cut."""

    COMPONENT_CLASSES = {"search--label", "search--cursor", "search--hint"}

    def __init__(self, label: str = "search queries by id or text", hint: str = HINT, *, short_label: str = "search",
                 short_hint: str = SHORT_HINT, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label, self.hint = label, hint
        self.short_label, self.short_hint = short_label, short_hint
        self.text = ""
        self.active = False

    def show(self, text: str, active: bool) -> None:
        self.text, self.active = text, active
        self.refresh()

    def parts(self, width: int) -> tuple[str, str, str]:
        """(label, text, hint) as they fit in `width` cells while typing (the hint "" when even the short one
        leaves the text no room)."""
        text = clean(self.text)
        for label, hint in ((self.label, self.hint), (self.label, self.short_hint),
                            (self.short_label, self.short_hint)):
            if cell_len(f" {label}: ") + cell_len(text) + CURSOR + len(GAP) + cell_len(hint) <= width:
                return label, text, hint
        label, hint = self.short_label, self.short_hint
        room = width - cell_len(f" {label}: ") - CURSOR - len(GAP) - cell_len(hint)
        if room < 12:  # a very narrow line: the text before the hint
            hint, room = "", width - cell_len(f" {label}: ") - CURSOR
        return label, tail(text, room), hint

    def render(self) -> Text:
        style = self.get_component_rich_style
        line = Text(no_wrap=True, end="", overflow="ellipsis")
        if not self.active:
            line.append(f" {self.label}: ", style=style("search--label"))
            line.append(clean(self.text))
            return line
        label, text, hint = self.parts(self.size.width)
        line.append(f" {label}: ", style=style("search--label"))
        line.append(text)
        line.append(" " * CURSOR, style=style("search--cursor"))
        if hint:
            line.append(GAP + hint, style=style("search--hint"))
        return line


def tail(text: str, width: int) -> str:
    """The end of `text` in `width` cells, after an ellipsis when its start is left out."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(0, width)]
    start = 0
    while cell_len(text[start:]) > width - 1:
        start += 1
    return "…" + text[start:]
