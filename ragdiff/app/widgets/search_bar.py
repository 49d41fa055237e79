"""The query search line under the panes: `/` opens it, the app types each key into it as the key arrives.

Not a Textual `Input`: an Input edits its text in its own message queue, so a Tab or an `x` typed right
after Enter could act before the search text had narrowed the list (`/ q29 Enter Tab x` marked a chunk of
the query listed before the search). The app owns the text and the list it filters; this only draws it.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ragdiff.app.text import clean

HINT = "enter keeps it · esc clears it · tab goes on to the lists"


class SearchBar(Widget):
    COMPONENT_CLASSES = {"search--label", "search--cursor", "search--hint"}

    def __init__(self, label: str = "search queries by id or text", hint: str = HINT, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label, self.hint = label, hint
        self.text = ""
        self.active = False

    def show(self, text: str, active: bool) -> None:
        self.text, self.active = text, active
        self.refresh()

    def render(self) -> Text:
        style = self.get_component_rich_style
        line = Text(no_wrap=True, end="", overflow="ellipsis")
        line.append(f" {self.label}: ", style=style("search--label"))
        line.append(clean(self.text))
        if self.active:
            line.append(" ", style=style("search--cursor"))
            line.append(f"   {self.hint}", style=style("search--hint"))
        return line
