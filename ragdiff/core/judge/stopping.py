"""The stopping suggestion beside the gold-left estimate (`ragdiff judge`, `judge --gold-left`, `labels stale
--runs`): what stopping now costs, said with the unjudged bound ragdiff already computes
(core/metrics/specs.py, `upper_bounds`: a metric's value if every unjudged chunk in its top k were relevant).

    about 1 gold expected among the 212 unjudged chunks: stopping here leaves recall@10's bound at 0.934 for
    bm25 (0.881 as judged) and 0.951 for dense (0.902 as judged)
"""

from __future__ import annotations

from ragdiff.core import fmt
from ragdiff.core.io.runs import Run
from ragdiff.core.labels.gold import Gold

STOP_METRIC = "recall@10"  # the sentence's metric: the lesson's first number, at a top-10 pool's depth
POOL_DEPTH = 10  # the pool the estimate is over when none is asked for: each run's top 10, `judge --pool`'s default


def gold_left(runs: list[Run], gold: Gold, depth: int = POOL_DEPTH, threshold: int = 1, per_query: bool = True) -> dict:
    """The gold-left estimate over the runs' top-`depth` pool as the label file stands (`judge --gold-left`'s
    document): the pool's size, judged, gold found, unjudged, the estimate, and with `per_query` each query with
    unjudged chunks (most expected first)."""
    import numpy as np

    from ragdiff.core.judge.pool_order import GoldModel, Pool

    pool = Pool.from_runs(runs, gold, depth, threshold)
    total, expected = GoldModel(pool).gold_left()
    doc = {"pool_size": len(pool), "judged": int(pool.judged.sum()), "gold_found": int(pool.relevant.sum()),
           "unjudged": int((~pool.judged).sum()), "gold_left": round(total, 2),
           "estimator": "GoldModel (core/judge/pool_order.py): the sum of P(gold) over the unjudged pooled chunks"}
    if per_query:
        unjudged = np.bincount(pool.query[~pool.judged], minlength=len(pool.queries))
        found = np.bincount(pool.query[pool.relevant], minlength=len(pool.queries))
        doc["queries"] = sorted(
            ({"query_id": q, "unjudged": int(u), "gold_found": int(f), "gold_left": round(float(e), 2)}
             for q, u, f, e in zip(pool.queries, unjudged, found, expected) if u), key=lambda r: -r["gold_left"])
    return doc


def bounds(runs: list[Run], gold: Gold, metric: str = STOP_METRIC) -> list[tuple[str, float | None, float | None]]:
    """Per run: (name, the metric as judged, its bound if every unjudged chunk in its window were relevant)."""
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings, parse_metric

    chosen = parse_metric(metric)
    settings = EvalSettings(k=chosen.k or 10, depth=max(chosen.k or 10, 50))
    out = []
    for run in runs:
        ev = evaluate(run, gold, settings, [chosen], bounds=True)
        bound = ev.bounds.get(chosen.name)
        value = ev.means.get(chosen.name)
        out.append((run.name, value, value if bound is None else bound.value))
    return out


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
