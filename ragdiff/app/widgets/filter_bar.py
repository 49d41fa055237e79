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
        self.counts: dict[str, int | None] = {}  # None: not counted yet
        self.active = "all"
        self.sort = "flips"
        self.search = ""
        self.k = 5

    def show(self, counts: dict[str, int], active: str, sort: str, search: str, k: int) -> None:
        shown = (self.counts, self.active, self.sort, self.search, self.k)
        if shown == (counts, active, sort, search, k):
            return
        width = self.size.width
        lines = len(self._lines(width)) if width > 0 else None
        self.counts, self.active, self.sort, self.search, self.k = counts, active, sort, search, k
        # one line or two: a layout of the screen only when that changes
        self.refresh(layout=lines is None or len(self._lines(width)) != lines)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._lines(width))

    def render(self) -> Text:
        return Text("\n", no_wrap=True, end="").join(self._lines(self.size.width))

    def _lines(self, width: int) -> list[Text]:
        """One line when it fits; else the word "filter" goes and the sort (and search) wrap to a second line.
        A filter's count is never cut."""
        style = self.get_component_rich_style
        width = max(20, width)
        cells = []
        for key, label in FILTERS:
            label = label.replace("@k", f"@{self.k}")
            count = self.counts.get(key, 0)
            cells.append(Text(f" {label} {'…' if count is None else count} ",
                              style=style("filter--active") if key == self.active else style("filter--dim")))
        sort_label = dict(SORTS)[self.sort].replace("@k", f"@{self.k}")
        tail = [Text.assemble(("sort ", style("filter--label")), sort_label)]
        if self.search:
            tail.append(Text.assemble(("search ", style("filter--label")), clean(self.search)))
        label = Text(" filter ", style=style("filter--label"))
        one = Text.assemble(label, *cells, "  ", Text("   ").join(tail), no_wrap=True, end="")
        if one.cell_len <= width:
            return [one]
        first = Text.assemble(*cells, no_wrap=True, end="")
        second = Text.assemble(" ", Text("   ").join(tail), no_wrap=True, end="")
        for line in (first, second):
            line.truncate(width, overflow="ellipsis")
        return [first, second]
