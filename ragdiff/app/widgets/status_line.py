"""A one-line status message that keeps its end: too long for the line, it loses its middle (…), never the
file name or the count it ends with (at 80 columns "… saved to" lost the file)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ragdiff.app.text import cut_text_middle


class StatusLine(Widget):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text("")  # the whole message (what render() shows cut to the line's width)

    def update(self, text: Text | str) -> None:
        self.text = Text(text) if isinstance(text, str) else text
        self.refresh()

    def render(self) -> Text:
        return cut_text_middle(self.text, self.content_region.width or self.size.width)
