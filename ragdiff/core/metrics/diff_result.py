"""What `compare` (core/metrics/diff.py) finds, and the words it says it in: each metric's change and verdict,
the flips, the reranker's opportunity and the whole `Diff` that the CLI, the report and the review app read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

from ragdiff.core import fmt, words
from ragdiff.core.metrics.overlap import Overlap
from ragdiff.core.metrics.specs import EvalSettings, Metric

MIN_QUERIES_FOR_VERDICT = 30


@dataclass
class MetricDiff:
    """One metric: A, B, the change, what it is worth in queries, and whether it is more than noise."""

    metric: Metric
    a: float  # mean over the queries A was scored on (what `ragdiff eval` prints)
    b: float
    delta: float  # b − a
    n: int  # queries paired for the test (judged@k leaves out queries a run returned nothing for)
    queries_worth: float  # delta × n: for recall@k the net number of queries that flipped
    p_value: float  # paired sign-flip test, two-sided; nan when nothing was paired
    ci95: tuple[float, float]  # bootstrap 95% interval of the mean change
    method: str  # "exact" (all 2^n sign flips), "sign-flip" (sampled) or "none"
    verdict: str  # "gain", "drop", "noise", "same", "by hand" (under 30 queries), "n/a"
    sentence: str  # one line a team can act on: summary + verdict
    per_query: pl.DataFrame  # query_id, a, b, delta (gold order)
    summary: str = ""  # the numbers alone: 'recall@5 +0.040 = +2 of 50 queries, p = 0.62'
    # set when several runs share one baseline: p corrected for every test in the table (Holm), and the
    # verdict and sentence then read it
    unjudged: UnjudgedCheck | None = None  # with a gold set and the runs' lists: see `unjudged_checks`
    detectable: float = math.nan  # smallest change the test finds 80% of the time (either way); nan: no spread
    p_adjusted: float | None = None
    adjustment: str | None = None  # "Holm"

    @property
    def p_decisive(self) -> float:
        """The p-value the verdict reads: the adjusted one when there is one."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def significant(self) -> bool:
        return self.verdict in ("gain", "drop")

    @property
    def noise_words(self) -> str:
        """'with 67 queries, changes under ±0.060 recall@5 (4 queries) are inside the noise'."""
        value = self.detectable
        if self.n == 0:
            return f"{self.name}: no query to compare"
        if value != value:
            return f"{self.name}: no query changed, so there is no noise to measure"
        if math.isinf(value):
            return f"with {self.n} queries, no change of {self.name} can pass the test"
        worth = value * self.n
        if self.metric.spec.percent:
            size = f"±{value * 100:.0f} points of {self.name}"
        else:
            size = f"±{fmt.number(value)} {self.name}"
        if self.metric.spec.counts_queries:
            count = math.ceil(worth - 1e-9)
            queries = f"{count} {'query' if count == 1 else 'queries'}"
        else:
            queries = f"≈{worth:.1f} queries' worth"
        return f"with {self.n} queries, changes under {size} ({queries}) are inside the noise"

    @property
    def short_verdict(self) -> str:
        """For a header line: 'inside the noise', 'a real drop', …"""
        return VERDICT_WORDS.get(self.verdict, self.verdict)

    @property
    def verdict_words(self) -> str:
        """For a report's verdict column: the short verdict, except that judged@k is label coverage, not
        quality, so its words say what a change in coverage means."""
        if not self.metric.spec.quality:
            return JUDGED_VERDICT_WORDS.get(self.verdict, self.short_verdict)
        return self.short_verdict

    @property
    def is_quality_change(self) -> bool:
        """A real gain or drop of a quality metric (what a report highlights)."""
        return self.verdict in ("gain", "drop") and self.metric.spec.quality


@dataclass
class UnjudgedCheck:
    """One metric's unjudged chunks in numbers: each run's upper bound, and whether the verdict could flip if
    the lower run's unjudged chunks in the top `window` were relevant (both runs rescored on that gold set)."""

    window: int
    a_bound: float | None
    a_unjudged: int | None
    b_bound: float | None
    b_unjudged: int | None
    side: str | None  # "a" or "b": the lower run, whose unjudged chunks the check makes relevant
    if_a: float = math.nan  # both means in that case
    if_b: float = math.nan
    p_value: float = math.nan
    verdict: str = ""
    could_flip: bool = False
    sentence: str = ""


VERDICT_WORDS = {
    "gain": "a real gain",
    "drop": "a real drop",
    "noise": "inside the noise",
    "same": "no change",
    "by hand": "too few queries: read these by hand",
    "n/a": "nothing to compare",
}


JUDGED_VERDICT_WORDS = {
    "gain": "B more labelled: A may be understated",
    "drop": "B less labelled: label its chunks",
    "noise": "coverage about the same",
    "same": "coverage the same",
}


@dataclass
class Flip:
    query_id: str
    text: str | None
    direction: str  # "hit_to_miss" or "miss_to_hit"
    a_rank: int | None  # rank of the first relevant chunk in A (None: not retrieved)
    b_rank: int | None


@dataclass
class Opportunity:
    """The reranker's opportunity for one run: gold in the top depth but not in the top k."""

    run: str
    k: int
    depth: int
    recall_k: float
    recall_depth: float
    queries: list[str]  # query ids, gold order

    @property
    def count(self) -> int:
        return len(self.queries)


@dataclass
class Diff:
    a_name: str
    b_name: str
    settings: EvalSettings
    scored: list[str]  # queries both runs were scored on, gold order
    unanswerable: list[str]
    metrics: list[MetricDiff]
    hit_to_miss: list[Flip]
    miss_to_hit: list[Flip]
    overlap: Overlap | None
    opportunity: dict[str, Opportunity]  # "a" / "b"; empty without recall@k and recall@depth
    judged_warning: str | None
    regressions: list[Flip]  # queries the gold file marks `regression: true` that miss at k in B
    alpha: float
    flips: int
    seed: int
    query_text: dict[str, str | None] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.scored)

    @property
    def by_hand(self) -> bool:
        """Under 30 scored queries: no verdict, read the flipped queries by hand."""
        return self.n < MIN_QUERIES_FOR_VERDICT

    def metric(self, name: str) -> MetricDiff | None:
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    @property
    def significant_drops(self) -> list[MetricDiff]:
        """Quality metrics that dropped with p < alpha (judged@k is label coverage, not quality)."""
        return [m for m in self.metrics if m.verdict == "drop" and m.metric.spec.quality]

    def failures(self) -> list[str]:
        """Why `--fail-on-regression` fails: one line per reason; empty when it passes."""
        reasons = [f"regression query {f.query_id}"
                   + (f" ({f.text})" if f.text and f.text != f.query_id else "")
                   + f" misses at k={self.settings.k} in B" for f in self.regressions]
        reasons += [f"{m.name} dropped: {m.sentence}" for m in self.significant_drops]
        return reasons

    def headline(self) -> str:
        """One line for the app's header: each metric's A, B, Δ, query-worth and verdict."""
        parts = []
        for m in self.metrics:
            parts.append(f"{m.name} {fmt.number(m.a)} {fmt.number(m.b)} Δ{fmt.number(m.delta, 'delta')} ({_worth(m)}, "
                         f"p={fmt.number(m.p_value, 'p')} {m.short_verdict})")
        return " · ".join(parts)


def _is_count_metric(metric: Metric) -> bool:
    return metric.spec.counts_queries


def _worth(m: MetricDiff) -> str:
    if m.n == 0:
        return "no queries"
    if _is_count_metric(m.metric):
        count = int(round(m.queries_worth))
        return f"{count:+d} of {words.queries(m.n)}" if count else f"0 of {words.queries(m.n)}"
    possessive = "query's" if m.n == 1 else "queries'"
    return f"≈{m.queries_worth:+.1f} of {m.n} {possessive} worth"


def worth_text(m: MetricDiff) -> str:
    return _worth(m)


def decide(md: MetricDiff, alpha: float, by_hand: bool) -> None:
    """Set the verdict and the sentences from the numbers (again after a p-value adjustment)."""
    if md.n == 0:
        md.verdict = "n/a"
    elif by_hand:
        md.verdict = "by hand"
    elif md.per_query.get_column("delta").abs().max() == 0:
        md.verdict = "same"
    elif md.p_decisive < alpha:
        md.verdict = "gain" if md.per_query.get_column("delta").mean() > 0 else "drop"
    else:
        md.verdict = "noise"
    md.summary, md.sentence = _sentence(md)


def _sentence(m: MetricDiff) -> tuple[str, str]:
    """('recall@5 +0.040 = +2 of 50 queries, p = 0.62', the same + ': inside the noise')."""
    head = _summary(m)
    return head, head + _tail(m)


def _summary(m: MetricDiff) -> str:
    if m.n == 0:
        return f"{m.name}: no query to compare"
    p = fmt.number(m.p_decisive, 'p')
    p = f"p {p}" if p.startswith("<") else f"p = {p}"
    if m.p_adjusted is not None:
        p += f" ({m.adjustment}-adjusted; raw {fmt.number(m.p_value, 'p')})"
    if m.metric.spec.percent:
        return (f"{m.name} A {fmt.number(m.a, 'percent')} B {fmt.number(m.b, 'percent')} "
                f"({fmt.number(m.delta * 100, 'delta_whole')} points), {p}")
    if _is_count_metric(m.metric):
        return f"{m.name} {fmt.number(m.delta, 'delta')} = {_worth(m)}, {p}"
    return f"{m.name} {fmt.number(m.delta, 'delta')} ({_worth(m)}), {p}"


def _tail(m: MetricDiff) -> str:
    if m.n == 0:
        return ""
    if m.verdict == "by hand":
        return f": no verdict under {MIN_QUERIES_FOR_VERDICT} queries — read them by hand"
    if not m.metric.spec.quality:  # label coverage (judged@k): which run's scores may be understated
        return {
            "gain": ": B shows more labelled chunks; A's scores may be understated",
            "drop": ": B shows more unlabelled chunks; its scores may be understated — label them",
            "noise": ": label coverage about the same",
            "same": ": label coverage the same",
        }.get(m.verdict, f": {m.short_verdict}")
    if m.verdict == "same":
        return ": no query changed"
    return f": {m.short_verdict}"
