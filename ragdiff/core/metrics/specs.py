"""The table of metric specifications (`SPECS`), the names a user may type for them (`parse_metric`), each
command's default metrics and the settings every score is taken under (`EvalSettings`).

Every consumer — eval, diff's verdicts, the review header, history, reports — reads a metric's name, aliases,
per-query expression, whether it counts queries and how it is shown from `SPECS`. Adding a metric is one
`MetricSpec` entry (and its tests); a value that reads a new aggregate adds it to `aggregates.py`.

The rest of the metric engine: `aggregates` (the per-query aggregates as polars expressions), `prepared` (a
run's scored queries and judged rows), `scoring` (per-query values of any metrics), `bounds` (upper bounds from
unjudged chunks), `evaluate` (a run scored: `evaluate`, `score`, `RunEval`), `by_k` (every k at once).

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
from dataclasses import dataclass

import polars as pl

from ragdiff.core.metrics.aggregates import (AP_SUM, BPREF_SUM, DCG, FIRST_REL, HITS, IDCG, JUDGED_TOP, RPREC_HITS,
                                             Aggregate, cut_name)

# a name, then its cutoff after "@" or "_"; the name may hold digits after its first letter (f1@5, F1_5)
_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)(?:([@_])(\d+))?\s*$")


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
        lambda k: _ratio(pl.col(f"dcg_{cut_name(k)}"), pl.col(f"idcg_{cut_name(k)}")), aggs=(DCG, IDCG),
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
        lambda k: _ratio(pl.col(f"ap_{cut_name(k)}"), pl.col("num_rel")), aggs=(AP_SUM,),
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
