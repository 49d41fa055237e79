"""The judging queue's list for one query: each pooled chunk with its label and its rank in each run.

The cursor is the chunk being judged; the screen moves it (the list takes no keys of its own).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from ragdiff.app.text import MIN_ID, IdCuts, clean
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.ranked_list import label_cell
from ragdiff.core import vocab
from ragdiff.core.judge.pool import JudgeQueue

RUN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
FOUND = " from search"  # the rank cells of a chunk found by searching the corpus
FLAG = "⚑"  # in the mark's cell, after the label (★3⚑): the flag takes none of the id's room


def id_cells(chunk_id: str) -> int:
    """The cells an id takes on screen (control characters shown as placeholders, wide characters two)."""
    return len(chunk_id) if chunk_id.isascii() and chunk_id.isprintable() else cell_len(clean(chunk_id))


class PoolList(LineList, can_focus=False):
    BINDINGS = []
    COMPONENT_CLASSES = LineList.COMPONENT_CLASSES | {
        "rank--gold", "rank--gold-low", "rank--evidence", "rank--notrel", "rank--unjudged", "rank--dim",
        "rank--absent", "pool--flag", "pool--found",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.queue: JudgeQueue | None = None
        self.query_id: str | None = None
        self.rank_cell = 4  # " A12": as wide as the widest rank of the queue needs, no wider
        self.cuts: IdCuts | None = None  # the query's pooled ids, cut together when the pane is too narrow

    def show(self, queue: JudgeQueue, query_id: str, cursor: int) -> None:
        self.queue, self.query_id = queue, query_id
        self.rank_cell = 2 + len(str(queue.widest_id(id_cells)[1]))
        ids = [entry.chunk_id for entry in queue.entries[query_id]]
        if self.cuts is None or not self.cuts.same(ids):
            self.cuts = IdCuts(ids)
        self.reset(cursor=cursor)

    def needed_width(self) -> int:
        """The cells a row needs with no id cut: the mark, the widest id of the whole queue (the pane keeps
        one width from query to query), a flag, a rank cell per run."""
        if self.queue is None:
            return 0
        ranks = max(self.rank_cell * len(self.queue.run_names), len(FOUND))
        return 4 + self.queue.widest_id(id_cells)[0] + ranks

    def line_count(self) -> int:
        if self.queue is None or self.query_id is None:
            return 0
        return len(self.queue.entries[self.query_id])

    def render_row(self, index: int, width: int) -> Text:
        queue, qid = self.queue, self.query_id
        entry = queue.entries[qid][index]
        style = self.get_component_rich_style
        level, grade = queue.label_of(qid, entry.chunk_id)
        if queue.is_in_flight(qid, entry.chunk_id) and not queue.is_judged(qid, entry.chunk_id):
            mark, css = "…  ", "rank--dim"
        else:
            shown = level if queue.is_judged(qid, entry.chunk_id) or level == vocab.DRAFTED else None
            mark, css = label_cell(shown, grade)  # a draft shows as the model's proposal, ☆n
        ranks = Text(no_wrap=True, end="")
        if entry.pooled:
            for letter, rank in zip(RUN_LETTERS, entry.ranks):
                cell = f" {letter}{rank}" if rank is not None else f" {letter}—"
                rank_css = "rank--dim" if rank is not None else "rank--absent"
                ranks.append(cell.ljust(self.rank_cell), style=style(rank_css))
        else:
            ranks.append(FOUND, style=style("pool--found"))
        mark = mark.rstrip().ljust(2)
        flag = FLAG if queue.is_flagged(qid, entry.chunk_id) else " "
        room = max(MIN_ID, width - len(mark) - 2 - ranks.cell_len)
        line = Text.assemble((mark, style(css)), (flag, style("pool--flag")), " ",
                             self.cuts.show(entry.chunk_id, room, pad=True), no_wrap=True, end="")
        line.append_text(ranks)
        return line
