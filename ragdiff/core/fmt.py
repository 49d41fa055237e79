"""Number formats, in one place: every command and report shows a value, a change, a share and a p-value the
same way, by naming a style of the one formatter, `number`. A metric's own way of being shown (a share as a
percentage, a change in points) comes from its spec in `ragdiff.core.metrics.specs.SPECS` (`metric_number`). JSON
documents round every number by one rule (`json_number`)."""

from __future__ import annotations

DASH = "—"  # no value: nothing to score, or nothing paired
JSON_DIGITS = 10  # decimals kept in every --json document: past float noise, short of float repr


def _missing(value) -> bool:
    return value is None or value != value


def _plain(digits: int):
    return lambda value: f"{value:.{digits}f}"


def _signed(digits: int):
    def show(value) -> str:
        if abs(value) < 0.5 * 10 ** -digits:  # a change that rounds to nothing carries no sign
            return f"{0.0:.{digits}f}"
        return f"{value:+.{digits}f}"
    return show


def _p(p) -> str:
    if p < 0.001:
        return "<0.001" if p < 0.0005 else f"{p:.4f}"
    return f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


STYLES = {
    "value": _plain(3),  # 0.847: `ragdiff diff`, history and reports
    "eval": _plain(4),  # 0.8475: `ragdiff eval`, trec_eval's 4 printed decimals
    "short": _plain(2),  # 0.85: overlap means
    "delta": _signed(3),  # +0.040, -0.020, 0.000
    "delta_whole": _signed(0),  # +4, -2, 0: a change in percentage points
    "percent": lambda value: f"{value:.0%}",  # 87%
    "points": lambda value: f"{_signed(0)(value * 100)} pts",  # a change in a share: +4 pts
    "p": _p,  # <0.001, 0.0006, 0.004, 0.01, 0.62
    "estimate": lambda value: f"{value:.0f}" if value >= 9.5 else f"{value:.1f}",  # a count estimated: 34, 2.4
}


def number(value: float | None, style: str = "value") -> str:
    """`value` shown in one of the named STYLES, or — for no value."""
    return DASH if _missing(value) else STYLES[style](value)


# how a share (a spec with `percent`) shows each style of a plain metric
_AS_SHARE = {"value": "percent", "delta": "points"}


def metric_number(metric, value: float | None, style: str = "value") -> str:
    """A metric's value (or change) the way its spec says: judged@k as 94% and a change as +4 pts."""
    return number(value, _AS_SHARE.get(style, style) if metric.spec.percent else style)


def json_number(value):
    """A number in a --json document: a float rounded to JSON_DIGITS, null for no value (None or NaN)."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else round(value, JSON_DIGITS)
