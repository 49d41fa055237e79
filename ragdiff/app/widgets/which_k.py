"""`w`: which k — recall@j of both runs for j = 1 … depth as a plot, with k and depth marked.

The lesson's reading: measure at the k pasted into the prompt and at the depth the first stage returns; the
gap between the two is the reranker's opportunity.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ragdiff.app.keys import key  # priority: run as the key arrives, before the keys after it
from ragdiff.app.text import clean

PLOT_HEIGHT = 12
AXIS = 6  # columns before the plot: "0.80 " and the axis line


def plot(curve_a: list[float], curve_b: list[float], k: int, width: int, styles: dict[str, str]) -> Text:
    """A text plot: A as ●, B as ○, both as ◉, k and depth marked on the axis.

    The plot uses the whole width (a rank spans several columns when depth is small) and the y axis starts at
    the tenth below the lowest value, so a few queries' difference is visible.
    """
    depth = len(curve_a)
    width = max(10, width)
    rank_at = [min(depth, -(-(c + 1) * depth // width)) for c in range(width)]  # ceil: the rank each column shows
    k_column = next(c for c in range(width) if rank_at[c] >= k)
    values = [v for v in curve_a + curve_b if v == v]
    if not values:  # no query scored (every one unanswerable): recall@j is NaN at every j
        return Text("no scored query: no recall@j to plot", style=styles["dim"], end="")
    low = max(0.0, int(min(values, default=0.0) * 10) / 10) if values else 0.0
    span = max(1.0 - low, 1e-9)

    def row_of(value: float) -> int:
        return PLOT_HEIGHT - 1 - round((value - low) / span * (PLOT_HEIGHT - 1))

    out = Text(no_wrap=True, end="")
    for row in range(PLOT_HEIGHT):
        # every axis label in one format (two decimals): 1.00, 0.80, 0.60
        value = {0: 1.0, row_of(low + span / 2): low + span / 2, PLOT_HEIGHT - 1: low}.get(row)
        label = f"{value:.2f} " if value is not None else " " * (AXIS - 1)
        out.append(label, style=styles["dim"])
        out.append("┤" if label.strip() else "│", style=styles["dim"])
        for column in range(width):
            j = rank_at[column] - 1
            a, b = row_of(curve_a[j]) == row, row_of(curve_b[j]) == row
            if a and b:
                out.append("◉", style=styles["both"])
            elif a:
                out.append("●", style=styles["a"])
            elif b:
                out.append("○", style=styles["b"])
            elif column == k_column:
                out.append("┊", style=styles["k"])
            else:
                out.append(" ")
        out.append("\n")
    axis = " " * (AXIS - 1) + "└" + "".join("┴" if c == k_column else "─" for c in range(width))
    out.append(axis + "\n", style=styles["dim"])
    ticks = [" "] * (width + AXIS)
    # k and depth first: where "1" and "k=1" (or a depth near k) would overlap, the one said in words wins
    ends = ((f"k=depth={depth}", k_column),) if k >= depth else ((f"k={k}", k_column), (f"depth={depth}", width - 1))
    for text, column in (*ends, ("1", 0)):
        start = max(0, min(AXIS + column - len(text) // 2, len(ticks) - len(text)))
        if all(ch == " " for ch in ticks[start:start + len(text)]):
            ticks[start:start + len(text)] = list(text)
    out.append("".join(ticks).rstrip(), style=styles["dim"])
    return out


def legend(name: str, mark: str, style: str, curve: list[float], k: int, scored: int) -> Text:
    """One run's line under the plot. recall@j is the share of queries with gold in the top j (DESIGN), so
    the gap between k and depth times the queries scored is a count of queries, said as one. At k = depth
    there is no gap to measure (`no_gap` says so, once): the line says what the depth alone says."""
    depth = len(curve)
    at_k, at_depth = curve[min(k, depth) - 1], curve[-1]
    line = Text.assemble((f"{mark} ", style), (clean(name), "bold"))
    if not scored or at_k != at_k or at_depth != at_depth:
        line.append(f"  no scored query: no recall@{k} to show")
        return line
    if k >= depth:
        beyond = round((1 - at_depth) * scored)
        line.append(f"  recall@{k} {at_k:.3f}  {beyond} of {scored} queries have no gold in the top {depth}: "
                    "out of any reranker's reach")
        return line
    opportunity = round((at_depth - at_k) * scored)
    line.append(f"  recall@{k} {at_k:.3f} → recall@{depth} {at_depth:.3f}  ")
    line.append(f"{opportunity} of {scored} queries have gold in the top {depth} but not the top {k}: "
                "the reranker's opportunity")
    return line


def no_gap(k: int, depth: int) -> str:
    return (f"k is the depth ({depth}): no rank below k for a reranker to bring up — its opportunity shows with "
            "--depth above k")


class RecallPlot(Static):
    """The plot, drawn for the width its box gives it (a share of the screen's), again when that changes: drawn
    for the app's width instead, its rows were wider than the box on a wide terminal and wrapped."""

    def __init__(self, curves: tuple[list[float], list[float]], k: int, palette: dict[str, str], **kwargs):
        super().__init__(**kwargs)
        self.curves, self.k, self.palette = curves, k, palette
        self.drawn_for: int | None = None

    def on_resize(self, event: events.Resize) -> None:
        width = event.size.width - AXIS
        if width != self.drawn_for:
            self.drawn_for = width
            self.update(plot(*self.curves, self.k, width, self.palette))


class WhichKScreen(ModalScreen[None]):
    BINDINGS = [key("escape,w,q", "dismiss", "close", id="which_k.close")]
    STYLES = {"a": "bold green", "b": "bold yellow", "both": "bold cyan", "k": "cyan", "dim": "dim"}

    def __init__(self, name_a: str, name_b: str, curves: tuple[list[float], list[float]], k: int, scored: int):
        super().__init__()
        self.name_a, self.name_b = name_a, name_b
        self.curves, self.k, self.scored = curves, k, scored

    def compose(self) -> ComposeResult:
        with Vertical(id="which-k-box"):
            yield RecallPlot(self.curves, self.k, self.STYLES, id="which-k-plot")
            yield Static(id="which-k-legend")

    def on_mount(self) -> None:
        box = self.query_one("#which-k-box")
        box.border_title = "which k: recall@j for j = 1 … depth"
        box.border_subtitle = "esc / w / q close"
        styles = self.STYLES
        curve_a, curve_b = self.curves
        self.query_one("#which-k-legend", Static).update(Text("\n").join([
            legend(self.name_a, "●", styles["a"], curve_a, self.k, self.scored),
            legend(self.name_b, "○", styles["b"], curve_b, self.k, self.scored),
            *([Text(no_gap(self.k, len(curve_a)))] if self.k >= len(curve_a) else []),
            Text.assemble(("◉", styles["both"]), " both runs at the same height   ", ("┊", styles["k"]), f" k={self.k}",
                          style="dim"),
        ]))
