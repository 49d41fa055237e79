"""The judging queue's list for one query: each pooled chunk with its label and its rank in each run.

The cursor is the chunk being judged; the screen moves it (the list takes no keys of its own).
"""

from __future__ import annotations

from rich.text import Text

from ragdiff.app.text import clean, fit
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.ranked_list import label_cell
from ragdiff.core import vocab
from ragdiff.core.pool import JudgeQueue

RUN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


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

    def show(self, queue: JudgeQueue, query_id: str, cursor: int) -> None:
        self.queue, self.query_id = queue, query_id
        self.reset(cursor=cursor)

    def line_count(self) -> int:
        if self.queue is None or self.query_id is None:
            return 0
        return len(self.queue.entries[self.query_id])

    def render_row(self, index: int, width: int) -> Text:
        queue, qid = self.queue, self.query_id
        entry = queue.entries[qid][index]
        style = self.get_component_rich_style
        level, grade = queue.label_of(qid, entry.chunk_id)
        if (qid, entry.chunk_id) in queue.in_flight and not queue.is_judged(qid, entry.chunk_id):
            mark, css = "…  ", "rank--dim"
        else:
            shown = level if queue.is_judged(qid, entry.chunk_id) or level == vocab.DRAFTED else None
            mark, css = label_cell(shown, grade)  # a draft shows as the model's proposal, ☆n
        ranks = Text(no_wrap=True, end="")
        if entry.pooled:
            for letter, rank in zip(RUN_LETTERS, entry.ranks):
                cell = f" {letter}{rank}" if rank is not None else f" {letter}—"
                ranks.append(cell.ljust(5), style=style("rank--dim" if rank is not None else "rank--absent"))
        else:
            ranks.append(" from search", style=style("pool--found"))
        flag = (qid, entry.chunk_id) in queue.flagged
        room = max(4, width - 4 - ranks.cell_len - (2 if flag else 0))
        line = Text.assemble((mark, style(css)), " ", fit(clean(entry.chunk_id), room).ljust(room),
                             no_wrap=True, end="")
        if flag:
            line.append(" ⚑", style=style("pool--flag"))
        line.append_text(ranks)
        return line
