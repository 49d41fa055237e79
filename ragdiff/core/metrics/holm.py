"""Holm's step-down correction, for diffs of several runs against one baseline: every p-value of the
family runs × metrics is adjusted, and each verdict is decided again on the adjusted value."""

from __future__ import annotations

import math

from ragdiff.core.metrics.diff import Diff, decide

HOLM = "Holm"


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: sort ascending, multiply the i-th smallest (0-based) by
    m − i, carry the running maximum, cap at 1. NaN (nothing tested) stays NaN and is not counted in m."""
    tested = [(p, i) for i, p in enumerate(p_values) if p == p]
    m = len(tested)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(tested)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def adjust(diffs: list[Diff]) -> int:
    """Holm across every run × metric of these comparisons with one baseline: each metric's p_adjusted is set
    and its verdict and sentence re-decided on it. Returns the number of tests in the family."""
    cells = [(d, m) for d in diffs for m in d.metrics]
    adjusted = holm([m.p_value for _, m in cells])
    for (d, m), p in zip(cells, adjusted):
        m.p_adjusted = p if p == p else None
        m.adjustment = HOLM if p == p else None
        decide(m, d.alpha, d.by_hand)
    return sum(1 for p in adjusted if p == p)
