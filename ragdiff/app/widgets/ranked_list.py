"""One run's ranked list for the selected query: rank, chunk id, score, label, rank in the other run.

The k cut is a line; rows below it down to depth are reachable by scrolling; relevant chunks this run did
not put in the top k are listed under it with where they are (rank 12, or not retrieved).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from ragdiff.app.model import MissedGold, RankedRow, ReviewModel
from ragdiff.app.text import MIN_ID, IdCuts, clean
from ragdiff.app.widgets.line_list import LineList
from ragdiff.core import vocab


@dataclass(frozen=True)
class Item:
    kind: str  # "row" | "missed" | "cut" | "note" | "heading" | "blank"
    row: RankedRow | MissedGold | None = None
    text: str = ""
    other_rank: int | None = None  # a missed relevant chunk's rank in the other run (None: not retrieved there)


@dataclass(frozen=True)
class Columns:
    """One query's column widths in a run's list, worked out from its rows: everything but the pane's width
    that a line is drawn from."""
    rank: int = 2
    other: int = 6  # B#41: as wide as the widest rank in the other run
    scores: tuple[int, int] = (0, 0)  # the widest score, long and short form (0, 0: the run has no scores)
    widest_id: int = 0
    cuts: IdCuts | None = None  # the ids on screen with this list's (both runs' lists for the query)

    def fixed(self) -> int:
        return self.rank + 1 + 1 + 3 + 1 + self.other

    def score(self, width: int) -> tuple[int, bool]:
        """(cells, short form) of the score column at this width: the long form, the short one, or none (0) —
        the id comes first: a score is shown only where every id of the query fits whole beside it (the chunk
        pane shows the selected row's score in any case)."""
        room = width - self.fixed()
        for cells, short in ((self.scores[0], False), (self.scores[1], True)):
            if cells and room - cells - 1 >= self.widest_id:
                return cells + 1, short
        return 0, False

_CELL_CLASS = {vocab.GOLD: "rank--gold", vocab.EVIDENCE: "rank--evidence", vocab.NOT_RELEVANT: "rank--notrel",
               vocab.DRAFTED: "rank--unjudged", vocab.UNJUDGED: "rank--unjudged"}


# judged not relevant and unjudged differ in more than glyph and colour: a judged-not-relevant id is dimmed
# (read and set aside); an unjudged id is italic and its ? is drawn reversed (nobody has read it yet)
_ID_CLASS = {vocab.NOT_RELEVANT: "rank--notrel-id", vocab.UNJUDGED: "rank--unjudged-id",
             vocab.DRAFTED: "rank--unjudged-id"}


def label_cell(level: str | None, grade: int | None, relevant: bool = True) -> tuple[str, str]:
    """(three-cell mark, component class) for a chunk's label, glyphs from ragdiff.core.vocab:
    ★3 gold, ◆ evidence, · not relevant, ? unjudged."""
    level = vocab.kind_of(level, grade).name  # a negative grade is unjudged, whatever its level
    mark = vocab.glyph(level, grade if level in (vocab.GOLD, vocab.DRAFTED) else None)
    css = _CELL_CLASS[level]
    if level == vocab.GOLD and not relevant:
        css = "rank--gold-low"
    return mark.ljust(3), css


def id_class(row) -> str | None:
    """The chunk id's component class: relevant, judged not relevant (dimmed) or unjudged (italic), the kind
    from vocab.kind_of (a negative grade is unjudged, as the row's `?` says)."""
    return "rank--relevant-id" if row.relevant else _ID_CLASS.get(vocab.kind_of(row.level, row.grade).name)


class RankedList(LineList):
    COMPONENT_CLASSES = LineList.COMPONENT_CLASSES | {
        "rank--gold", "rank--gold-low", "rank--evidence", "rank--notrel", "rank--unjudged", "rank--cut",
        "rank--dim", "rank--absent", "rank--heading", "rank--relevant-id", "rank--notrel-id", "rank--unjudged-id",
    }

    def __init__(self, side: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.side = side
        self.other = "B" if side == "a" else "A"
        self.model: ReviewModel | None = None
        self.query_id: str | None = None
        self.items: list[Item] = []
        self.columns = Columns()

    def show(self, model: ReviewModel, query_id: str | None, keep_cursor: bool = False) -> None:
        previous = self.selected_chunk if keep_cursor else None
        self.model = model
        self.query_id = query_id
        self.items = self._items()
        cursor = None
        if previous is not None:
            for index, item in enumerate(self.items):
                if item.row is not None and item.row.chunk_id == previous:
                    cursor = index
                    break
        self.reset(cursor=cursor)

    def _items(self) -> list[Item]:
        model, qid = self.model, self.query_id
        if model is None or qid is None:
            return []
        rows = model.rows_for(qid, self.side)
        other_side = "b" if self.side == "a" else "a"
        missed = model.missed_gold(qid, self.side)
        self.columns = self._columns(rows, missed, [r.chunk_id for r in model.rows_for(qid, other_side)]
                                     + [m.chunk_id for m in model.missed_gold(qid, other_side)])
        k = model.k
        items: list[Item] = []
        query = model.rows[qid]
        if query.unanswerable:
            items.append(Item("note", text="unanswerable: the gold set has no answer"))
        present = query.in_a if self.side == "a" else query.in_b
        if not rows:
            items.append(Item("note", text="this run has no results for this query" if present
                              else "this run lacks this query (scored 0)"))
        for row in rows:
            items.append(Item("row", row))
            if row.rank == k and len(rows) > k:
                items.append(Item("cut", text=f" k={k} "))
        if rows and len(rows) < k:
            items.append(Item("cut", text=f" k={k} (returned {len(rows)}) "))
        elif rows and len(rows) == k:
            items.append(Item("cut", text=f" k={k} "))
        if missed:
            items.append(Item("blank"))
            items.append(Item("heading", text=f"relevant, not in the top {k}:"))
            items.extend(Item("missed", m, other_rank=model.rank_in(qid, other_side, m.chunk_id)) for m in missed)
        return items

    def _columns(self, rows: list[RankedRow], missed: list[MissedGold], others: list[str]) -> Columns:
        """The query's column widths; the ids cut together are both lists' (what is on screen at once), and
        the list keeps its IdCuts (and its drawn lines) while they are the same ids."""
        ids = [r.chunk_id for r in rows] + [m.chunk_id for m in missed]
        together = ids + others
        cuts = self.columns.cuts
        if cuts is None or not cuts.same(together):
            cuts = IdCuts(together)
        ranks = [r.other_rank for r in rows if r.other_rank is not None]
        scores = [r.score for r in rows if r.score is not None]
        return Columns(
            rank=max(2, len(str(rows[-1].rank))) if rows else 2,
            other=max(len(f"{self.other} —"), len(f"{self.other}#{max(ranks)}") if ranks else 0),
            scores=(max(len(score_text(x)) for x in scores), max(len(score_text(x, short=True)) for x in scores))
            if scores else (0, 0),
            widest_id=max((cell_len(clean(i)) for i in ids), default=0),
            cuts=cuts,
        )

    @property
    def selected_item(self) -> Item | None:
        if 0 <= self.cursor < len(self.items):
            item = self.items[self.cursor]
            return item if item.kind in ("row", "missed") else None
        return None

    @property
    def selected_chunk(self) -> str | None:
        item = self.selected_item
        return item.row.chunk_id if item is not None else None

    def line_count(self) -> int:
        return len(self.items)

    def selectable(self, index: int) -> bool:
        return self.items[index].kind in ("row", "missed")

    def row_key(self, index: int) -> tuple:
        """The item and the columns: all a line is drawn from (`render_key`)."""
        return (self.items[index], self.columns)

    def render_row(self, index: int, width: int) -> Text:
        return self.render_key(self.row_key(index), width)

    def render_key(self, key: tuple, width: int) -> Text:
        item, columns = key
        style = self.get_component_rich_style
        if item.kind == "row":
            return self._row_line(item.row, width, columns)
        if item.kind == "missed":
            return self._missed_line(item, width, columns)
        if item.kind == "cut":
            label = item.text
            left = max(1, (width - len(label)) // 2)
            return Text("─" * left + label + "─" * max(0, width - left - len(label)), style=style("rank--cut"))
        if item.kind == "heading":
            return Text(item.text, style=style("rank--heading"))
        if item.kind == "note":
            return Text(item.text, style=style("rank--dim"))
        return Text("")

    # ---- columns: a number is never cut; a chunk id gets the room, cut in the middle (IdCuts) when it must ----
    # Each column is as wide as its widest value in this query's rows. The score (the least needed: the rank
    # says the order) is shown only where every id fits whole beside it; else it is left out, and the id that
    # is still too wide keeps its start and its distinguishing end (`subproce…Popen#1`).

    def _other_cell(self, other_rank: int | None, other_width: int) -> tuple[str, str]:
        if other_rank is None:
            return f"{self.other} —".ljust(other_width), "rank--absent"
        return f"{self.other}#{other_rank}".ljust(other_width), "rank--dim"

    def _row_line(self, row: RankedRow, width: int, columns: Columns) -> Text:
        style = self.get_component_rich_style
        mark, mark_class = label_cell(row.level, row.grade, row.relevant)
        other, other_class = self._other_cell(row.other_rank, columns.other)
        fixed = columns.fixed()
        score_width, short = columns.score(width)
        score = ""
        if score_width:
            score = ("" if row.score is None else score_text(row.score, short)).rjust(score_width)
        id_width = max(MIN_ID, width - fixed - score_width)
        chunk = columns.cuts.show(row.chunk_id, id_width, pad=True)
        name = id_class(row)
        id_style = style(name) if name else None
        return Text.assemble(
            (str(row.rank).rjust(columns.rank), style("rank--dim")), " ",
            (chunk, id_style) if id_style else chunk,
            (score, style("rank--dim")), " ",
            (mark, style(mark_class)), " ",
            (other, style(other_class)),
            no_wrap=True, end="",
        )

    def _missed_line(self, item: Item, width: int, columns: Columns) -> Text:
        style = self.get_component_rich_style
        missed, other_rank = item.row, item.other_rank
        mark, mark_class = label_cell(missed.level, missed.grade)
        where = f"rank {missed.rank}" if missed.rank is not None else "not retrieved"
        other = (f"{self.other}#{other_rank}" if other_rank is not None else f"{self.other} —")
        other_class = "rank--dim" if other_rank is not None else "rank--absent"
        tail = f" {where}"
        fixed = columns.rank + 1 + 3 + 1 + len(tail) + 1 + max(len(other), columns.other)
        id_width = max(MIN_ID, width - fixed)
        chunk = columns.cuts.show(missed.chunk_id, id_width, pad=True)
        return Text.assemble(
            " " * (columns.rank + 1), (mark, style(mark_class)), " ", chunk,
            (tail, style("rank--absent" if missed.rank is None else "rank--dim")), " ",
            (other.ljust(columns.other), style(other_class)),
            no_wrap=True, end="",
        )


def score_text(score: float, short: bool = False) -> str:
    """A run's score: 4 decimals below 10 (6 cells), fewer above; `short`: 3 significant digits."""
    if score != score:
        return "nan"
    magnitude = abs(score)
    if short and magnitude < 1000:
        return f"{score:.3g}" if magnitude >= 1 or magnitude == 0 else f"{score:.2f}"
    if magnitude >= 10000:
        return f"{score:.3g}"
    if magnitude >= 100:
        return f"{score:.1f}"
    return f"{score:.4f}" if magnitude < 10 else f"{score:.3f}"
