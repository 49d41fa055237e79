"""`/` in the judging queue: the corpus searched for a chunk no run returned (ranked by BM25, as ragdiff bm25
ranks: app/corpus_search.py), the hits listed (`HitsScreen`), and the one picked judged for the query on screen.

`CorpusSearching` is mixed into `ragdiff.app.judge.JudgeScreen`.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ragdiff.app import corpus_search
from ragdiff.app.keys import edit_line, key, paste_into
from ragdiff.app.text import clean
from ragdiff.app.widgets.search_bar import SearchBar
from ragdiff.core.errors import InputError
from ragdiff.core.judge.pool import Hit


class CorpusSearching:
    def action_search(self) -> None:
        if self.position is None:
            return
        if self.corpus is None or not self.corpus.ready:
            self.set_status("no corpus to search: run with --corpus corpus.jsonl" if self.corpus is None
                            else f"indexing {self.corpus.path.name} …: try again in a moment")
            return
        corpus_search.searcher(self.corpus).start()  # the BM25 index, in a thread of its own, once
        self.searching = True
        self.search = self.search or self.queue.texts.get(self.queue.queries[self.position.query], "")
        bar = self.query_one(SearchBar)
        bar.add_class("-show")
        bar.show(self.search, active=True)

    def take_key(self, event: events.Key) -> bool:
        if not self.searching or self.app.screen is not self:
            return False
        text, ended = edit_line(self.search, event)
        self.search = text
        bar = self.query_one(SearchBar)
        bar.show(text, active=ended is None)
        if ended is not None:
            self.searching = False
            bar.remove_class("-show")
            if ended == "enter" and text.strip():
                self.set_status(f"searching {self.corpus.path.name} for {clean(text)} …")
                self._search_corpus(text, self.queue.queries[self.position.query])
        return not event.key.startswith("ctrl+")

    def take_paste(self, text: str) -> bool:
        if not self.searching:
            return False
        self.search = paste_into(self.search, text)
        self.query_one(SearchBar).show(self.search, active=True)
        return True

    @work(thread=True, exclusive=True, group="corpus-search")
    def _search_corpus(self, text: str, qid: str) -> None:
        try:
            found = corpus_search.searcher(self.corpus).search(text)
        except OSError as err:
            self.app.call_from_thread(self.set_status, f"cannot search {self.corpus.path.name}: {err.strerror}")
            return
        except InputError as err:
            self.app.call_from_thread(self.set_status, f"cannot search: {err}")
            return
        self.app.call_from_thread(self._show_hits, text, qid, found)

    def _show_hits(self, text: str, qid: str, found: corpus_search.Found) -> None:
        hits = found.hits
        if not hits:
            self.set_status(f"{found.note}: no chunk of {self.corpus.path.name} holds {clean(text)}")
            return
        self.set_status(f"{found.note}: {len(hits)} chunks for {clean(text)} · enter judges one for {clean(qid)}")
        self.app.push_screen(HitsScreen(text, hits, {e.chunk_id for e in self.queue.entries[qid]},
                                        "BM25" if found.ranked else "words"),
                             lambda chunk: self._picked(qid, chunk))

    def _picked(self, qid: str, chunk_id: str | None) -> None:
        if chunk_id is None:
            return
        self.position = self.queue.add(qid, chunk_id)
        self.set_status(f"{clean(chunk_id)} (from the corpus) for {clean(qid)}: judge it with 0-3, g, e or x")
        self.show_position()



class HitsScreen(ModalScreen[str | None]):
    """What a corpus search found: up/down (j/k) to pick, enter to judge it, esc to go back."""

    BINDINGS = [
        key("down,j", "move(1)", "down", show=False, id="hits.down"),
        key("up,k", "move(-1)", "up", show=False, id="hits.up"),
        key("enter", "pick", "judge this one", id="hits.pick"),
        key("escape,q", "dismiss_none", "back", id="hits.close"),
    ]

    COMPONENT_CLASSES = {"hits--match"}

    def __init__(self, text: str, hits: list[Hit], pooled: set[str], how: str = "") -> None:
        super().__init__()
        self.text, self.hits, self.pooled, self.cursor = text, hits, pooled, 0
        self.how = how  # how they were found ("BM25", "words"), in the box's title

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="hits-box"):
            yield Static(id="hits-list")

    def on_mount(self) -> None:
        box = self.query_one("#hits-box")
        box.border_title = f"the corpus for {clean(self.text)}" + (f" · {self.how}" if self.how else "")
        self.call_after_refresh(self._draw)  # once the box has its size

    def _draw(self) -> None:
        # two lines a hit, never wrapped; only the hits that fit are drawn, the cursor's among them
        box = self.query_one("#hits-box", VerticalScroll)
        fit = max(1, (box.scrollable_content_region.height or 20) // 2)
        first = max(0, min(self.cursor - fit // 2, len(self.hits) - fit))
        lines = []
        match = self.get_component_rich_style("hits--match")
        for i, hit in enumerate(self.hits[first:first + fit], start=first):
            style = "reverse bold" if i == self.cursor else ""
            note = " (in the pool)" if hit.chunk_id in self.pooled else ""
            head = Text(f"{clean(hit.chunk_id)}{note}", style=style, no_wrap=True, overflow="ellipsis", end="")
            if hit.title:
                head.append("  " + clean(hit.title), style="bold")
            lines += [head, self._snippet(hit, match)]
        self.query_one("#hits-list", Static).update(Text("\n", no_wrap=True, overflow="ellipsis", end="").join(lines))
        box.border_subtitle = f"{self.cursor + 1} of {len(self.hits)} · ↑/↓ pick · enter judges it · esc back"

    @staticmethod
    def _snippet(hit: Hit, match: Style) -> Text:
        """The snippet with the characters that matched marked: each piece is cleaned on its own, so a
        control character shown as several (<U+202E>) does not shift the marks."""
        line = Text("   ", style="dim", no_wrap=True, overflow="ellipsis", end="")
        at = 0
        for start, end in hit.marks:
            line.append(clean(hit.snippet[at:start]))
            line.append(clean(hit.snippet[start:end]), style=match)
            at = end
        line.append(clean(hit.snippet[at:]))
        return line

    def action_move(self, step: int) -> None:
        self.cursor = max(0, min(len(self.hits) - 1, self.cursor + step))
        self._draw()

    def action_pick(self) -> None:
        self.dismiss(self.hits[self.cursor].chunk_id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
