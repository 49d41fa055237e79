"""The review's numbers at one k: a `Basis` (what one generation of labels gives, the same at every k) and
`view_at(basis, k)`, which scores both runs at k and classifies every query (hit or miss in A and B, the
filters' members, the flips first). `view_at` reads nothing but its basis, so a worker thread can build
another k's `KView` while the screen goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from ragdiff.core.metrics import diff as core_diff
from ragdiff.core.metrics.by_k import ByK, Ranked
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import PreparedRun, judged_pairs, rows_without
from ragdiff.core.metrics.specs import EvalSettings, default_metrics


# slots, not frozen: set_k makes one per query (10,000 frozen ones cost ~10 ms of CPU per k, these ~1 ms)
@dataclass(slots=True)
class QueryRow:
    query_id: str
    text: str
    position: int
    unanswerable: bool
    hit_a: bool | None  # None for an unanswerable query
    hit_b: bool | None
    rr_a: float | None
    rr_b: float | None
    ndcg_a: float | None
    ndcg_b: float | None
    unjudged_a: int  # unjudged chunks in run A's top k
    unjudged_b: int
    in_a: bool  # the run has the query at all
    in_b: bool

    @property
    def kind(self) -> str:
        if self.unanswerable:
            return "unanswerable"
        if self.hit_a and not self.hit_b:
            return "hit_to_miss"
        if self.hit_b and not self.hit_a:
            return "miss_to_hit"
        return "both_hit" if self.hit_a else "both_miss"

    @property
    def delta_rr(self) -> float | None:
        return None if self.rr_a is None or self.rr_b is None else self.rr_b - self.rr_a

    @property
    def delta_ndcg(self) -> float | None:
        return None if self.ndcg_a is None or self.ndcg_b is None else self.ndcg_b - self.ndcg_a


class QueryRows(Mapping):
    """query id -> `QueryRow` at one k, each made when first read from the view's per-query arrays: the screen
    reads the ~40 rows on screen, and 10,000 of them made at every k cost ~16 ms of CPU (their columns as
    Python lists ~1.5 ms more)."""

    def __init__(self, basis: "Basis", sides: tuple["SideAtK", "SideAtK"]):
        self._basis = basis
        self._sides = sides
        self._made: dict[str, QueryRow] = {}

    def __getitem__(self, query_id: str) -> QueryRow:
        row = self._made.get(query_id)
        if row is None:
            basis = self._basis
            i = basis.at[query_id]
            a, b = self._sides
            row = self._made[query_id] = QueryRow(
                query_id, basis.texts[i], basis.positions[i], bool(basis.unanswerable[i]),
                a.value(a.hit, i, bool), b.value(b.hit, i, bool), a.value(a.rr, i, float), b.value(b.rr, i, float),
                a.value(a.ndcg, i, float), b.value(b.ndcg, i, float), int(a.unjudged[i]), int(b.unjudged[i]),
                query_id in basis.present[0], query_id in basis.present[1])
        return row

    def __iter__(self):
        return iter(self._basis.at)

    def __len__(self) -> int:
        return len(self._basis.at)


@dataclass(frozen=True, repr=False)
class SideAtK:
    """One run's per-query numbers at one k, by query in the basis' order (`scored`: the run's evaluation
    scored the query; the other arrays mean nothing where it did not)."""

    scored: np.ndarray  # bool
    hit: np.ndarray  # bool: recall@k > 0
    rr: np.ndarray  # float64: reciprocal rank
    ndcg: np.ndarray  # float64: nDCG@k
    unjudged: np.ndarray  # int64: unjudged chunks in the top k (0 for a query no score counts)

    def value(self, column: np.ndarray, i: int, kind):
        """Query i's value as a Python bool/float, None where the query is not scored."""
        return kind(column[i]) if self.scored[i] else None


@dataclass(frozen=True, repr=False)
class Basis:
    """What the per-k numbers are computed from, for one generation of labels. `view_at(basis, k)` reads
    nothing else, so a worker thread can build another k's view while the screen goes on."""

    def __repr__(self) -> str:
        # short: Textual's @work describes a worker by the repr of its arguments, and printing these tables
        # (million-element arrays) cost ~10 ms of every `+` whose k the worker had scored ahead
        return f"Basis(generation={self.generation}, queries={len(self.order)})"

    generation: int
    settings: EvalSettings  # at any k: view_at sets it
    prepared: tuple[PreparedRun, PreparedRun]
    by_k: tuple[ByK, ByK]  # the prepared runs scored at every k at once (each k a lookup)
    unjudged: tuple[Ranked, Ranked] | None  # per run, its unjudged rows down to depth, by query in `order`
    # (None until the worker has found them: unjudged@k has no count yet)
    queries: pl.DataFrame  # query_id, text, position: every gold query in gold order
    order: list[str]  # the same ids
    at: dict[str, int]  # query id -> its position in `order`
    present: tuple[dict, dict]  # query ids run A / run B returned something for
    slots: tuple[np.ndarray, np.ndarray]  # per run, where each of its scored queries (per_query's order) is in `order`
    unanswerable: np.ndarray  # per query in `order`: unanswerable and not scored (its own filter, no marks)
    # the same at every k, made once per basis: what view_at made again at each k
    texts: list[str]  # per query in `order`: its text
    positions: list[int]  # its position in the gold set
    ids: np.ndarray  # `order` as an object array (the filters' members are masks of it)
    scored: tuple[np.ndarray, np.ndarray]  # per run, per query in `order`: scored by the run's evaluation
    unanswerable_ids: list[str]
    both_scored: np.ndarray  # the queries both runs scored, as places in `order`, in run A's per-query order

    @classmethod
    def build(cls, generation: int, settings: EvalSettings, prepared: tuple[PreparedRun, PreparedRun],
              by_k: tuple[ByK, ByK], unjudged: tuple[Ranked, Ranked] | None, queries: pl.DataFrame, order: list[str],
              at: dict[str, int], present: tuple[dict, dict]) -> "Basis":
        slots = tuple(np.fromiter((at[q] for q in b.queries.to_list()), dtype=np.int64, count=len(b.queries))
                      for b in by_k)
        scored = np.zeros(len(order), dtype=bool)
        scored[slots[0]] = True
        unanswerable = np.zeros(len(order), dtype=bool)
        unanswerable[[at[q] for q in prepared[0].queries.unanswerable if q in at]] = True
        unanswerable &= ~scored
        by_run = []
        for run_slots in slots:
            mask = np.zeros(len(order), dtype=bool)
            mask[run_slots] = True
            by_run.append(mask)
        ids = np.array(order, dtype=object)
        return cls(generation, settings, prepared, by_k, unjudged, queries, order, at, present, slots,
                   unanswerable, queries.get_column("text").to_list(), queries.get_column("position").to_list(),
                   ids, tuple(by_run), ids[unanswerable].tolist(), slots[0][by_run[1][slots[0]]])


@dataclass
class KView:
    """Everything the screen shows that depends on k (one generation of labels)."""

    k: int
    generation: int
    eval_a: RunEval
    eval_b: RunEval
    rows: QueryRows
    hit_to_miss: list[str]
    miss_to_hit: list[str]
    members: dict[str, list[str] | None]  # filter key -> query ids in gold order (flips: core order); None: not known yet
    flips_order: list[str]
    counted_unjudged: bool = True  # built from a basis with the unjudged rows (else members["unjudged"] is None)


def view_at(basis: Basis, k: int) -> KView:
    """Both runs' numbers at k (lookups in the runs' `ByK`), and every query classified (the work of a k
    change): per query in gold order, hit, reciprocal rank and nDCG at k in A and B (None where not scored),
    unjudged chunks in each top k, whether unanswerable, and the filters' members."""
    settings = replace(basis.settings, k=k)
    metrics = default_metrics(k, settings.depth, "header")
    eval_a, eval_b = (by_k.score(settings, metrics) for by_k in basis.by_k)
    n = len(basis.order)
    counted = basis.unjudged is not None
    sides, recalls = [], []
    for i, (ev, slots) in enumerate(((eval_a, basis.slots[0]), (eval_b, basis.slots[1]))):
        values = ev.per_query
        columns = []
        for name in (f"recall@{k}", "mrr", f"ndcg@{k}"):
            column = np.zeros(n, dtype=np.float64)
            column[slots] = values.get_column(name).to_numpy()
            columns.append(column)
        # unjudged@k counts the scored queries' unjudged chunks, as judged@k, the bounds and diff's unjudged
        # check do (metrics.unjudged_in): an unanswerable query is in no score, and has its own filter
        unjudged = (np.where(basis.scored[0], basis.unjudged[i].upto(k), 0) if counted
                    else np.zeros(n, dtype=np.int64))
        sides.append(SideAtK(basis.scored[i], columns[0] > 0, columns[1], columns[2], unjudged))
        recalls.append(columns[0])
    a, b = sides
    ids = basis.ids
    # the core's flips (core_diff.flips_of: recall@k > 0 in one run and 0 in the other, over the queries both
    # scored, in A's order) of the same recall columns
    both = basis.both_scored
    hit_to_miss, miss_to_hit = core_diff.flips_of(ids[both], recalls[0][both], recalls[1][both])
    flipped = np.zeros(n, dtype=bool)
    flipped[[basis.at[q] for q in hit_to_miss]] = True
    flipped[[basis.at[q] for q in miss_to_hit]] = True
    members = {
        "all": basis.order,
        "hit_to_miss": hit_to_miss,
        "miss_to_hit": miss_to_hit,
        "both_miss": ids[~basis.unanswerable & ~a.hit & ~b.hit].tolist(),  # hit is False where not scored
        "unanswerable": basis.unanswerable_ids,
        "unjudged": ids[(a.unjudged > 0) | (b.unjudged > 0)].tolist() if counted else None,
    }
    return KView(k, basis.generation, eval_a, eval_b, QueryRows(basis, (a, b)), hit_to_miss, miss_to_hit, members,
                 hit_to_miss + miss_to_hit + ids[~flipped].tolist(), counted)


def unjudged_rows_of(frame: pl.DataFrame, judged: pl.DataFrame, depth: int) -> pl.DataFrame:
    """query_id, rank of `frame`'s rows down to depth with no judgment (grade >= 0) in `judged`, in their order:
    the core's rule (metrics.rows_without)."""
    return rows_without(frame, judged, depth).select("query_id", "rank")


def unjudged_tables(frames: dict[str, pl.DataFrame], judgments: pl.DataFrame, depth: int, at: dict[str, int],
                    queries: int) -> tuple[Ranked, Ranked]:
    """Both runs' unjudged rows down to depth (no judgment in the gold set's `judgments`), by query in the order
    of `at` (what `view_at` counts unjudged@k from; a mark replaces one query's stretch, `Ranked.replaced`)."""
    judged = judged_pairs(judgments)
    return tuple(Ranked.of_stretches(unjudged_rows_of(frames[side], judged, depth), "rank", at, queries)
                 for side in ("a", "b"))
