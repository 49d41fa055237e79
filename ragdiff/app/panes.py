"""The review's panes and focus: below THREE_PANES columns the two run lists take turns beside the query list
(tab or o switches), the lists' subtitles say k and the key to the other run, and the chunk pane follows the
focused list and its cursor.

Mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_resize` and `on_descendant_focus` on this class too).
"""

from __future__ import annotations

from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.ranked_list import RankedList

# The layout (DESIGN: usable from 80x24 up). Three panes need a query list of 26 columns and two run lists
# of 37 (rank, a chunk id of 12, score, label, the other run's rank, border and scroll bar); below that the
# run lists take turns beside the query list (tab or o switches) rather than cutting ids and ranks.
THREE_PANES = 100


class Panes:
    @property
    def one_run(self) -> bool:
        """Below THREE_PANES columns only the active run's list is shown beside the queries."""
        return self.size.width < THREE_PANES

    def _show_run(self, side: str, focus: bool = False) -> None:
        """Make `side` the active run: its list is the one shown when the lists take turns."""
        lists = {s: self.query_one(f"#list-{s}", RankedList) for s in ("a", "b")}
        for s, widget in lists.items():
            widget.set_class(s != side, "-hidden")
        changed = side != self.active_side
        self.active_side = side
        if focus:
            self.focus_now(lists[side])
        if changed:
            self.show_chunk()
        self._run_subtitles()

    def _run_subtitles(self) -> None:
        k = f"k={self.model.k}" if self.model is not None else ""
        for side, other in (("a", "B"), ("b", "A")):
            hint = f" · o: {other}" if self.one_run else ""
            self.query_one(f"#list-{side}", RankedList).set_border(subtitle=k + hint)

    def on_resize(self) -> None:
        self.call_after_refresh(self._run_subtitles)  # once the new size is the app's

    def action_other_run(self) -> None:
        self._show_run("b" if self.active_side == "a" else "a", focus=True)

    # ---- the cursors and the focus -------------------------------------------------------------------------

    def _query_moved(self, widget: LineList, index: int) -> None:
        self.show_query()

    def _chunk_moved(self, widget: LineList, index: int) -> None:
        self.active_side = widget.side
        self.show_chunk()

    def _focus_moved(self) -> None:
        widget = self.focused
        if isinstance(widget, RankedList) and widget.side != self.active_side:
            self._show_run(widget.side)

    def focus_now(self, widget) -> None:
        """Focus a widget before the next key is handled (`Widget.focus()` waits for the message queue)."""
        self.screen.set_focus(widget)
        self._focus_moved()

    def on_descendant_focus(self, event) -> None:  # a click, or focus set by Textual itself
        self._focus_moved()

    def action_focus_next(self) -> None:
        focused = self.focused
        if self.one_run and isinstance(focused, RankedList) and focused.side == "a":
            self._show_run("b", focus=True)  # the hidden B list is next in the tab order
            return
        self.screen.focus_next()
        self._focus_moved()

    def action_focus_previous(self) -> None:
        focused = self.focused
        if self.one_run and isinstance(focused, RankedList) and focused.side == "b":
            self._show_run("a", focus=True)
            return
        self.screen.focus_previous()
        self._focus_moved()
