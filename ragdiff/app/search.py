"""The review's search line (`/`): while it is open the app types each key into it as the key arrives, in
order (`take_key`, `take_paste`), and the query list follows the text at once; enter keeps the search, esc
clears it.

Mixed into `ragdiff.app.app.ReviewApp`, before `OrderedKeysApp`, whose key and paste handling it extends.
"""

from __future__ import annotations

from textual import events

from ragdiff.app.keys import edit_line, paste_into
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.search_bar import SearchBar


class SearchLine:
    def take_key(self, event: events.Key) -> bool:
        if self.searching and self.screen is self.screen_stack[0]:
            return self._search_key(event)  # typed into the search line, at once and in order
        return super().take_key(event)

    def take_paste(self, text: str) -> bool:
        if self.searching and self.screen is self.screen_stack[0]:
            self._set_search(paste_into(self.search, text))
            return True
        return super().take_paste(text)

    def _search_key(self, event: events.Key) -> bool:
        """A key while searching: True when the search line took it."""
        text, ended = edit_line(self.search, event)
        if ended == "escape":
            self.action_clear_search()
            return True
        if text != self.search:
            self._set_search(text)
        if ended in ("enter", "leave"):
            self._end_search()
        # other keys do nothing while searching; tab/up/down go on to do their usual, and so do the ctrl keys:
        # Textual's ctrl+q quits, its ctrl+c only says "press ctrl+q to quit" (Textual 8 no longer quits on it)
        return ended != "leave" and not event.key.startswith("ctrl+")

    def _set_search(self, text: str) -> None:
        self.search = text
        self.query_one(SearchBar).show(text, active=self.searching)
        self.refresh_all()

    def _end_search(self) -> None:
        self.searching = False
        bar = self.query_one(SearchBar)
        bar.show(self.search, active=False)
        if not self.search:
            bar.remove_class("-show")
        self.focus_now(self.query_one(QueryList))

    def action_search(self) -> None:
        self.searching = True
        bar = self.query_one(SearchBar)
        bar.add_class("-show")
        bar.show(self.search, active=True)
        self.focus_now(self.query_one(QueryList))

    def action_clear_search(self) -> None:
        bar = self.query_one(SearchBar)
        if self.searching or bar.has_class("-show") or self.search:
            self.searching = False
            bar.remove_class("-show")
            bar.show("", active=False)
            self.search = ""
            self.refresh_all()
            self.focus_now(self.query_one(QueryList))
