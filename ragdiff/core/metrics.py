"""The metric engine: per-query values as polars expressions, means over the scored queries.

| name            | definition                                                            | trec_eval   |
| recall@k        | 1 if any relevant chunk is in the top k                              | success_k   |
| recall_frac@k   | relevant in the top k / relevant labelled                            | recall_k    |
| precision@k     | relevant in the top k / k                                            | P_k         |
| mrr, mrr@k      | 1 / rank of the first relevant (whole run, or stopping at k)         | recip_rank  |
| ndcg@k          | gain = grade, discount 1/log2(rank+1), ideal from all judged grades  | ndcg_cut_k  |
| judged@k        | judged share of the top min(k, returned); no value if none returned | 1 - unj_k   |

Query sets follow trec_eval -c: a gold query the run lacks scores 0 and counts; a run query the gold set
lacks is left out. A query with no relevant chunk is unanswerable: out of every mean, counted apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from ragdiff.core.gold import Gold
from ragdiff.core.runs import Run

METRIC_FAMILIES = ("recall", "recall_frac", "precision", "mrr", "ndcg", "judged")
_ALIASES = {
    "success": "recall", "hit": "recall", "hits": "recall",
    "r": "recall_frac", "recall_frac": "recall_frac",
    "p": "precision", "precision": "precision",
    "rr": "mrr", "recip_rank": "mrr", "mrr": "mrr",
    "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "judged": "judged",
    "recall": "recall",
}
_NAME = re.compile(r"^\s*([A-Za-z_]+?)(?:[@_](\d+))?\s*$")


@dataclass(frozen=True)
class Metric:
    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"


def parse_metric(text: str) -> Metric:
    """'recall@5', 'P@10', 'nDCG@10', 'MRR', 'mrr@10', 'success_5' -> Metric. ValueError says what is known."""
    match = _NAME.match(text)
    family = _ALIASES.get(match.group(1).lower()) if match else None
    if family is None:
        raise ValueError(f"unknown metric {text!r}; expected one of recall@k, recall_frac@k, precision@k, "
                         "mrr, mrr@k, ndcg@k, judged@k")
    k = int(match.group(2)) if match.group(2) else None
    if k is None and family != "mrr":
        raise ValueError(f"metric {text!r} needs a cutoff, e.g. {family}@5")
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: k must be a positive whole number")
    return Metric(family, k)


def default_metrics(k: int, depth: int) -> list[Metric]:
    """At the k sent to the model and at the depth the first stage returns (the lesson's 'which k')."""
    out = [Metric("recall", k), Metric("recall", depth), Metric("recall_frac", k), Metric("precision", k),
           Metric("mrr"), Metric("ndcg", k), Metric("ndcg", depth), Metric("judged", k)]
    seen: list[Metric] = []
    for metric in out:
        if metric not in seen:
            seen.append(metric)
    return seen


@dataclass(frozen=True)
class EvalSettings:
    k: int = 5
    depth: int = 50
    threshold: int = 1
    level: str = "gold"
    gain: str = "linear"  # or "exp": 2^grade - 1
    # trec_eval scores a query with no relevant chunk as 0 in its means; ragdiff leaves it out unless asked
    unanswerable_as_zero: bool = False


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


def prepare(run: Run, gold: Gold, settings: EvalSettings) -> PreparedRun:
    """The k-independent half of `evaluate` (it uses the settings' threshold, level and query rules)."""
    not_retrieval = gold.not_retrieval()
    gold_qids = gold.queries.get_column("query_id")
    frame = aligned_frame(run, gold)
    gold = gold.scored_queries()  # the answer is not inside a chunk: recall@k measures nothing there
    qtable = query_table(gold, settings)
    run_qids = frame.get_column("query_id").unique()
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
    if not run_qids.is_in(scored.get_column("query_id").implode()).all():
        ranked = ranked.join(scored, on="query_id", how="semi")
    return PreparedRun(
        run=run, queries=sets, scored=scored,
        returned=ranked.group_by("query_id").agg(returned=pl.len()),
        # every metric counts judged chunks only, so the million unjudged rows of a big run stop here
        judged=ranked.join(qrels, on=["query_id", "chunk_id"], how="inner"),
        qrels=qrels,
    )


def score(prepared: PreparedRun, settings: EvalSettings, metrics: list[Metric] | None = None) -> RunEval:
    """The per-k half of `evaluate`: every metric per scored query, and the means."""
    metrics = metrics or default_metrics(settings.k, settings.depth)
    per_query = per_query_values(prepared, metrics, settings)
    means = {m.name: _mean(per_query.get_column(m.name)) for m in metrics}
    return RunEval(run=prepared.run, metrics=metrics, per_query=per_query, queries=prepared.queries,
                   settings=settings, means=means)


def evaluate(run: Run, gold: Gold, settings: EvalSettings, metrics: list[Metric] | None = None) -> RunEval:
    return score(prepare(run, gold, settings), settings, metrics)


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
    """One row per scored query (in gold order), one column per metric."""
    threshold = settings.threshold
    cut_ks = sorted({m.k for m in metrics if m.k is not None})
    scored, qrels = prepared.scored, prepared.qrels
    rows = prepared.judged.with_columns(
        rel=pl.col("grade") >= threshold,
        judged=pl.col("grade") >= 0,
        dg=_gain(pl.col("grade"), settings.gain) * _discount(pl.col("rank")),
    )
    aggs = [pl.col("rank").filter(pl.col("rel")).min().alias("first_rel")]
    for k in cut_ks:
        top = pl.col("rank") <= k
        aggs += [
            (pl.col("rel") & top).sum().alias(f"hits_{k}"),
            (pl.col("judged") & top).sum().alias(f"judged_{k}"),
            pl.col("dg").filter(top).sum().alias(f"dcg_{k}"),
        ]
    per_run = prepared.returned.join(rows.group_by("query_id").agg(aggs), on="query_id", how="left")

    ideal = (
        qrels.filter(pl.col("grade") > 0)
        .sort(["query_id", "grade"], descending=[False, True])
        .with_columns(pos=pl.int_range(1, pl.len() + 1).over("query_id"))
        .with_columns(ig=_gain(pl.col("grade"), settings.gain) * _discount(pl.col("pos")))
        .group_by("query_id")
        .agg([pl.col("ig").filter(pl.col("pos") <= k).sum().alias(f"idcg_{k}") for k in cut_ks]
             + [(pl.col("grade") >= threshold).sum().alias("num_rel")])
    )
    table = (
        scored.join(per_run, on="query_id", how="left")
        .join(ideal, on="query_id", how="left")
        .with_columns(pl.col("returned").fill_null(0))
    )
    out = [pl.col("query_id")]
    for m in metrics:
        k = m.k
        if m.family == "recall":
            expr = (pl.col(f"hits_{k}").fill_null(0) > 0).cast(pl.Float64)
        elif m.family == "recall_frac":
            expr = pl.col(f"hits_{k}").fill_null(0) / pl.col("num_rel")
        elif m.family == "precision":
            expr = pl.col(f"hits_{k}").fill_null(0) / float(k)
        elif m.family == "mrr":
            first = pl.col("first_rel")
            if k is not None:
                first = pl.when(first <= k).then(first)
            expr = (1.0 / first.cast(pl.Float64)).fill_null(0.0)
        elif m.family == "ndcg":
            idcg = pl.col(f"idcg_{k}").fill_null(0.0)
            expr = pl.when(idcg > 0).then(pl.col(f"dcg_{k}").fill_null(0.0) / idcg).otherwise(0.0)
        elif m.family == "judged":
            shown = pl.min_horizontal(pl.col("returned"), pl.lit(k))
            expr = pl.when(shown > 0).then(pl.col(f"judged_{k}").fill_null(0) / shown)
        else:  # pragma: no cover - parse_metric admits only the families above
            raise ValueError(m.family)
        out.append(expr.cast(pl.Float64).alias(m.name))
    return table.select(out)
