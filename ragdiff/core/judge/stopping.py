"""The stopping suggestion beside the gold-left estimate (`ragdiff judge`, `judge --gold-left`, `labels stale
--runs`, `eval`'s unjudged notes): what stopping now costs, said with the unjudged bound ragdiff already computes
(core/metrics/specs.py, `upper_bounds`: a metric's value if every unjudged chunk in its top k were relevant).

    about 1 gold expected among the 212 unjudged chunks: stopping here leaves recall@10's bound at 0.934 for
    bm25 (0.881 as judged) and 0.951 for dense (0.902 as judged)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiff.core import fmt
from ragdiff.core.io.runs import Run
from ragdiff.core.labels.gold import Gold

if TYPE_CHECKING:
    from ragdiff.core.metrics.evaluate import RunEval

STOP_METRIC = "recall@10"  # the sentence's metric: the lesson's first number, at a top-10 pool's depth
POOL_DEPTH = 10  # the pool the estimate is over when none is asked for: each run's top 10, `judge --pool`'s default


def gold_left(runs: list[Run], gold: Gold, depth: int = POOL_DEPTH, threshold: int = 1, per_query: bool = True) -> dict:
    """The gold-left estimate over the runs' top-`depth` pool as the label file stands (`judge --gold-left`'s
    document): the pool's size, judged, gold found, unjudged, the estimate, and with `per_query` each query with
    unjudged chunks (most expected first)."""
    import numpy as np

    from ragdiff.core.judge.gold_model import GoldModel
    from ragdiff.core.judge.pool_order import Pool

    pool = Pool.from_runs(runs, gold, depth, threshold)
    total, expected = GoldModel(pool).gold_left()
    doc = {"pool_size": len(pool), "judged": int(pool.judged.sum()), "gold_found": int(pool.relevant.sum()),
           "unjudged": int((~pool.judged).sum()), "gold_left": round(total, 2),
           "estimator": "GoldModel (core/judge/gold_model.py): the sum of P(gold) over the unjudged pooled chunks"}
    if per_query:
        unjudged = np.bincount(pool.query[~pool.judged], minlength=len(pool.queries))
        found = np.bincount(pool.query[pool.relevant], minlength=len(pool.queries))
        doc["queries"] = sorted(
            ({"query_id": q, "unjudged": int(u), "gold_found": int(f), "gold_left": round(float(e), 2)}
             for q, u, f, e in zip(pool.queries, unjudged, found, expected) if u), key=lambda r: -r["gold_left"])
    return doc


def bounds(runs: list[Run], gold: Gold, metric: str = STOP_METRIC,
           evals: list[RunEval] | None = None, threshold: int = 1) -> list[tuple[str, float | None, float | None]]:
    """Per run: (name, the metric as judged, its bound if every unjudged chunk in its window were relevant), at
    `threshold` (the lowest grade that counts as relevant)."""
    # `evals`: the runs' evaluations already made, one per run (`ragdiff eval`'s): a run prepared under the same
    # rules (threshold, level, the unanswerable and judged-only rules: all `prepare` reads of the settings) with
    # rows as deep as the bound's window is scored again from what it prepared, the numbers of preparing again
    # without reading the run a second time (~0.2 s a run at 10,000 queries)
    from ragdiff.core.metrics.bounds import bound_window
    from ragdiff.core.metrics.evaluate import evaluate, score
    from ragdiff.core.metrics.specs import EvalSettings, parse_metric

    chosen = parse_metric(metric)
    settings = EvalSettings(k=chosen.k or 10, depth=max(chosen.k or 10, 50), threshold=threshold)
    rules = (settings.threshold, settings.level, settings.unanswerable_as_zero, settings.judged_only)
    out = []
    for i, run in enumerate(runs):
        made = evals[i] if evals is not None else None
        prepared = None if made is None else made.prepared
        if (prepared is not None and prepared.run is run and prepared.bounds_to >= bound_window(chosen, settings)
                and (made.settings.threshold, made.settings.level, made.settings.unanswerable_as_zero,
                     made.settings.judged_only) == rules):
            ev = score(prepared, settings, [chosen], bounds=True)
        else:
            ev = evaluate(run, gold, settings, [chosen], bounds=True)
        bound = ev.bounds.get(chosen.name)
        value = ev.means.get(chosen.name)
        out.append((run.name, value, value if bound is None else bound.value))
    return out


def eval_note(runs: list[Run], gold: Gold, evals: list[RunEval], per_query: bool = False,
              depth: int = POOL_DEPTH, threshold: int = 1) -> dict | None:
    """`ragdiff eval`'s gold-left note: `gold_left`'s document over the evaluated runs' top `depth` pool (as `judge
    --pool` pools it) with its `pool_depth` and the stopping sentence as `stopping` (`labels stale --runs`'s), its
    per-query rows only with `per_query`; None when nothing in the pool is unjudged. `threshold`: eval's."""
    doc = gold_left(runs, gold, depth, threshold, per_query)
    if not doc["unjudged"]:
        return None
    rows = doc.pop("queries", None)
    per_run = bounds(runs, gold, evals=evals, threshold=threshold)
    note = {"pool_depth": depth, **doc, "stopping": sentence(doc["gold_left"], doc["unjudged"], per_run)}
    if rows is not None:
        note["queries"] = rows
    return note


def sentence(gold_left: float, unjudged: int, per_run: list[tuple[str, float | None, float | None]],
             metric: str = STOP_METRIC) -> str:
    """The suggestion in words (numbers in fmt's styles)."""
    said = f"about {fmt.number(gold_left, 'estimate')} gold expected among the {unjudged} unjudged chunks"
    if not per_run:
        return said
    parts = [f"{fmt.number(bound)} for {name} ({fmt.number(value)} as judged)"
             for name, value, bound in per_run]
    return f"{said}: stopping here leaves {metric}'s bound at " + (
        parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def short(gold_left: float, unjudged: int, per_run: list[tuple[str, float | None, float | None]],
          metric: str = STOP_METRIC) -> str:
    """The suggestion in one status line: about 1 gold in 212 unjudged · stopping here: recall@10 ≤ 0.934 bm25 …"""
    said = f"about {fmt.number(gold_left, 'estimate')} gold in {unjudged} unjudged"
    if not per_run:
        return said
    return f"{said} · stopping here: {metric} ≤ " + " · ".join(f"{fmt.number(bound)} {name}" for name, _, bound in per_run)
