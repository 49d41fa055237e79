"""Rank fusion (`ragdiff fuse`): RRF, CombSUM, CombMNZ and weighted sums over min-max, z-score or rank
normalised scores, with ranx's definitions (ranx.fuse, ranx 0.3):

    normalisation, per run and query over its (top `depth`) results:
      none    the score
      minmax  (s - min) / max(max - min, 1e-9)
      zscore  (s - mean) / max(std, 1e-9)          std over the results (ddof 0)
      rank    1 - (rank - 1) / n                   n results, rank 1 first
    method, per query and chunk, over the runs that returned it (a run that did not adds 0):
      rrf     sum of 1 / (k + rank)                ranks only: the normalisation changes nothing
      combsum sum of the normalised scores
      combmnz combsum x the number of runs that returned the chunk
      wsum    sum of weight x normalised score

The fused list is ordered by the fused score descending, ties broken by chunk id in descending byte order —
the rule ragdiff orders every scored run by (core/io/run_order.py, trec_eval's) — and ranked from 1. A query some run
lacks is fused from the runs that have it (`Fused.missing` lists which).

`optimize` chooses wsum's weights (a 0.1 grid summing to 1, ranx's `optimize_fusion` grid) or RRF's k (10,
20, ..., 100, ranx's) by k-fold cross-validation over the scored queries: each fold's setting is the one with
the best mean on the other folds, and its values on the fold are the held-out ones. ranx's optimize_fusion
reports the in-sample score of the setting it picked, which on fifty queries flatters it; both are given here.
Fusion is per query, so every setting is scored once on all queries and each fold reads those values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import polars as pl

from ragdiff.core.io.choices import FUSION_METHODS as METHODS, FUSION_NORMS as NORMS
from ragdiff.core.errors import InputError, UsageError
from ragdiff.core.io.runs import RUN_SCHEMA, Run

DEFAULT_NORM = "minmax"  # ranx.fuse's default
DEFAULT_RRF_K = 60
EPSILON = 1e-9  # ranx's floor under a normaliser's denominator (a query whose scores are all equal)
WEIGHT_STEP = 0.1  # the grid of --optimize's weights (ranx's optimize_fusion default)
RRF_KS = tuple(range(10, 101, 10))  # the RRF k --optimize tries (ranx's)


@dataclass
class Fused:
    frame: pl.DataFrame  # RUN_SCHEMA: query_id, chunk_id, score (fused), rank, line (null)
    missing: dict[str, list[str]] = field(default_factory=dict)  # run name -> queries another run has, it lacks
    query_text: dict[str, str] = field(default_factory=dict)


def check_weights(weights: list[float] | None, runs: int, method: str) -> list[float]:
    """The weights to use (1 each for wsum when none are given), or a UsageError saying what is wrong."""
    if weights is None:
        return [1.0] * runs
    if method != "wsum":
        raise UsageError(f"--weights apply to --method wsum (ranx's weighted sum), not {method}")
    if len(weights) != runs:
        raise UsageError(f"--weights gives {len(weights)} weight{'s' if len(weights) != 1 else ''} for {runs} runs; "
                         "expected one weight per run, in the runs' order")
    for i, w in enumerate(weights, 1):
        if not math.isfinite(w) or w < 0:
            raise UsageError(f"--weights: weight {i} is {w!r}; expected a finite number >= 0")
    if not any(weights):
        raise UsageError("--weights are all 0; expected at least one weight above 0")
    return list(weights)


def _long(runs: list[Run], depth: int | None, needs_scores: bool) -> pl.DataFrame:
    """Every run's rows (top `depth` of each query), tagged with the run's index."""
    parts = []
    for i, run in enumerate(runs):
        frame = run.frame.select("query_id", "chunk_id", "rank", "score")
        if depth is not None:
            frame = frame.filter(pl.col("rank") <= depth)
        if needs_scores and frame.get_column("score").null_count():
            row = frame.filter(pl.col("score").is_null()).row(0, named=True)
            raise InputError(run.path, f"chunk {row['chunk_id']!r} of query {row['query_id']!r} has no score; "
                                       "expected scores for a score fusion — use --norm rank or --method rrf, "
                                       "which read ranks only")
        parts.append(frame.with_columns(run=pl.lit(i, dtype=pl.UInt32)))
    return pl.concat(parts)


def _normalised(norm: str) -> pl.Expr:
    group = ["run", "query_id"]
    score = pl.col("score")
    if norm == "none":
        return score
    if norm == "minmax":
        low = score.min().over(group)
        return (score - low) / pl.max_horizontal(score.max().over(group) - low, pl.lit(EPSILON))
    if norm == "zscore":
        return (score - score.mean().over(group)) / pl.max_horizontal(score.std(ddof=0).over(group), pl.lit(EPSILON))
    if norm == "rank":
        return 1.0 - (pl.col("rank").cast(pl.Float64) - 1.0) / pl.len().over(group).cast(pl.Float64)
    raise ValueError(f"unknown normalisation {norm!r}")


def _contribution(method: str, norm: str, weights: list[float], rrf_k: float) -> pl.Expr:
    if method == "rrf":
        return 1.0 / (rrf_k + pl.col("rank").cast(pl.Float64))
    value = _normalised(norm)
    if method == "wsum":
        value = pl.lit(pl.Series(weights, dtype=pl.Float64)).gather(pl.col("run")) * value
    return value


def fuse(runs: list[Run], method: str = "rrf", norm: str = DEFAULT_NORM, weights: list[float] | None = None,
         rrf_k: float = DEFAULT_RRF_K, depth: int | None = None) -> Fused:
    """The fused run of `runs` (module docstring for the definitions)."""
    if method not in METHODS:
        raise ValueError(f"unknown fusion method {method!r}")
    weights = check_weights(weights, len(runs), method)
    long = _long(runs, depth, needs_scores=method != "rrf" and norm != "rank")
    return Fused(fuse_rows(long, method, norm, weights, rrf_k, depth), _missing(runs), _query_text(runs))


def fuse_rows(long: pl.DataFrame, method: str, norm: str, weights: list[float], rrf_k: float,
              depth: int | None) -> pl.DataFrame:
    """`fuse` on the runs' rows already gathered (`_long`): what --optimize calls once per setting."""
    runs = len(weights)
    scored = long.with_columns(value=_contribution(method, norm, weights, rrf_k))
    # one column per run, added left to right: ranx adds a chunk's contributions one run after another, and a
    # sum in another order (polars' own) differs in the last bit, enough to swap two chunks equal in exact
    # arithmetic (rank norm: 0.8 + 0.65 + 0.33 against 0.82 + 0.96)
    per_run = scored.group_by("query_id", "chunk_id", maintain_order=True).agg(
        *[pl.col("value").filter(pl.col("run") == i).first().alias(f"run{i}") for i in range(runs)])
    total = pl.col("run0").fill_null(0.0)
    for i in range(1, runs):
        total = total + pl.col(f"run{i}").fill_null(0.0)
    if method == "combmnz":
        total = total * pl.sum_horizontal(*[pl.col(f"run{i}").is_not_null() for i in range(runs)]).cast(pl.Float64)
    fused = per_run.select("query_id", "chunk_id", score=total)
    fused = fused.sort(["query_id", "score", "chunk_id"], descending=[False, True, True])
    fused = fused.with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("query_id"))
    if depth is not None:
        fused = fused.filter(pl.col("rank") <= depth)
    return fused.select("query_id", "chunk_id", "score", "rank", pl.lit(None, dtype=pl.UInt32).alias("line")).cast(
        RUN_SCHEMA)


def _missing(runs: list[Run]) -> dict[str, list[str]]:
    ids = [run.query_ids for run in runs]
    every = sorted(set().union(*ids))
    out = {}
    for run, have in zip(runs, ids):
        lacks = sorted(set(every) - set(have))
        if lacks:
            out[run.name] = lacks
    return out


def _query_text(runs: list[Run]) -> dict[str, str]:
    text: dict[str, str] = {}
    for run in runs:
        for qid, words in run.query_text.items():
            text.setdefault(qid, words)
    return text


def as_run(fused: Fused, name: str, path) -> Run:
    """The fused rows as a Run (to score it, or to write it through the run writer)."""
    return Run(name=name, path=path, format="jsonl", frame=fused.frame, query_text=fused.query_text)


# --------------------------------------------------------------------------------------------------------------
# --optimize: the setting chosen by k-fold cross-validation


@dataclass
class Setting:
    weights: list[float]
    rrf_k: float

    def words(self, method: str) -> str:
        if method == "rrf":
            return f"k {self.rrf_k:g}"
        return "weights " + ",".join(f"{w:g}" for w in self.weights)


@dataclass
class Optimized:
    method: str
    norm: str
    metric: str
    folds: int
    seed: int
    queries: list[str]  # the scored queries the search ran over, in gold order
    settings: list[Setting]  # the grid, in the order tried
    chosen: Setting  # chosen on all queries: what the fused run is written with
    in_sample: float  # the chosen setting's mean on all queries (what ranx's optimize_fusion reports)
    cross_validated: float  # mean of the held-out values, each fold's setting chosen on the other folds
    held_out: np.ndarray  # per query (self.queries' order): its value under its fold's setting
    fold_of: np.ndarray  # per query: its fold (0-based)
    fold_settings: list[Setting]  # per fold: the setting chosen on the other folds
    single: dict[str, float] = field(default_factory=dict)  # each input run's mean on the same queries
    best_single: str = ""
    best_single_values: np.ndarray | None = None  # per query, self.queries' order


def grid(method: str, runs: int) -> list[Setting]:
    """The settings --optimize tries: RRF's k, or wsum's weights on the WEIGHT_STEP grid summing to 1."""
    if method == "rrf":
        return [Setting([1.0] * runs, float(k)) for k in RRF_KS]
    if method != "wsum":
        raise UsageError(f"--optimize searches wsum's weights or rrf's k; --method {method} has nothing to search")
    steps = round(1 / WEIGHT_STEP)
    return [Setting([i / steps for i in combo], DEFAULT_RRF_K)
            for combo in product(range(steps + 1), repeat=runs) if sum(combo) == steps]


def folds_of(n: int, folds: int, seed: int) -> np.ndarray:
    """Each of n queries' fold: a seeded shuffle cut into `folds` parts as equal as can be."""
    order = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=np.int64)
    fold[order] = np.arange(n) % folds
    return fold


def optimize(runs: list[Run], gold, metric, method: str, norm: str, folds: int, seed: int,
             depth: int | None = None, settings=None) -> Optimized:
    """Score every setting of the grid on every scored query, then choose by k-fold cross-validation."""
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import EvalSettings

    settings = settings or EvalSettings()
    trials = grid(method, len(runs))
    long = _long(runs, depth, needs_scores=method != "rrf" and norm != "rank")
    text, missing = _query_text(runs), _missing(runs)

    def values(run: Run) -> pl.DataFrame:
        return evaluate(run, gold, settings, [metric]).per_query.select("query_id", pl.col(metric.name).alias("v"))

    singles = {run.name: values(run) for run in runs}
    queries = next(iter(singles.values())).get_column("query_id").to_list()
    if len(queries) < folds:
        raise UsageError(f"--folds {folds} with {len(queries)} scored quer{'y' if len(queries) == 1 else 'ies'}; "
                         "expected at least as many scored queries as folds")
    matrix = np.vstack([
        values(as_run(Fused(fuse_rows(long, method, norm, s.weights, s.rrf_k, depth), missing, text),
                      "fused", runs[0].path)).get_column("v").to_numpy()
        for s in trials])  # settings x queries, gold order
    fold_of = folds_of(len(queries), folds, seed)
    held_out = np.empty(len(queries))
    fold_settings = []
    for f in range(folds):
        train = fold_of != f
        best = int(np.argmax(matrix[:, train].mean(axis=1)))  # the first of equal means: the grid's order
        fold_settings.append(trials[best])
        held_out[~train] = matrix[best, ~train]
    means = matrix.mean(axis=1)
    chosen = int(np.argmax(means))
    single = {name: float(v.get_column("v").mean()) for name, v in singles.items()}
    best_single = max(single, key=lambda name: single[name])  # the first of equal means
    return Optimized(method, norm, metric.name, folds, seed, queries, trials, trials[chosen], float(means[chosen]),
                     float(held_out.mean()), held_out, fold_of, fold_settings, single, best_single,
                     singles[best_single].get_column("v").to_numpy())
