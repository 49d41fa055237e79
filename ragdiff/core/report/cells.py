"""The phrases and table cells every renderer of the diff document shares (text, Markdown, HTML), so a
sentence or a cell reads the same in each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiff.core import fmt, words
from ragdiff.core.metrics.diff import MIN_QUERIES_FOR_VERDICT, POWER
from ragdiff.core.report.diff_doc import DiffReport, comparisons
from ragdiff.core.words import JUDGED_ONLY_WORDS

if TYPE_CHECKING:
    from ragdiff.core.metrics.specs import Metric


def adjustment_note(doc: dict) -> str | None:
    """The multi-run document's note on Holm's adjustment (None for two runs)."""
    adj = doc.get("p_adjustment")
    return adj["note"] if adj else None


def method_note(c: dict) -> str:
    """How the p-values were computed, in one line."""
    s = c["settings"]
    exact = all(m["test"] == "exact" for m in c["metrics"].values())
    how = "exact over all sign flips" if exact else f"{s['flips']} random sign flips, seed {s['seed']}"
    return f"paired sign-flip test, two-sided, {how}; bootstrap 95% interval; α = {s['alpha']:g}"


def scope_line(c: dict, gold_path: str | None) -> str:
    """'gold.yaml: 67 queries scored (5 unanswerable, left out) · k=5 depth=50'."""
    s, q = c["settings"], c["queries"]
    info = f"{gold_path}: " if gold_path else ""
    info += f"{words.queries(q['scored'])} scored"
    if q["unanswerable"]:
        info += f" ({len(q['unanswerable'])} unanswerable, left out)"
    info += f" · k={s['k']} depth={s['depth']}"
    if s["threshold"] != 1:
        info += f" threshold={s['threshold']}"
    if s["level"] != "gold":
        info += f" level={s['level']}"
    if s["gain"] != "linear":
        info += " · nDCG gain 2^grade-1"
    if s.get("judged_only"):
        info += f" · {JUDGED_ONLY_WORDS}"
    return info


def by_hand_note(c: dict) -> str:
    return (f"Only {words.count(c['queries']['scored'], 'scored query', 'scored queries')} "
            f"(under {MIN_QUERIES_FOR_VERDICT}): no verdict — read "
            "these by hand.")


def cell_value(metric: Metric, value) -> str:
    return fmt.metric_number(metric, value)


def cell_delta(metric: Metric, delta) -> str:
    return fmt.metric_number(metric, delta, "delta")


def cell_p(m: dict) -> str:
    return fmt.number(m.get("p_adjusted", m["p_value"]), "p")


def cell_ci(metric: Metric, m: dict) -> str:
    lo, hi = m["ci95"]
    if metric.spec.percent:
        whole = [fmt.number(end * 100, "delta_whole") for end in (lo, hi)] if lo is not None else None
        return fmt.DASH if whole is None else f"[{whole[0]}, {whole[1]}] pts"
    return f"[{fmt.number(lo, 'delta')}, {fmt.number(hi, 'delta')}]"


def cell_worth(m: dict) -> str:
    """'+1 of 67 queries' -> '+1 of 67' (the column is headed "in queries")."""
    for tail in (" queries' worth", " query's worth", " queries", " query"):
        if m["worth"].endswith(tail):
            return m["worth"][: -len(tail)]
    return m["worth"]


def noise_heading(c: dict) -> str:
    """The heading over each metric's smallest detectable change (the sentences are the document's `noise`)."""
    return (f"Smallest change this set detects (α = {c['settings']['alpha']:g}, power {POWER:g}, from the "
            "per-query differences)")


def overlap_line(ov: dict) -> str:
    """How far the ranked lists moved, in one line (the document's overlap)."""
    return (f"Lists moved (means; 1 = identical, 0 = disjoint): top {ov['k']} Jaccard "
            f"{fmt.number(ov['mean_jaccard'], 'short')}, RBO {fmt.number(ov['mean_rbo_k'], 'short')} · top "
            f"{ov['depth']} RBO {fmt.number(ov['mean_rbo'], 'short')} (p={ov['rbo_p']:g}: the top {ov['k']} carry "
            f"{fmt.number(ov['rbo_weight_top_k'], 'percent')} of its weight)")


def pass_note(report: DiffReport) -> str:
    """What `--fail-on-regression` says when nothing failed."""
    note = "PASS (--fail-on-regression): no regression-marked query misses at k in B"
    if any(c["by_hand"] for c in comparisons(report)):
        return note + f"; under {MIN_QUERIES_FOR_VERDICT} queries, metric drops are not tested"
    return note + f", no metric drops with p < {report.doc['settings']['alpha']:g}"


def first_gold(rank: int | None) -> str:
    return "—" if rank is None else f"#{rank}"


FLIP_HEADINGS = {"hit_to_miss": "hit→miss", "miss_to_hit": "miss→hit"}
FLIP_MARKS = {"hit_to_miss": "✓→✗", "miss_to_hit": "✗→✓", "regression": "✗"}
