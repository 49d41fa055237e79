"""The header: both runs, the gold file, query counts, k and depth; per metric A, B, Δ, worth and verdict."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widget import Widget

from ragdiff.app.model import Header, MetricLine
from ragdiff.app.text import clean
from ragdiff.core.diff import VERDICT_WORDS


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


def _room(m: MetricLine, h: Header, first: bool) -> int:
    """The widest a metric's part can be with this header's label and query count (numbers, Δ, worth and
    verdict at their longest), whatever the values are now."""
    number = 5  # 1.000
    room = len(m.label)
    if m.percent:
        return room + 2 * len(" 100%")
    room += (len(" A ") + number + len(" B ") + number) if first else (1 + number + 1 + number)
    room += len(" Δ") + len("+1.000")
    digits = len(str(h.scored))
    worth = len(f"+{'9' * digits} of {h.scored} q") if m.exact else len(f"≈+{'9' * digits}.9 q")
    room += len(" (") + worth + len(")")
    if not h.by_hand:
        room += len(", ") + len("p=.001") + 1 + VERDICT_ROOM
    return room


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

    def show(self, header: Header) -> None:
        self.header = header
        self.refresh(layout=True)

    def render(self) -> Text:
        style = self.get_component_rich_style
        h = self.header
        if h is None:
            return Text.assemble((" ragdiff ", style("header--title")), " ", (self.loading_text, style("header--dim")))
        width = max(20, self.size.width)
        first = Text.assemble(
            (" ragdiff ", style("header--title")), "  ",
            ("A ", style("header--dim")), (clean(h.name_a), style("header--name")),
            ("  vs  ", style("header--dim")),
            ("B ", style("header--dim")), (clean(h.name_b), style("header--name")), "   ",
            (clean(h.gold_name), style("header--name")),
            f": {h.queries} queries ({h.scored} scored, {h.unanswerable} unanswerable)   ",
            f"k={h.k} depth={h.depth}",
            no_wrap=True, end="",
        )
        parts = [(self._metric(m, h, index == 0), _room(m, h, index == 0)) for index, m in enumerate(h.metrics)]
        if h.by_hand:
            note = Text(f"under 30 scored queries: no verdict, read the flips by hand", style=style("header--dim"))
            parts.append((note, note.cell_len))
        lines = [first]
        line = Text(" ", no_wrap=True, end="")
        used = 1  # the room the parts on this line may take (their widest), not what they take now
        for part, room in parts:
            # lines break by each part's widest form, so a p-value arriving, or a number growing a digit after
            # a mark, never moves a part to another line: the header keeps its height and the panes stay put
            sep = 0 if used <= 1 else 3
            if used + sep + room > width and used > 1:
                lines.append(line)
                line = Text(" ", no_wrap=True, end="")
                used, sep = 1, 0
            used += sep + room
            if sep:
                line.append(" · ", style=style("header--dim"))
            line.append_text(part)
        lines.append(line)
        if h.notes and len(lines) < 4:
            lines.append(Text(" " + "; ".join(h.notes), style=style("header--dim"), no_wrap=True, end=""))
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        out = Text("\n", no_wrap=True, end="").join(lines[:4])
        return out

    def _metric(self, m: MetricLine, h: Header, first: bool) -> Text:
        style = self.get_component_rich_style
        dim = style("header--dim")
        text = Text(no_wrap=True, end="")
        text.append(m.label, style=style("header--name"))
        if m.percent:
            text.append(f" {pct(m.a)} {pct(m.b)}")
            return text
        if first:
            text.append(" A ", style=dim)
            text.append(short(m.a))
            text.append(" B ", style=dim)
            text.append(short(m.b))
        else:
            text.append(f" {short(m.a)} {short(m.b)}")
        delta_style = style("header--up") if m.delta > 0.0005 else style("header--down") if m.delta < -0.0005 else dim
        text.append(" Δ", style=dim)
        text.append(signed(m.delta), style=delta_style)
        if m.worth != m.worth or math.isinf(m.worth):
            return text
        if m.exact:
            worth = int(round(m.worth))
            inner = f"{worth:+d} of {h.scored} q" if worth else f"0 of {h.scored} q"
        else:
            inner = f"≈{m.worth:+.1f} q"
        bits = [Text(inner)]
        if not h.by_hand:
            if h.verdicts_ready and m.verdict:
                verdict_style = (style("header--gain") if m.verdict == "a real gain"
                                 else style("header--drop") if m.verdict == "a real drop" else dim)
                bits.append(Text.assemble(p_text(m.p_value), " ", (m.verdict, verdict_style)))
            elif not h.verdicts_ready:
                bits.append(Text("p=…", style=dim))
        text.append(" (")
        text.append_text(Text(", ").join(bits))
        text.append(")")
        return text
