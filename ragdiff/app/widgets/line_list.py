"""A list that renders only the lines on screen (Textual's Line API) with an LRU cache of rendered lines.

Subclasses say how many lines there are, which of them the cursor may stop on, and how to draw one line as
a rich Text; this class does scrolling, the cursor and the cache. 10,000 lines cost what 40 do.

A key acts on the state the reader saw when pressing it, at any typing speed: the bindings are priority
bindings (run as the key arrives, in the order keys arrive, not after the key has bubbled through the DOM),
and a cursor move tells its owner at once through `follow` (a message would arrive after keys already
queued behind it: `j` then `x` typed fast marked the new query's id with the old query's chunk).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineList(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up,k", "cursor_up", "up", show=False, id="list.up", priority=True),
        Binding("down,j", "cursor_down", "down", show=False, id="list.down", priority=True),
        Binding("pageup", "page_up", "page up", show=False, id="list.page_up", priority=True),
        Binding("pagedown", "page_down", "page down", show=False, id="list.page_down", priority=True),
        Binding("home", "first", "first", show=False, id="list.first", priority=True),
        Binding("end", "last", "last", show=False, id="list.last", priority=True),
    ]
    COMPONENT_CLASSES = {"list--cursor", "list--cursor-blur"}

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Moved(Message):
        def __init__(self, sender: "LineList", index: int) -> None:
            super().__init__()
            self.sender = sender
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cache: LRUCache[tuple, Strip] = LRUCache(2048)
        self._generation = 0
        self._count = 0
        # called at once (on the screen's thread) after the cursor moves; without it a Moved message is posted
        self.follow: Callable[[LineList, int], None] | None = None

    # ---- what subclasses provide ----------------------------------------------------------------------------

    def line_count(self) -> int:
        return 0

    def selectable(self, index: int) -> bool:
        return True

    def render_row(self, index: int, width: int) -> Text:
        return Text("")

    # ---- data changes ---------------------------------------------------------------------------------------

    def reset(self, cursor: int | None = None) -> None:
        """The lines changed: drop the cache, size the scroll area, place the cursor."""
        self._generation += 1
        self._cache.clear()
        self._count = self.line_count()
        self.virtual_size = Size(max(1, self.size.width), self._count)
        target = self._nearest_selectable(cursor if cursor is not None else 0, 1)
        self.set_reactive(LineList.cursor, target if target is not None else 0)
        if cursor is None:
            self.scroll_to(y=0, animate=False, immediate=True)
        else:
            self._scroll_cursor()
            # the list's height may change in the same refresh (the search box closing after `/gzip enter
            # esc`): scroll again once the layout is done, so the cursor's line is on screen
            self.call_after_refresh(self._scroll_cursor)
        self.refresh()

    def redraw(self) -> None:
        """Same lines, new look (e.g. labels changed)."""
        self._generation += 1
        self._cache.clear()
        self.refresh()

    # ---- rendering ------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= self._count:
            return Strip.blank(width, base)
        is_cursor = index == self.cursor
        focused = self.has_focus
        key = (index, width, is_cursor, focused and is_cursor, self._generation)
        strip = self._cache.get(key)
        if strip is None:
            text = self.render_row(index, width)
            text.no_wrap = True
            text.end = ""
            if is_cursor:
                cls = "list--cursor" if focused else "list--cursor-blur"
                text.stylize(self.get_component_rich_style(cls, partial=True))
            text.truncate(width, overflow="ellipsis", pad=True)
            segments = list(text.render(self.app.console))
            strip = Strip(segments, text.cell_len).apply_style(base)
            strip = strip.crop_extend(0, width, base)
            self._cache[key] = strip
        return strip

    def on_resize(self) -> None:
        self.virtual_size = Size(max(1, self.size.width), self._count)
        self._cache.clear()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ---- the cursor -----------------------------------------------------------------------------------------

    def _nearest_selectable(self, start: int, step: int) -> int | None:
        count = self._count
        if count == 0:
            return None
        index = min(max(start, 0), count - 1)
        probe = index
        while 0 <= probe < count:
            if self.selectable(probe):
                return probe
            probe += step
        probe = index - step
        while 0 <= probe < count:
            if self.selectable(probe):
                return probe
            probe -= step
        return None

    def move_to(self, index: int, step: int = 1) -> None:
        target = self._nearest_selectable(index, step)
        if target is None:
            return
        old = self.cursor
        self.cursor = target
        self._scroll_cursor()
        if old != target:
            if self.follow is not None:
                self.follow(self, target)
            else:
                self.post_message(self.Moved(self, target))

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()

    def _scroll_cursor(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_offset.y)
        cursor = self.cursor
        if cursor < top:
            self.scroll_to(y=cursor, animate=False, immediate=True)
        elif cursor >= top + height:
            self.scroll_to(y=cursor - height + 1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        if self.cursor > 0:
            target = self._nearest_selectable(self.cursor - 1, -1)
            if target is not None and target < self.cursor:
                self.move_to(target, -1)
            else:
                self.scroll_to(y=0, animate=False)

    def action_cursor_down(self) -> None:
        target = self._nearest_selectable(self.cursor + 1, 1)
        if target is not None and target > self.cursor:
            self.move_to(target, 1)
        else:  # nothing selectable below: still let the reader scroll to the end
            self.scroll_to(y=self.max_scroll_y, animate=False)

    def action_page_up(self) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.move_to(self.cursor - height, -1)

    def action_page_down(self) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.move_to(self.cursor + height, 1)

    def action_first(self) -> None:
        self.move_to(0, 1)

    def action_last(self) -> None:
        self.move_to(self._count - 1, -1)

    def on_click(self, event) -> None:  # click a line to put the cursor there
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = int(self.scroll_offset.y) + offset.y
        if 0 <= index < self._count and self.selectable(index):
            self.move_to(index)
