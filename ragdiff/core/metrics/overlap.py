"""How far two ranked lists moved: Jaccard of the top k and rank-biased overlap (Webber, Moffat & Zobel 2010),
for every query at once (`overlap_of`), and the per-list functions the tests hold it to (`rbo`, `jaccard`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import aligned_frame

RBO_P = 0.9


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
    (core/io/run_order.py orders them), so the query of every row comes from one run-length pass over the query column,
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


def overlap_of(ev_a: RunEval, ev_b: RunEval, gold: Gold | None, scored: list[str], k: int,
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
