"""Evaluation: a run scored against the gold set (`evaluate`, `score`), several runs side by side
(`evaluate_runs`), and what an evaluation holds (`RunEval`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ragdiff.core.io.runs import Run
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.bounds import Bound, rows_for_bounds, upper_bounds
from ragdiff.core.metrics.prepared import PreparedRun, QuerySets, prepare
from ragdiff.core.metrics.scoring import mean_of, per_query_values
from ragdiff.core.metrics.specs import EvalSettings, Metric, default_metrics


@dataclass
class RunEval:
    run: Run
    metrics: list[Metric]
    per_query: pl.DataFrame  # query_id + one Float64 column per metric name, scored queries in gold order
    queries: QuerySets
    settings: EvalSettings
    means: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, Bound] = field(default_factory=dict)  # with `bounds=True`: see `upper_bounds`
    # what the scores were computed from (`score` keeps it): `diff` rescores from it instead of preparing again
    prepared: PreparedRun | None = field(default=None, repr=False, compare=False)


def score(prepared: PreparedRun, settings: EvalSettings, metrics: list[Metric] | None = None,
          bounds: bool = False) -> RunEval:
    """The per-k half of `evaluate`: every metric per scored query, and the means (and, with `bounds`, each
    metric's value if the unjudged chunks in its top k were relevant)."""
    metrics = list(dict.fromkeys(metrics or default_metrics(settings.k, settings.depth)))
    per_query = per_query_values(prepared, metrics, settings)
    means = {m.name: mean_of(per_query.get_column(m.name)) for m in metrics}
    return RunEval(run=prepared.run, metrics=metrics, per_query=per_query, queries=prepared.queries,
                   settings=settings, means=means,
                   bounds=upper_bounds(prepared, metrics, settings) if bounds else {}, prepared=prepared)


def evaluate(run: Run, gold: Gold, settings: EvalSettings, metrics: list[Metric] | None = None,
             bounds: bool = False) -> RunEval:
    metrics = list(dict.fromkeys(metrics or default_metrics(settings.k, settings.depth)))
    return score(prepare(run, gold, settings, unjudged_depth=rows_for_bounds(metrics, settings) if bounds else 0),
                 settings, metrics, bounds)


def evaluate_runs(runs: list[Run], gold: Gold, settings: EvalSettings, metrics: list[Metric] | None = None,
                  bounds: bool = False, threads: int = 2) -> list[RunEval]:
    """`evaluate` of each run, in the runs' order; the runs side by side in up to `threads` threads (polars
    releases the GIL while it works, and an evaluation reads the gold set and its own run only): the same
    numbers as one after the other (tests/test_metrics.py)."""
    def one(run: Run) -> RunEval:
        return evaluate(run, gold, settings, metrics, bounds)

    if threads <= 1 or len(runs) < 2:
        return [one(run) for run in runs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(threads, len(runs)), thread_name_prefix="ragdiff-evaluate") as pool:
        return list(pool.map(one, runs))
