"""The query list: one line per query with its hit/miss mark in A and B at k, flipped queries first."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from ragdiff.app.model import ReviewModel
from ragdiff.app.text import MIN_ID, IdCuts, clean, fit
from ragdiff.app.views import QueryRow
from ragdiff.app.widgets.line_list import LineList


class QueryList(LineList):
    COMPONENT_CLASSES = LineList.COMPONENT_CLASSES | {
        "query--hit", "query--miss", "query--none", "query--id", "query--delta-up", "query--delta-down",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: ReviewModel | None = None
        self.ids: list[str] = []
        self.delta: str | None = None  # "delta_rr" | "delta_ndcg" | None: the column the sort is on
        self.cuts = IdCuts(())  # the listed query ids, cut together when the pane is too narrow for one

    def show(self, model: ReviewModel, ids: list[str], selected: str | None, delta: str | None) -> None:
        self.model = model
        self.ids = ids
        self.delta = delta
        if not self.cuts.same(ids):
            self.cuts = IdCuts(ids)
        index = ids.index(selected) if selected in ids else 0
        self.reset(cursor=index)

    @property
    def selected(self) -> str | None:
        return self.ids[self.cursor] if 0 <= self.cursor < len(self.ids) else None

    def line_count(self) -> int:
        return len(self.ids)

    def row_key(self, index: int) -> tuple:
        """What the line shows of its query: id, text, the marks in A and B, and the sorted-on delta."""
        row: QueryRow = self.model.rows[self.ids[index]]
        delta = None
        if self.delta:
            delta = (row.delta_rr if self.delta == "delta_rr" else row.delta_ndcg,)
        return (row.query_id, row.text, row.unanswerable, row.hit_a, row.hit_b, row.in_a, row.in_b, delta,
                self.cuts)

    def render_row(self, index: int, width: int) -> Text:
        return self.render_key(self.row_key(index), width)

    def render_key(self, key: tuple, width: int) -> Text:
        query_id, query_text, unanswerable, hit_a, hit_b, in_a, in_b, delta, cuts = key
        style = self.get_component_rich_style
        hit, miss, none = style("query--hit"), style("query--miss"), style("query--none")

        def mark(value: bool | None, present: bool):
            if value is None:
                return ("∅", none)
            if not present:
                return ("–", miss)
            return ("✓", hit) if value else ("✗", miss)

        if unanswerable:
            marks = Text.assemble((" ∅ ∅", none))
        else:
            a, b = mark(hit_a, in_a), mark(hit_b, in_b)
            arrow = "→" if hit_a != hit_b else " "
            marks = Text.assemble(" ", a, (arrow, none if arrow == " " else ""), b)
        line = Text(no_wrap=True, end="")
        line.append_text(marks)
        line.append(" ")
        used = 5
        if delta is not None:
            value = delta[0]
            if value is None:
                line.append("   —  ", style=none)
            else:
                cell = f"{value:+.2f} " if abs(value) >= 0.005 else " 0.00 "
                line.append(cell.rjust(6), style=style("query--delta-up") if value > 0
                            else style("query--delta-down") if value < 0 else none)
            used += 6
        qid = clean(query_id)
        text = clean(query_text)
        room = max(0, width - used)
        if text and text != qid:
            # the id keeps up to MIN_ID cells (more when the pane is wide); the text gets the rest
            id_part = cuts.show(query_id, min(cell_len(qid), max(min(MIN_ID, room), room // 3)))
            line.append(id_part, style=style("query--id"))
            line.append(" ")
            line.append(fit(text, max(0, room - cell_len(id_part) - 1)))
        else:
            line.append(cuts.show(query_id, room), style=style("query--id"))
        return line
