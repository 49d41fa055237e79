"""The documents as JSON: what `eval`, `diff` and `history` print with --json (numbers rounded by
`fmt.json_number`), one indented UTF-8 document on stdout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ragdiff.core import fmt

if TYPE_CHECKING:
    from ragdiff.core.report.diff_doc import DiffReport
    from ragdiff.core.report.eval_doc import EvalReport
    from ragdiff.core.report.history_doc import HistoryReport


def dumps(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2)


def eval_json(report: EvalReport) -> dict:
    """The JSON shape DESIGN.md gives for `eval --json`, plus `drafted` (how many drafts wait), per run
    `drafts_as_labels` (--drafted as-labels) and `by_tag` (--by-tag), `queries.not_retrieval`, and `gold_left` (the
    gold estimated still unjudged in the runs' pool, when some of it is unjudged)."""
    evals, as_labels, tags = report.evals, report.as_labels, report.tags
    first = evals[0]
    runs = []
    for i, ev in enumerate(evals):
        entry = {"name": ev.run.name, "path": str(ev.run.path),
                 "metrics": {name: fmt.json_number(value) for name, value in ev.means.items()}}
        if ev.bounds:
            entry["upper_bound"] = {name: {"value": fmt.json_number(b.value), "unjudged": b.unjudged, "window": b.window}
                                    for name, b in ev.bounds.items()}
        if as_labels is not None:
            entry["drafts_as_labels"] = {"metrics": {n: fmt.json_number(v) for n, v in as_labels[i].means.items()},
                                         "scored": len(as_labels[i].queries.scored)}
        if tags is not None:
            entry["by_tag"] = {t.tag: {"queries": t.queries, "metrics": {n: fmt.json_number(v) for n, v in t.means.items()}}
                               for t in tags[i]}
        if report.per_query:
            entry["per_query"] = {
                row["query_id"]: {m.name: fmt.json_number(row[m.name]) for m in ev.metrics}
                for row in ev.per_query.iter_rows(named=True)
            }
        runs.append(entry)
    doc = {
        "settings": first.settings.as_json(),
        "runs": runs,
        "queries": {
            "scored": first.queries.scored,
            "unanswerable": first.queries.unanswerable,
            "missing_from_run": {ev.run.name: ev.queries.missing_from_run for ev in evals},
            "not_in_gold": {ev.run.name: ev.queries.not_in_gold for ev in evals},
            "not_retrieval": first.queries.not_retrieval,
        },
    }
    if report.drafted is not None:
        doc["drafted"] = report.drafted
    if report.gold_left is not None:
        doc["gold_left"] = report.gold_left
    return doc


def diff_json(report: DiffReport, failures: list[str] | None = None) -> dict:
    """The diff document; with --fail-on-regression (`failures` not None) whether it failed and why."""
    if failures is None:
        return report.doc
    return {**report.doc, "fail_on_regression": {"failed": bool(failures), "reasons": failures}}


def history_json(report: HistoryReport) -> dict:
    """`history --json`: the file's rows (each with its line and metrics) and the drops."""
    history, dropped = report.history, report.drops
    return {
        "path": str(history.path),
        "metrics": history.metric_names,
        "rows": [{**row.fields, "line": row.line, "metrics": row.metrics} for row in history.rows],
        "drops": [{"line": d.row.line, "previous_line": d.previous.line, "run": d.row.run, "metric": d.metric,
                   "before": d.before, "after": d.after, "gold_changed": d.gold_changed} for d in dropped],
    }
