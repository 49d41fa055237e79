"""A chunk's text: its id, label, rank in each run, title, and text with the query's words marked.

Focused, it scrolls with its own keys (j/k, ↑/↓, PgUp/PgDn and b, Home/End); space is the screen's, from any
pane (the review's `read_on`, the judging queue's page down), so it is not bound here. Its bottom border
says which lines are on screen and how many there are, so a chunk longer than the pane is never cut without
a way to read the rest. The border names only keys that scroll it from where the reader is: in the review,
j/k move the focused list, so with another pane focused it says space.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static


class ChunkText(Static):
    """The text itself. Its height is known only once it is laid out, and again when that brings in the pane's
    scroll bar: it then wraps a column narrower, into more lines, with no resize of the pane itself. So the
    pane says where it is on each resize of the text: said only after the pane's first refresh, the total was
    the one before the scroll bar ("of 33" for 35 lines) unless a later refresh happened to come after it —
    tests/test_app_snapshots.py's 80x24 picture failed by the timing of the workers' messages."""

    def on_resize(self) -> None:
        if isinstance(self.parent, ChunkView):
            self.parent.say_where()


class ChunkView(VerticalScroll, can_focus=True):
    BINDINGS = [
        Binding("down,j", "scroll_lines(1)", "down", show=False, id="text.down"),
        Binding("up,k", "scroll_lines(-1)", "up", show=False, id="text.up"),
        Binding("pagedown", "scroll_pages(1)", "page down", show=False, id="text.page_down"),
        Binding("pageup,b", "scroll_pages(-1)", "page up", show=False, id="text.page_up"),
        Binding("home", "scroll_to_line(0)", "top", show=False, id="text.top"),
        Binding("end", "scroll_to_line(-1)", "end", show=False, id="text.end"),
    ]
    COMPONENT_CLASSES = {"chunk--match", "chunk--meta", "chunk--id", "chunk--dim"}
    keys_anywhere = False  # the screen scrolls it with j/k from any pane (the judging queue): say them always

    def compose(self):
        yield ChunkText(id="chunk-text")

    def show(self, text: Text) -> None:
        self.query_one("#chunk-text", ChunkText).update(text)
        self.scroll_home(animate=False, immediate=True)
        self.call_after_refresh(self.say_where)

    # ---- scrolling (also called by the judging screen, whose keys are its own) ----------------------------

    def action_scroll_lines(self, lines: int) -> None:
        self.scroll_to(y=self.scroll_y + lines, animate=False, immediate=True)
        self.say_where()

    def action_scroll_pages(self, pages: int) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=self.scroll_y + pages * step, animate=False, immediate=True)
        self.say_where()

    def read_on(self) -> None:
        """One page on; from the end, back to the top (space from any pane: one key reads the whole chunk)."""
        first, last, total = self.where()
        if last >= total:
            self.action_scroll_to_line(0)
        else:
            self.action_scroll_pages(1)

    # Textual runs these before Widget's own handlers, which set has_focus: so the new state is passed on
    def on_focus(self) -> None:
        self.say_where(focused=True)

    def on_blur(self) -> None:
        self.say_where(focused=False)

    def action_scroll_to_line(self, line: int) -> None:
        self.scroll_to(y=self.max_scroll_y if line < 0 else line, animate=False, immediate=True)
        self.say_where()

    def where(self) -> tuple[int, int, int]:
        """(first line on screen, last line on screen, lines in all), counting from 1."""
        total = max(1, self.virtual_size.height)
        height = max(1, self.scrollable_content_region.height)
        first = int(self.scroll_y) + 1
        return first, min(total, first + height - 1), total

    def say_where(self, focused: bool | None = None) -> None:
        focused = self.has_focus if focused is None else focused
        first, last, total = self.where()
        if total <= last - first + 1 and first == 1:
            self.border_subtitle = ""
        else:
            lines = f"lines {first}–{last} of {total}"
            if self.keys_anywhere:  # the judging queue: j/k and space are its screen's keys
                keys = ("the end · k/↑ back", "more below: j/↓ or space")
            elif focused:
                keys = ("the end · k/↑ back, space: from the top", "more below: j/↓ or space")
            else:  # j/k move the focused list; space (the review's read_on) works from any pane
                keys = ("the end · space: from the top", "more below: space")
            self.border_subtitle = f"{lines} · {keys[0] if last >= total else keys[1]}"
