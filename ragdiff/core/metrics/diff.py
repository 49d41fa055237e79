"""Comparing two evaluated runs query by query: per-metric change with a paired test, flips at k, how far the
ranked lists moved, and which k (the reranker's opportunity).

`compare(ev_a, ev_b, gold=gold)` returns a `Diff`; the CLI (`ragdiff diff`) and the review app both read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import polars as pl

from ragdiff.core import fmt
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.specs import (EvalSettings, Metric, PreparedRun, RunEval, aligned_frame, bound_window, can_count,
                                  counted_values, evaluate, per_query_values, prepare, promote, rows_of_pairs,
                                  unjudged_in, window_counts)
from ragdiff.core.metrics.stats import DEFAULT_FLIPS, DEFAULT_SEED, EXACT_MAX, PairedTest, bootstrap_ci, detectable_jobs, paired_tests
from ragdiff.core import words

MIN_QUERIES_FOR_VERDICT = 30
POWER = 0.8  # the detectable change: found by the test 80% of the time  # the lesson: under about thirty queries, read the results by hand
JUDGED_GAP = 0.10  # judged@k gap between the runs above which the less-judged run's scores are understated
RBO_P = 0.9


def paired(ev_a: RunEval, ev_b: RunEval, metric: Metric) -> pl.DataFrame:
    """query_id, a, b for one metric over the queries both evaluations scored (gold order)."""
    name = metric.name
    return (
        ev_a.per_query.select("query_id", pl.col(name).alias("a"))
        .join(ev_b.per_query.select("query_id", pl.col(name).alias("b")), on="query_id", how="inner",
              maintain_order="left")
    )


def flips(ev_a: RunEval, ev_b: RunEval, k: int) -> tuple[list[str], list[str]]:
    """(hit→miss, miss→hit) query ids at k: a hit is any relevant chunk in the top k (recall@k)."""
    pairs = paired(ev_a, ev_b, Metric("recall", k))
    return flips_of(pairs.get_column("query_id").to_numpy(), pairs.get_column("a").to_numpy(),
                    pairs.get_column("b").to_numpy())


def flips_of(ids: np.ndarray, recall_a: np.ndarray, recall_b: np.ndarray) -> tuple[list[str], list[str]]:
    """The flips' rule on arrays: `ids` (the queries both runs scored, in A's order) and their recall@k in A
    and in B; hit→miss where A's is > 0 and B's is 0, miss→hit the other way (`flips`; the review reads its
    view at k through it too)."""
    hit_to_miss = (recall_a > 0) & (recall_b == 0)
    miss_to_hit = (recall_a == 0) & (recall_b > 0)
    return ids[hit_to_miss].tolist(), ids[miss_to_hit].tolist()


_flip_ids = flips  # `compare` takes a keyword named flips (the number of sign flips)


# --------------------------------------------------------------------------------------------------------------
# the result


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
class Overlap:
    """How far the ranked lists moved between A and B."""

    k: int
    depth: int
    p: float
    per_query: pl.DataFrame  # query_id, jaccard (top k), rbo (top depth, extrapolated), rbo_k (top k)
    mean_jaccard: float
    mean_rbo: float  # RBO of the top depth
    mean_rbo_k: float = math.nan  # RBO of the top k
    weight_top_k: float = math.nan  # the share of RBO's weight the top k carry (rbo_weight)


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


# --------------------------------------------------------------------------------------------------------------
# what a change is worth, in words


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


# --------------------------------------------------------------------------------------------------------------
# compare


def compare(ev_a: RunEval, ev_b: RunEval, *, gold: Gold | None = None, flips: int = DEFAULT_FLIPS,
            seed: int = DEFAULT_SEED, alpha: float = 0.05, exact_max: int = EXACT_MAX,
            detectable: bool = True, threads: int = 1) -> Diff:
    """A against B on the same gold set and settings.

    `detectable=False` leaves each metric's smallest detectable change nan (for a caller that shows none of it:
    the review header); every other number is the same.

    `threads` > 1 computes the bootstrap intervals and the detectable changes in that many threads beside the
    rest (numpy and polars release the GIL): the same numbers. Only for a caller whose BLAS runs one thread per
    call (the CLI sees to it): OpenBLAS's own threads spin after each product and starve the others.

    `gold` gives query text for the flips, regression-marked queries, first-relevant ranks, and any metric the
    evaluations lack that the report needs (recall@k, recall@depth); without it those parts are thinner.
    Every test is seeded: the same inputs give the same numbers.
    """
    settings = ev_a.settings
    if ev_b.settings != settings:
        raise ValueError(f"the runs were evaluated with different settings: {ev_a.settings} vs {ev_b.settings}")
    k, depth = settings.k, settings.depth
    names_b = {m.name for m in ev_b.metrics}
    metrics = [m for m in ev_a.metrics if m.name in names_b]
    needed = [Metric("recall", k), Metric("recall", depth)]
    if gold is not None and any(m not in metrics for m in needed):
        extra = [m for m in needed if m not in metrics]
        ev_a = _with_metrics(ev_a, gold, extra)
        ev_b = _with_metrics(ev_b, gold, extra)
    have = {m.name for m in ev_a.metrics} & {m.name for m in ev_b.metrics}

    scored_b = set(ev_b.queries.scored)
    scored = [q for q in ev_a.queries.scored if q in scored_b]
    by_hand = len(scored) < MIN_QUERIES_FOR_VERDICT

    text = _query_text(ev_a, ev_b, gold, scored)
    if threads <= 1:
        overlap = _overlap(ev_a, ev_b, gold, scored, k, depth)
        diffs, finish = _metric_diffs(ev_a, ev_b, metrics, flips, seed, alpha, exact_max, by_hand, detectable)
        return _compared(ev_a, ev_b, gold, settings, scored, text, diffs, finish, have, by_hand, flips, seed,
                         alpha, exact_max, overlap)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ragdiff-compare") as pool:
        # the overlap while the pool draws the bootstrap intervals (a few MB of buffers), where it ran alone
        # before the pool started (~70 ms at depth 1000); still not beside the detectable changes: its polars
        # buffers (both runs' top RBO_RANKS hashed and joined) and theirs were the depth-1000 peak together
        found: dict[str, Overlap | None] = {}
        diffs, finish = _metric_diffs(ev_a, ev_b, metrics, flips, seed, alpha, exact_max, by_hand, detectable,
                                      pool=pool,
                                      meanwhile=lambda: found.update(overlap=_overlap(ev_a, ev_b, gold, scored, k,
                                                                                      depth)))
        return _compared(ev_a, ev_b, gold, settings, scored, text, diffs, finish, have, by_hand, flips, seed,
                         alpha, exact_max, found["overlap"])


def _compared(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, settings: EvalSettings, scored: list[str],
              text: dict[str, str | None], diffs: list[MetricDiff], finish: Callable[[], None], have: set[str],
              by_hand: bool, flips: int, seed: int, alpha: float, exact_max: int, overlap: Overlap | None) -> Diff:
    """The rest of `compare`, while the metrics' intervals and detectable changes are computed (`finish`)."""
    k, depth = settings.k, settings.depth

    first_a = _first_relevant(ev_a, gold) if gold is not None else {}
    first_b = _first_relevant(ev_b, gold) if gold is not None else {}

    def flip(qid: str, direction: str) -> Flip:
        return Flip(qid, text.get(qid), direction, first_a.get(qid), first_b.get(qid))

    h2m: list[Flip] = []
    m2h: list[Flip] = []
    recall_k = Metric("recall", k)
    if recall_k.name in have:
        lost, gained = _flip_ids(ev_a, ev_b, k)
        h2m = [flip(q, "hit_to_miss") for q in lost]
        m2h = [flip(q, "miss_to_hit") for q in gained]

    opportunity: dict[str, Opportunity] = {}
    recall_d = Metric("recall", depth)
    if recall_k.name in have and recall_d.name in have:
        for side, ev in (("a", ev_a), ("b", ev_b)):
            opportunity[side] = _opportunity(ev, k, depth)

    regressions: list[Flip] = []
    if gold is not None and recall_k.name in have:
        marked = gold.queries.filter(pl.col("regression")).get_column("query_id").to_list()
        b_hits = dict(ev_b.per_query.select("query_id", recall_k.name).iter_rows())
        for qid in marked:
            if qid in b_hits and not (b_hits[qid] or 0) > 0:
                regressions.append(flip(qid, "regression"))

    if gold is not None and ev_a.run.frame.height and ev_b.run.frame.height:
        unjudged_checks(ev_a, ev_b, gold, diffs, scored, flips=flips, seed=seed, alpha=alpha, exact_max=exact_max,
                        by_hand=by_hand)

    finish()
    return Diff(
        a_name=ev_a.run.name, b_name=ev_b.run.name, settings=settings, scored=scored,
        unanswerable=list(ev_a.queries.unanswerable), metrics=diffs, hit_to_miss=h2m, miss_to_hit=m2h,
        overlap=overlap, opportunity=opportunity,
        judged_warning=_judged_warning(ev_a, ev_b, k), regressions=regressions, alpha=alpha, flips=flips,
        seed=seed, query_text=text,
    )


def unjudged_checks(ev_a: RunEval, ev_b: RunEval, gold: Gold, diffs: list[MetricDiff], scored: list[str], *,
                    flips: int, seed: int, alpha: float, exact_max: int, by_hand: bool) -> None:
    """Set `MetricDiff.unjudged` for every quality metric: each run's upper bound (from `evaluate(...,
    bounds=True)`), and — if the lower run's unjudged chunks in the top k were relevant, both runs rescored on
    that gold set over the same queries — the change, its p-value and verdict, and whether the verdict flips."""
    settings = ev_a.settings
    order = pl.DataFrame({"query_id": scored}, schema={"query_id": pl.String})
    cases: dict[tuple[str, int], list[MetricDiff]] = {}
    for md in diffs:
        if not md.metric.spec.quality or md.n == 0:
            continue
        window = bound_window(md.metric, settings)
        ba, bb = ev_a.bounds.get(md.name), ev_b.bounds.get(md.name)
        side = "b" if md.delta < 0 else "a" if md.delta > 0 else None
        md.unjudged = UnjudgedCheck(window, ba.value if ba else None, ba.unjudged if ba else None,
                                    bb.value if bb else None, bb.unjudged if bb else None, side)
        if side is not None:
            cases.setdefault((side, window), []).append(md)
    prepared = {"a": _prepared(ev_a, gold), "b": _prepared(ev_b, gold)} if cases else {}
    evs = {"a": ev_a, "b": ev_b}
    for (side, window), group in cases.items():
        metrics = list(dict.fromkeys(md.metric for md in group))
        other = "b" if side == "a" else "a"
        low, high = prepared[side], prepared[other]
        # recall, recall_frac and precision are counted when both runs allow it (as in metrics.upper_bounds):
        # the lower run's unjudged rows in the window need not be listed for them
        counting = can_count(low, settings) and can_count(high, settings)
        by_count = [m for m in metrics if counting and m.spec.counted]
        rest = [m for m in metrics if m not in by_count]
        counts = (window_counts(low, window, settings).join(order, on="query_id", how="semi")
                  if by_count else None)
        chunks = unjudged_in(low, window).join(order, on="query_id", how="semi") if rest else None
        count = chunks.height if chunks is not None else int(counts.get_column("unjudged").sum())
        if count == 0:
            for md in group:
                md.unjudged.sentence = _unjudged_sentence(md, side, 0)
            continue
        # both runs as if evaluated on `with_relevant(gold, chunks)` (tests/test_diff.py holds it to evaluating
        # on that gold set). The lower run's values are its upper bound's (the same promotion, and a query's
        # values do not depend on other queries' chunks); the other run's: its rows of those chunks promoted, or
        # counted
        values = {side: _bound_values(evs[side], low, metrics, order)}
        if values[side] is None:
            values[side] = _rescored(low, by_count, rest, settings, order, window, chunks, counts,
                                     counts.get_column("unjudged") if by_count else None, None)
        found = _found_in(high, low, counts, by_count, chunks, gold, settings, window, order) if by_count else None
        values[other] = _rescored(high, by_count, rest, settings, order, window,
                                  _rows_of(evs[other], gold, chunks) if rest else None, counts, found, chunks)
        again = [values["a"], values["b"]]
        pairs = again[0].join(again[1], on="query_id", how="inner", suffix="_b", maintain_order="left")
        matrix = np.vstack([(pairs[f"{m.name}_b"] - pairs[m.name]).fill_null(0.0).to_numpy() for m in metrics])
        # only the p-value and the mean are read here: no bootstrap interval
        tests = dict(zip(metrics, paired_tests(matrix, flips=flips, seed=seed, exact_max=exact_max, interval=False)))
        rows_of = dict(zip(metrics, matrix))
        for md in group:
            row, test = rows_of[md.metric], tests[md.metric]
            check = md.unjudged
            check.if_a = float(again[0][md.name].mean())
            check.if_b = float(again[1][md.name].mean())
            check.p_value = test.p_value
            if by_hand:
                check.verdict = "by hand"
                check.could_flip = (check.if_b - check.if_a) * md.delta < 0
            else:
                check.verdict = ("same" if not np.any(row) else ("gain" if test.mean > 0 else "drop")
                                 if test.p_value < alpha else "noise")
                same = {"same": "noise"}  # no change and no real change: either way, not a verdict
                check.could_flip = same.get(check.verdict, check.verdict) != same.get(md.verdict, md.verdict)
            check.sentence = _unjudged_sentence(md, side, count)


def _unjudged_sentence(md: MetricDiff, side: str, count: int) -> str:
    """'if B's 21 unjudged chunks in the top 5 were relevant: recall@5 A 0.851 B 0.940, p = 0.01, a real gain —
    the verdict could flip'."""
    c = md.unjudged
    run = side.upper()
    if count == 0:
        return f"{md.name}: {run} has no unjudged chunk in its top {c.window}: the verdict stands"
    p = fmt.number(c.p_value, 'p')
    p = f"p {p}" if p.startswith("<") else f"p = {p}"
    words = "no verdict under 30 queries" if c.verdict == "by hand" else VERDICT_WORDS.get(c.verdict, c.verdict)
    tail = ("the verdict could flip" if c.could_flip and c.verdict != "by hand" else
            "the order could flip" if c.could_flip else "the verdict stands")
    return (f"if {run}'s {count} unjudged chunks in the top {c.window} were relevant: {md.name} A {fmt.number(c.if_a)} "
            f"B {fmt.number(c.if_b)}, {p}, {words} — {tail}")


def _prepared(ev: RunEval, gold: Gold) -> PreparedRun:
    """The prepared run the evaluation was scored from when it was prepared against this gold set, else again."""
    kept = ev.prepared
    if kept is not None and kept.gold is gold and kept.run is ev.run:
        return kept
    return prepare(ev.run, gold, ev.settings)


def _bound_values(ev: RunEval, prepared: PreparedRun, metrics: list[Metric], order: pl.DataFrame):
    """query_id and each metric's upper-bound values over the queries in `order`, when the evaluation kept them
    for this prepared run (else None)."""
    bounds = [ev.bounds.get(m.name) for m in metrics]
    if ev.prepared is not prepared or any(b is None or b.per_query is None for b in bounds):
        return None
    frame = pl.DataFrame([prepared.scored.get_column("query_id"), *[b.per_query.alias(m.name)
                                                                   for m, b in zip(metrics, bounds)]])
    return frame.join(order, on="query_id", how="semi")


def _rescored(prepared: PreparedRun, by_count: list[Metric], rest: list[Metric], settings: EvalSettings,
              order: pl.DataFrame, window: int, rows: pl.DataFrame | None, counts: pl.DataFrame | None,
              found: pl.Series | None, keys: pl.DataFrame | None) -> pl.DataFrame:
    """query_id and each metric over the queries in `order` with the lower run's unjudged chunks in the window
    relevant: `rest` from this run's `rows` of them promoted (`keys`: all of them), `by_count` counted — `found`
    of them among this run's top `window` (per query of `counts`, the lower run's), one relevant chunk more for
    each of them labelled (`counts`' `unjudged`)."""
    parts = []
    if by_count:
        own = window_counts(prepared, window, settings).join(order, on="query_id", how="semi")
        added = counts.select("query_id", pl.col("unjudged").alias("added"), found.alias("found"))
        own = own.join(added, on="query_id", how="left", maintain_order="left").select(
            "query_id", hits=pl.col("hits") + pl.col("found"), num_rel=pl.col("num_rel") + pl.col("added"))
        parts.append(counted_values(own, by_count, window))
    if rest:
        promoted = promote(prepared, rows, settings, keys=keys)
        parts.append(per_query_values(promoted, rest, settings).join(order, on="query_id", how="semi"))
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on="query_id", how="left", maintain_order="left")
    return out


def _found_in(high: PreparedRun, low: PreparedRun, counts: pl.DataFrame, by_count: list[Metric],
              chunks: pl.DataFrame | None, gold: Gold, settings: EvalSettings, window: int,
              order: pl.DataFrame) -> pl.Series:
    """Per query of `counts` (the lower run's window counts): how many of the lower run's unjudged chunks in the
    top `window` the other run has in its own top `window`. When every counted metric is recall (a hit or not),
    only the queries where the other run has no hit yet are looked up (the others are hits either way: 0)."""
    need = counts.filter(pl.col("unjudged") > 0)
    if all(m.family == "recall" for m in by_count):
        hits = window_counts(high, window, settings).filter(pl.col("hits") == 0)
        need = need.join(hits, on="query_id", how="semi")
    zero = pl.Series("found", [0] * counts.height, dtype=pl.Int64)
    if need.height == 0:
        return zero
    queries = need.select("query_id")
    keys = (chunks.join(queries, on="query_id", how="semi") if chunks is not None
            else unjudged_in(low, window, queries))
    wanted = queries.get_column("query_id").implode()
    # the rank first (a number): the query ids of the top window alone are looked up, not a million of them
    theirs = (aligned_frame(high.run, gold).filter(pl.col("rank") <= window).filter(pl.col("query_id").is_in(wanted))
              .select("query_id", "chunk_id")
              .join(keys.select("query_id", "chunk_id"), on=["query_id", "chunk_id"], how="semi")
              .group_by("query_id").agg(found=pl.len().cast(pl.Int64)))
    return (counts.select("query_id").join(theirs, on="query_id", how="left", maintain_order="left")
            .get_column("found").fill_null(0))


def _rows_of(ev: RunEval, gold: Gold, chunks: pl.DataFrame) -> pl.DataFrame:
    """query_id, chunk_id, rank of the run's rows of these (query, chunk) pairs, at any rank."""
    return rows_of_pairs(aligned_frame(ev.run, gold).select("query_id", "chunk_id", "rank"),
                         chunks.select("query_id", "chunk_id"))


def _with_metrics(ev: RunEval, gold: Gold, extra: list[Metric]) -> RunEval:
    more = evaluate(ev.run, gold, ev.settings, extra, bounds=bool(ev.bounds))
    per_query = ev.per_query.join(more.per_query, on="query_id", how="left", maintain_order="left")
    return RunEval(run=ev.run, metrics=list(ev.metrics) + extra, per_query=per_query, queries=ev.queries,
                   settings=ev.settings, means={**ev.means, **more.means}, bounds={**ev.bounds, **more.bounds},
                   prepared=ev.prepared)


def _query_text(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, scored: list[str]) -> dict[str, str | None]:
    text: dict[str, str | None] = {}
    if gold is not None:
        text = {q: t for q, t in gold.queries.select("query_id", "text").iter_rows()}
    for ev in (ev_b, ev_a):
        for qid, t in ev.run.query_text.items():
            if not text.get(qid):
                text[qid] = t
    return text


def _metric_diffs(ev_a: RunEval, ev_b: RunEval, metrics: list[Metric], flips: int, seed: int, alpha: float,
                  exact_max: int, by_hand: bool, detectable_change_too: bool = True,
                  pool: Executor | None = None,
                  meanwhile: Callable[[], None] | None = None) -> tuple[list[MetricDiff], Callable[[], None]]:
    """Every metric's comparison; metrics paired over the same queries share one batch of random draws.

    The p-values (and so the verdicts) are set here; the bootstrap intervals and the smallest detectable
    changes are jobs handed to `pool` (numpy releases the GIL, so they run beside the caller's next steps):
    call the returned function to wait for them and set them. Without a pool they run here. `meanwhile` is
    called once the intervals are handed out and before the detectable changes are."""
    pairs = {m: paired(ev_a, ev_b, m).drop_nulls(["a", "b"]).with_columns(delta=pl.col("b") - pl.col("a"))
             for m in metrics}
    groups: dict[tuple[str, ...], list[Metric]] = {}
    for m in metrics:
        groups.setdefault(tuple(pairs[m].get_column("query_id").to_list()), []).append(m)
    submit = pool.submit if pool is not None else _run_now
    tests = {}
    intervals: list[tuple[list[Metric], Future]] = []
    detectable: list[tuple[Metric, Future]] = []
    matrices = [(group, np.vstack([pairs[m].get_column("delta").to_numpy() for m in group]))
                for group in groups.values()]
    for group, matrix in matrices:
        # the bootstrap first: the longest job (~0.1 s CPU at 1,000 queries), so that the short detectable-change
        # jobs fill the other thread and neither waits alone at the end
        if matrix.shape[1]:
            intervals.append((group, submit(bootstrap_ci, matrix, flips, seed)))
    if meanwhile is not None:
        meanwhile()
    for group, matrix in matrices:
        if detectable_change_too:
            for row, job in detectable_jobs(matrix, alpha=alpha, power=POWER, seed=seed):
                detectable.append((group[row], submit(job)))
        tests.update(zip(group, paired_tests(matrix, flips=flips, seed=seed, exact_max=exact_max, interval=False)))
    diffs = [_metric_diff(ev_a, ev_b, m, pairs[m], tests[m], alpha, by_hand) for m in metrics]
    by_metric = {md.metric: md for md in diffs}

    def finish() -> None:
        for group, future in intervals:
            for m, ci in zip(group, future.result()):
                by_metric[m].ci95 = ci
        for m, future in detectable:
            by_metric[m].detectable = float(future.result())

    return diffs, finish


def _run_now(function, *args) -> Future:
    future: Future = Future()
    future.set_result(function(*args))
    return future


def _metric_diff(ev_a: RunEval, ev_b: RunEval, metric: Metric, pairs: pl.DataFrame, test: PairedTest,
                 alpha: float, by_hand: bool) -> MetricDiff:
    a = ev_a.means.get(metric.name, math.nan)
    b = ev_b.means.get(metric.name, math.nan)
    delta = b - a
    n = test.n
    worth = float(pairs.get_column("delta").sum()) if n else 0.0
    md = MetricDiff(metric=metric, a=a, b=b, delta=delta, n=n, queries_worth=worth, p_value=test.p_value,
                    ci95=test.ci95, method=test.method, verdict="", sentence="", per_query=pairs)
    decide(md, alpha, by_hand)
    return md


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


def _first_relevant(ev: RunEval, gold: Gold) -> dict[str, int]:
    """Rank of the first relevant chunk per query (queries without one are absent).

    It is 1 / mrr (mrr has no cutoff); only when an evaluation lacks mrr are the runs joined again.
    """
    if "mrr" in ev.per_query.columns:
        found = ev.per_query.filter(pl.col("mrr") > 0)
        return dict(zip(found["query_id"], (1.0 / found["mrr"]).round().cast(pl.Int64)))
    qrels = gold.qrels(ev.settings.level).filter(pl.col("grade") >= ev.settings.threshold)
    frame = aligned_frame(ev.run, gold).select("query_id", "chunk_id", "rank")
    hits = frame.join(qrels.select("query_id", "chunk_id"), on=["query_id", "chunk_id"], how="semi")
    return dict(hits.group_by("query_id").agg(pl.col("rank").min()).iter_rows())


def _opportunity(ev: RunEval, k: int, depth: int) -> Opportunity:
    rk, rd = Metric("recall", k).name, Metric("recall", depth).name
    queries = (ev.per_query.filter((pl.col(rd) > 0) & (pl.col(rk) == 0)).get_column("query_id").to_list()
               if depth > k else [])
    return Opportunity(run=ev.run.name, k=k, depth=depth, recall_k=ev.means.get(rk, math.nan),
                       recall_depth=ev.means.get(rd, math.nan), queries=queries)


def _judged_warning(ev_a: RunEval, ev_b: RunEval, k: int) -> str | None:
    name = Metric("judged", k).name
    a, b = ev_a.means.get(name), ev_b.means.get(name)
    if a is None or b is None or a != a or b != b or abs(a - b) <= JUDGED_GAP:
        return None
    low, high = (ev_a.run.name, ev_b.run.name) if a < b else (ev_b.run.name, ev_a.run.name)
    la, lb = (a, b) if a < b else (b, a)
    return (f"{name}: {low} {la:.0%} vs {high} {lb:.0%} — {low}'s top {k} is much less judged, so its scores are "
            f"understated (unjudged chunks count as misses). Review its unjudged chunks before trusting the change.")


# --------------------------------------------------------------------------------------------------------------
# overlap of the ranked lists


def rbo(s: list[str], t: list[str], p: float = RBO_P) -> float:
    """Extrapolated rank-biased overlap (Webber, Moffat & Zobel 2010, eq. 32), uneven lengths allowed.

    1.0 for identical lists, 0.0 for disjoint ones; both empty counts as identical.
    """
    if not s and not t:
        return 1.0
    if not s or not t:
        return 0.0
    if len(s) > len(t):
        s, t = t, s  # s is the shorter
    short, long_ = len(s), len(t)
    seen_s: set[str] = set()
    seen_t: set[str] = set()
    overlap = 0
    x = [0] * (long_ + 1)  # x[d]: overlap of the prefixes at depth d
    for d in range(1, long_ + 1):
        item_t = t[d - 1]
        if d <= short:
            item_s = s[d - 1]
            if item_s == item_t:
                overlap += 1
            else:
                overlap += (item_s in seen_t) + (item_t in seen_s)
            seen_s.add(item_s)
        else:
            overlap += item_t in seen_s
        seen_t.add(item_t)
        x[d] = overlap
    x_s, x_l = x[short], x[long_]
    total = sum(x[d] / d * p ** d for d in range(1, long_ + 1))
    total += sum(x_s * (d - short) / (short * d) * p ** d for d in range(short + 1, long_ + 1))
    return float((1 - p) / p * total + ((x_l - x_s) / long_ + x_s / short) * p ** long_)


def jaccard(s: list[str], t: list[str]) -> float:
    a, b = set(s), set(t)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def rbo_weight(d: int, p: float = RBO_P) -> float:
    """The share of RBO's weight that the top d ranks carry (Webber, Moffat & Zobel 2010, eq. 21): at p = 0.9
    the top 10 carry 86%, so a list's order past a few dozen ranks barely moves it."""
    if d < 1:
        return 0.0
    head = sum(p ** i / i for i in range(1, d))
    return 1 - p ** (d - 1) + (1 - p) / p * d * (math.log(1 / (1 - p)) - head)


# Ranks past this weigh less than 1e-18 in RBO at RBO_P (p^d < 1e-18): RBO of lists cut here equals RBO of the
# whole lists to within 3e-18 (each term past the cut is below p^d), so the overlap joins no deeper rows.
RBO_RANKS = math.ceil(math.log(1e-18) / math.log(RBO_P))


_CHUNK_SEED = 0x5EED
_QUERY_MIX = np.uint64(0x9E3779B97F4A7C15)


def _chunk_hashes(chunks: pl.Expr) -> pl.Expr:
    """The 64-bit hash the overlap keys a chunk id by (a test swaps it for one that collides)."""
    return chunks.hash(seed=_CHUNK_SEED)


class _Ranked(NamedTuple):
    """A run's rows ranked <= the overlap's cut in the scored queries (`_ranked`)."""

    keys: np.ndarray  # u64: the chunk id's hash mixed with the query's position
    chunks: pl.Series  # the run's chunk id column, all rows
    rows: np.ndarray  # the rows' numbers in it
    query: np.ndarray  # the query's position among the scored ones
    rank: np.ndarray
    lengths: np.ndarray  # per scored query: its list's length cut at the cut


def _ranked(ev: RunEval, gold: Gold | None, index: dict[str, int], cut: int) -> _Ranked:
    """A run's rows ranked <= cut in the scored queries, keyed for `_common`.

    The chunk ids are hashed as they are filtered (at depth 1000, 394 of every 1,000 rows) and no string is
    gathered: `_common` checks only the joined pairs against the strings. A query's rows are one stretch
    (core/io/runs.py orders them), so the query of every row comes from one run-length pass over the query column,
    not a join on strings."""
    frame = aligned_frame(ev.run, gold) if gold is not None else ev.run.frame
    top = frame.get_column("rank").to_numpy() <= cut
    stretches = frame.get_column("query_id").rle().struct.unnest()
    where = np.array([index.get(q, -1) for q in stretches.get_column("value").to_list()], dtype=np.int64)
    lengths = stretches.get_column("len").to_numpy().astype(np.int64)
    kept = np.add.reduceat(top, np.cumsum(lengths) - lengths, dtype=np.int64) if len(lengths) else lengths
    query = np.repeat(where, kept)  # of the rows ranked <= cut, in order
    hashes = frame.select(_chunk_hashes(pl.col("chunk_id").filter(pl.col("rank") <= cut))).to_series().to_numpy()
    keep = np.flatnonzero(query >= 0)
    query, rows = query[keep], np.flatnonzero(top)[keep]
    return _Ranked(keys=hashes[keep] ^ (query.astype(np.uint64) * _QUERY_MIX), chunks=frame.get_column("chunk_id"),
                   rows=rows, query=query, rank=frame.get_column("rank").to_numpy()[rows].astype(np.int64),
                   lengths=np.bincount(query, minlength=len(index)))


def _common(a: _Ranked, b: _Ranked) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chunks both runs returned for the same query: (query position, rank in A, rank in B).

    Joined on the 64-bit keys (integers join several times faster than strings); a pair whose query or chunk id
    differs despite an equal key (a hash collision) is dropped after the join, its two chunk ids compared as
    strings, so the result is exactly the join on (query, chunk id)."""
    pairs = pl.DataFrame({"key": a.keys, "i": np.arange(len(a.keys), dtype=np.int64)}).join(
        pl.DataFrame({"key": b.keys, "j": np.arange(len(b.keys), dtype=np.int64)}), on="key", how="inner")
    i, j = pairs.get_column("i").to_numpy(), pairs.get_column("j").to_numpy()
    same = (a.query[i] == b.query[j]) & (a.chunks.gather(a.rows[i]) == b.chunks.gather(b.rows[j])).to_numpy()
    i, j = i[same], j[same]
    return a.query[i], a.rank[i], b.rank[j]


def _rbo_all(n: int, query: np.ndarray, deeper: np.ndarray, len_a: np.ndarray, len_b: np.ndarray,
             p: float = RBO_P) -> np.ndarray:
    """Extrapolated RBO (Webber, Moffat & Zobel 2010, eq. 32, uneven lengths allowed) of n pairs of lists from
    the chunks they share: one (query, deeper of its two ranks) per shared chunk.

    A shared chunk adds 1 to the overlap X_d at every depth d >= its deeper rank, so sum_d X_d p^d/d over
    d <= l is, per chunk, a suffix sum of the weights p^d/d: O(shared chunks), not O(queries x depth)."""
    short, long_ = np.minimum(len_a, len_b), np.maximum(len_a, len_b)
    width = int(long_.max(initial=0))
    d = np.arange(width + 2, dtype=np.float64)
    power = np.zeros(width + 2)
    power[1:width + 1] = p ** d[1:width + 1]
    weight = np.zeros(width + 2)
    weight[1:width + 1] = power[1:width + 1] / d[1:width + 1]
    after = np.cumsum(weight[::-1])[::-1]  # after[d] = sum of weight[d..width]; after[width + 1] = 0
    power_after = np.cumsum(power[::-1])[::-1]
    # sum over d <= l of X_d p^d/d: each shared chunk counts from its deeper rank to l
    total = np.bincount(query, weights=after[deeper], minlength=n) - np.bincount(query, minlength=n) * after[long_ + 1]
    x_s = np.bincount(query[deeper <= short[query]], minlength=n).astype(np.float64)
    x_l = np.bincount(query, minlength=n).astype(np.float64)
    safe_short = np.maximum(short, 1)
    # past the shorter list, X_s (d - s)/(s d) p^d for s < d <= l: sum of p^d/s minus sum of p^d/d
    tail = ((power_after[short + 1] - power_after[long_ + 1]) / safe_short - (after[short + 1] - after[long_ + 1]))
    total = total + x_s * tail
    ends = ((x_l - x_s) / np.maximum(long_, 1) + x_s / safe_short) * p ** long_
    rb = (1 - p) / p * total + ends
    return np.where(long_ == 0, 1.0, np.where(short == 0, 0.0, rb))


def _overlap(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, scored: list[str], k: int,
             depth: int) -> Overlap | None:
    """Jaccard of the top k, RBO of the top k and extrapolated RBO of the top depth, for every query at once.

    The same numbers as `jaccard` and `rbo` above (tests/test_diff.py holds them to it, to 1e-12), from one
    join of the two ranked lists cut at min(depth, RBO_RANKS): ranks past RBO_RANKS weigh under 1e-18 in RBO.
    """
    if not scored:
        return None
    n = len(scored)
    index = {q: i for i, q in enumerate(scored)}
    cut = max(min(depth, RBO_RANKS), k)
    a = _ranked(ev_a, gold, index, cut)
    b = _ranked(ev_b, gold, index, cut)
    query, rank_a, rank_b = _common(a, b)
    deeper = np.maximum(rank_a, rank_b)
    len_a, len_b = a.lengths, b.lengths

    # Jaccard and RBO of the top k
    in_k = deeper <= k
    both_k = np.bincount(query[in_k], minlength=n)
    size_a, size_b = np.minimum(len_a, k), np.minimum(len_b, k)
    union = size_a + size_b - both_k
    jac = np.where(union > 0, both_k / np.maximum(union, 1), 1.0)
    rbo_k = _rbo_all(n, query[in_k], deeper[in_k], size_a, size_b)
    # RBO of the top depth (the lists cut at `cut`, which gives the same number)
    rb = _rbo_all(n, query, deeper, np.minimum(len_a, cut), np.minimum(len_b, cut))

    per_query = pl.DataFrame({"query_id": scored, "jaccard": jac, "rbo": rb, "rbo_k": rbo_k},
                             schema={"query_id": pl.String, "jaccard": pl.Float64, "rbo": pl.Float64,
                                     "rbo_k": pl.Float64})
    return Overlap(k=k, depth=depth, p=RBO_P, per_query=per_query, mean_jaccard=float(jac.mean()),
                   mean_rbo=float(rb.mean()), mean_rbo_k=float(rbo_k.mean()), weight_top_k=rbo_weight(k))
