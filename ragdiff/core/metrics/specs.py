"""The metric engine: one table of metric specifications (`SPECS`), per-query values as polars expressions,
means over the scored queries.

Every consumer — eval, diff's verdicts, the review header, history, reports — reads a metric's name, aliases,
per-query expression, whether it counts queries and how it is shown from `SPECS`. Adding a metric is one
`MetricSpec` entry (and its tests).

| name            | definition                                                            | trec_eval    |
| recall@k        | 1 if any relevant chunk is in the top k                              | success_k    |
| recall_frac@k   | relevant in the top k / relevant labelled                            | recall_k     |
| precision@k     | relevant in the top k / k                                            | P_k          |
| mrr, mrr@k      | 1 / rank of the first relevant (whole run, or stopping at k)         | recip_rank   |
| ndcg, ndcg@k    | gain = grade, discount 1/log2(rank+1), ideal from all judged grades  | ndcg, ndcg_cut_k |
| judged@k        | judged share of the top min(k, returned); no value if none returned | 1 - unj_k    |
| map, map@k      | precision at each relevant chunk's rank, summed, / relevant labelled | map, map_cut_k |
| rprec           | relevant in the top R / R, R = relevant labelled                     | Rprec        |
| bpref           | per relevant retrieved: 1 - judged non-relevant above it (capped) / min(R, N), / R | bpref |

Query sets follow trec_eval -c: a gold query the run lacks scores 0 and counts; a run query the gold set
lacks is left out. A query with no relevant chunk is unanswerable: out of every mean, counted apart — or, with
`unanswerable_as_zero`, scored 0 in every relevance metric as trec_eval does (judged@k is still measured).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from ragdiff.core import vocab
from ragdiff.core.labels.gold import Gold
from ragdiff.core.io.runs import Run

_NAME = re.compile(r"^\s*([A-Za-z_]+?)(?:([@_])(\d+))?\s*$")

# --------------------------------------------------------------------------------------------------------------
# the table of metric specifications
#
# A spec's expressions work on one table with a row per scored query: `returned` (chunks the run returned),
# `num_rel` (relevant chunks labelled, R), `num_nonrel` (judged not relevant, N), and the aggregates the spec
# asks for. Aggregates run over the run's judged rows of a query, sorted by rank, each row carrying `rank`,
# `grade`, `rel` (grade >= threshold), `judged` (grade >= 0), `nonrel` (0 <= grade < threshold), `dg` (gain ×
# discount), `rel_upto` / `nonrel_upto` (relevant / judged non-relevant rows at this rank or above), `num_rel`
# and `num_nonrel`. Ideal aggregates run over the query's judged grades sorted best first (`pos`, `ig`).
# Aggregate names carry their cutoff, so two metrics needing the same aggregate share it.
#
# Each aggregate names the per-k kernel of `metrics_by_k.ByK` that gives it at every cutoff at once (the review
# screen's `+`/`-`); ByK reads that name and nothing else, and scores a metric with an aggregate that names none
# through `per_query_values` instead.


def _cut(k: int | None) -> str:
    return "all" if k is None else str(k)


def _top(k: int | None) -> pl.Expr:
    return pl.lit(True) if k is None else pl.col("rank") <= k


def _hits(k: int | None) -> dict[str, pl.Expr]:
    return {f"hits_{_cut(k)}": (pl.col("rel") & _top(k)).sum()}


def _first_rel(k: int | None) -> dict[str, pl.Expr]:
    return {"first_rel": pl.col("rank").filter(pl.col("rel")).min()}


def _dcg(k: int | None) -> dict[str, pl.Expr]:
    return {f"dcg_{_cut(k)}": pl.col("dg").filter(_top(k)).sum()}


def _idcg(k: int | None) -> dict[str, pl.Expr]:
    keep = pl.lit(True) if k is None else pl.col("pos") <= k
    return {f"idcg_{_cut(k)}": pl.col("ig").filter(keep).sum()}


def _judged_top(k: int | None) -> dict[str, pl.Expr]:
    return {f"judged_{_cut(k)}": (pl.col("judged") & _top(k)).sum()}


def _ap_sum(k: int | None) -> dict[str, pl.Expr]:
    # precision at each relevant chunk's rank: relevant at or above it / its rank (trec_eval's m_map.c)
    prec = pl.col("rel_upto").cast(pl.Float64) / pl.col("rank").cast(pl.Float64)
    return {f"ap_{_cut(k)}": prec.filter(pl.col("rel") & _top(k)).sum()}


def _rprec_hits(k: int | None) -> dict[str, pl.Expr]:
    return {"rprec_hits": (pl.col("rel") & (pl.col("rank") <= pl.col("num_rel"))).sum()}


def _bpref_sum(k: int | None) -> dict[str, pl.Expr]:
    # trec_eval's m_bpref.c: each relevant retrieved chunk adds 1 - min(nonrel above, R) / min(N, R)
    above = pl.col("nonrel_upto").cast(pl.Float64)
    r, n = pl.col("num_rel").cast(pl.Float64), pl.col("num_nonrel").cast(pl.Float64)
    term = pl.when(above > 0).then(1.0 - pl.min_horizontal(above, r) / pl.min_horizontal(n, r)).otherwise(1.0)
    return {"bpref_sum": term.filter(pl.col("rel")).sum()}


@dataclass(frozen=True)
class Aggregate:
    """One per-query aggregate a metric's value reads: `make(k)` gives {its column at cutoff k: its polars
    expression}, over the run's judged rows of a query (`over="rows"`) or its ideal ranking (`"ideal"`).
    `kernel`: the per-k kernel of `metrics_by_k.ByK` that gives the same column at any k — "relevant_count",
    "judged_count", "first_relevant", "gain_sum" (down the ranking it is over) or "precision_sum" — or None."""

    make: Callable[[int | None], dict[str, pl.Expr]]
    over: str = "rows"
    kernel: str | None = None


HITS = Aggregate(_hits, kernel="relevant_count")
FIRST_REL = Aggregate(_first_rel, kernel="first_relevant")
DCG = Aggregate(_dcg, kernel="gain_sum")
IDCG = Aggregate(_idcg, over="ideal", kernel="gain_sum")
JUDGED_TOP = Aggregate(_judged_top, kernel="judged_count")
AP_SUM = Aggregate(_ap_sum, kernel="precision_sum")
RPREC_HITS = Aggregate(_rprec_hits)  # no cutoff: ByK scores it once
BPREF_SUM = Aggregate(_bpref_sum)  # no cutoff: ByK scores it once


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """num / den, 0 where den is 0 (trec_eval's guard against a query with nothing relevant)."""
    den = den.cast(pl.Float64)
    return pl.when(den > 0).then(num.cast(pl.Float64) / den).otherwise(0.0)


@dataclass(frozen=True)
class MetricSpec:
    family: str  # ragdiff's name: "recall_frac" (with a cutoff: "recall_frac@5")
    title: str  # how the review header and reports label it: "nDCG", "MRR", "P"
    cutoff: str  # "required", "optional" (mrr, mrr@10) or "none"
    aliases: tuple[str, ...]  # accepted spellings, case-insensitive: "P_{k}", "P@{k}", "recip_rank", "RR@{k}"
    value: Callable[[int | None], pl.Expr]  # the per-query value from the aggregates below
    aggs: tuple[Aggregate, ...] = ()  # what the value reads, each with the per-k kernel that provides it
    counts_queries: bool = False  # per-query values are 0/1: a change is a whole number of queries
    percent: bool = False  # shown as a percentage (judged@k)
    quality: bool = True  # a change is a gain or a drop in retrieval (judged@k is label coverage)
    trec_eval: str | None = None  # trec_eval's name, "{k}" for the cutoff, e.g. "success_{k}"
    ir_measures: str | None = None  # ir_measures' name, e.g. "Success@{k}"
    definition: str = ""
    # the value reads only hits_{k} (relevant in the top k), num_rel and k: its upper bound is counted
    # (`counted_bound`) instead of rescored from promoted rows — the same floats (tests/test_metrics.py)
    counted: bool = False

    def name(self, k: int | None) -> str:
        return self.family if k is None else f"{self.family}@{k}"


SPECS: dict[str, MetricSpec] = {spec.family: spec for spec in (
    MetricSpec(
        "recall", "recall", "required", ("recall@{k}", "success_{k}", "success@{k}", "hit@{k}", "hits@{k}"),
        lambda k: (pl.col(f"hits_{k}") > 0).cast(pl.Float64), aggs=(HITS,), counts_queries=True, counted=True,
        trec_eval="success_{k}", ir_measures="Success@{k}",
        definition="1 if any relevant chunk is in the top k (the lesson's recall)"),
    MetricSpec(
        "recall_frac", "recall_frac", "required", ("recall_frac@{k}", "recall_frac_{k}", "recall_{k}", "R@{k}"),
        lambda k: _ratio(pl.col(f"hits_{k}"), pl.col("num_rel")), aggs=(HITS,), counted=True,
        trec_eval="recall_{k}", ir_measures="R@{k}",
        definition="relevant chunks in the top k / relevant chunks labelled"),
    MetricSpec(
        "precision", "P", "required", ("precision@{k}", "precision_{k}", "P@{k}", "P_{k}"),
        lambda k: pl.col(f"hits_{k}").cast(pl.Float64) / float(k), aggs=(HITS,), counted=True,
        trec_eval="P_{k}", ir_measures="P@{k}", definition="relevant chunks in the top k / k"),
    MetricSpec(
        "mrr", "MRR", "optional", ("mrr", "mrr@{k}", "recip_rank", "RR", "RR@{k}", "MRR@{k}"),
        lambda k: (1.0 / (pl.col("first_rel") if k is None else pl.when(pl.col("first_rel") <= k)
                          .then(pl.col("first_rel"))).cast(pl.Float64)).fill_null(0.0),
        aggs=(FIRST_REL,), trec_eval="recip_rank", ir_measures="RR",
        definition="1 / rank of the first relevant chunk, 0 if none; mrr@k stops at k"),
    MetricSpec(
        "ndcg", "nDCG", "optional", ("ndcg", "ndcg@{k}", "ndcg_{k}", "ndcg_cut_{k}", "nDCG@{k}"),
        lambda k: _ratio(pl.col(f"dcg_{_cut(k)}"), pl.col(f"idcg_{_cut(k)}")), aggs=(DCG, IDCG),
        trec_eval="ndcg_cut_{k}", ir_measures="nDCG@{k}",
        definition="gain = the grade, discount 1/log2(rank+1), ideal = all judged grades sorted; ndcg@k cut at k"),
    MetricSpec(
        "judged", "judged", "required", ("judged@{k}", "judged_{k}", "Judged@{k}"),
        lambda k: (lambda shown: pl.when(shown > 0).then(pl.col(f"judged_{k}") / shown))(
            pl.min_horizontal(pl.col("returned"), pl.lit(k))),
        aggs=(JUDGED_TOP,), percent=True, quality=False, ir_measures="Judged@{k}",
        definition="share of the top min(k, returned) that carries a judgment; none when nothing came back"),
    MetricSpec(
        "map", "MAP", "optional", ("map", "map@{k}", "map_cut_{k}", "AP", "AP@{k}", "MAP@{k}"),
        lambda k: _ratio(pl.col(f"ap_{_cut(k)}"), pl.col("num_rel")), aggs=(AP_SUM,),
        trec_eval="map_cut_{k}", ir_measures="AP@{k}",
        definition="precision at each relevant chunk's rank (in the top k), summed, / relevant chunks labelled"),
    MetricSpec(
        "rprec", "Rprec", "none", ("rprec", "Rprec"),
        lambda k: _ratio(pl.col("rprec_hits"), pl.col("num_rel")), aggs=(RPREC_HITS,),
        trec_eval="Rprec", ir_measures="Rprec",
        definition="relevant chunks in the top R / R, R = relevant chunks labelled"),
    MetricSpec(
        "bpref", "bpref", "none", ("bpref", "BPref"),
        lambda k: _ratio(pl.col("bpref_sum"), pl.col("num_rel")), aggs=(BPREF_SUM,),
        trec_eval="bpref", ir_measures="Bpref",
        definition="per relevant retrieved chunk, 1 - judged non-relevant ranked above it (at most R) / "
                   "min(R, N), summed, / R"),
)}
METRIC_FAMILIES = tuple(SPECS)


def _alias_index() -> dict[tuple[str, str], str]:
    """(lower-case stem, separator or "" when no cutoff) -> family, from every spec's aliases."""
    index: dict[tuple[str, str], str] = {}
    for spec in SPECS.values():
        own = {"required": [f"{spec.family}@{{k}}"], "optional": [spec.family, f"{spec.family}@{{k}}"],
               "none": [spec.family]}[spec.cutoff]
        for alias in (*own, *spec.aliases):
            if alias.endswith("{k}"):
                key = (alias[:-4].lower(), alias[-4])
            else:
                key = (alias.lower(), "")
            if index.setdefault(key, spec.family) != spec.family:  # pragma: no cover - a table error
                raise AssertionError(f"alias {alias!r} is claimed by {index[key]} and {spec.family}")
    return index


_ALIASES = _alias_index()


@dataclass(frozen=True)
class Metric:
    family: str
    k: int | None = None

    @property
    def spec(self) -> MetricSpec:
        return SPECS[self.family]

    @property
    def name(self) -> str:
        return self.spec.name(self.k)

    @property
    def label(self) -> str:
        """How the review header and reports show it: 'nDCG@5', 'MRR', 'P@5'."""
        title = self.spec.title
        return title if self.k is None else f"{title}@{self.k}"

    @property
    def window(self) -> int | None:
        """The cutoff the metric looks at (None: the whole ranking)."""
        return self.k


def known_metrics() -> str:
    """The names a user can type, for error messages and --help."""
    parts = []
    for spec in SPECS.values():
        parts.append({"required": f"{spec.family}@k", "optional": f"{spec.family}, {spec.family}@k",
                      "none": spec.family}[spec.cutoff])
    return ", ".join(parts)


def parse_metric(text: str) -> Metric:
    """'recall@5', 'P_10', 'nDCG@10', 'recip_rank', 'map_cut_100', 'R@5' -> Metric; trec_eval's and
    ir_measures' names keep their own meaning (recall_5 and R@5 are recall_frac@5, success_5 is recall@5).
    ValueError says what is known."""
    match = _NAME.match(text)
    if match is None:
        raise ValueError(f"unknown metric {text!r}; expected one of {known_metrics()}")
    stem, sep, digits = match.group(1).lower(), match.group(2) or "", match.group(3)
    family = _ALIASES.get((stem, sep))
    if family is None and not sep and ((stem, "@") in _ALIASES or (stem, "_") in _ALIASES):
        family = _ALIASES.get((stem, "@")) or _ALIASES[(stem, "_")]
        raise ValueError(f"metric {text!r} needs a cutoff, e.g. {family}@5")
    if family is None and sep and _ALIASES.get((stem, "")) in SPECS and SPECS[_ALIASES[(stem, "")]].cutoff == "none":
        raise ValueError(f"metric {text!r}: {_ALIASES[(stem, '')]} takes no cutoff")
    if family is None:
        raise ValueError(f"unknown metric {text!r}; expected one of {known_metrics()}")
    spec = SPECS[family]
    k = int(digits) if digits is not None else None
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: k must be a positive whole number")
    return Metric(family, k)


# Every command's default metrics in one table: the metric at k, at depth or uncut, and its place in each
# command's list (None: not there). At k and at depth: the lesson's "which k". diff leaves out nDCG at depth;
# the review's header shows what fits one line, recall at k first and at depth last.
_DEFAULTS = (  # family, cutoff, eval, diff, header
    ("recall", "k", 1, 1, 1),
    ("recall", "depth", 2, 2, 6),
    ("recall_frac", "k", 3, 3, None),
    ("precision", "k", 4, 4, 4),
    ("mrr", None, 5, 5, 2),
    ("ndcg", "k", 6, 6, 3),
    ("ndcg", "depth", 7, None, None),
    ("judged", "k", 8, 7, 5),
)
_DEFAULT_COLUMN = {"eval": 2, "diff": 3, "header": 4}


def default_metrics(k: int, depth: int, shown_by: str = "eval") -> list[Metric]:
    """The metrics `shown_by` ("eval", "diff" or the review's "header") reports unless told otherwise, in its
    order; at depth == k a metric at both is listed once."""
    column = _DEFAULT_COLUMN[shown_by]
    rows = sorted((row for row in _DEFAULTS if row[column] is not None), key=lambda row: row[column])
    cut = {"k": k, "depth": depth, None: None}
    return list(dict.fromkeys(Metric(row[0], cut[row[1]]) for row in rows))


@dataclass(frozen=True)
class EvalSettings:
    k: int = 5
    depth: int = 50
    threshold: int = 1
    level: str = "gold"
    gain: str = "linear"  # or "exp": 2^grade - 1
    # trec_eval scores a query with no relevant chunk as 0 in its means; ragdiff leaves it out unless asked
    unanswerable_as_zero: bool = False
    # trec_eval -J: unjudged chunks removed before scoring, the ranks closed up (condensed lists)
    judged_only: bool = False

    def as_json(self) -> dict:
        """The settings every JSON document (eval, diff, report) carries."""
        return {"k": self.k, "depth": self.depth, "threshold": self.threshold, "level": self.level,
                "gain": self.gain, "judged_only": self.judged_only}


@dataclass
class QuerySets:
    scored: list[str]
    unanswerable: list[str]
    missing_from_run: list[str]
    not_in_gold: list[str]
    not_retrieval: list[str] = field(default_factory=list)  # `retrieval: false`: left out of every score, listed


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


def aligned_frame(run: Run, gold: Gold) -> pl.DataFrame:
    """The run's frame with queries keyed by text renamed to the gold set's ids."""
    aliases = gold.aliases()
    if not aliases:
        return run.frame
    return run.frame.with_columns(pl.col("query_id").replace(aliases))


def query_table(gold: Gold, settings: EvalSettings) -> pl.DataFrame:
    """Per gold query: relevant count and ideal DCG inputs. Keeps gold order."""
    qrels = gold.qrels(settings.level)
    num_rel = qrels.group_by("query_id").agg(num_rel=(pl.col("grade") >= settings.threshold).sum())
    return (
        gold.queries.select("query_id", "text", "position")
        .join(num_rel, on="query_id", how="left")
        .with_columns(pl.col("num_rel").fill_null(0))
        .sort("position")
    )


def _gain(grade: pl.Expr, gain: str) -> pl.Expr:
    grade = grade.fill_null(0).clip(0).cast(pl.Float64)
    return (2.0 ** grade - 1.0) if gain == "exp" else grade


def _discount(rank: pl.Expr) -> pl.Expr:
    return 1.0 / (rank.cast(pl.Float64) + 1.0).log(2)


@dataclass
class PreparedRun:
    """What scoring needs of a run at any k: per scored query, how many chunks came back and the judged ones
    with their ranks. A million-line run shrinks to its judged rows, so scoring again at another k (the review
    screen's `+`/`-`) touches a few thousand rows."""

    run: Run
    queries: QuerySets
    scored: pl.DataFrame  # query_id, in gold order
    returned: pl.DataFrame  # query_id, returned
    judged: pl.DataFrame  # query_id, chunk_id, rank, grade
    qrels: pl.DataFrame  # query_id, chunk_id, grade (scored queries)
    # unjudged chunks (no grade >= 0) in the top `unjudged_depth`: query_id, chunk_id, rank (for the bound)
    unjudged: pl.DataFrame | None = None
    unjudged_depth: int = 0
    gold: Gold | None = field(default=None, repr=False, compare=False)  # the gold set it was prepared against
    # every scored query's rows are ranked 1 … returned (one stretch of the run each), so its top w holds
    # min(returned, w) rows and its unjudged ones can be counted from the judged rows (`window_counts`)
    ranked_from_one: bool = False
    # the deepest window with an upper bound, when deeper than the unjudged rows kept (0: `unjudged_depth`)
    bound_depth: int = 0
    judged_only: bool = False  # prepared from the condensed lists (`EvalSettings.judged_only`)
    # `window_counts` by (window, threshold): the bounds count them and diff's unjudged check again, for both
    # runs. Not an init field, so a run made from this one by `replace` (promote) starts with none
    counts_kept: dict[tuple[int, int], pl.DataFrame] = field(default_factory=dict, init=False, repr=False,
                                                             compare=False)

    @property
    def bounds_to(self) -> int:
        """Metrics whose window reaches no deeper than this have an upper bound."""
        return max(self.bound_depth, self.unjudged_depth)


def prepare(run: Run, gold: Gold, settings: EvalSettings, unjudged_depth: int | None = None) -> PreparedRun:
    """The k-independent half of `evaluate` (it uses the settings' threshold, level and query rules).

    The unjudged rows are kept to `unjudged_depth` (default max(k, depth), where the upper bounds reach): a
    caller that counts its bounds (`MetricSpec.counted`) needs them only as deep as its other metrics' windows."""
    original = gold
    not_retrieval = gold.not_retrieval()
    gold_qids = gold.queries.get_column("query_id")
    frame = aligned_frame(run, gold)
    if settings.judged_only:
        frame = condensed(frame, gold.qrels(settings.level))
    gold = gold.scored_queries()  # the answer is not inside a chunk: recall@k measures nothing there
    qtable = query_table(gold, settings)
    per_query = _returned(frame)
    run_qids = per_query.get_column("query_id")
    scored = (qtable if settings.unanswerable_as_zero else qtable.filter(pl.col("num_rel") > 0)).select("query_id")
    sets = QuerySets(
        scored=scored.get_column("query_id").to_list(),
        unanswerable=qtable.filter(pl.col("num_rel") == 0).get_column("query_id").to_list(),
        missing_from_run=qtable.filter(~pl.col("query_id").is_in(run_qids.implode())).get_column("query_id").to_list(),
        not_in_gold=sorted(set(run_qids.to_list()) - set(gold_qids.to_list())),
        not_retrieval=not_retrieval,
    )
    qrels = gold.qrels(settings.level).filter(pl.col("grade").is_not_null()).join(scored, on="query_id", how="semi")
    ranked = frame.select("query_id", "chunk_id", "rank")
    # when every query of the run is scored (the usual case) the million-row join is not needed
    returned = per_query
    if not run_qids.is_in(scored.get_column("query_id").implode()).all():
        ranked = ranked.join(scored, on="query_id", how="semi")
        returned = per_query.join(scored, on="query_id", how="semi")
    bound_depth = max(settings.k, settings.depth)
    kept = bound_depth if unjudged_depth is None else min(unjudged_depth, bound_depth)
    return PreparedRun(
        run=run, queries=sets, scored=scored,
        returned=returned.select("query_id", "returned"),
        # every metric counts judged chunks only, so the million unjudged rows of a big run stop here
        judged=rows_of_pairs(ranked, qrels, how="inner"),
        qrels=qrels,
        unjudged=unjudged_rows(ranked, qrels, kept),
        unjudged_depth=kept,
        gold=original,
        # a query's rows are stretches ranked 1 … length (core/io/runs.py ranks by position): one stretch exactly
        # when its deepest rank is its count — two (a run keying a query both by its id and by its text) are not
        ranked_from_one=bool((returned.get_column("deepest") == returned.get_column("returned")).all()),
        bound_depth=bound_depth,
        judged_only=settings.judged_only,
    )


def _returned(frame: pl.DataFrame) -> pl.DataFrame:
    """query_id, returned (rows) and deepest (largest rank) per query of a run's frame, from its stretches of
    one query (a run's rows come a query at a time, core/io/runs.py: about a thousand stretches for a million rows,
    and any order gives the same counts): no hashing of a million query ids."""
    stretches = frame.get_column("query_id").rle().struct.unnest()
    lengths = stretches.get_column("len").to_numpy().astype(np.int64)
    rank = frame.get_column("rank").to_numpy()
    starts = np.cumsum(lengths) - lengths
    deepest = np.maximum.reduceat(rank, starts) if len(starts) else rank[:0]
    return (pl.DataFrame({"query_id": stretches.get_column("value"), "returned": lengths, "deepest": deepest})
            .group_by("query_id", maintain_order=True)
            .agg(returned=pl.col("returned").sum().cast(pl.UInt32), deepest=pl.col("deepest").max()))


def rows_of_pairs(rows: pl.DataFrame, pairs: pl.DataFrame, how: str = "semi") -> pl.DataFrame:
    """`rows` joined (inner or semi) with `pairs` on (query_id, chunk_id), in `rows`' order: the rows whose
    (query, chunk) pair hashes to one of `pairs`' are found first, so the join on both columns (which polars
    keys by encoding both, row by row: +45 MiB at a million rows) runs over those few; a hash that collides only
    lets a row through to the join, which drops it. The chunk id alone stops sorting them out once the gold set
    labels a good part of the corpus: at 10,000 queries over 200,000 chunks it let 5.3M of a 10M-line run's
    rows through to the join (a million lines: 80,000). The hashes are taken eagerly, a slice of
    `_HASHED_ROWS` rows at a time: hashed whole, the two evaluations' 8-byte hashes of every row raised the 1M
    diff's peak by ~17 MiB; a slice at a time, the peak is as before and the 10M pair's fell 1,830 -> 1,390 MiB
    (bench/run_bench.py). The slices' masks are joined in order, so no engine's batch order is relied on (the
    streaming engine, polars 2's lazy default, does not promise it); tests/test_metrics.py holds every slice
    size against the plain join."""
    keys = pairs.select(_pair_hash()).to_series().implode()
    mask = pl.concat([rows.slice(start, _HASHED_ROWS).select(_pair_hash().is_in(keys)).to_series()
                      for start in range(0, rows.height, _HASHED_ROWS)] or [pl.Series(dtype=pl.Boolean)])
    return rows.filter(mask).join(pairs, on=["query_id", "chunk_id"], how=how, maintain_order="left")


_HASHED_ROWS = 1 << 18  # rows rows_of_pairs hashes at a time: 2 MiB of hashes


def _pair_hash() -> pl.Expr:
    """A 64-bit hash of a row's (query_id, chunk_id), the same for the same two strings in any frame."""
    return (pl.col("chunk_id").cast(pl.String).hash(seed=_PAIR_SEED)
            ^ pl.col("query_id").cast(pl.String).hash(seed=_PAIR_SEED + 1))


_PAIR_SEED = 0x9A1E


def condensed(frame: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """The run's rows of judged chunks only (a grade >= 0), ranked again 1, 2, … in their order: trec_eval -J's
    condensed lists (Sakai), a standard answer to incomplete judgments. `frame` is ordered by (query, rank)."""
    kept = rows_of_pairs(frame, judged_pairs(qrels))
    return kept.with_columns(pl.col("rank").rank("ordinal").over("query_id").cast(kept.schema["rank"]))


def judged_pairs(judgments: pl.DataFrame) -> pl.DataFrame:
    """query_id, chunk_id of the judged chunks: those with a grade >= 0 (a negative qrels grade is unjudged, as in
    trec_eval) — vocab.judged_rows' rule, its one home; a frame with a `level` column is read by its kind too."""
    level = "level" if "level" in judgments.columns else None
    return judgments.filter(vocab.judged_rows(level)).select("query_id", "chunk_id")


def unjudged_rows(ranked: pl.DataFrame, qrels: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, chunk_id, rank of the chunks in the top `depth` that carry no judgment (no grade >= 0)."""
    return rows_without(ranked, judged_pairs(qrels), depth)


def rows_without(ranked: pl.DataFrame, judged: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, chunk_id, rank of `ranked`'s rows down to `depth` that are not among `judged` (judged_pairs'
    pairs), in `ranked`'s order: the one rule for an unjudged row, read by the bounds, diff's unjudged check
    and the review's unjudged@k (app/model.py), each over the scored queries (`unjudged_in`)."""
    return (ranked.lazy().filter(pl.col("rank") <= depth).select("query_id", "chunk_id", "rank")
            .join(judged.lazy(), on=["query_id", "chunk_id"], how="anti", maintain_order="left").collect())


def bound_grade(settings: EvalSettings) -> int:
    """The grade an unjudged chunk gets in the upper bound: the lowest that counts as relevant."""
    return max(settings.threshold, 1)


def bound_window(metric: Metric, settings: EvalSettings) -> int:
    """Which unjudged chunks the bound makes relevant: those in the metric's own cutoff, or in the top k for a
    metric of the whole ranking (mrr, map, ndcg, rprec, bpref)."""
    return metric.k if metric.k is not None else settings.k


@dataclass(frozen=True)
class Bound:
    """A metric's value if every unjudged chunk in the top `window` were relevant (at the lowest relevant
    grade), over the same scored queries, and how many unjudged chunks stand behind the gap."""

    value: float
    unjudged: int
    window: int
    # the per-query values behind `value`, in the prepared run's scored order (diff's check reads them again)
    per_query: pl.Series | None = field(default=None, repr=False, compare=False)


def promote(prepared: PreparedRun, chunks: pl.DataFrame, settings: EvalSettings,
            keys: pl.DataFrame | None = None) -> PreparedRun:
    """The prepared run as if `chunks` (query_id, chunk_id, rank of this run) were labelled relevant; with `keys`
    (query_id, chunk_id of scored queries, `chunks` among them), as if all of `keys` were: `chunks` are then the
    rows of this run that `keys` name. The same as preparing the run again on `with_relevant(gold, keys)`, from
    the judged rows and the promoted ones instead of the whole run (tests/test_diff.py holds them equal). `keys`
    name each pair once (a run's rows do: core/io/runs.py refuses repeated chunks)."""
    keys = (chunks if keys is None else keys).select("query_id", "chunk_id")
    grade = pl.lit(bound_grade(settings), dtype=prepared.qrels.schema["grade"])
    judged = pl.concat([prepared.judged.join(keys, on=["query_id", "chunk_id"], how="anti"),
                        chunks.select("query_id", "chunk_id", "rank", grade.alias("grade"))], how="vertical_relaxed")
    qrels = pl.concat([prepared.qrels.join(keys, on=["query_id", "chunk_id"], how="anti"),
                       keys.with_columns(grade.alias("grade"))], how="vertical_relaxed")
    return replace(prepared, judged=judged, qrels=qrels)


def promote_window(prepared: PreparedRun, window: int, settings: EvalSettings) -> tuple[PreparedRun, int] | None:
    """`promote(prepared, unjudged_in(prepared, window), settings)` and the count of unjudged rows promoted,
    without listing the run's unjudged rows (a million of them for a window of 1,000): when every scored query's
    rows are ranked 1 … returned (`can_count`) and no chunk is judged twice in a query, a query's unjudged rows in
    the window are its ranks 1 … min(returned, window) that hold no judged chunk, so the promoted rows are those
    ranks at the bound's grade. The rows carry query_id, rank and grade (scoring reads no chunk id), the
    judgments query_id and grade (each promoted row one judgment more; the unjudged rows' negative grades, which
    no metric counts, are left in), and a query is keyed by its position among the scored ones, not its id.
    The same rows in each query, so `per_query_values` gives the same floats in the same (scored) order
    (tests/test_metrics.py): at a depth of 1,000, 0.47 -> 0.16 s and +115 -> +50 MiB per run. None when the
    shortcut does not hold: the caller promotes the listed rows."""
    judged = prepared.judged
    if not can_count(prepared, settings) or judged.select(
            pl.struct("query_id", "chunk_id").is_duplicated().any()).item():
        return None
    grade_type, rank_type = prepared.qrels.schema["grade"], judged.schema["rank"]
    # queries keyed by their position among the scored ones (what scoring reads of them: which rows are one
    # query's), so that a million promoted rows hold no query id string
    scored = prepared.scored.with_columns(code=pl.int_range(pl.len(), dtype=pl.UInt32))

    def coded(frame: pl.DataFrame) -> pl.DataFrame:
        columns = frame.columns
        return (frame.join(scored, on="query_id", how="inner", maintain_order="left").drop("query_id")
                .rename({"code": "query_id"}).select(columns))

    returned = (scored.join(prepared.returned, on="query_id", how="left", maintain_order="left")
                .get_column("returned").fill_null(0).to_numpy().astype(np.int64))
    lengths = np.minimum(returned, window)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    judged = coded(judged.select("query_id", "rank", "grade"))
    # the ranks of the window that hold a judged chunk (a grade >= 0): not promoted
    taken = judged.filter((pl.col("grade") >= 0) & (pl.col("rank") <= window))
    free = np.ones(int(starts[-1]), dtype=bool)
    at = starts[taken.get_column("query_id").to_numpy()] + taken.get_column("rank").to_numpy().astype(np.int64)
    free[at - 1] = False
    which = np.repeat(np.arange(len(lengths), dtype=np.uint32), lengths)
    rank = np.arange(int(starts[-1]), dtype=np.int64) - starts[which] + 1
    which, rank = which[free], rank[free]
    rows = pl.DataFrame({"query_id": which, "rank": pl.Series(rank).cast(rank_type),
                         "grade": pl.Series(np.full(len(which), bound_grade(settings))).cast(grade_type)})
    kept = judged.filter((pl.col("grade") >= 0) | (pl.col("rank") > window))
    qrels = pl.concat([coded(prepared.qrels.select("query_id", "grade")), rows.select("query_id", "grade")])
    promoted = replace(prepared, scored=scored.select(pl.col("code").alias("query_id")),
                       returned=coded(prepared.returned), judged=pl.concat([kept, rows]), qrels=qrels)
    return promoted, rows.height


def unjudged_in(prepared: PreparedRun, window: int, queries: pl.DataFrame | None = None) -> pl.DataFrame:
    """query_id, chunk_id, rank of the prepared run's unjudged rows in the top `window` (of its scored queries,
    or of those of them in `queries`): from the rows it keeps when they reach that deep, else from the run."""
    if prepared.unjudged is not None and window <= prepared.unjudged_depth:
        rows = prepared.unjudged.filter(pl.col("rank") <= window)
        return rows if queries is None else rows.join(queries, on="query_id", how="semi")
    frame = aligned_frame(prepared.run, prepared.gold)
    if prepared.judged_only:  # condensed lists hold no unjudged row
        frame = condensed(frame, prepared.qrels)
    wanted = (prepared.scored if queries is None else queries).get_column("query_id").implode()
    ranked = (frame.filter(pl.col("rank") <= window).filter(pl.col("query_id").is_in(wanted))
              .select("query_id", "chunk_id", "rank"))
    if queries is not None:  # of the scored queries only
        ranked = ranked.join(prepared.scored, on="query_id", how="semi")
    return unjudged_rows(ranked, prepared.qrels, window)


def can_count(prepared: PreparedRun, settings: EvalSettings) -> bool:
    """Whether the counted metrics' bounds may be counted: each query's top w holds min(returned, w) rows, and
    an unjudged chunk (no grade >= 0) was not relevant before it was promoted."""
    return prepared.ranked_from_one and settings.threshold >= 0


def window_counts(prepared: PreparedRun, window: int, settings: EvalSettings) -> pl.DataFrame:
    """Per scored query (the prepared run's order): `hits` (relevant rows in the top `window`), `num_rel`
    (relevant chunks labelled) and `unjudged` (rows in the top `window` without a judgment: min(returned,
    window) less the judged ones — `can_count` says when that holds), from the judged rows alone."""
    threshold = settings.threshold
    kept = prepared.counts_kept.get((window, threshold))
    if kept is None:
        kept = prepared.counts_kept[(window, threshold)] = _window_counts(prepared, window, threshold)
    return kept


def _window_counts(prepared: PreparedRun, window: int, threshold: int) -> pl.DataFrame:
    top = prepared.judged.filter(pl.col("rank") <= window).group_by("query_id").agg(
        hits=(pl.col("grade") >= threshold).sum(),
        # rows, not judgments: a pair labelled twice is one row of the run
        judged=pl.col("rank").filter(pl.col("grade") >= 0).n_unique(),
    )
    counts = prepared.qrels.group_by("query_id").agg(num_rel=(pl.col("grade") >= threshold).sum())
    left = {"on": "query_id", "how": "left", "maintain_order": "left"}  # the prepared run's order, as said
    return (prepared.scored.join(prepared.returned, **left).join(counts, **left).join(top, **left)
            .with_columns(pl.col("returned", "num_rel", "hits", "judged").fill_null(0))
            .select("query_id", "hits", "num_rel",
                    unjudged=pl.min_horizontal(pl.col("returned").cast(pl.Int64), pl.lit(window, dtype=pl.Int64))
                    - pl.col("judged").cast(pl.Int64)))


def counted_values(table: pl.DataFrame, metrics: list[Metric], window: int) -> pl.DataFrame:
    """query_id and each counted metric (cutoff `window`) from a table of `hits` and `num_rel` per query: the
    spec's own expression, as `per_query_values` applies it to its aggregates."""
    table = table.rename({"hits": f"hits_{window}"})
    return table.select(pl.col("query_id"), *[m.spec.value(m.k).cast(pl.Float64).alias(m.name) for m in metrics])


def upper_bounds(prepared: PreparedRun, metrics: list[Metric], settings: EvalSettings,
                 counted: bool = True) -> dict[str, Bound]:
    """Per quality metric, its `Bound` (metrics of label coverage, judged@k, have none; nor has a metric whose
    window is deeper than max(k, depth)).

    The definition: the prepared run with its unjudged rows in the window promoted (`promote`), rescored. A
    counted metric (recall, recall_frac, precision: hits and relevant counts) gets the same floats by counting —
    each unjudged row in the window adds one hit and one relevant chunk — without the promoted rows (a million
    of them for recall@1000); `counted=False` promotes every metric (tests/test_metrics.py holds both equal)."""
    out: dict[str, Bound] = {}
    if prepared.unjudged is None:
        return out
    windows: dict[int, list[Metric]] = {}
    for m in metrics:
        window = bound_window(m, settings)
        if m.spec.quality and window <= prepared.bounds_to:
            windows.setdefault(window, []).append(m)
    counting = counted and can_count(prepared, settings)
    for window, group in windows.items():
        by_count = [m for m in group if counting and m.spec.counted]
        rest = [m for m in group if m not in by_count]
        columns: dict[str, pl.Series] = {}
        unjudged = 0
        if by_count:
            table = window_counts(prepared, window, settings)
            unjudged = int(table.get_column("unjudged").sum())
            table = table.select("query_id", hits=pl.col("hits") + pl.col("unjudged"),
                                 num_rel=pl.col("num_rel") + pl.col("unjudged"))
            values = counted_values(table, by_count, window)
            columns.update({m.name: values.get_column(m.name) for m in by_count})
        if rest:
            shortcut = promote_window(prepared, window, settings) if counted else None
            if shortcut is None:
                chunks = unjudged_in(prepared, window)
                shortcut = promote(prepared, chunks, settings), chunks.height
            promoted, unjudged = shortcut
            values = per_query_values(promoted, rest, settings)
            columns.update({m.name: values.get_column(m.name) for m in rest})
        for m in group:
            out[m.name] = Bound(_mean(columns[m.name]), unjudged, window, per_query=columns[m.name])
    return out


def score(prepared: PreparedRun, settings: EvalSettings, metrics: list[Metric] | None = None,
          bounds: bool = False) -> RunEval:
    """The per-k half of `evaluate`: every metric per scored query, and the means (and, with `bounds`, each
    metric's value if the unjudged chunks in its top k were relevant)."""
    metrics = list(dict.fromkeys(metrics or default_metrics(settings.k, settings.depth)))
    per_query = per_query_values(prepared, metrics, settings)
    means = {m.name: _mean(per_query.get_column(m.name)) for m in metrics}
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


def rows_for_bounds(metrics: list[Metric], settings: EvalSettings) -> int:
    """How deep the unjudged rows are kept for these metrics' bounds: the widest window, no deeper than k, of a
    metric whose bound is promoted, not counted (diff's unjudged check lists them again). A deeper window (ndcg at
    the depth) is promoted from the judged rows (`promote_window`), or its rows read again from the run when that
    does not hold: keeping a million unjudged rows for it cost ~35 MiB at a depth of 1,000."""
    return max((window for m in metrics if m.spec.quality and not m.spec.counted
                and (window := bound_window(m, settings)) <= settings.k), default=0)


def recall_curve(prepared: PreparedRun, settings: EvalSettings, depth: int) -> list[float]:
    """recall@j for j = 1 … depth at once (the lesson's "which k"), from each query's first relevant rank."""
    scored = prepared.scored.height
    if scored == 0:
        return [float("nan")] * depth
    first = (prepared.judged.filter(pl.col("grade") >= settings.threshold)
             .group_by("query_id").agg(pl.col("rank").min()).get_column("rank"))
    reached = (first.filter(first <= depth).value_counts().sort("rank")
               .with_columns(pl.col("count").cum_sum()))
    curve = [0.0] * depth
    for rank, total in reached.iter_rows():
        curve[rank - 1] = total / scored
    for j in range(1, depth):  # carry the running share across ranks where no first hit landed
        curve[j] = max(curve[j], curve[j - 1])
    return curve


def _mean(values: pl.Series) -> float:
    value = values.drop_nulls().mean()
    return float(value) if value is not None else float("nan")


def per_query_values(prepared: PreparedRun, metrics: list[Metric], settings: EvalSettings) -> pl.DataFrame:
    """One row per scored query (in gold order), one column per metric, each from its spec in `SPECS`."""
    threshold = settings.threshold
    scored, qrels = prepared.scored, prepared.qrels
    counts = qrels.group_by("query_id").agg(
        num_rel=(pl.col("grade") >= threshold).sum(),
        num_nonrel=((pl.col("grade") >= 0) & (pl.col("grade") < threshold)).sum(),
    )
    aggs: dict[str, pl.Expr] = {}
    ideal_aggs: dict[str, pl.Expr] = {}
    for m in metrics:
        for agg in m.spec.aggs:
            (ideal_aggs if agg.over == "ideal" else aggs).update(agg.make(m.k))
    # the per-row columns the aggregates read, each computed as always: at a depth of 1,000 the rows of a run
    # with its unjudged ones promoted are a million, and every column over them costs time and memory
    read = {name for expr in aggs.values() for name in expr.meta.root_names()}
    read |= {"rel"} if "rel_upto" in read else set()
    read |= {"nonrel"} if "nonrel_upto" in read else set()
    first = {name: expr for name, expr in (
        ("rel", pl.col("grade") >= threshold),
        ("judged", pl.col("grade") >= 0),
        ("nonrel", (pl.col("grade") >= 0) & (pl.col("grade") < threshold)),
        ("dg", _gain(pl.col("grade"), settings.gain) * _discount(pl.col("rank"))),
    ) if name in read}
    second = {name: expr for name, expr in (
        ("rel_upto", pl.col("rel").cum_sum().over("query_id")),
        ("nonrel_upto", pl.col("nonrel").cum_sum().over("query_id")),
    ) if name in read}
    # every join keeps the left frame's order (maintain_order): the rows in gold order, and the order of the
    # float sums over them, are what the code says, not what a join's implementation happens to give
    left = {"on": "query_id", "how": "left", "maintain_order": "left"}
    table = scored.join(prepared.returned, **left).join(counts, **left)
    if aggs:
        rows = prepared.judged.select("query_id", "rank", "grade").sort("query_id", "rank")
        if first:
            rows = rows.with_columns(**first)
        if second:
            rows = rows.with_columns(**second)
        if read & {"num_rel", "num_nonrel"}:
            rows = rows.join(counts, **left)
        table = table.join(rows.group_by("query_id").agg(**aggs), **left)
    if ideal_aggs:
        ideal = (
            qrels.filter(pl.col("grade") > 0)
            .sort(["query_id", "grade"], descending=[False, True])
            .with_columns(pos=pl.int_range(1, pl.len() + 1).over("query_id"))
            .with_columns(ig=_gain(pl.col("grade"), settings.gain) * _discount(pl.col("pos")))
            .group_by("query_id")
            .agg(**ideal_aggs)
        )
        table = table.join(ideal, **left)
    # a query the run lacks, or with nothing judged in it, has no rows: its counts and sums are 0
    filled = [c for c in (*aggs, *ideal_aggs, "returned", "num_rel", "num_nonrel") if c != "first_rel"]
    table = table.with_columns(pl.col(filled).fill_null(0))
    return table.select(pl.col("query_id"), *[m.spec.value(m.k).cast(pl.Float64).alias(m.name) for m in metrics])


def with_relevant(gold: Gold, chunks: pl.DataFrame, settings: EvalSettings) -> Gold:
    """The gold set with `chunks` (query_id, chunk_id) labelled gold at the lowest relevant grade, replacing
    whatever judgment they had: the upper bound's "if every unjudged chunk were relevant", as a gold set."""
    keys = chunks.select("query_id", "chunk_id").unique()
    kept = gold.judgments.join(keys, on=["query_id", "chunk_id"], how="anti")
    added = keys.with_columns(pl.lit(bound_grade(settings), dtype=gold.judgments.schema["grade"]).alias("grade"),
                              pl.lit("gold").alias("level"))
    return replace(gold, judgments=pl.concat([kept, added], how="diagonal_relaxed"))
