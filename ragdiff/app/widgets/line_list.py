"""A list that renders only the lines on screen (Textual's Line API) with an LRU cache of rendered lines.

Subclasses say how many lines there are, which of them the cursor may stop on, and how to draw one line as
a rich Text; this class does scrolling, the cursor and the cache. 10,000 lines cost what 40 do.

What a line shows can be a value of its own (`row_key`, drawn by `render_key` from that value alone): then the
cache is keyed by what the line shows, not where it is, and a change of the lines (`reset`, `redraw`, a cursor
move) repaints only the screen rows whose key differs from the one drawn there. Textual repaints every line of a
widget on `refresh()`; a `+` at 10,000 queries changed two lines of each run's list (the k cut moving one row)
and repainted all of them. A subclass without `row_key` keeps the default key (its place and a generation that
every reset and redraw bumps): every line is drawn again, as before.

A key acts on the state the reader saw when pressing it, at any typing speed: the bindings are priority
bindings (run as the key arrives, in the order keys arrive, not after the key has bubbled through the DOM),
and a cursor move tells its owner at once through `follow` (a message would arrive after keys already
queued behind it: `j` then `x` typed fast marked the new query's id with the old query's chunk).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


# Lines kept drawn per list: a few screens' worth (a screen is 20-40 rows), enough for what is drawn again — the
# rows a k change or a closed screen over the list exposes, the query `[` goes back to. Each cached line is a
# Strip holding seven small caches of its own and its Segments, all objects the cyclic collector walks: with 2048
# per list the three lists' ~6,000 Strips were ~90,000 of the ~120,000 objects made after the first screen's
# freeze, and each full collection that one `]` in ten or twenty set off walked them (40-90 ms at 10,000 queries)
LINE_CACHE = 256


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

    # repaint=False: watch_cursor repaints the two rows that change, not the whole list
    cursor: reactive[int] = reactive(0, always_update=True, init=False, repaint=False)
    _border_row: str | None = None  # "top"/"bottom" while `set_border` sets a title/subtitle
    _sized: tuple | None = None  # (size, container size, virtual size) the scroll bars were last updated for

    class Moved(Message):
        def __init__(self, sender: "LineList", index: int) -> None:
            super().__init__()
            self.sender = sender
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cache: LRUCache[tuple, Strip] = LRUCache(LINE_CACHE)
        self._generation = 0
        self._count = 0
        self._painted: dict[int, tuple] = {}  # screen row -> (scroll offset, line key) of what is drawn there
        self._borders: dict[str, object] = {}  # "title"/"subtitle" -> the value last given to `set_border`
        # called at once (on the screen's thread) after the cursor moves; without it a Moved message is posted
        self.follow: Callable[[LineList, int], None] | None = None

    # ---- what subclasses provide ----------------------------------------------------------------------------

    def line_count(self) -> int:
        return 0

    def selectable(self, index: int) -> bool:
        return True

    def render_row(self, index: int, width: int) -> Text:
        return Text("")

    def row_key(self, index: int) -> Hashable:
        """What line `index` shows, as a value that `render_key` draws from alone: equal keys, equal lines.
        The default is the line's place and the generation (every reset and redraw draws every line again)."""
        return (index, self._generation)

    def render_key(self, key: Hashable, width: int) -> Text:
        """The line for `key` (from `row_key`); a subclass that gives its own keys draws from them here."""
        return self.render_row(key[0], width)

    # ---- data changes ---------------------------------------------------------------------------------------

    def reset(self, cursor: int | None = None) -> None:
        """The lines changed: size the scroll area, place the cursor, repaint the rows that now show something
        else (all of them for the default key)."""
        self._generation += 1
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
        self._refresh_changed()

    def redraw(self) -> None:
        """Same lines, new look (e.g. labels changed): the rows whose key changed are drawn again."""
        self._generation += 1
        self._refresh_changed()

    def set_border(self, **values: object) -> None:
        """Set `title` and/or `subtitle` of the border, each only when it differs from the value last given
        here: Textual repaints every line of the widget on each assignment, even of the same text."""
        for name, value in values.items():
            if name not in ("title", "subtitle"):
                raise TypeError(f"set_border takes title and subtitle, not {name}")
            if name in self._borders and self._borders[name] == value:
                continue
            self._borders[name] = value
            self._border_row = "top" if name == "title" else "bottom"
            try:
                setattr(self, f"border_{name}", value)
            finally:
                self._border_row = None

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False):
        """Textual's refresh; under `set_border` (whose setter asks to repaint the whole widget) only the border
        row that shows the title or the subtitle."""
        row = self._border_row
        outer = self.outer_size
        if row is not None and not regions and repaint and not layout and not recompose and outer.height > 0:
            offset = self.content_offset  # regions are given from the content's origin
            y = -offset.y if row == "top" else outer.height - 1 - offset.y
            regions = (Region(-offset.x, y, outer.width, 1),)
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _line_key(self, index: int, width: int, focused: bool) -> tuple | None:
        """Everything screen row `index` is drawn from (None: below the last line, blank)."""
        if index >= self._count:
            return None
        is_cursor = index == self.cursor
        return (self.row_key(index), width, is_cursor, focused and is_cursor)

    def _refresh_changed(self) -> None:
        """Repaint the screen rows whose line key differs from the one drawn there (after a scroll: all)."""
        region = self.scrollable_content_region
        height, width = region.height, region.width
        if not self.is_mounted or height <= 0 or width <= 0:
            self.refresh()
            return
        top = int(self.scroll_offset.y)
        focused = self.has_focus
        painted = self._painted
        start = None
        for y in range(height + 1):
            same = y < height and painted.get(y) == (top, self._line_key(top + y, width, focused))
            if not same and start is None and y < height:
                start = y
            elif (same or y == height) and start is not None:
                self.refresh(Region(0, start, max(self.virtual_size.width, self.size.width), y - start))
                start = None

    # ---- rendering ------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        focused = self.has_focus
        key = self._line_key(index, width, focused)
        self._painted[y] = (scroll_y, key)
        if key is None:
            return Strip.blank(width, base)
        is_cursor = key[2]
        strip = self._cache.get(key)
        if strip is None:
            text = self.render_key(key[0], width)
            text.no_wrap = True
            text.end = ""
            if is_cursor:
                cls = "list--cursor" if focused else "list--cursor-blur"
                text.stylize(self.get_component_rich_style(cls, partial=True))
            text.truncate(width, overflow="ellipsis", pad=True)
            segments = list(text.render(self.app.console))
            # adjust_cell_length, not crop_extend(0, width): a strip already `width` long is its own crop_extend
            # and caches itself in its own cache — a cycle, so each line evicted from this cache stayed until
            # a full collection (Textual 8.2.8)
            strip = Strip(segments, text.cell_len).apply_style(base).adjust_cell_length(width, base)
            self._cache[key] = strip
        return strip

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        """Textual's, skipped when the screen's layout brings nothing new for this list: the same size, the same
        container and the virtual size (the lines, set by `reset`) the scroll bars were last updated for.
        ScrollView's compares the virtual size the layout proposes, which it then ignores (a list's is its own),
        with the list's: they always differ, so every layout of the screen (the chunk pane's new text on each
        `]`) updated the three lists' scroll bars and repainted them (Textual 8.2.8)."""
        seen = (size, container_size, self.virtual_size)
        if seen == self._sized:
            return False
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        self._sized = (size, container_size, self.virtual_size)
        return resized

    def on_resize(self) -> None:
        self.virtual_size = Size(max(1, self.size.width), self._count)
        self._cache.clear()
        self._painted.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        """The CSS changed (a theme, a pseudo-class): the cached lines carry the old styles."""
        super().notify_style_update()
        self._cache.clear()
        self._painted.clear()

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
        self._refresh_changed()

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
