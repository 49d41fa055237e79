"""A prepared run scored at every k at once: each `+`/`-` of the review screen is a lookup, not a group-by.

`evaluate.score(prepared, settings, metrics)` aggregates the judged rows of every query at one k (a polars
group-by over every judged row: ~30 ms per run at 10,000 queries). `ByK` reads the same rows once and keeps,
per query, running values down its ranks (relevant rows, judged rows, gain × discount) and down its ideal
ranking; an aggregate at cutoff k is then the running value at the query's last row ranked <= k (one
`searchsorted` over all queries). The per-query value is the metric's own expression in `specs.SPECS`
(`MetricSpec.value`) applied to those aggregates, as `scoring.per_query_values` applies it: every metric keeps
one definition. Each aggregate of a spec names its per-k kernel (`aggregates.Aggregate.kernel`); this module
provides the kernels (`ByK.KERNELS`) and reads that name, nothing else of the spec.

Bit for bit: polars sums a float group two ways (measured, polars 2.1): where the filter of `dg.filter(rank <= k)`
keeps every row of the frame (k at or past the deepest judged rank; `_top(None)`), the plain sum of each group;
otherwise Kahan's compensated sum of the rows kept, in their order. The two differ in the last bit on ~10% of
the queries from a handful of rows up. So a cutoff that keeps some rows reads a running Kahan sum here, and
a cutoff that keeps them all reads the core's own aggregate, computed once with its own expression
(tests/test_metrics_by_k.py holds every k equal to `evaluate.score`, and fails if either half is changed). A
metric with an aggregate that names no kernel is scored by `scoring.per_query_values` itself (once per metric:
rprec and bpref take no cutoff).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from ragdiff.core.metrics import scoring
from ragdiff.core.metrics.aggregates import Aggregate, graded_gain, rank_discount
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import PreparedRun
from ragdiff.core.metrics.scoring import mean_of
from ragdiff.core.metrics.specs import EvalSettings, Metric

NONE = np.iinfo(np.int64).max  # no relevant row (first_rel)


def kahan_running(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per stretch `values[start:start + length]`, the Kahan sum of its first 1, 2, … values (polars' float
    sum of a group: sum, compensation = 0; y = x - c; t = sum + y; c = (t - sum) - y; sum = t), one stretch per
    query, all stretches a step at a time."""
    out = np.empty_like(values)
    order = np.argsort(-lengths, kind="stable")  # longest first: the stretches still running are a prefix
    starts, lengths = starts[order], lengths[order]
    total = np.zeros(len(starts))
    comp = np.zeros(len(starts))
    for j in range(int(lengths[0]) if len(lengths) else 0):
        n = int(np.searchsorted(-lengths, -j, side="left"))  # stretches longer than j
        at = starts[:n] + j
        y = values[at] - comp[:n]
        t = total[:n] + y
        comp[:n] = (t - total[:n]) - y
        total[:n] = t
        out[at] = t
    return out


@dataclass(frozen=True, repr=False)
class Ranked:
    """Rows of one kind (a run's judged rows, the ideal ranking, a run's unjudged rows) in one stretch per
    query of an order, ranked within it: what an aggregate at cutoff k reads. `upto(k)` counts each query's
    rows ranked <= k for every query at once."""

    ranks: np.ndarray  # int64, ascending within each stretch
    starts: np.ndarray  # per scored query, its first row (its stretch may be empty)
    lengths: np.ndarray
    keys: np.ndarray  # stretch number × (deepest rank + 1) + rank: sorted, so one searchsorted finds every cut
    span: int
    # k -> upto(k) as asked so far (the last few k's, each an array per query; see `upto`), and whether no
    # stretch has two rows of one rank; made anew with every Ranked (init=False: `replace` does not share them)
    _counts: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    _distinct_ranks: list = field(default_factory=list, init=False, compare=False, repr=False)

    def __repr__(self) -> str:  # not the arrays (a million values each)
        return f"Ranked(queries={len(self.starts)}, rows={len(self.ranks)})"

    @classmethod
    def of(cls, frame: pl.DataFrame, rank: str, scored: pl.DataFrame) -> tuple["Ranked", pl.DataFrame]:
        """`frame` (query_id, `rank`, …, sorted by query then rank) laid out in scored order; returns the
        rows in that order too, for the running values."""
        at = scored.with_row_index("_q").select("query_id", "_q")
        rows = frame.join(at, on="query_id", how="inner", maintain_order="left").sort("_q", maintain_order=True)
        q = rows.get_column("_q").to_numpy().astype(np.int64)
        ranks = rows.get_column(rank).to_numpy().astype(np.int64)
        lengths = np.bincount(q, minlength=scored.height).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        span = int(ranks.max()) + 1 if len(ranks) else 1
        return cls(ranks, starts, lengths, q * span + ranks, span), rows

    @classmethod
    def of_stretches(cls, frame: pl.DataFrame, rank: str, at: dict[str, int], queries: int) -> "Ranked":
        """`frame` (query_id, `rank`) already one stretch per query with ascending ranks (a run's rows, or a
        part of them, in their order): no join, no sort of rows. `at` numbers the queries; one not in it is
        dropped. Laid out as `of` lays out, one stretch per query of `at` in its order (empty where the query has
        no row), so that `replaced` can change one query's stretch."""
        runs = frame.get_column("query_id").rle()
        values = runs.struct.field("value").to_list()
        if len(set(values)) != len(values):  # a query in two stretches: put them together
            frame = frame.sort("query_id", rank, maintain_order=True)
            runs = frame.get_column("query_id").rle()
            values = runs.struct.field("value").to_list()
        lengths = runs.struct.field("len").to_numpy().astype(np.int64)
        first = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        number = np.fromiter((at.get(q, -1) for q in values), dtype=np.int64, count=len(values))
        kept = np.flatnonzero(number >= 0)
        kept = kept[np.argsort(number[kept], kind="stable")]  # the stretches in the order of `at`
        per_query = np.zeros(queries, dtype=np.int64)
        per_query[number[kept]] = lengths[kept]
        starts = np.concatenate(([0], np.cumsum(per_query)[:-1])).astype(np.int64)
        # each kept row's place in the frame: its stretch's first row + its place in the stretch
        taken = lengths[kept]
        rows = np.repeat(first[kept] - starts[number[kept]], taken) + np.arange(int(taken.sum()), dtype=np.int64)
        ranks = frame.get_column(rank).to_numpy().astype(np.int64)[rows]
        return cls._of_arrays(ranks, starts, per_query)

    @classmethod
    def _of_arrays(cls, ranks: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> "Ranked":
        span = int(ranks.max()) + 1 if len(ranks) else 1
        return cls(ranks, starts, lengths, np.repeat(np.arange(len(lengths), dtype=np.int64), lengths) * span + ranks,
                   span)

    def replaced(self, i: int, ranks: np.ndarray) -> "Ranked":
        """The same rows with stretch i's ranked `ranks` (ascending) instead: what `of`/`of_stretches` lay out
        from the rows with that one query's changed, without reading the others again (a mark)."""
        start, n = int(self.starts[i]), int(self.lengths[i])
        ranks = np.asarray(ranks, dtype=np.int64)
        all_ranks = spliced(self.ranks, start, n, ranks)
        starts, lengths = self.starts.copy(), self.lengths.copy()
        starts[i + 1:] += len(ranks) - n
        lengths[i] = len(ranks)
        span = int(all_ranks.max()) + 1 if len(all_ranks) else 1
        if span != self.span:  # the deepest rank moved: every key with it
            return Ranked._of_arrays(all_ranks, starts, lengths)
        return Ranked(all_ranks, starts, lengths, spliced(self.keys, start, n, i * span + ranks), span)

    def upto(self, k: int | None) -> np.ndarray:
        """Per scored query, how many of its rows are ranked <= k (all of them for k None). Kept for the last
        few k's asked; a k next to one kept is a step from it (one row at most per query, when no query has
        two rows of one rank), else one searchsorted over every row (~0.4 ms at 10,000 queries × 100)."""
        if k is None or k >= self.span:
            return self.lengths
        counts = self._counts  # read with get only: a worker thread may drop a k from it meanwhile
        found = counts.get(k)
        if found is not None:
            return found
        below, above = counts.get(k - 1), counts.get(k + 1)
        if below is not None and self._distinct():
            found = self._step_up(below, k)
        elif above is not None and self._distinct():
            found = self._step_down(above, k)
        else:
            cut = np.arange(len(self.starts), dtype=np.int64) * self.span + k
            found = np.searchsorted(self.keys, cut, side="right") - self.starts
        found.flags.writeable = False  # shared by every caller
        counts[k] = found
        while len(counts) > _KEPT_COUNTS:  # the oldest first (a worker thread may ask beside the screen's)
            counts.pop(list(counts)[0], None)
        return found

    def _distinct(self) -> bool:
        """No stretch has two rows of one rank (then a step of k moves a query's count by one at most)."""
        if not self._distinct_ranks:
            self._distinct_ranks.append(bool(np.all(np.diff(self.keys) > 0)))
        return self._distinct_ranks[0]

    def _step_up(self, below: np.ndarray, k: int) -> np.ndarray:
        """upto(k) from upto(k - 1): add the query's next row where it is ranked k."""
        nxt = self.starts + below
        more = below < self.lengths
        ranks = self.ranks[np.where(more, nxt, 0)] if len(self.ranks) else np.zeros(len(below), dtype=np.int64)
        return below + (more & (ranks == k))

    def _step_down(self, above: np.ndarray, k: int) -> np.ndarray:
        """upto(k) from upto(k + 1): take away the query's last row counted where it is ranked k + 1."""
        last = self.starts + above - 1
        some = above > 0
        ranks = self.ranks[np.where(some, last, 0)] if len(self.ranks) else np.zeros(len(above), dtype=np.int64)
        return above - (some & (ranks == k + 1))

    def at(self, running: np.ndarray, k: int | None, empty) -> np.ndarray:
        """Per scored query, `running` at its last row ranked <= k (`empty` when it has none)."""
        n = self.upto(k)
        last = self.starts + n - 1
        out = running[np.clip(last, 0, max(len(running) - 1, 0))] if len(running) else np.zeros(len(n))
        return np.where(n > 0, out, empty)


_KEPT_COUNTS = 8  # k's whose `Ranked.upto` is kept: + and - step from the k beside
_KEPT_METRICS = 24  # metrics whose per-query column `ByK.score` keeps (a k's six header metrics, four new a k)


def spliced(values: np.ndarray, start: int, n: int, new: np.ndarray) -> np.ndarray:
    """`values` with `values[start:start + n]` replaced by `new` (of any length), as a new array."""
    return np.concatenate((values[:start], np.asarray(new, dtype=values.dtype), values[start + n:]))


def _running_count(flags: np.ndarray, ranked: Ranked) -> np.ndarray:
    """Per row, how many rows of its stretch up to and including it are flagged (whole numbers: exact)."""
    total = np.cumsum(flags, dtype=np.int64)
    if not len(total):  # no judged row in any scored query (a run of unlabelled chunks): nothing to count
        return total
    before = np.where(ranked.starts > 0, total[np.maximum(ranked.starts - 1, 0)], 0)
    return total - np.repeat(before, ranked.lengths)


class ByK:
    """`score(settings, metrics)` equal to `evaluate.score(prepared, settings, metrics)` (without bounds) at any
    k, from tables built once per prepared run. The settings may differ from those given here in k and depth
    only."""

    def __init__(self, prepared: PreparedRun, settings: EvalSettings):
        self.prepared = prepared
        self.settings = settings
        threshold = settings.threshold
        scored, qrels = prepared.scored, prepared.qrels
        counts = qrels.group_by("query_id").agg(
            num_rel=(pl.col("grade") >= threshold).sum(),
            num_nonrel=((pl.col("grade") >= 0) & (pl.col("grade") < threshold)).sum(),
        )
        # per scored query, the k-independent columns of scoring.per_query_values' table (filled as it fills)
        self._base = (scored.join(prepared.returned, on="query_id", how="left")
                      .join(counts, on="query_id", how="left")
                      .with_columns(pl.col("returned", "num_rel", "num_nonrel").fill_null(0)))
        self._order = order = self._base.select("query_id")  # the rows of per_query_values' table, in its order
        self.queries: pl.Series = order.get_column("query_id")  # the order of `score`'s per_query
        self._at: dict[str, int] | None = None  # query id -> its place in `queries` (made when first asked)
        self._frames: dict[str, pl.DataFrame] = {}
        self._rows, rows = Ranked.of(self._frame("rows"), "rank", order)
        rel = rows.get_column("rel").to_numpy()
        self._rel = rel
        self._rel_upto = _running_count(rel, self._rows)
        self._judged_upto = _running_count(rows.get_column("judged").to_numpy(), self._rows)
        self._dcg = kahan_running(rows.get_column("dg").to_numpy(), self._rows.starts, self._rows.lengths)
        ranks = self._rows.ranks
        # the first relevant rank per query with rows (NONE where it has no relevant row)
        first = np.where(rel, ranks, NONE)
        has = self._rows.lengths > 0
        self._first_rel = np.full(len(has), NONE, dtype=np.int64)
        if has.any():
            self._first_rel[has] = np.minimum.reduceat(first, self._rows.starts[has])
        self._rank_dtype = prepared.judged.schema["rank"]
        self._ideal, ideal = Ranked.of(self._frame("ideal"), "pos", order)
        self._idcg = kahan_running(ideal.get_column("ig").to_numpy(), self._ideal.starts, self._ideal.lengths)
        self._clear()

    def _clear(self) -> None:
        """Forget what is computed when first asked for (it is made again from the tables)."""
        self._ap = None
        self._whole: dict[tuple, tuple[int | None, np.ndarray]] = {}  # (agg, k is None) -> (a k, per query)
        self._fixed: dict[str, pl.Series] = {}  # metrics of aggregates not known here, scored by the core once
        # Metric -> (its per-query column, its mean), for the last few metrics scored: a metric's values read
        # nothing of the k asked for but its own cutoff (mrr and recall@depth are the same at every k of `+`)
        self._scored: dict[Metric, tuple[pl.Series, float]] = {}

    def _frame(self, name: str) -> pl.DataFrame:
        """The rows scoring.per_query_values aggregates ("rows": the judged rows; "ideal": the ideal ranking),
        made as it makes them; kept, or made again from the prepared run when first asked (after `with_query`)."""
        found = self._frames.get(name)
        if found is not None:
            return found
        gain = self.settings.gain
        if name == "rows":
            threshold = self.settings.threshold
            frame = self.prepared.judged.sort("query_id", "rank").with_columns(
                rel=pl.col("grade") >= threshold, judged=pl.col("grade") >= 0,
                nonrel=(pl.col("grade") >= 0) & (pl.col("grade") < threshold),
                dg=graded_gain(pl.col("grade"), gain) * rank_discount(pl.col("rank")),
            ).with_columns(rel_upto=pl.col("rel").cum_sum().over("query_id"),
                           nonrel_upto=pl.col("nonrel").cum_sum().over("query_id"))
        else:
            frame = (self.prepared.qrels.filter(pl.col("grade") > 0)
                     .sort(["query_id", "grade"], descending=[False, True])
                     .with_columns(pos=pl.int_range(1, pl.len() + 1).over("query_id"))
                     .with_columns(ig=graded_gain(pl.col("grade"), gain) * rank_discount(pl.col("pos"))))
        self._frames[name] = frame
        return frame

    def with_query(self, prepared: PreparedRun, one: PreparedRun) -> "ByK | None":
        """`ByK(prepared, settings)` where `prepared` is this one's run with one query's labels changed and
        prepared again (`one`: that query alone, `prepare` on a gold set of that query) and the same queries
        scored: that query's stretch of every table replaced by `one`'s, the rest kept (a review mark; equal
        to the build to the last bit, tests/test_metrics_by_k.py). None when the scored queries changed:
        build it anew then."""
        if one.scored.height != 1 or not (prepared.scored is self.prepared.scored
                                          or prepared.scored.equals(self.prepared.scored)):
            return None
        if self._at is None:
            self._at = {q: i for i, q in enumerate(self.queries.to_list())}
        i = self._at.get(one.scored.item(0, "query_id"))
        if i is None:
            return None
        part = ByK(one, self.settings)
        new = object.__new__(ByK)
        new.prepared, new.settings = prepared, self.settings
        new._order, new.queries, new._at, new._rank_dtype = self._order, self.queries, self._at, self._rank_dtype
        new._base = self._base.with_columns(
            pl.Series(c, spliced(self._base.get_column(c).to_numpy(), i, 1, part._base.get_column(c).to_numpy()),
                      dtype=self._base.schema[c]) for c in self._base.columns if c != "query_id")
        new._frames = {}
        start, n = int(self._rows.starts[i]), int(self._rows.lengths[i])
        new._rows = self._rows.replaced(i, part._rows.ranks)
        for name in ("_rel", "_rel_upto", "_judged_upto", "_dcg"):
            setattr(new, name, spliced(getattr(self, name), start, n, getattr(part, name)))
        new._first_rel = spliced(self._first_rel, i, 1, part._first_rel)
        start, n = int(self._ideal.starts[i]), int(self._ideal.lengths[i])
        new._ideal = self._ideal.replaced(i, part._ideal.ranks)
        new._idcg = spliced(self._idcg, start, n, part._idcg)
        new._clear()
        # the core's aggregates asked for so far (where a cutoff keeps every row): that query's from its rows
        # alone (polars sums each group by itself, whatever else the frame holds: the test holds it so) — kept
        # only while their cutoff still keeps every row: a query's longer ideal ranking (a new relevant chunk)
        # or a deeper row moves the deepest rank past it, and the sums at that cutoff are cut ones again
        for key, (k, values) in self._whole.items():
            if new._kept_all(key[0], k):
                new._whole[key] = (k, spliced(values, i, 1, part._core_aggregate(key[0], k)))
        return new

    # ---- the per-k kernels: each gives an aggregate of aggregates.py (`Aggregate.kernel`) at a cutoff ---------

    def _relevant_count(self, agg: Aggregate, k: int | None) -> np.ndarray:
        return self._rows.at(self._rel_upto, k, 0).astype(np.uint32)

    def _judged_count(self, agg: Aggregate, k: int | None) -> np.ndarray:
        return self._rows.at(self._judged_upto, k, 0).astype(np.uint32)

    def _first_relevant(self, agg: Aggregate, k: int | None) -> pl.Series:
        """The first relevant rank; null where a query has no relevant row, as the group-by leaves it."""
        values = self._first_rel
        return pl.select(pl.when(pl.Series(values == NONE)).then(None).otherwise(pl.Series(values))
                         .cast(self._rank_dtype)).to_series()

    def _gain_sum(self, agg: Aggregate, k: int | None) -> np.ndarray:
        """Gain × discount summed down the ranking the aggregate is over (dcg: the run's; idcg: the ideal)."""
        if self._kept_all(agg, k):
            return self._core_aggregate(agg, k)
        if agg.over == "ideal":
            return self._ideal.at(self._idcg, k, 0.0)
        return self._rows.at(self._dcg, k, 0.0)

    def _precision_sum(self, agg: Aggregate, k: int | None) -> np.ndarray:
        """map's sum of the precision at each relevant row's rank."""
        if self._kept_all(agg, k):
            return self._core_aggregate(agg, k)
        return self._rows.at(self._ap_running(), k, 0.0)

    # kernel name (as `Aggregate.kernel` gives it) -> the method giving that aggregate per scored query
    KERNELS = {"relevant_count": _relevant_count, "judged_count": _judged_count, "first_relevant": _first_relevant,
               "gain_sum": _gain_sum, "precision_sum": _precision_sum}
    # the float sums over the relevant rows alone (their filter keeps every row only where every row is relevant)
    _RELEVANT_ONLY = frozenset({"precision_sum"})

    def _ap_running(self) -> np.ndarray:
        """Per row, map's sum (precision at each relevant row's rank: relevant at or above it / its rank) over
        its query's relevant rows up to it: Kahan over the relevant rows alone, as the filtered group sums."""
        if self._ap is None:
            rows, rel = self._rows, self._rel
            idx = np.flatnonzero(rel)
            prec = self._rel_upto[idx].astype(np.float64) / rows.ranks[idx].astype(np.float64)
            lengths = np.bincount(np.repeat(np.arange(len(rows.starts)), rows.lengths)[idx],
                                  minlength=len(rows.starts)).astype(np.int64)
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
            sums = kahan_running(prec, starts, lengths)
            # every row reads the sum at the last relevant row at or above it
            count = self._rel_upto
            at = np.clip(np.repeat(starts, rows.lengths) + count - 1, 0, max(len(sums) - 1, 0))
            self._ap = np.where(count > 0, sums[at] if len(sums) else 0.0, 0.0)
        return self._ap

    def _kept_all(self, agg: Aggregate, k: int | None) -> bool:
        """Whether the aggregate's filter at cutoff k keeps every row of its frame (polars then sums plainly)."""
        ranked = self._ideal if agg.over == "ideal" else self._rows
        deep = k is None or k >= ranked.span - 1
        return deep and (agg.kernel not in self._RELEVANT_ONLY or bool(self._rel.all()))

    def _core_aggregate(self, agg: Aggregate, k: int | None) -> np.ndarray:
        """The core's own aggregate over its frame (where its filter keeps every row: the same sum at every such
        k), per query in the table's order."""
        key = (agg, k is None)
        if key not in self._whole:
            frame = self._frame(agg.over)
            name, expr = next(iter(agg.make(k).items()))
            agg_frame = frame.group_by("query_id").agg(expr.alias("_v"))
            self._whole[key] = (k, self._order.join(agg_frame, on="query_id", how="left", maintain_order="left")
                                .get_column("_v").fill_null(0.0).to_numpy())
        return self._whole[key][1]

    def score(self, settings: EvalSettings, metrics: list[Metric]) -> RunEval:
        mine = self.settings
        if replace(settings, k=mine.k, depth=mine.depth) != mine:
            raise ValueError("ByK scores at another k or depth only, not other settings")
        metrics = list(dict.fromkeys(metrics))
        scored = self._scored
        # what this call reads, taken from the kept columns with get (a worker thread may drop one meanwhile)
        mine = {m: kept for m in metrics if (kept := scored.get(m)) is not None}
        columns: dict[str, object] = {}
        known, other = [], []
        for m in metrics:
            if m in mine:
                continue
            found = {}
            for agg in m.spec.aggs:
                if agg.kernel is None:
                    break
                found[next(iter(agg.make(m.k)))] = self.KERNELS[agg.kernel](self, agg, m.k)
            else:
                columns.update(found)
                known.append(m)
                continue
            other.append(m)
        if known:
            series = []
            for name, values in columns.items():
                series.append(values.alias(name) if isinstance(values, pl.Series) else pl.Series(name, values))
            table = self._base.with_columns(series)
            values = table.select(*[m.spec.value(m.k).cast(pl.Float64).alias(m.name) for m in known])
            for m in known:
                column = values.get_column(m.name)
                mine[m] = scored[m] = (column, mean_of(column))
        missing = [m for m in other if m.name not in self._fixed]
        if missing:
            values = scoring.per_query_values(self.prepared, missing, settings)
            self._fixed.update({m.name: values.get_column(m.name) for m in missing})
        for m in other:
            mine[m] = scored[m] = (self._fixed[m.name], mean_of(self._fixed[m.name]))
        per_query = pl.DataFrame([self.queries, *(mine[m][0] for m in metrics)])
        means = {m.name: mine[m][1] for m in metrics}
        while len(scored) > _KEPT_METRICS:  # the oldest first, not one asked for now
            oldest = next((m for m in list(scored) if m not in metrics), None)
            if oldest is None:
                break
            scored.pop(oldest, None)
        return RunEval(run=self.prepared.run, metrics=metrics, per_query=per_query, queries=self.prepared.queries,
                       settings=settings, means=means, prepared=self.prepared)
