"""The header: both runs, the gold file, query counts, k and depth; per metric A, B, Δ, worth and verdict."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widget import Widget

from ragdiff.app.header_numbers import Header, MetricLine
from ragdiff.app.text import clean, fit
from ragdiff.core.metrics.diff import VERDICT_WORDS

MAX_LINES = 4  # the header's height at most (app.tcss #header max-height)
# A metric's part in three forms, fullest first:
#   full      recall@5 A .851 B .866 Δ+.015 (+1 of 67 q, p=1.00 inside the noise)
#   short     recall@5 A .851 B .866 Δ+.015 (+1 of 67 q, p=1.00)        a real change still says gain/drop
#   compact   recall@5 .851 .866 Δ+.015 p=1.00                          (and gain/drop when real)
# and the gold file's query counts in four. The header takes the fullest level whose lines fit MAX_LINES.
_LEVELS = [  # (metric form, query counts, notes)
    ("full", "full", True),
    ("short", "full", True),
    ("short", "short", False),
    ("compact", "short", False),
    ("compact", "total", False),
    ("compact", "none", False),
]
_REAL = {VERDICT_WORDS["gain"]: "gain", VERDICT_WORDS["drop"]: "drop"}  # the short word of a real change


def short(value: float | None) -> str:
    """.847, 1.000, — : three decimals, no leading zero (the header is narrow)."""
    if value is None or value != value:
        return "—"
    text = f"{value:.3f}"
    return text[1:] if text.startswith("0.") else text.replace("-0.", "-.")


def signed(value: float | None) -> str:
    if value is None or value != value:
        return "—"
    if abs(value) < 0.0005:
        return "±0"
    text = f"{value:+.3f}"
    return text.replace("+0.", "+.").replace("-0.", "-.")


def pct(value: float | None) -> str:
    return "—" if value is None or value != value else f"{value:.0%}"


VERDICT_ROOM = max(len(word) for key, word in VERDICT_WORDS.items() if key != "by hand")
SHORT_ROOM = max(len(word) for word in _REAL.values())


def _room(m: MetricLine, h: Header, first: bool, form: str = "full") -> int:
    """The widest a metric's part can be in this form with this header's label and query count (numbers, Δ,
    worth and verdict at their longest), whatever the values are now."""
    number = 5  # 1.000
    room = len(m.label)
    if m.percent:
        return room + 2 * len(" 100%")
    labelled = first and form != "compact"
    room += (len(" A ") + number + len(" B ") + number) if labelled else (1 + number + 1 + number)
    room += len(" Δ") + len("+1.000")
    digits = len(str(h.scored))
    if form == "compact":
        return room + (0 if h.by_hand else len(" p=.001") + 1 + SHORT_ROOM)
    worth = len(f"+{'9' * digits} of {h.scored} q") if m.exact else len(f"≈+{'9' * digits}.9 q")
    room += len(" (") + worth + len(")")
    if not h.by_hand:
        room += len(", ") + len("p=.001") + 1 + (VERDICT_ROOM if form == "full" else SHORT_ROOM)
    return room


def _queries(n: int) -> str:
    return "query" if n == 1 else "queries"


def _flow(parts: list[tuple[Text, int]], width: int, gap: Text, lead: str = " ") -> list[Text]:
    """Whole parts into lines of `width`, `gap` between them. Lines break by each part's room (its widest
    form), so a p-value arriving, or a number growing a digit after a mark, never moves a part to another
    line: the header keeps its height and the panes stay put."""
    lines: list[Text] = []
    line = Text(lead, no_wrap=True, end="")
    used = empty = len(lead)
    for part, room in parts:
        if used > empty and used + gap.cell_len + room > width:
            lines.append(line)
            line = Text(" ", no_wrap=True, end="")
            used = empty = 1
        if used > empty:
            line.append_text(gap)
            used += gap.cell_len
        line.append_text(part)
        used += room
    if used > empty:
        lines.append(line)
    return lines


def p_text(p: float | None) -> str:
    if p is None:
        return "p=—"
    if p < 0.001:
        return "p<.001"
    return "p=" + (f"{p:.3f}" if p < 0.01 else f"{p:.2f}").lstrip("0")


class HeaderBar(Widget):
    COMPONENT_CLASSES = {"header--title", "header--name", "header--dim", "header--up", "header--down",
                         "header--gain", "header--drop"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.header: Header | None = None
        self.loading_text = "loading…"
        self._laid: tuple[Header, int, list[Text]] | None = None  # the last layout: header, width, lines

    def show(self, header: Header) -> None:
        """Draw `header`; a layout of the screen only when the header's height changes (a k change keeps it:
        parts wrap by their widest form)."""
        if header is self.header:
            return
        before = self._laid  # the lines drawn last, at the width they were drawn at
        self.header = header
        same_height = (before is not None and self.size.width > 0 and before[1] == max(20, self.size.width)
                       and len(before[2]) == len(self._lines(self.size.width)))
        self.refresh(layout=not same_height)

    def _lines(self, width: int) -> list[Text]:
        """`layout(width)` of the header shown, kept until the header or the width changes."""
        width = max(20, width)
        laid = self._laid
        if laid is None or laid[0] is not self.header or laid[1] != width:
            laid = self._laid = (self.header, width, self.layout(width))
        return laid[2]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._laid = None  # the lines carry the old styles

    def render(self) -> Text:
        style = self.get_component_rich_style
        h = self.header
        if h is None:
            return Text.assemble((" ragdiff ", style("header--title")), " ", (self.loading_text, style("header--dim")))
        return Text("\n", no_wrap=True, end="").join(self._lines(self.size.width))

    def get_content_height(self, container, viewport, width: int) -> int:
        return 1 if self.header is None else len(self._lines(width))

    # ---- fitting the header to the width: lines wrap whole items; when more than MAX_LINES would be needed,
    # the least important words go first (the verdict words "inside the noise", the query counts, the worth
    # in queries, then the last metrics). k=… depth=… and every number shown are never cut.

    def layout(self, width: int) -> list[Text]:
        h = self.header
        for level in _LEVELS:
            lines = self._pack(width, *level)
            if len(lines) <= MAX_LINES:
                return lines
        for dropped in range(1, len(h.metrics)):
            lines = self._pack(width, *_LEVELS[-1], dropped=dropped)
            if len(lines) <= MAX_LINES:
                return lines
        return lines[:MAX_LINES]

    def _pack(self, width: int, form: str, counts: str, notes: bool, dropped: int = 0) -> list[Text]:
        style = self.get_component_rich_style
        h = self.header
        dim, name = style("header--dim"), style("header--name")
        names = Text.assemble(("A ", dim), (clean(h.name_a), name), ("  vs  ", dim), ("B ", dim),
                              (clean(h.name_b), name), no_wrap=True, end="")
        if names.cell_len > width - 12:  # very long run names: each gets half of the line, cut with …
            room = max(4, (width - 22) // 2)
            names = Text.assemble(("A ", dim), (fit(clean(h.name_a), room), name), ("  vs  ", dim), ("B ", dim),
                                  (fit(clean(h.name_b), room), name), no_wrap=True, end="")
        gold = Text.assemble((clean(h.gold_name), name), no_wrap=True, end="")
        gold.append({"full": f": {h.queries} {_queries(h.queries)} ({h.scored} scored, {h.unanswerable} unanswerable)",
                     "short": f": {h.queries} {_queries(h.queries)} ({h.scored} scored)",
                     "total": f": {h.queries} {_queries(h.queries)}",
                     "none": f": {h.queries} q"}[counts])
        title = Text.assemble((" ragdiff ", style("header--title")), " ", no_wrap=True, end="")
        identity = [(part, part.cell_len) for part in
                    (Text.assemble(title, names), gold, Text(f"k={h.k} depth={h.depth}", no_wrap=True, end=""))]
        shown = h.metrics[: len(h.metrics) - dropped]
        parts = [(self._metric(m, h, index == 0, form), _room(m, h, index == 0, form))
                 for index, m in enumerate(shown)]
        if h.by_hand:
            note = Text("under 30 scored queries: no verdict, read the flips by hand" if notes
                        else "under 30 q: read by hand", style=dim)
            parts.append((note, note.cell_len))
        lines = _flow(identity, width, Text("   "), lead="")
        lines += _flow(parts, width, Text(" · ", style=dim))
        if notes and h.notes:
            lines.append(Text(" " + "; ".join(h.notes), style=dim, no_wrap=True, end=""))
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return lines

    def _metric(self, m: MetricLine, h: Header, first: bool, form: str = "full") -> Text:
        style = self.get_component_rich_style
        dim = style("header--dim")
        text = Text(no_wrap=True, end="")
        text.append(m.label, style=style("header--name"))
        if m.percent:
            text.append(f" {pct(m.a)} {pct(m.b)}")
            return text
        if first and form != "compact":
            text.append(" A ", style=dim)
            text.append(short(m.a))
            text.append(" B ", style=dim)
            text.append(short(m.b))
        else:
            text.append(f" {short(m.a)} {short(m.b)}")
        delta_style = style("header--up") if m.delta > 0.0005 else style("header--down") if m.delta < -0.0005 else dim
        text.append(" Δ", style=dim)
        text.append(signed(m.delta), style=delta_style)
        bits = []
        if form != "compact" and m.worth == m.worth and not math.isinf(m.worth):
            if m.exact:
                worth = int(round(m.worth))
                bits.append(Text(f"{worth:+d} of {h.scored} q" if worth else f"0 of {h.scored} q"))
            else:
                bits.append(Text(f"≈{m.worth:+.1f} q"))
        if not h.by_hand:
            if h.verdicts_ready and m.verdict:
                verdict_style = (style("header--gain") if m.verdict == VERDICT_WORDS["gain"]
                                 else style("header--drop") if m.verdict == VERDICT_WORDS["drop"] else dim)
                bit = Text(p_text(m.p_value))
                word = m.verdict if form == "full" else _REAL.get(m.verdict)  # a real change is always said
                if word:
                    bit.append(" ")
                    bit.append(word, style=verdict_style)
                bits.append(bit)
            elif not h.verdicts_ready:
                bits.append(Text("p=…", style=dim))
        if not bits:
            return text
        if form == "compact":
            text.append(" ")
            text.append_text(bits[-1])
            return text
        text.append(" (")
        text.append_text(Text(", ").join(bits))
        text.append(")")
        return text
