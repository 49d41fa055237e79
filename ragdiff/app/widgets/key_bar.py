"""The bottom line: the main keys, generated from the app's bindings (those marked to show)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget


class KeyBar(Widget):
    COMPONENT_CLASSES = {"keybar--key", "keybar--desc"}

    def __init__(self, bindings, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bindings = [b for b in bindings if b.show and b.description]
        # a shown key standing for digit keys that do the same (the grades 1, 2, 3): "1-3"
        self.shown_as: dict[object, str] = {}
        for binding in self.bindings:
            same = [b.key for b in bindings if b.description == binding.description]
            if len(same) > 1 and all(k.isdigit() for k in same) and not binding.key_display:
                self.shown_as[binding] = f"{same[0]}-{same[-1]}"

    def render(self) -> Text:
        """The keys in order until the line is full; `? help` and `q quit` always end it (help lists the rest)."""
        key_style = self.get_component_rich_style("keybar--key")
        desc_style = self.get_component_rich_style("keybar--desc")
        width = max(20, self.size.width)

        def cell(binding) -> Text:
            key = self.shown_as.get(binding) or binding.key_display or binding.key.split(",")[0]
            return Text.assemble((f" {key} ", key_style), (f"{binding.description} ", desc_style))

        last = [b for b in self.bindings if b.action in KEEP]
        cells = [cell(b) for b in self.bindings if b.action not in KEEP]
        end = Text.assemble(*[cell(b) for b in last])
        line = Text(no_wrap=True, end="", overflow="ellipsis")
        for item in cells:
            if line.cell_len + item.cell_len + end.cell_len > width:
                break
            line.append_text(item)
        line.append_text(end)
        return line


KEEP = ("help", "quit_review")  # always on the bar: how to learn the rest, and how to leave
