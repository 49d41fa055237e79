"""The review screen drawn from the model: the header, the filter bar, the query list, both run lists, the
chunk pane (its head, the chunk's label and ranks, the corpus text with the query's words marked) and the
status line. Every method reads the model and the app's state (filter, sort, search, the active run) and
draws; none changes the model.

Mixed into `ragdiff.app.app.ReviewApp`.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ragdiff.app.model import FILTERS
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.filter_bar import FilterBar
from ragdiff.app.widgets.header import HeaderBar
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList, score_text
from ragdiff.core import vocab


class Drawing:
    def set_status(self, text: str | Text) -> None:
        status = self.screen_stack[0].query_one("#status", Static)
        text = Text(text) if isinstance(text, str) else text
        width = status.size.width
        one_line = width > 0 and "\n" not in text.plain and text.cell_len <= width
        # a layout of the screen (every scroll bar repainted) only when the line may wrap or did: a k change
        # says one line where one was
        status.update(text, layout=not (one_line and self._status_one_line))
        self._status_one_line = one_line

    def refresh_all(self, select_first: bool = False, keep_chunks: bool = False) -> None:
        """Header, filter bar, query list (keeping the selected query when it is still listed), both lists."""
        model = self.model
        if model is None:
            return
        queries = self.query_one(QueryList)
        previous = None if select_first else queries.selected
        self.query_one(HeaderBar).show(model.header)
        self.query_one(FilterBar).show(model.filter_counts(), self.filter_key, self.sort_key, self.search, model.k)
        delta = None if self.sort_key == "flips" else self.sort_key
        ids = self.visible_ids
        queries.show(model, ids, previous, delta)
        self._listed_uncounted = model.filter_counts()[self.filter_key] is None
        label = dict(FILTERS)[self.filter_key].replace("@k", f"@{model.k}")
        # unjudged@k before its rows are found has no count yet (as the filter bar says), not 0
        queries.set_border(title=f"queries [{label} {'…' if self._listed_uncounted else len(ids)}]")
        self.show_query(keep_chunks=keep_chunks)

    def show_numbers(self) -> None:
        """After a mark: the numbers, marks and labels change in place; the query list keeps its order and
        its cursor, each ranked list its cursor (order changes only when the reviewer asks: s, f, /, +/-)."""
        model = self.model
        queries = self.query_one(QueryList)
        self.query_one(HeaderBar).show(model.header)
        self.query_one(FilterBar).show(model.filter_counts(), self.filter_key, self.sort_key, self.search, model.k)
        queries.redraw()
        self.show_query(keep_chunks=True)

    def show_query(self, keep_chunks: bool = False) -> None:
        model = self.model
        queries = self.query_one(QueryList)
        qid = queries.selected
        for widget in (self.query_one("#list-a", RankedList), self.query_one("#list-b", RankedList)):
            widget.show(model, qid, keep_cursor=keep_chunks)
        self._run_subtitles()
        total = len(queries.ids)
        queries.set_border(subtitle=f"{queries.cursor + 1}/{total}" if total else "no query matches")
        self.show_chunk()

    def show_chunk(self) -> None:
        model = self.model
        view = self.query_one(ChunkView)
        if model is None:
            return
        self._shown = None
        qid = self.selected_query
        if qid is None:
            self._show_in_chunk(view, Text("no query matches the filter and search", style="dim"))
            return
        ranked = self.query_one(f"#list-{self.active_side}", RankedList)
        chunk_id = ranked.selected_chunk
        if chunk_id is not None:
            self._shown = self._target_of(ranked)
        dim = view.get_component_rich_style("chunk--dim")
        query_text = model.query_text(qid)
        head = Text.assemble(("query ", dim), (clean(qid), view.get_component_rich_style("chunk--id")),
                             "  ", clean(query_text), no_wrap=True, end="")
        if chunk_id is None:
            self._show_in_chunk(view, Text.assemble(head, "\n", ("this run returned nothing for this query", dim)))
            return
        level, grade = model.label_of(qid, chunk_id)
        label = vocab.word(level, grade)
        rank_a = model.rank_in(qid, "a", chunk_id)
        rank_b = model.rank_in(qid, "b", chunk_id)
        meta = Text.assemble(
            (clean(chunk_id), view.get_component_rich_style("chunk--id")), " · ",
            (label, view.get_component_rich_style("chunk--meta")), " · ",
            f"A{'#' + str(rank_a) if rank_a else ' —'}  B{'#' + str(rank_b) if rank_b else ' —'}",
            no_wrap=True, end="",
        )
        row = ranked.selected_item.row
        if getattr(row, "score", None) is not None:  # the score column gives way to the ids on a narrow pane
            meta.append(f" · score {score_text(row.score)}", style=dim)
        found = model.found_by(qid, self.active_side, chunk_id)
        if found is not None:  # an agent run: which of its searches collected this chunk
            number, total, search = found
            meta.append(f" · found by search {number} of {total}: ", style=dim)
            meta.append(clean(search))
        body = self._chunk_body(chunk_id, query_text, view)
        self._show_in_chunk(view, Text.assemble(head, "\n", meta, "\n", body))

    def _show_in_chunk(self, view: ChunkView, text: Text) -> None:
        """`text` in the chunk pane, from its top; nothing to do when the pane shows just that from its top
        already (a k change keeps the chunk: showing it again laid out and repainted the whole pane)."""
        shown = self._chunk_text
        if (shown is not None and shown[0] is view and view.scroll_offset.y == 0 and text == shown[1]
                and (text.style, text.no_wrap, text.end) == (shown[1].style, shown[1].no_wrap, shown[1].end)):
            return
        self._chunk_text = (view, text)
        view.show(text)

    def _chunk_body(self, chunk_id: str, query_text: str, view: ChunkView) -> Text:
        dim = view.get_component_rich_style("chunk--dim")
        if self.corpus is None:
            return Text("no corpus given: run with --corpus corpus.jsonl to read the chunk text here", style=dim)
        if self.corpus_error:
            return Text(clean(self.corpus_error), style=dim)
        if not self.corpus.ready:
            return Text(f"indexing {self.corpus.path.name} …", style=dim)
        chunk = self.corpus.get(chunk_id)
        if chunk is None:
            if self.corpus.error:  # the file could not be read just now (moved, deleted, a bad line)
                return Text(clean(self.corpus.error), style=dim)
            return Text(f"{clean(chunk_id)} is not in {clean(self.corpus.path.name)}", style=dim)
        body = Text(end="")
        if chunk.title:
            body.append_text(literal(chunk.title, style="bold"))
            body.append("\n")
        body.append_text(literal(chunk.text, multiline=True))
        return mark_words(body, query_words(query_text), view.get_component_rich_style("chunk--match"))
