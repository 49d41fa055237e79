"""The eval document: what `ragdiff eval` found, one object the terminal tables and `--json` both render."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragdiff.core.report.notes import drafts_note, drafts_summary

if TYPE_CHECKING:
    from ragdiff.core.labels.gold import Gold
    from ragdiff.core.metrics.evaluate import RunEval
    from ragdiff.core.metrics.slices import TagSlice


@dataclass
class EvalReport:
    """Each run's evaluation in the order given (the first's settings and queries head the report); with
    `--drafted as-labels` each run scored as if every draft were accepted (`as_labels`), with `--by-tag` its
    means per tag (`tags`); `drafted`/`drafts_note`: the drafts that wait (None: no gold set to ask); `gold_left`:
    the estimate of the gold still unjudged in the runs' pool with the stopping sentence (core/judge/stopping.py,
    `eval_note`; None: nothing in the pool unjudged, or not estimated)."""

    evals: list[RunEval]
    per_query: bool = False
    as_labels: list[RunEval] | None = None
    tags: list[list[TagSlice]] | None = None
    drafted: dict | None = None
    drafts_note: str | None = None
    gold_left: dict | None = None


def eval_report(evals: list[RunEval], per_query: bool, gold: Gold | None = None,
                as_labels: list[RunEval] | None = None, tags: list[list[TagSlice]] | None = None) -> EvalReport:
    return EvalReport(evals, per_query, as_labels, tags, None if gold is None else drafts_summary(gold),
                      None if gold is None else drafts_note(gold))
