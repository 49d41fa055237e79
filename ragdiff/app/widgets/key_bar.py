"""The bottom line: the main keys, generated from the app's bindings (those marked to show)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget


class KeyBar(Widget):
    COMPONENT_CLASSES = {"keybar--key", "keybar--desc"}

    def __init__(self, bindings, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bindings = [b for b in bindings if b.show and b.description]

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keybar--key")
        desc_style = self.get_component_rich_style("keybar--desc")
        line = Text(no_wrap=True, end="", overflow="ellipsis")
        for binding in self.bindings:
            key = binding.key_display or binding.key.split(",")[0]
            line.append(f" {key} ", style=key_style)
            line.append(f"{binding.description} ", style=desc_style)
        return line
