"""The orders of the judging queue (`ragdiff judge --order`), and the estimate of the gold still unjudged.

An order is told decisions and yields the next chunk to offer: `next()` names it (and names the same chunk
until something is told), `tell()` records a decision. A decision changes what comes next, never what is on
screen: the caller asks `next()` only when it moves on. The pool is read from the queue (`Pool.from_queue`),
so every order works on exactly the chunks `JudgeQueue.build` pooled.

- `rank`: the queue's own order (query by query in file order; within a query best rank across the runs
  first, then the chunks more runs hold, then by id): what `JudgeQueue.next_unjudged` walks.
- `mtf`: move-to-front (Cormack, Palmer and Clarke, SIGIR 1998). Each run's top `depth` of each query is an
  arm with a priority, all equal at first; the arm of highest priority offers its best unjudged chunk, keeps
  the floor while its chunks are relevant, and loses one point of priority at a chunk that is not. The
  default: it meets every target of bench/pool_orders.py on every collection (80% and 90% of the gold with at
  most 0.8x rank's judgments, 100% with at most 1.2x) and stays with a query while it pays, where `global`
  moves to another query at ~0.9 of its judgments (a new query for the reviewer to read each time).
- `bandit-stationary`: MaxMean (Losada, Parapar and Barreiro, SAC 2016; IP&M 53(5), 2017). The same arms;
  each arm's value is the mean of its judged chunks under a Beta(1, 1) prior, (relevant + 1) / (judged + 2),
  counted over every judged chunk the arm holds, whoever offered it; the arm of highest value offers next.
- `bandit`: MaxMean's non-stationary variant, which measured better (bench/RESULTS.md, "Pool orders"): an
  arm's counts are discounted (x 0.8) at each new judgment of a chunk it holds, so its latest chunks weigh
  more — a run's precision falls as it goes down its ranking.
- `global`: one model over the whole pool (`GoldModel`), the chunk most likely to be gold offered next, in
  any query: the fewest judgments to 50% of the gold on every collection measured.

The arms of `mtf` and `bandit` are (query, run): the published methods choose among the runs of one topic, and
here an arm that stops paying gives way to the arms of the other queries too, so the queue leaves a query
whose runs have run dry (ties go to the arm on the floor, then to its query, then to file order and run order).
Without that, a per-query order changes the pool-wide curve by at most one query's pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ragdiff.core import vocab
from ragdiff.core.io.choices import POOL_ORDERS
from ragdiff.core.judge.gold_model import GoldModel

if TYPE_CHECKING:
    from ragdiff.core.io.runs import Run
    from ragdiff.core.judge.pool import JudgeQueue
    from ragdiff.core.labels.gold import Gold

# bandit's non-stationary discount: measured against the stationary MaxMean in bench/pool_orders.py
NS_GAMMA = 0.8


def is_relevant(kind: str | None, grade: int | None, threshold: int = 1) -> bool:
    """A judgment that counts as gold at `threshold` (grade >= threshold; gold without a grade is grade 1)."""
    return kind == vocab.GOLD and (1 if grade is None else grade) >= threshold


def draft_says(grade: int | None, threshold: int = 1) -> int:
    """What a drafted grade says, read as the judgment accepting it would be (a drafted 0 is not relevant, a draft
    without a grade is gold): +1 gold at `threshold`, -1 not."""
    return 1 if is_relevant(vocab.GOLD, grade, threshold) else -1


@dataclass
class Pool:
    """The pooled chunks as arrays, in the queue's order: item i is (queries[query[i]], chunk_ids[i]) and
    ranks[i, r] its rank in run r at any depth (0: not returned)."""

    queries: tuple[str, ...]
    chunk_ids: list[str]
    query: np.ndarray  # int, per item
    ranks: np.ndarray  # int (items, runs)
    depth: int
    judged: np.ndarray  # bool: judged when the queue was built
    relevant: np.ndarray  # bool: of those, the gold ones
    entry: np.ndarray | None = None  # int, per item: its index in the queue's list of its query (from_queue)
    # int8, per item: what a model drafted for an unjudged chunk (`draft_says`: +1, -1; 0 no draft); None: no draft
    drafted: np.ndarray | None = None
    _index: dict[tuple[str, str], int] | None = field(default=None, repr=False)

    @property
    def index(self) -> dict[tuple[str, str], int]:
        """(query, chunk) -> its item, made at the first look (~85 ms at 10,000 queries, which the gold-left
        estimate never looks at)."""
        if self._index is None:
            self._index = {(self.queries[q], c): i for i, (q, c) in enumerate(zip(self.query.tolist(), self.chunk_ids))}
        return self._index

    @index.setter
    def index(self, value: dict[tuple[str, str], int]) -> None:
        self._index = value

    @classmethod
    def from_queue(cls, queue: JudgeQueue, threshold: int = 1) -> Pool:
        chunk_ids, query, entry_index, ranks, judged, relevant, drafted = [], [], [], [], [], [], []
        for qi, qid in enumerate(queue.queries):
            for ei, entry in enumerate(queue.entries.get(qid, ())):
                if not entry.pooled:
                    continue
                chunk_ids.append(entry.chunk_id)
                query.append(qi)
                entry_index.append(ei)
                ranks.append([0 if r is None else r for r in entry.ranks])
                done = queue.is_judged(qid, entry.chunk_id)
                kind, grade = queue.label_of(qid, entry.chunk_id)
                judged.append(done)
                relevant.append(done and is_relevant(kind, grade, threshold))
                drafted.append(draft_says(grade, threshold) if not done and kind == vocab.DRAFTED else 0)
        runs = len(queue.run_names)
        pool = cls(tuple(queue.queries), chunk_ids, np.array(query, dtype=np.int64),
                   np.array(ranks, dtype=np.int64).reshape(len(chunk_ids), runs), queue.depth,
                   np.array(judged, dtype=bool), np.array(relevant, dtype=bool))
        pool.index = {(queue.queries[q], c): i for i, (q, c) in enumerate(zip(query, chunk_ids))}
        pool.entry = np.array(entry_index, dtype=np.int64)
        if any(drafted):
            pool.drafted = np.array(drafted, dtype=np.int8)
        return pool

    @classmethod
    def from_runs(cls, runs: list[Run], gold: Gold, depth: int = 10, threshold: int = 1) -> Pool:
        """The pool `from_queue` reads off `JudgeQueue.build(runs, gold, depth)`, the same items in the same order,
        straight from the queue's frame (`pool.pool_frame`): no queue, store or entries made (at 10,000 queries
        the queue took ~2 s of the gold-left estimate's ~2.3 s). No `entry`: it walks no queue."""
        from ragdiff.core.judge.pool import pool_frame

        frame, rank_cols = pool_frame(runs, gold, depth)
        queries = gold.queries.sort("position")
        # a query's index: its position's among the gold set's, in file order
        query = np.searchsorted(queries.get_column("position").to_numpy(),
                                frame.get_column("position").to_numpy()).astype(np.int64)
        judged = frame.get_column("judged").to_numpy().astype(bool)
        relevant = np.zeros(len(judged), dtype=bool)
        rows = np.flatnonzero(judged)
        # the store's label of a judged chunk is its judgment (level, grade): is_relevant's rule, per judged chunk
        relevant[rows] = [is_relevant(kind, grade, threshold)
                          for kind, grade in frame.select("level", "grade")[rows].iter_rows()]
        ranks = (frame.select(rank_cols).fill_null(0).to_numpy().astype(np.int64)
                 .reshape(frame.height, len(rank_cols)))
        query_ids = tuple(queries.get_column("query_id").to_list())
        chunk_ids = frame.get_column("chunk_id").to_list()
        pool = cls(query_ids, chunk_ids, query, ranks, depth, judged, relevant)
        if gold.drafts.height:
            import polars as pl

            # the store shows a draft where the chunk has no judgment row at all (core/labels/store.py)
            drafts = gold.drafts.select("query_id", "chunk_id", "grade", has_draft=pl.lit(True))
            said = (frame.select("query_id", "chunk_id", "level")
                    .join(drafts, on=["query_id", "chunk_id"], how="left", maintain_order="left"))
            rows = np.flatnonzero((said.get_column("has_draft").fill_null(False)
                                   & said.get_column("level").is_null()).to_numpy())
            if len(rows):
                pool.drafted = np.zeros(len(pool), dtype=np.int8)
                pool.drafted[rows] = [draft_says(g, threshold) for g in said.get_column("grade").gather(rows).to_list()]
        return pool

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def runs(self) -> int:
        return self.ranks.shape[1]

    def item(self, i: int) -> tuple[str, str]:
        return self.queries[self.query[i]], self.chunk_ids[i]


class Order:
    """The state every order keeps: which chunks are done (and which of them are gold), which were skipped
    (offered again only when nothing else is left), and the query of the last decision (ties stay on it)."""

    name = ""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.done = pool.judged.copy()
        self.gold = pool.relevant.copy()
        self.skipped: set[int] = set()
        self.current_query = -1

    def next(self) -> tuple[str, str] | None:
        """The chunk to offer next, or None when every pooled chunk is done."""
        i = self.next_index()
        return None if i is None else self.pool.item(i)

    def next_index(self, avoid: set[int] | frozenset[int] = frozenset()) -> int | None:
        """The item to offer next, never one of `avoid` (a dropped query's); a skipped one only when nothing
        else is left."""
        i = self._pick(self.skipped | avoid if self.skipped else set(avoid))
        if i is None and self.skipped:
            i = self._pick(set(avoid))
        return i

    def tell(self, query_id: str, chunk_id: str, relevant: bool) -> None:
        """A decision on one chunk (a chunk outside the pool, found in the corpus, teaches nothing)."""
        i = self.pool.index.get((query_id, chunk_id))
        if i is not None:
            self.tell_index(i, relevant)

    def tell_index(self, i: int, relevant: bool) -> None:
        if self.done[i]:
            return
        self.done[i], self.gold[i] = True, relevant
        self.skipped.discard(i)
        self.current_query = int(self.pool.query[i])
        self._learn(i, relevant)

    def forget_index(self, i: int) -> None:
        """A decision taken back (an undo, a save that failed): the chunk is offered again. What the order
        learnt from it is taken back as far as its state allows (`_unlearn`)."""
        if not self.done[i]:
            return
        was = bool(self.gold[i])
        self.done[i], self.gold[i] = False, False
        self._unlearn(i, was)

    def skip(self, query_id: str, chunk_id: str) -> None:
        i = self.pool.index.get((query_id, chunk_id))
        if i is not None and not self.done[i]:
            self.skipped.add(i)

    def _open(self, avoid: set[int]) -> np.ndarray:
        free = ~self.done
        if avoid:
            free = free.copy()
            free[list(avoid)] = False
        return free

    def _pick(self, avoid: set[int]) -> int | None:
        raise NotImplementedError

    def _learn(self, i: int, relevant: bool) -> None:
        pass

    def _unlearn(self, i: int, relevant: bool) -> None:
        pass


class RankOrder(Order):
    """The queue's own order: the first chunk not done, in queue order."""

    name = "rank"

    def _pick(self, avoid: set[int]) -> int | None:
        free = self._open(avoid)
        i = int(np.argmax(free)) if len(free) else 0
        return i if len(free) and free[i] else None


class _Arms(Order):
    """Arms = (query, run): each run's top `depth` of a query, best rank first. An arm's head is its best chunk
    not done; the arm with the highest `_value` offers its head (ties: the arm that offered last, then its
    query, then file order, then run order)."""

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self.arm_items: list[np.ndarray] = []
        self.arm_query: list[int] = []
        # item -> the arm of each run holding it, -1 for none: one array, where a list per item made ~190,000
        # objects every full collection of the cyclic collector walked (145 -> 260 ms at 10,000 queries)
        members = np.full((len(pool), pool.runs), -1, dtype=np.int64)
        # each query's items, in queue order, from one stable sort (a scan per query took 2 s at 10,000 queries)
        by_query = np.argsort(pool.query, kind="stable")
        starts = np.searchsorted(pool.query[by_query], np.arange(len(pool.queries) + 1))
        for q in range(len(pool.queries)):
            mine = by_query[starts[q]:starts[q + 1]]
            for r in range(pool.runs):
                ranks = pool.ranks[mine, r]
                inside = mine[(ranks >= 1) & (ranks <= pool.depth)]
                if not len(inside):
                    continue
                items = inside[np.argsort(pool.ranks[inside, r], kind="stable")]
                members[items, r] = len(self.arm_items)
                self.arm_items.append(items)
                self.arm_query.append(q)
        self.members = members
        self.head = [0] * len(self.arm_items)
        self.last_arm = -1
        self.offered: dict[int, int] = {}  # item -> the arm that offered it
        self.relevant_count = np.zeros(len(self.arm_items))
        self.judged_count = np.zeros(len(self.arm_items))
        done = np.flatnonzero(self.done)
        for arms, gold in zip(members[done].tolist(), self.gold[done].tolist()):
            for a in arms:
                if a >= 0:
                    self._count(a, gold)

    def _arms_of(self, i: int) -> list[int]:
        """The arms holding item i, in arm order."""
        return [int(a) for a in self.members[i] if a >= 0]

    def _count(self, arm: int, relevant: bool) -> None:
        self.relevant_count[arm] += relevant
        self.judged_count[arm] += 1

    def _head(self, arm: int, avoid: set[int]) -> int | None:
        items = self.arm_items[arm]
        h = self.head[arm]
        while h < len(items) and self.done[items[h]]:
            h += 1
        self.head[arm] = h
        for i in items[h:]:
            if not self.done[i] and i not in avoid:
                return int(i)
        return None

    def _pick(self, avoid: set[int]) -> int | None:
        best, best_key, best_item = None, None, None
        for arm in range(len(self.arm_items)):
            item = self._head(arm, avoid)
            if item is None:
                continue
            key = (self._value(arm), arm == self.last_arm, self.arm_query[arm] == self.current_query, -arm)
            if best_key is None or key > best_key:
                best, best_key, best_item = arm, key, item
        if best is None:
            # chunks no arm holds (a drafted query's drafted chunks no run returned in its top depth): the first
            # left in queue order, so the pool is judged to its end
            free = self._open(avoid)
            return int(np.argmax(free)) if free.any() else None
        self.offered[best_item] = best
        return best_item

    def _value(self, arm: int) -> float:
        raise NotImplementedError

    def _learn(self, i: int, relevant: bool) -> None:
        arm = self.offered.get(i)
        self.last_arm = arm if arm is not None else -1
        for a in self._arms_of(i):
            self._count(a, relevant)

    def _unlearn(self, i: int, relevant: bool) -> None:
        # the counts without the decision (a discounted count loses it undiscounted: the nearest the state
        # allows), and the arms' heads back where the chunk is offered again
        for a in self._arms_of(i):
            self.relevant_count[a] = max(0.0, self.relevant_count[a] - relevant)
            self.judged_count[a] = max(0.0, self.judged_count[a] - 1)
            self.head[a] = 0


class MoveToFront(_Arms):
    name = "mtf"

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self.priority = np.zeros(len(self.arm_items))

    def _value(self, arm: int) -> float:
        return self.priority[arm]

    def _learn(self, i: int, relevant: bool) -> None:
        super()._learn(i, relevant)
        if not relevant:
            # the arm that offered it; a chunk decided elsewhere lowers every arm it heads
            arms = [self.offered[i]] if i in self.offered else self._arms_of(i)
            for a in arms:
                self.priority[a] -= 1
            self.last_arm = -1

    def _unlearn(self, i: int, relevant: bool) -> None:
        super()._unlearn(i, relevant)
        if not relevant:
            for a in [self.offered[i]] if i in self.offered else self._arms_of(i):
                self.priority[a] += 1


class MaxMean(_Arms):
    name = "bandit"

    def __init__(self, pool: Pool, gamma: float = 1.0) -> None:
        self.gamma = gamma
        super().__init__(pool)

    def _count(self, arm: int, relevant: bool) -> None:
        self.relevant_count[arm] = self.gamma * self.relevant_count[arm] + relevant
        self.judged_count[arm] = self.gamma * self.judged_count[arm] + 1

    def _value(self, arm: int) -> float:
        return (self.relevant_count[arm] + 1.0) / (self.judged_count[arm] + 2.0)


class GlobalOrder(Order):
    """The chunk anywhere in the pool the model holds most likely gold (ties: the query of the last decision,
    then queue order)."""

    name = "global"

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self.model = GoldModel(pool)

    def _pick(self, avoid: set[int]) -> int | None:
        free = self._open(avoid)
        if not free.any():
            return None
        score = np.where(free, self.model.probabilities(), -1.0)
        score = score + np.where(self.pool.query == self.current_query, 1e-9, 0.0)
        return int(np.argmax(score))

    def _learn(self, i: int, relevant: bool) -> None:
        self.model.tell_index(i, relevant)

    def _unlearn(self, i: int, relevant: bool) -> None:
        self.model.untell_index(i)


def make_order(name: str, pool: Pool) -> Order:
    if name == "rank":
        return RankOrder(pool)
    if name == "mtf":
        return MoveToFront(pool)
    if name == "bandit":
        return MaxMean(pool, gamma=NS_GAMMA)
    if name == "bandit-stationary":
        order = MaxMean(pool)
        order.name = name
        return order
    if name == "global":
        return GlobalOrder(pool)
    raise ValueError(f"unknown order {name!r}: one of {', '.join(POOL_ORDERS)}")


def percent_needed(gold: int, percent: int) -> int:
    """How many gold chunks `percent` of `gold` is, rounded up (100% of 7 is 7, 80% of 7 is 6)."""
    return math.ceil(gold * percent / 100 - 1e-9)


class QueueOrder:
    """An order walking a `JudgeQueue` (`ragdiff judge --order`), and the gold-left estimate of its header.

    The queue tells it each decision as the key is pressed (`tell`, from `JudgeQueue.decide`), each skip and
    flag (`skip`), and every change of the judgment store (`changed`: a decision made elsewhere is learnt, one
    taken back or failed is forgotten and offered again). `next` names the position the queue moves to after a
    decision; it is asked only then, so what is on screen never changes under a key. `rank` keeps the queue's
    own walk (`adaptive` is False) and only feeds the estimate. The estimate is `GoldModel.gold_left` (the
    global order's model, shared with it when the order is `global`)."""

    def __init__(self, queue: JudgeQueue, name: str, threshold: int = 1) -> None:
        from ragdiff.core.judge.pool import Position

        self.name = name
        self.queue = queue
        self.threshold = threshold
        self.pool = Pool.from_queue(queue, threshold)
        self.order = make_order(name, self.pool)
        self.model: GoldModel = self.order.model if isinstance(self.order, GlobalOrder) else GoldModel(self.pool)
        self.adaptive = name != "rank"
        self._query_index = {q: i for i, q in enumerate(queue.queries)}
        self._position = Position

    def _learn(self, i: int, relevant: bool) -> None:
        if self.order.done[i] and bool(self.order.gold[i]) != relevant:  # judged again, otherwise
            self._forget(i)
        self.order.tell_index(i, relevant)
        if self.model is not getattr(self.order, "model", None):
            self.model.tell_index(i, relevant)

    def _forget(self, i: int) -> None:
        self.order.forget_index(i)
        if self.model is not getattr(self.order, "model", None):
            self.model.untell_index(i)

    def tell(self, query_id: str, chunk_id: str, kind: str | None, grade: int | None) -> None:
        """A decision on its way to the label file (a chunk found in the corpus, outside the pool, teaches nothing)."""
        i = self.pool.index.get((query_id, chunk_id))
        if i is not None and kind is not None:
            self._learn(i, is_relevant(kind, grade, self.threshold))

    def skip(self, query_id: str, chunk_id: str) -> None:
        self.order.skip(query_id, chunk_id)

    def skipped(self, query_id: str, chunk_id: str) -> bool:
        """Skipped or flagged, and not decided since: offered again only when nothing else is left."""
        i = self.pool.index.get((query_id, chunk_id))
        return i is not None and i in self.order.skipped

    def changed(self, query_id: str, chunk_id: str, judged: bool, kind: str | None, grade: int | None) -> None:
        """The store's judgment of one chunk now (`judged`: a person's), once the queue has taken it in."""
        i = self.pool.index.get((query_id, chunk_id))
        if i is None:
            return
        if judged:
            self._learn(i, is_relevant(kind, grade, self.threshold))
        elif self.order.done[i] and not self.queue.is_in_flight(query_id, chunk_id):
            self._forget(i)

    def failed(self, query_id: str, chunk_id: str) -> None:
        """A decision the writer could not save: unjudged again, offered again."""
        i = self.pool.index.get((query_id, chunk_id))
        if i is not None and not self.queue.is_judged(query_id, chunk_id):
            self._forget(i)

    def next(self):
        """The position of the chunk the order offers next (None: every pooled chunk is done). A chunk the queue
        holds done that the order was not told of (the queue is the truth) is learnt on the way."""
        queue = self.queue
        dropped = frozenset(int(i) for q in queue.dropped_queries
                            for i in np.flatnonzero(self.pool.query == self._query_index[q]))
        while True:
            i = self.order.next_index(dropped)
            if i is None:
                return None
            query_id, chunk_id = self.pool.item(i)
            if not queue.is_done(query_id, chunk_id):
                return self._position(int(self.pool.query[i]), int(self.pool.entry[i]))
            kind, grade = queue.label_of(query_id, chunk_id)
            self._learn(i, queue.is_judged(query_id, chunk_id) and is_relevant(kind, grade, self.threshold))

    def gold_left(self, query_id: str | None = None) -> float:
        """The estimate of the gold among the pool's unjudged chunks: the whole pool's, or one query's."""
        total, per_query = self.model.gold_left()
        if query_id is None:
            return total
        return float(per_query[self._query_index[query_id]])
