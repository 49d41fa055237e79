"""`ragdiff judge`: the judging queue over the pooled runs (DESIGN: "Judging the pool").

One key per decision (0 not relevant, 1–3 gold with that grade, g gold, e evidence, x not relevant, a accept
the model's draft, s skip, ! flag for a second opinion); after each the queue moves to the next unjudged chunk by itself, across
queries. The chunk text takes most of the screen, with the query's words marked, and scrolls (j/k, space).
`/` searches the corpus for a chunk no run returned, ranked by BM25 (app/corpus_search.py). A query a model drafted
is kept (a) or dropped (d) before its chunks (app/drafted_query.py). The queue itself (pool, order, progress, resume) is
`ragdiff.core.judge.pool.JudgeQueue`; this module only shows it and sends decisions to the label writer
(`ragdiff.app.session.LabelSession`), whose Changes come back to `mark_done`.

The same screen opens from `ragdiff review` (key `J`) on the query on screen, sharing the review's writer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ragdiff.app import corpus_search, drafted_query
from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.keys import OrderedKeysApp, binding_keys, edit_line, key, label_keys, paste_into
from ragdiff.app.messages import LoadFailed, MarkDone, QueueBuilt, Saved
from ragdiff.app.session import LabelSession, Target
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.app.threads import detached
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.help_screen import HelpScreen, judge_legend_rows
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.app.widgets.pool_list import RUN_LETTERS, PoolList
from ragdiff.app.widgets.search_bar import SearchBar
from ragdiff.app.widgets.status_line import StatusLine
from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.judge.pool import Hit, JudgeQueue, Position

# The pool list is as wide as its widest row (every id whole) within these bounds: never narrower than POOL_MIN
# (nor than 40% of the screen, app.tcss), and the chunk text — the thing being judged — keeps TEXT_MIN columns
# (80 of text, its border, padding and scroll bar)
POOL_MIN = 38
TEXT_MIN = 86


def _grade_keys() -> list:
    return [key(str(n), f"decide('gold', {n})", "gold grade", show=n == 1, id=f"judge.grade{n}", tooltip=f"gold with grade {n}, then the next unjudged chunk")
            for n in (1, 2, 3)]


class JudgeScreen(Screen):
    BINDINGS = [
        key("0", "decide('not_relevant')", vocab.word(vocab.NOT_RELEVANT), show=False, id="judge.grade0",
            tooltip="not relevant (grade 0), then the next unjudged chunk"),
        *_grade_keys(),
        *label_keys("decide", "judge", {
            vocab.GOLD: "gold (the file's default grade), then the next unjudged chunk",
            vocab.EVIDENCE: "evidence (supports a step of the answer), then the next unjudged chunk",
            vocab.NOT_RELEVANT: "not relevant, then the next unjudged chunk"}),
        # not in the key bar: it matters only on a drafted chunk, whose title then says "a accepts"
        key("a", "accept", "accept draft", show=False, id="judge.accept",
            tooltip="accept the model's drafted label (☆n: gold with grade n; ☆0: not relevant), or keep a drafted "
                    "query"),
        key("d", "drop_query", "drop query", show=False, id="judge.drop_query",
            tooltip="drop the drafted query on screen from the label file (a keeps it; u brings it back)"),
        key("s", "skip", "skip", id="judge.skip", tooltip="leave it unjudged for now; it comes back at the end"),
        key("exclamation_mark", "flag", "flag", key_display="!", id="judge.flag",
            tooltip="flag for a second opinion (kept beside the label file); it stays unjudged"),
        key("u", "undo", "undo", id="judge.undo", tooltip="take back your last mark and go back to that chunk"),
        key("r", "retry", "retry unsaved", show=False, id="judge.retry",
            tooltip="write again the decisions a failed save left unsaved (read-only file, full disk, …)"),
        key("D", "drop", "drop unsaved", key_display="D", show=False, id="judge.drop",
            tooltip="give up the decisions a failed save left unsaved (r writes them instead)"),
        key("j,down", "scroll(1)", "scroll", show=False, id="judge.down", tooltip="scroll the chunk text down"),
        key("k,up", "scroll(-1)", "scroll up", show=False, id="judge.up", tooltip="scroll the chunk text up"),
        key("space,pagedown", "page(1)", "page", key_display="space", id="judge.page_down",
            tooltip="the chunk text one page down"),
        key("pageup,b", "page(-1)", "page up", show=False, id="judge.page_up", tooltip="the chunk text one page up"),
        key("home", "text_end(0)", "top", show=False, id="judge.top", tooltip="the start of the chunk text"),
        key("end", "text_end(-1)", "end", show=False, id="judge.end", tooltip="the end of the chunk text"),
        key("n", "step(1)", "next chunk", show=False, id="judge.next",
            tooltip="the next chunk in the queue, judged or not (to revisit one)"),
        key("p", "step(-1)", "previous chunk", show=False, id="judge.previous",
            tooltip="the previous chunk in the queue, judged or not"),
        key("right_square_bracket", "query(1)", "next query", key_display="]", show=False, id="judge.next_query",
            tooltip="the next query's first unjudged chunk"),
        key("left_square_bracket", "query(-1)", "previous query", key_display="[", show=False,
            id="judge.previous_query", tooltip="the previous query's first unjudged chunk"),
        key("slash", "search", "search corpus", key_display="/", id="judge.search",
            tooltip="search the corpus for a chunk no run returned (ranked by BM25, as ragdiff bm25 ranks), then "
                    "judge it for this query"),
        key("question_mark", "help", "help", key_display="?", id="judge.help", tooltip="this list of keys"),
        key("q,escape", "close", "back", id="judge.close",
            tooltip="back to the review (from `ragdiff judge`: quit, once the decisions still saving are written, "
                    "in one batch)"),
    ]

    def __init__(self, queue: JudgeQueue, session: LabelSession, corpus: CorpusIndex | None,
                 label_name: str, start_query: str | None = None, standalone: bool = False) -> None:
        super().__init__()
        self.queue = queue
        self.session = session
        self.corpus = corpus
        self.label_name = label_name
        self.standalone = standalone
        self.position: Position | None = None
        self.searching = False
        self.search = ""
        self.judged_at_open, _ = queue.progress()
        self._note: tuple[int, str] | None = None  # (keys seen when said, what): the pool is done, kept till a key
        if start_query is not None and start_query in queue.queries:
            self.position = queue.first_of_query(queue.queries.index(start_query))
        if self.position is None:
            self.position = queue.next_unjudged() or next(iter(queue.positions()), None)

    def compose(self) -> ComposeResult:
        yield Static(id="judge-header")
        yield Static(id="judge-query")
        with Horizontal(id="judge-body"):
            yield PoolList(id="judge-pool")
            yield ChunkView(id="judge-text")
        yield SearchBar("search the corpus for this query", "enter searches · esc cancels", short_label="search corpus",
                        short_hint="enter · esc", id="judge-search")
        yield StatusLine(id="judge-status")
        yield KeyBar(self.BINDINGS, id="judge-keys")

    def on_mount(self) -> None:
        self.query_one("#judge-pool").border_title = "pool"
        self.query_one(ChunkView).keys_anywhere = True  # j/k and space are the screen's own keys
        names = "  ".join(f"{letter} {clean(name)}" for letter, name in zip(RUN_LETTERS, self.queue.run_names))
        self.query_one("#judge-pool").border_subtitle = names
        judged, total = self.queue.progress()
        self.set_status(f"{total - judged} of {total} pooled chunks to judge · one key per chunk · ? every key"
                        if total else "the runs return nothing for these queries: nothing to judge")
        self.show_position()

    # ---- drawing ------------------------------------------------------------------------------------------

    def set_status(self, text: str | Text) -> None:
        self.query_one("#judge-status", StatusLine).update(text)

    def show_position(self) -> None:
        queue = self.queue
        judged, total = queue.progress()
        # the progress first; at 80 or 100 columns the line wraps to a second rather than losing its end
        # judged: durable decisions only; the ones on their way to the label file are `saving`
        saving = queue.saving
        header = Text.assemble((" ragdiff judge ", "bold reverse"), " ", (f"{judged}/{total} judged", "bold"),
                               f" ({judged / total:.0%})" if total else "",
                               (f" · saving {saving}", "bold") if saving else "",
                               f" · this session {judged - self.judged_at_open}/{total - self.judged_at_open}",
                               f" · {' + '.join(clean(n) for n in queue.run_names)}, top {queue.depth} each · ",
                               clean(self.label_name), end="")  # wraps (app.tcss): no number is cut
        self.query_one("#judge-header", Static).update(header)
        pool = self.query_one(PoolList)
        view = self.query_one(ChunkView)
        if self.position is None:
            self.query_one("#judge-query", Static).update(Text(" no query has a chunk to judge", style="dim"))
            view.show(Text("nothing to judge", style="dim"))
            return
        qid, entry = queue.entry_at(self.position)
        done, size = queue.query_progress(qid)
        text = queue.texts.get(qid) or ""  # a qrels gold set and runs without query text: the id alone
        text = f"  {clean(text)}" if text else ""
        waits = drafted_query.waits(queue, qid)  # a drafted query: kept or dropped before its chunks
        line = Text.assemble(f" query {self.position.query + 1}/{len(queue.queries)}  ", (clean(qid), "bold"),
                             text, "  · this query ",
                             (f"{done}/{size} judged", "bold"),
                             ("  · drafted: a keeps · d drops", "bold") if waits else "", end="")  # wraps
        self.query_one("#judge-query", Static).update(line)
        pool.show(queue, qid, self.position.entry)
        self._size_pool()
        pool.border_title = f"pool {clean(qid)} {done}/{size}"
        if waits:
            view.border_title = drafted_query.step_title(qid)
            view.show(drafted_query.step_body(queue, qid, self._text(qid, entry.chunk_id)))
            return
        view.border_title = self._meta(qid, entry)
        view.show(self._text(qid, entry.chunk_id))

    def _size_pool(self) -> None:
        pool = self.query_one(PoolList)
        frame = 3  # the border and the scroll bar
        width = min(max(POOL_MIN, pool.needed_width() + frame), max(POOL_MIN, self.size.width - TEXT_MIN))
        if pool.styles.width is None or pool.styles.width.value != width:
            pool.styles.width = width

    def on_resize(self) -> None:
        self._size_pool()

    def _meta(self, qid: str, entry) -> str:
        level, grade = self.queue.label_of(qid, entry.chunk_id)
        judged = self.queue.is_judged(qid, entry.chunk_id)
        word = vocab.word(level, grade) if judged else (
            "decided, saving…" if self.queue.is_in_flight(qid, entry.chunk_id) else
            f"{vocab.word(level, grade)} · a accepts" if level == vocab.DRAFTED else vocab.word(None))
        if self.queue.is_flagged(qid, entry.chunk_id):
            word += " · flagged"
        if entry.pooled:
            ranks = "  ".join(f"{letter} {'#' + str(r) if r is not None else '—'}"
                              for letter, r in zip(RUN_LETTERS, entry.ranks))
        else:
            ranks = "found by searching the corpus"
        return f"{clean(entry.chunk_id)} · {word} · {ranks}"

    def _text(self, qid: str, chunk_id: str) -> Text:
        dim = "dim"
        if self.corpus is None:
            return Text("no corpus given: run with --corpus corpus.jsonl to read the chunk text here", style=dim)
        if self.corpus.error and not self.corpus.ready:
            return Text(clean(self.corpus.error), style=dim)
        if not self.corpus.ready:
            return Text(f"indexing {self.corpus.path.name} …", style=dim)
        chunk = self.corpus.get(chunk_id)
        if chunk is None:
            return Text(clean(self.corpus.error) if self.corpus.error else
                        f"{clean(chunk_id)} is not in {clean(self.corpus.path.name)}", style=dim)
        body = Text(end="")
        if chunk.title:
            body.append_text(literal(chunk.title, style="bold"))
            body.append("\n")
        body.append_text(literal(chunk.text, multiline=True))
        view = self.query_one(ChunkView)
        return mark_words(body, query_words(self.queue.texts.get(qid, "")),
                          view.get_component_rich_style("chunk--match"))

    def corpus_ready(self) -> None:
        self.show_position()

    # ---- decisions ----------------------------------------------------------------------------------------

    def _target(self) -> Target | None:
        if self.position is None:
            return None
        qid, entry = self.queue.entry_at(self.position)
        run, rank = next(((name, r) for name, r in zip(self.queue.run_names, entry.ranks) if r is not None),
                         (None, None))
        return Target(qid, entry.chunk_id, run, rank)

    def _query_waits(self) -> str | None:
        """The drafted query on screen, while nobody has kept or dropped it."""
        if self.position is None:
            return None
        qid = self.queue.queries[self.position.query]
        return qid if drafted_query.waits(self.queue, qid) else None

    def action_decide(self, label: str, grade: int | None = None) -> None:
        target = self._target()
        if target is None:
            self.set_status("nothing to judge")
            return
        if self._query_waits() is not None:
            self.set_status(drafted_query.reminder(target.query_id))
            return
        self.queue.decide(target.query_id, target.chunk_id)
        # the decision that leaves none of the query's pool unjudged finishes it: a person has read every
        # pooled chunk's label, which is what the label file's `reviewed:` date says (DESIGN)
        done, size = self.queue.query_progress(target.query_id)
        self.session.mark(target, label, grade, reviewed=size > 0 and done == size)
        self._advance(f"{clean(target.chunk_id)}: {vocab.word(label, grade)} · saving …")

    def action_accept(self) -> None:
        """The draft's own grade as the decision (one key); any other decision key overrides it. On a drafted
        query not yet kept: keeps it."""
        qid = self._query_waits()
        if qid is not None:
            drafted_query.decide(self.queue, self.session, qid, drafted_query.KEEP)
            self.set_status(f"kept the drafted query {clean(qid)} · saving … · now its chunks")
            self.show_position()
            return
        target = self._target()
        decision = None if target is None else self.queue.accepting(target.query_id, target.chunk_id)
        if decision is None:
            self.set_status("no drafted label here to accept: decide with 0-3, g, e or x")
            return
        self.action_decide(*decision)

    def action_drop_query(self) -> None:
        qid = self._query_waits()
        if qid is None:
            self.set_status("d drops a drafted query before its chunks are judged; this one is not waiting for that")
            return
        drafted_query.decide(self.queue, self.session, qid, drafted_query.DROP)
        self.position = self.queue.next_unjudged(self.position) or next(iter(self.queue.positions()), None)
        self.set_status(f"dropped the drafted query {clean(qid)} · saving … · u brings it back")
        self.show_position()

    def action_skip(self) -> None:
        if self._query_waits() is not None:  # the whole query: it comes back after the rest
            here, queue = self.position.query, self.queue
            self.position = next((p for p in queue.positions(self.position) if p.query != here
                                  and not queue.is_done(queue.queries[p.query], queue.entry_at(p)[1].chunk_id)),
                                 self.position)
            self.set_status(f"skipped the drafted query {clean(self.queue.queries[here])}: it comes back after "
                            "the rest")
            self.show_position()
            return
        target = self._target()
        if target is not None:
            self._advance(f"skipped {clean(target.chunk_id)}: it comes back after the rest")

    def action_flag(self) -> None:
        target = self._target()
        if target is None:
            return
        if self._query_waits() is not None:
            self.set_status(drafted_query.reminder(target.query_id))
            return
        self.queue.flag(target.query_id, target.chunk_id)
        self.session.flag(target)
        self._advance(f"{clean(target.chunk_id)} flagged for a second opinion")

    def _advance(self, said: str) -> None:
        following = self.queue.next_unjudged(self.position)
        if following is None or following == self.position:
            total = self.queue.progress()[1]
            note = (f"every pooled chunk is judged ({self.queue.decided()}/{total})" if following is None
                    else "it is the only unjudged chunk left")
            self._note = (self.app.keys_seen, note)  # said until the next key, whatever saves come back
            self.set_status(f"{said} · {note}")
        else:
            if following.query != self.position.query:
                said += f" · next query: {clean(self.queue.queries[following.query])}"
            self.set_status(said)
            self.position = following
        self.show_position()

    def mark_done(self, message: MarkDone) -> None:
        """A decision's outcome came back from the writer: the app has applied it to the queue
        (`apply_outcome`); this screen shows it, and after `u` goes back to the chunk taken back."""
        if message.undo and message.changes:  # back to the chunk that was taken back, to judge it again
            change = message.changes[-1]
            if change.query_id in self.queue.queries:
                self.position = self.queue.add(change.query_id, change.chunk_id)
        elif message.undo and message.query_edit is not None:  # back to the drafted query, to decide it again
            qid = message.query_edit.query_id
            if qid in self.queue.queries:
                self.position = self.queue.first_of_query(self.queue.queries.index(qid)) or self.position
        if message.status:
            status = Text(clean(message.status), style="bold red" if message.error else "")
            if self._note is not None and self._note[0] == self.app.keys_seen:
                status.append(f" · {self._note[1]}", style="bold")
            self.set_status(status)
        self.show_position()

    # ---- moving and reading -------------------------------------------------------------------------------

    def action_scroll(self, lines: int) -> None:
        self.query_one(ChunkView).action_scroll_lines(lines)

    def action_page(self, pages: int) -> None:
        self.query_one(ChunkView).action_scroll_pages(pages)

    def action_text_end(self, line: int) -> None:
        self.query_one(ChunkView).action_scroll_to_line(line)

    def action_step(self, step: int) -> None:
        if self.position is None:
            return
        index = self.position.entry + step
        query = self.position.query
        while not 0 <= index < len(self.queue.entries[self.queue.queries[query]]):
            query += step
            if not 0 <= query < len(self.queue.queries):
                return
            index = 0 if step > 0 else len(self.queue.entries[self.queue.queries[query]]) - 1
        self.position = Position(query, index)
        self.show_position()

    def action_query(self, step: int) -> None:
        if self.position is None:
            return
        query = self.position.query + step
        while 0 <= query < len(self.queue.queries):
            found = self.queue.first_of_query(query)
            if found is not None:
                self.position = found
                self.show_position()
                return
            query += step
        self.set_status("no further query with chunks to judge")

    def action_undo(self) -> None:
        self.session.undo()

    def action_retry(self) -> None:
        self.session.retry()

    def action_drop(self) -> None:
        self.session.drop()

    def saved(self, message) -> None:
        """The label file was rewritten (or could not be: said in red, with the key that retries)."""
        if message.error:
            self.set_status(Text(clean(message.status), style="bold red"))
        self.show_position()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen([("judge", list(self.BINDINGS))], judge_legend_rows()))

    def action_close(self) -> None:
        if self.standalone:
            self.app.exit(0)
        else:
            self.dismiss()

    # ---- searching the corpus -----------------------------------------------------------------------------

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


# the queue's "back" keys (q, esc): typed before any other key while the review's first J builds the queue, they
# close it before it opens, at once (app/judging.py, keys.OrderedKeysApp.hold_keys)
CLOSE_KEYS = binding_keys(JudgeScreen.BINDINGS, "close")


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


async def build_queue(runs: list, gold, pool: int, label_path: Path, post, store=None) -> None:
    """The review's judging queue, an async Textual worker: `runs` and `gold` are the review model's as they
    were when J was pressed (a mark replaces the model's gold set, never changes it in place); its labels are
    the review's store (`store`), whose changes meanwhile reach it once it is built (app/judging.py, on_queue_built).
    Posts QueueBuilt.

    The build (1-2 s at 10,000 queries) is `detached`: quitting meanwhile does not wait for it. The flags file is
    read there too; a flag whose write is still under way then (its line torn or not yet there) reaches the
    queue as its MarkDone, which comes after J."""
    from ragdiff.core.judge.pool import read_flags

    built = await detached(lambda: JudgeQueue.build(runs, gold, pool, read_flags(label_path), store=store),
                           "ragdiff-judge-queue")
    if isinstance(built, BaseException):  # said on the status line, never a traceback on screen
        post(QueueBuilt(None, f"cannot build the judging queue: {type(built).__name__}: {built}"))
        return
    post(QueueBuilt(built))


def apply_outcome(queue: JudgeQueue | None, message: MarkDone, changes: bool = True) -> None:
    """A label job's outcome applied to the judging queue: the one place it happens, called by the app that
    keeps the queue (`ragdiff judge`, or the review once J has built it) whichever screen is up — a decision
    whose save failed leaves the in-flight set even when its screen has closed. `changes`: its Changes go to the
    queue's store too (`ragdiff judge`, whose queue holds the store; the review applies them to its own)."""
    if queue is not None:
        drafted_query.apply_outcome(queue, message)
        flagged = message.target if message.flagged and not message.error else None
        queue.apply(message.changes if changes else [], failed=message.target if message.error else None,
                    flagged=None if flagged is None else (flagged.query_id, flagged.chunk_id))


# ---- `ragdiff judge` on its own ----------------------------------------------------------------------------


@dataclass
class JudgeInputs:
    runs: list[Path]
    gold: Path
    pool: int = 10
    corpus: Path | None = None
    run_format: str | None = None
    gold_format: str | None = None
    reviewer: str | None = None
    bm25: bool = False  # pool a BM25 run over the corpus too (core/retrieval/bm25.py), made here, no file


class JudgeApp(OrderedKeysApp):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "ragdiff judge"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, inputs: JudgeInputs) -> None:
        super().__init__()
        self.inputs = inputs
        self.failure: str | None = None
        self.corpus: CorpusIndex | None = CorpusIndex(inputs.corpus) if inputs.corpus else None
        self.session = LabelSession(inputs.gold, inputs.reviewer, self.post_message, track=self._track_job)
        self.judge: JudgeScreen | None = None
        self._started = time.perf_counter()

    def compose(self) -> ComposeResult:
        yield Static(f"ragdiff judge: loading {', '.join(p.name for p in self.inputs.runs)} and "
                     f"{self.inputs.gold.name} …", id="judge-loading")

    def on_mount(self) -> None:
        self._load()

    @work(exclusive=True, group="load")
    async def _load(self) -> None:
        """The inputs read and the queue built, `detached`: ctrl+q while they load ends the process at once."""
        loaded = await detached(self._read_inputs, "ragdiff-judge-load")
        if isinstance(loaded, InputError):
            self.post_message(LoadFailed(str(loaded)))
        elif isinstance(loaded, BaseException):  # one message, never a traceback on screen
            self.post_message(LoadFailed(f"cannot open the judging queue: {type(loaded).__name__}: {loaded}"))
        else:
            self._open(*loaded)

    def _read_inputs(self) -> tuple[JudgeQueue, str]:
        from ragdiff.core.labels.gold import load_gold
        from ragdiff.core.judge.pool import read_flags
        from ragdiff.core.io.runs import load_run

        inputs = self.inputs
        gold = load_gold(inputs.gold, inputs.gold_format)
        if self.corpus is None and gold.corpus_path and gold.recorded_corpus().is_file():
            self.corpus = CorpusIndex(gold.recorded_corpus())
        runs = [load_run(path, inputs.run_format) for path in inputs.runs]
        if inputs.bm25 and inputs.corpus is not None:
            from ragdiff.core.retrieval.bm25 import Bm25Index, bm25_run

            index = Bm25Index(inputs.corpus)
            runs.append(bm25_run(gold, inputs.corpus, inputs.pool, index))
            corpus_search.searcher(self.corpus).give(index)  # `/` ranks with it: built once
        names = [run.name for run in runs]
        for i, run in enumerate(runs):  # two runs with one name (a.jsonl in two folders): say which is which
            if names.count(run.name) > 1:
                run.name = f"{RUN_LETTERS[i]} {run.name}"
        queue = JudgeQueue.build(runs, gold, inputs.pool, read_flags(inputs.gold))
        if self.corpus is not None:
            self.corpus.build()
        return queue, gold.format

    def _open(self, queue: JudgeQueue, fmt: str) -> None:
        self.session.open(fmt)
        self.judge = JudgeScreen(queue, self.session, self.corpus, self.inputs.gold.name, standalone=True)
        self.push_screen(self.judge)

    def on_load_failed(self, message: LoadFailed) -> None:
        self.failure = message.text
        self.exit(return_code=2)

    def on_mark_done(self, message: MarkDone) -> None:
        if self.judge is not None:
            apply_outcome(self.judge.queue, message)
            self.judge.mark_done(message)

    def on_saved(self, message: Saved) -> None:
        if self.judge is not None:
            self.judge.saved(message)

    def _track_job(self, future) -> None:
        self.run_worker(future.result, thread=True, group="labels", exit_on_error=False)

    def on_unmount(self) -> None:
        self.session.close()
