"""The line above the panes: every filter with its count (the active one lit), the sort, and the search."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ragdiff.app.model import FILTERS, SORTS
from ragdiff.app.text import clean


class FilterBar(Widget):
    COMPONENT_CLASSES = {"filter--active", "filter--dim", "filter--label"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.counts: dict[str, int] = {}
        self.active = "all"
        self.sort = "flips"
        self.search = ""
        self.k = 5

    def show(self, counts: dict[str, int], active: str, sort: str, search: str, k: int) -> None:
        self.counts, self.active, self.sort, self.search, self.k = counts, active, sort, search, k
        self.refresh()

    def render(self) -> Text:
        style = self.get_component_rich_style
        line = Text(no_wrap=True, end="", overflow="ellipsis")
        line.append(" filter ", style=style("filter--label"))
        for key, label in FILTERS:
            label = label.replace("@k", f"@{self.k}")
            cell = f" {label} {self.counts.get(key, 0)} "
            line.append(cell, style=style("filter--active") if key == self.active else style("filter--dim"))
        sort_label = dict(SORTS)[self.sort].replace("@k", f"@{self.k}")
        line.append("   sort ", style=style("filter--label"))
        line.append(sort_label)
        if self.search:
            line.append("   search ", style=style("filter--label"))
            line.append(clean(self.search))
        return line
