"""Number formats, in one place: every command and report shows a value, a change, a share and a p-value the
same way. A metric's own way of being shown (a share as a percentage, say) comes from its spec in
`ragdiff.core.metrics.SPECS`."""

from __future__ import annotations

DASH = "—"  # no value: nothing to score, or nothing paired
EVAL_DIGITS = 4  # `ragdiff eval`: trec_eval's 4 printed decimals
DIFF_DIGITS = 3  # `ragdiff diff`: values and changes


def _missing(value) -> bool:
    return value is None or value != value


def number(value: float | None, digits: int = DIFF_DIGITS) -> str:
    """0.847 (or — for no value)."""
    return DASH if _missing(value) else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = DIFF_DIGITS) -> str:
    """+0.040, -0.020, 0.000 (a change that rounds to nothing carries no sign)."""
    if _missing(value):
        return DASH
    if abs(value) < 0.5 * 10 ** -digits:
        return f"{0.0:.{digits}f}"
    return f"{value:+.{digits}f}"


def percent(value: float | None) -> str:
    """87% (or —)."""
    return DASH if _missing(value) else f"{value:.0%}"


def p_value(p: float | None) -> str:
    """<0.001, 0.0042, 0.012, 0.62 (or —)."""
    if _missing(p):
        return DASH
    if p < 0.001:
        return "<0.001" if p < 0.0005 else f"{p:.4f}"
    return f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def metric_value(metric, value: float | None, digits: int = DIFF_DIGITS) -> str:
    """A metric's value the way its spec says it is shown: a percentage for judged@k, else a number."""
    return percent(value) if metric.spec.percent else number(value, digits)
