"""`ragdiff judge`: the judging queue over the pooled runs (DESIGN: "Judging the pool").

One key per decision (0 not relevant, 1–3 gold with that grade, g gold, e evidence, x not relevant, a accept
the model's draft, s skip, ! flag for a second opinion); after each the queue moves to the next unjudged chunk by
itself, across queries. The chunk text takes most of the screen, with the query's words marked, and scrolls (j/k,
space). The queue itself (pool, order, progress, resume) is `ragdiff.core.judge.pool.JudgeQueue`; this module shows it
and moves through it. By concern:

- app/judge_decisions.py: the decision keys, sent to the label writer (`ragdiff.app.session.LabelSession`), whose
  Changes come back to `mark_done`; a query a model drafted is kept (a) or dropped (d) first (app/drafted_query.py);
- app/judge_search.py: `/` searches the corpus for a chunk no run returned, ranked by BM25 (app/corpus_search.py);
- app/judging.py: the queue built and its outcomes applied, for `ragdiff judge` and the review alike;
- app/judge_app.py: `ragdiff judge` on its own. The same screen opens from `ragdiff review` (key `J`) on the
  query on screen, sharing the review's writer.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Static

from ragdiff.app import drafted_query
from ragdiff.app.corpus import CorpusIndex
from ragdiff.app.judge_decisions import Deciding
from ragdiff.app.judge_search import CorpusSearching
from ragdiff.app.keys import binding_keys, key, label_keys
from ragdiff.app.session import LabelSession
from ragdiff.app.text import clean, literal, mark_words, query_words
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.help_screen import HelpScreen, judge_legend_rows
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.app.widgets.pool_list import RUN_LETTERS, PoolList
from ragdiff.app.widgets.search_bar import SearchBar
from ragdiff.app.widgets.status_line import StatusLine
from ragdiff.core import fmt, vocab
from ragdiff.core.judge.pool import JudgeQueue, Position

# The pool list is as wide as its widest row (every id whole) within these bounds: never narrower than POOL_MIN
# (nor than 40% of the screen, app.tcss), and the chunk text — the thing being judged — keeps TEXT_MIN columns
# (80 of text, its border, padding and scroll bar)
POOL_MIN = 38
TEXT_MIN = 86


def _grade_keys() -> list:
    return [key(str(n), f"decide('gold', {n})", "gold grade", show=n == 1, id=f"judge.grade{n}", tooltip=f"gold with grade {n}, then the next unjudged chunk")
            for n in (1, 2, 3)]


class JudgeScreen(Deciding, CorpusSearching, Screen):
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
            tooltip="the next query's first unjudged chunk (in an adaptive order its unjudged chunks come first, "
                    "then the order goes on)"),
        key("left_square_bracket", "query(-1)", "previous query", key_display="[", show=False,
            id="judge.previous_query", tooltip="the previous query's first unjudged chunk (then as ] does)"),
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
        # the query asked for (the review's query on screen at J, or one `]`/`[` went to): under an adaptive
        # order its unjudged chunks come first, then the order takes over (`_following`)
        self.focus: int | None = None
        self._keys_at_open = 0
        # the order's gold-left estimate as last worked out: (the pool's, each query's); see show_position
        self._left: tuple[float, object] | None = None
        self._left_due = False
        if start_query is not None and start_query in queue.queries:
            self.focus = queue.queries.index(start_query)
            self.position = queue.first_of_query(self.focus)
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
        self.set_status(self._opening(total - judged, total) if total else
                        "the runs return nothing for these queries: nothing to judge")
        self._keys_at_open = self.app.keys_seen
        self.show_position()

    def bounds_ready(self) -> None:
        """The stopping suggestion's bounds came after the queue opened (the review computes them at each J, off
        the screen's thread): the opening line says them, unless a key has said something else since."""
        judged, total = self.queue.progress()
        if self.is_mounted and total and self.app.keys_seen == self._keys_at_open:
            self.set_status(self._opening(total - judged, total))

    # ---- drawing ------------------------------------------------------------------------------------------

    def _opening(self, unjudged: int, total: int) -> str:
        """The status line as the queue opens: what is left, and with an order's estimate what stopping now
        would leave (core/judge/stopping.py), from the bounds `ragdiff judge` computed as it opened."""
        walk, per_run = self.queue.walk, getattr(self.app, "bounds", [])
        if walk is None or not unjudged:
            return f"{unjudged} of {total} {self.queue.to_do} · one key per chunk · ? every key"
        from ragdiff.core.judge.stopping import short

        return short(walk.gold_left(), unjudged, per_run) + " · ? every key"

    def set_status(self, text: str | Text) -> None:
        self.query_one("#judge-status", StatusLine).update(text)

    def show_position(self) -> None:
        queue = self.queue
        if queue.walk is not None:
            self._estimate()
        self._draw_lines()
        pool = self.query_one(PoolList)
        view = self.query_one(ChunkView)
        if self.position is None:
            view.show(Text("nothing to judge", style="dim"))
            return
        qid, entry = queue.entry_at(self.position)
        done, size = queue.query_progress(qid)
        pool.show(queue, qid, self.position.entry)
        self._size_pool()
        pool.border_title = f"pool {clean(qid)} {done}/{size}"
        if drafted_query.waits(queue, qid):
            view.border_title = drafted_query.step_title(qid)
            view.show(drafted_query.step_body(queue, qid, self._text(qid, entry.chunk_id)))
            return
        view.border_title = self._meta(qid, entry)
        view.show(self._text(qid, entry.chunk_id))

    def _estimate(self) -> None:
        """The gold-left estimate (core/judge/gold_model.py, GoldModel) the header and the query line show. Worked out
        at once the first time; after that once after the frame that shows the next chunk, for every decision
        made before it: at 195,000 pooled chunks it takes ~30 ms (bench/RESULTS.md, "The judging queue"), which
        the frame of each decision waited for, and a burst of keys pays it once."""
        if self._left is None:
            self._left = self.queue.walk.model.gold_left()
        elif not self._left_due:
            self._left_due = True
            self.call_after_refresh(self._estimate_again)

    def _estimate_again(self) -> None:
        self._left_due = False
        self._left = self.queue.walk.model.gold_left()
        if self.is_mounted:
            self._draw_lines()

    def _draw_lines(self) -> None:
        """The header (the pool's progress and estimate) and the query line (the query's)."""
        queue = self.queue
        judged, total = queue.progress()
        # the progress first; at 80 or 100 columns the line wraps to a second rather than losing its end
        # judged: durable decisions only; the ones on their way to the label file are `saving`
        saving = queue.saving
        walk = queue.walk
        left = f" · about {fmt.number(self._left[0], 'estimate')} gold left" if walk is not None else ""
        header = Text.assemble((" ragdiff judge ", "bold reverse"), " ", (f"{judged}/{total} judged", "bold"),
                               f" ({judged / total:.0%})" if total else "",
                               (f" · saving {saving}", "bold") if saving else "", (left, "bold"),
                               f" · this session {judged - self.judged_at_open}/{total - self.judged_at_open}",
                               f" · {' + '.join(clean(n) for n in queue.run_names)}"
                               + (f", top {queue.depth} each" if queue.depth else ""),
                               f", {walk.name} order" if walk is not None and walk.adaptive else "", " · ",
                               clean(self.label_name), end="")  # wraps (app.tcss): no number is cut
        self.query_one("#judge-header", Static).update(header)
        if self.position is None:
            self.query_one("#judge-query", Static).update(Text(" no query has a chunk to judge", style="dim"))
            return
        qid = queue.queries[self.position.query]
        done, size = queue.query_progress(qid)
        text = queue.texts.get(qid) or ""  # a qrels gold set and runs without query text: the id alone
        text = f"  {clean(text)}" if text else ""
        waits = drafted_query.waits(queue, qid)  # a drafted query: kept or dropped before its chunks
        here = (f" · about {fmt.number(float(self._left[1][self.position.query]), 'estimate')} gold left"
                if walk is not None else "")
        line = Text.assemble(f" query {self.position.query + 1}/{len(queue.queries)}  ", (clean(qid), "bold"),
                             text, "  · this query ",
                             (f"{done}/{size} judged", "bold"), here,
                             ("  · drafted: a keeps · d drops", "bold") if waits else "", end="")  # wraps
        self.query_one("#judge-query", Static).update(line)

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
        note = self.queue.note(qid, entry.chunk_id)  # --against: both reviewers' judgments, in place of "unjudged"
        if note is not None:
            word = f"settled · {clean(note)}" if judged else clean(note)
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
                self.position, self.focus = found, query
                self.show_position()
                return
            query += step
        self.set_status("no further query with chunks to judge")

    def _following(self) -> Position | None:
        """Where the queue goes after a decision, a skip or a flag. Under an adaptive order, while the query
        asked for (`focus`) has an unjudged chunk not skipped or flagged since: its next one in queue order (best
        rank first), as `rank` walks it — the whole query is judged either way, so the order within it saves
        nothing. Then, and under `rank`, the queue's next unjudged chunk: the one its order offers, learnt from
        every decision so far, the focus's included."""
        queue, here = self.queue, self.position
        walk = queue.walk
        if self.focus is not None and walk is not None and walk.adaptive and here is not None:
            qid = queue.queries[self.focus]
            entries = queue.entries[qid] if qid not in queue.dropped_queries else ()
            n = len(entries)  # round the query from here, never back to here itself
            around = [(here.entry + step) % n for step in range(1, n)] if here.query == self.focus else range(n)
            for index in around:
                chunk = entries[index].chunk_id
                if not queue.is_done(qid, chunk) and not walk.skipped(qid, chunk):
                    return Position(self.focus, index)
            self.focus = None  # the query is done: the order takes over
        return queue.next_unjudged(here)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen([("judge", list(self.BINDINGS))], judge_legend_rows()))

    def action_close(self) -> None:
        if self.standalone:
            self.app.exit(0)
        else:
            self.dismiss()


# the queue's "back" keys (q, esc): typed before any other key while the review's first J builds the queue, they
# close it before it opens, at once (app/judging.py, keys.OrderedKeysApp.hold_keys)
CLOSE_KEYS = binding_keys(JudgeScreen.BINDINGS, "close")
