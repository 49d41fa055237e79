"""The history document: the rows `eval --log` wrote and each drop from a run's previous row, one object the
terminal table and `--json` both render."""

from __future__ import annotations

from dataclasses import dataclass

from ragdiff.core.report.history import Drop, History, drops


@dataclass
class HistoryReport:
    history: History
    drops: list[Drop]

    def metrics_with_values(self) -> list[str]:
        """The metric columns some row has a value in (a column only blank rows hold is not shown)."""
        rows = self.history.rows
        return [m for m in self.history.metric_names if any(r.metrics.get(m) is not None for r in rows)]


def history_report(history: History) -> HistoryReport:
    return HistoryReport(history, drops(history))
