"""The review's header as numbers: per metric A, B, Δ and what Δ is worth in queries, beside each its p-value
and verdict once they are computed (in a worker, or in another process on a big set: `compute_verdicts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ragdiff.core.metrics.diff import MIN_QUERIES_FOR_VERDICT, compare
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.specs import EvalSettings, Metric
from ragdiff.core.io.runs import Run


@dataclass(frozen=True)
class MetricLine:
    name: str  # the core's metric name, e.g. "recall@5"
    label: str  # what the header shows, e.g. "recall@5", "MRR", "nDCG@5"
    a: float
    b: float
    delta: float
    worth: float  # the change in queries: delta × scored queries (exact for recall@k)
    exact: bool  # worth is a whole number of queries (recall@k)
    percent: bool = False  # show as a percentage (judged@k)
    p_value: float | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class Header:
    name_a: str
    name_b: str
    gold_name: str
    queries: int
    scored: int
    unanswerable: int
    k: int
    depth: int
    metrics: list[MetricLine]
    notes: list[str] = field(default_factory=list)
    verdicts_ready: bool = False  # p-values are computed in the background
    by_hand: bool = False  # under 30 scored queries: no verdict, read the flips by hand


def header_of(runs: tuple[Run, Run], evals: tuple[RunEval, RunEval], gold_name: str, queries: int,
              settings: EvalSettings, metrics: list[Metric], flips: tuple[list[str], list[str]],
              verdicts: tuple[dict, bool] | None) -> Header:
    """The header at one k: `flips` are (hit→miss, miss→hit) at k; `verdicts` the p-values of these numbers
    (`compute_verdicts`' result), None while they are computed."""
    eval_a, eval_b = evals
    scored = len(eval_a.queries.scored)
    # "by hand" follows from the count alone: the header knows it before the p-values arrive
    by_verdict, by_hand = verdicts if verdicts is not None else ({}, scored < MIN_QUERIES_FOR_VERDICT)
    lines = []
    for metric in metrics:
        a = eval_a.means.get(metric.name, math.nan)
        b = eval_b.means.get(metric.name, math.nan)
        delta = b - a if not (math.isnan(a) or math.isnan(b)) else math.nan
        exact = metric.spec.counts_queries
        if exact and metric.k == settings.k:
            worth = float(len(flips[1]) - len(flips[0]))
        else:
            worth = delta * scored if not math.isnan(delta) else math.nan
        p_value, verdict = by_verdict.get(metric.name, (None, None))
        lines.append(MetricLine(metric.name, metric.label, a, b, delta, worth, exact,
                                percent=metric.spec.percent, p_value=p_value, verdict=verdict))
    notes = []
    for run, ev in zip(runs, evals):
        if ev.queries.missing_from_run:
            notes.append(f"{run.name} lacks {len(ev.queries.missing_from_run)} gold queries (scored 0)")
        if ev.queries.not_in_gold:
            notes.append(f"{run.name} has {len(ev.queries.not_in_gold)} queries not in the gold set (left out)")
    return Header(
        name_a=runs[0].path.name, name_b=runs[1].path.name, gold_name=gold_name,
        queries=queries, scored=scored, unanswerable=len(eval_a.queries.unanswerable),
        k=settings.k, depth=settings.depth, metrics=lines, notes=notes,
        verdicts_ready=verdicts is not None, by_hand=by_hand,
    )


def compute_verdicts(ev_a: RunEval, ev_b: RunEval) -> tuple[dict[str, tuple[float | None, str]], bool]:
    """Per metric (p-value, verdict words) from `ragdiff.core.metrics.diff.compare`, and whether it is "by hand".

    Slow on big inputs (a seeded sign-flip test per metric): the app runs it in a worker after the header's
    plain numbers are on screen.
    """
    # the header needs only the per-metric tests: hand compare() runs without their ranked lists, so it does
    # not spend seconds (holding the GIL) on the list-overlap statistics the screen does not show
    # nor the smallest detectable change per metric (1,000 resamples each), which the header does not show
    result = compare(without_lists(ev_a), without_lists(ev_b), detectable=False)
    out = {}
    for m in result.metrics:
        p_value = m.p_value if m.p_value == m.p_value else None
        out[m.name] = (p_value, m.short_verdict)
    return out, bool(result.by_hand)


def without_lists(ev: RunEval) -> RunEval:
    """The evaluation without its run's ranked rows (nor the prepared run, which holds them): all compare() needs
    for the tests, and cheap to pickle."""
    run = replace(ev.run, frame=ev.run.frame.clear())
    return replace(ev, run=run, prepared=None)


def quiet_process() -> None:
    """Initializer of the p-value process: it shares the terminal the app draws on, so it must print nothing."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")
