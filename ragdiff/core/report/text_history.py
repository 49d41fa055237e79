"""The history document in the terminal (`ragdiff history`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from ragdiff.core import fmt
from ragdiff.core.report.history import sparkline
from ragdiff.core.report.history_doc import HistoryReport
from ragdiff.core.visible import visible

if TYPE_CHECKING:
    from rich.console import Console


def print_history(report: HistoryReport, console: Console) -> None:
    """The rows as a table (each drop marked ▼), a trend line per metric and run, then the drops in words."""
    history = report.history
    if not history.rows:
        console.print(Text(f"{history.path}: no rows yet (ragdiff eval … --log {history.path})"))
        return
    metrics = report.metrics_with_values()
    dropped = report.drops
    drop_cells = {(d.row.line, d.metric) for d in dropped}
    gold_changed = {d.row.line for d in dropped if d.gold_changed}

    table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("run", no_wrap=True)
    table.add_column("file", no_wrap=True)
    table.add_column("gold", no_wrap=True)
    table.add_column("q", justify="right", no_wrap=True)
    table.add_column("k/depth", justify="right", no_wrap=True)
    for name in metrics:
        table.add_column(name, justify="right", no_wrap=True)
    previous_gold: str | None = None
    for row in history.rows:
        when = row.when.strftime("%Y-%m-%d %H:%M")
        gold = visible(row.get("gold_sha256")[:7])  # text from the file, as every cell here
        gold_text = Text(gold, style="yellow" if previous_gold is not None and gold != previous_gold else "")
        previous_gold = gold
        cells = [Text(when), Text(visible(row.run)), Text(visible(row.get("run_sha256")[:7])), gold_text, Text(row.get("queries_scored")),
                 Text(f"{row.get('k')}/{row.get('depth')}")]
        for name in metrics:
            value = row.metrics.get(name)
            if (row.line, name) in drop_cells:
                cells.append(Text(f"▼{fmt.number(value)}", style="bold red"))
            else:
                cells.append(Text(fmt.number(value)))
        table.add_row(*cells)
    console.print(table)

    console.print()
    runs = history.run_names()
    console.print(Text("Trend (oldest → newest" + (", per run" if len(runs) > 1 else "") + ")", style="bold"))
    width = max(len(m) for m in metrics) if metrics else 0
    run_width = max(len(r) for r in runs)
    spark_width = max(sum(1 for r in history.rows if r.run == name) for name in runs)
    for name in metrics:
        values = [r.metrics.get(name) for r in history.rows]
        present = [v for v in values if v is not None]
        lo, hi = (min(present), max(present)) if present else (None, None)
        for run_name in runs:
            series = [r.metrics.get(name) for r in history.rows if r.run == run_name]
            known = [v for v in series if v is not None]
            if not known:
                continue
            line = Text(f"  {name:<{width}}  ")
            if len(runs) > 1:
                line.append(f"{visible(run_name):<{run_width}}  ")
            line.append(sparkline(series, lo, hi).ljust(spark_width))
            line.append(f"  {fmt.number(known[0])} → {fmt.number(known[-1])}", style="dim")
            console.print(line, soft_wrap=True)

    console.print()
    if dropped:
        console.print(Text(f"Drops from the run's previous row scored the same way: {len(dropped)}",
                           style="bold red"))
        for d in dropped:
            line = Text(f"  {d.row.when.strftime('%Y-%m-%d %H:%M')} ")
            line.append(visible(d.row.run))
            line.append(f": {d.metric} {fmt.number(d.before)} → {fmt.number(d.after)} "
                        f"({d.after - d.before:+.4f}; line {d.row.line} vs {d.previous.line})")
            if d.gold_changed:
                line.append("  — the gold file changed between these rows", style="yellow")
            console.print(line, soft_wrap=True)
        if gold_changed:
            console.print(Text("  A drop across a gold-file change may be the labels', not the retriever's.",
                               style="dim"), soft_wrap=True)
    else:
        console.print(Text("No drop from any run's previous row scored the same way."))
