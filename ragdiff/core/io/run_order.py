"""Every run reader's last step: its rows checked for repeated chunks, ordered and ranked into RUN_SCHEMA's
frame (`ordered_frame`), the same for a whole run and for each part of a run read in parts (core/io/trec_run.py).

Order inside a query (DESIGN.md, "Metrics"): list formats keep the order in the file, which is what the
retriever returned; TREC runs and score maps are sorted by score descending, ties broken by chunk id in
descending byte order — trec_eval's rule, so the numbers match it exactly.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError

# every run, ordered and ranked:
RUN_SCHEMA = {
    "query_id": pl.String,
    "chunk_id": pl.String,
    "score": pl.Float64,
    "rank": pl.UInt32,
    "line": pl.UInt32,
}


def ordered_frame(path: Path, frame: pl.DataFrame, sort_by_score: str | bool, keep_first: bool = False,
                  allow: bool = False) -> pl.DataFrame:
    """A loader's rows checked for repeated chunks, ordered and ranked (RUN_SCHEMA): the last step of every
    loader, and of each part of a run read in parts (core/metrics/partitioned.py).

    The ordering takes the columns out of `frame` as it gathers them (a TREC run's frame is left empty), so
    the rows are not held twice while they are ordered."""
    # query ids as a Categorical while deduplicating and sorting: u32 keys instead of strings (bench/: the
    # sort of a million-line run 0.26 s -> 0.18 s); rows of one query stay together, which is all the sort needs
    if frame.schema["query_id"] != pl.Categorical:  # the plain TREC reader reads it so
        frame = frame.with_columns(pl.col("query_id").cast(pl.Categorical))
    if _by_score(frame, sort_by_score) and not (allow or keep_first):
        # the repeat check rides on score_order's blocks of whole queries: each block's pair hashes sorted in
        # cache, where one sort of the whole run's (`_may_repeat`) took ~50 ms of a million-line run
        order, rank, queries, may_repeat = score_order(frame, repeats=True)
        if may_repeat:
            _refuse_repeats(path, frame)
        return _gathered(frame, order, rank, queries)
    frame = _dedupe(path, frame, keep_first, allow=allow)
    return _order(frame, sort_by_score)


def _by_score(frame: pl.DataFrame, sort_by_score: str | bool) -> bool:
    """Whether `score_order` orders the frame: sorted by score, every row has one, and there is more than one."""
    return sort_by_score is True and frame.height > 1 and frame.get_column("score").null_count() == 0


def _gathered(frame: pl.DataFrame, order, rank, queries: pl.Series) -> pl.DataFrame:
    """RUN_SCHEMA's frame of `frame`'s rows in `score_order`'s order, with its ranks and ordered query ids."""
    index = pl.Series(order, dtype=pl.UInt32 if frame.height < 2**32 else pl.UInt64)
    del order
    # a column at a time, each let go of once gathered: the unordered rows and the ordered ones side by
    # side would be the loading's peak
    frame.drop_in_place("rank")  # the loader's placeholder
    frame.drop_in_place("query_id")  # score_order gave the ordered ids as strings
    ordered = {name: frame.drop_in_place(name).gather(index) for name in ("chunk_id", "score", "line")}
    del index
    ordered["query_id"] = queries
    ordered["rank"] = pl.Series("rank", rank, dtype=pl.UInt32)
    return pl.DataFrame([ordered[name] for name in RUN_SCHEMA])


def _order(frame: pl.DataFrame, sort_by_score: str | bool) -> pl.DataFrame:
    if sort_by_score == "rank":
        # the file gave explicit ranks: they are the order (ties fall back to trec_eval's rule)
        frame = frame.sort(["query_id", "rank", "score", "chunk_id"], descending=[False, False, True, True],
                           nulls_last=True)
    elif _by_score(frame, sort_by_score):
        return _gathered(frame, *score_order(frame)[:3])
    elif sort_by_score:
        frame = frame.sort(["query_id", "score", "chunk_id"], descending=[False, True, True], nulls_last=True)
    else:
        frame = frame.sort(["query_id", "line"], maintain_order=True)
    # sorted by query, so a query's rows are one stretch: rank = position - where the stretch starts + 1
    position = pl.int_range(pl.len(), dtype=pl.UInt32)
    starts = pl.when(pl.col("query_id") != pl.col("query_id").shift(1)).then(position).forward_fill().fill_null(0)
    return frame.with_columns(rank=position - starts + 1, query_id=pl.col("query_id").cast(pl.String)).select(
        list(RUN_SCHEMA))


def _query_codes(queries: pl.Series):
    """(codes, table, ids): the query ids' physical Categorical codes (numpy u32, one a row), a table from each
    code to the id's place in the ids' byte order (numpy u32) — the first key of the sort — and the distinct
    ids in that order (strings: ids.gather(place) is a row's id)."""
    import numpy as np

    cat = queries if queries.dtype == pl.Categorical else queries.cast(pl.Categorical)
    distinct = cat.unique()
    # the distinct ids' codes in the ids' byte order (sorted as strings: how a Categorical sorts has changed
    # between polars versions)
    by_id = distinct.cast(pl.String).arg_sort()
    in_order = distinct.to_physical().gather(by_id).to_numpy()
    table = np.zeros(int(in_order.max()) + 1, dtype=np.uint32)
    table[in_order] = np.arange(len(in_order), dtype=np.uint32)
    return cat.to_physical().to_numpy(), table, distinct.gather(by_id).cast(pl.String)


def score_order(frame: pl.DataFrame, repeats: bool = False):
    """(order, rank, query_ids, may_repeat): the permutation (numpy indices) that sorts the rows by query, score
    descending, then chunk id descending — trec_eval's rule —, each sorted row's rank in its query (numpy u32),
    each sorted row's query id (a String series: gathered from the distinct ids, where casting the ordered
    Categorical column built a million strings, ~10 ms), and with `repeats`, False when no (query, chunk) pair
    repeats (as `_may_repeat`: each block's pair hashes sorted, no two neighbours equal; True is a repeat or a
    collision, for the exact check).

    polars' sort by those three columns encodes every row as bytes and sorts those (0.16 s of a million-row
    run); here numpy sorts. The rows are first grouped by query — a stable radix sort of the query's place in
    the ids' byte order (16-bit digits: linear) —, then sorted by score a block of whole queries at a time
    (`_SORT_BLOCK` rows: one argsort of their u64 keys, then a stable radix sort by the query inside the
    block), so each sort and gather stays in a core's cache however long the run: sorting and gathering whole
    columns of a 10M-line run at once went out to memory for every row (3.5 s of its 10 s; a million-line
    run's 8 MB columns fit in the cache, 80 MB ones do not). Rows still tied after that share a query and a
    score: only those are sorted again, with their chunk ids."""
    import numpy as np

    n = frame.height
    key = frame.get_column("score").to_numpy(writable=True)  # the process's own copy of the scores (f64)
    key += 0.0  # -0.0 becomes 0.0: equal scores, a tie for the chunk id (as in trec_eval, and polars' sort)
    key = key.view(np.uint64)
    # a key that sorts ascending as the scores sort descending: a positive score's bits xor 0x7FF…F (it falls
    # as the score grows, below 2^63), a negative score's bits as they are (they grow as the score falls)
    np.bitwise_xor(key, np.uint64(0x7FFF_FFFF_FFFF_FFFF), out=key, where=key < np.uint64(1 << 63))
    codes, table, ids = _query_codes(frame.get_column("query_id"))
    queries = len(ids)
    wide = queries > 1 << 16
    place = np.take(table if wide else table.astype(np.uint16), codes)  # each row's query's place in byte order
    del codes, table
    # the rows a query at a time, in the ids' byte order (stable radix sorts by the place's 16-bit digits, the
    # low one first: one digit up to 65,536 queries)
    by_query = np.argsort(place if not wide else (place & 0xFFFF).astype(np.uint16), kind="stable")
    if wide:
        by_query = by_query[np.argsort((place[by_query] >> 16).astype(np.uint16), kind="stable")]
    counts = np.bincount(place, minlength=queries)  # rows per query, in the ids' byte order
    del place
    ends = np.cumsum(counts)
    order = np.empty(n, dtype=by_query.dtype)
    ordered_key = np.empty(n, dtype=np.uint64)
    hashes = frame.get_column("chunk_id").hash(seed=_HASH_SEED).to_numpy() if repeats else None
    may_repeat = False
    first = start = 0
    while first < queries:
        # whole queries, up to _SORT_BLOCK rows (a longer query alone): by key, then by query, stably
        last = max(first + 1, int(np.searchsorted(ends, start + _SORT_BLOCK, side="right")))
        end = int(ends[last - 1])
        rows = by_query[start:end]
        block_key = key[rows]
        within = np.argsort(block_key)
        local = None
        if last - first > 1:  # at most _SORT_BLOCK queries: their place in the block is a 16-bit digit
            local = np.repeat(np.arange(last - first, dtype=np.uint16), counts[first:last])
            within = within[np.argsort(local[within], kind="stable")]
        np.take(rows, within, out=order[start:end])
        np.take(block_key, within, out=ordered_key[start:end])
        if hashes is not None and not may_repeat:
            pairs = hashes[rows]
            if local is not None:
                pairs ^= local.astype(np.uint64) * np.uint64(_PAIR_MIX)
            pairs.sort()
            may_repeat = bool((pairs[1:] == pairs[:-1]).any())
        first, start = last, end
    del key, by_query, hashes
    # a query's rows are one stretch now: ranks 1, 2, … from each stretch's start
    starts = ends[:-1]
    same_query = np.ones(n - 1, dtype=bool)
    same_query[starts - 1] = False
    tied = same_query & (ordered_key[1:] == ordered_key[:-1])
    del ordered_key, same_query
    if tied.any():
        stretch = np.zeros(n, dtype=bool)
        stretch[:-1] = tied
        stretch[1:] |= tied
        where = np.flatnonzero(stretch)
        del stretch
        # a stretch of tied rows is numbered by the rows not tied to the one before them
        begins = np.ones(n, dtype=np.uint32)
        begins[1:] = ~tied
        number = np.cumsum(begins, dtype=np.uint32)
        del begins
        rows = order[where]
        ties = pl.DataFrame({"key": number[where], "chunk_id": frame.get_column("chunk_id").gather(rows)})
        del number
        within = ties.select(pl.arg_sort_by(["key", "chunk_id"], descending=[False, True])).to_series()
        order[where] = rows[within.to_numpy()]
        del ties, within, rows, where
    del tied
    place_of_row = pl.Series(np.repeat(np.arange(queries, dtype=np.uint32), counts))
    query_ids = ids.gather(place_of_row).alias("query_id")
    del place_of_row
    rank = np.ones(n, dtype=np.uint32)
    # at each stretch's start, 1 minus the length of the one before: the running sum starts again at 1
    rank[starts] = (1 - counts[:-1]).astype(np.uint32)
    np.cumsum(rank, dtype=np.uint32, out=rank)
    return order, rank, query_ids, may_repeat


# rows one block of `score_order` sorts at a time (at most 2^16: a query's place in a block is one 16-bit digit).
# Small blocks sort faster a row: a million-line run's keys argsorted 1,024 at a time took 22 ms against 49 ms
# 65,536 at a time, and its ordering 53 against 84 ms (1,000-row queries: a block is one query, no radix pass)
_SORT_BLOCK = 1 << 10


_PAIR_MIX = 0x9E37_79B9_7F4A_7C15  # mixes a query's number into its pairs' chunk hashes


def _dedupe(path: Path, frame: pl.DataFrame, keep_first: bool, allow: bool) -> pl.DataFrame:
    """Agent runs keep the first sighting of each chunk (the union, first-seen); other runs must not repeat one."""
    if allow or keep_first:
        return frame.sort("line").unique(subset=["query_id", "chunk_id"], keep="first", maintain_order=True)
    if _may_repeat(frame):
        _refuse_repeats(path, frame)
    return frame


def _refuse_repeats(path: Path, frame: pl.DataFrame) -> None:
    """The exact check, when the hashes say a (query, chunk) pair may repeat: an InputError naming the first
    repeated chunk's two lines, or nothing (two pairs' hashes collided)."""
    dup_mask = frame.select(pl.struct("query_id", "chunk_id").is_duplicated()).to_series()
    if dup_mask.any():
        dups = frame.filter(dup_mask).sort("line").with_columns(pl.col("query_id").cast(pl.String))
        first = dups.row(0, named=True)
        same = dups.filter((pl.col("query_id") == first["query_id"]) & (pl.col("chunk_id") == first["chunk_id"]))
        lines = same.get_column("line").to_list()
        # a JSONL line holds a query's whole list (a JSON run's rows carry the line its list starts on): a chunk
        # repeated inside that list has one line number, not two
        same_line = lines[0] == lines[1]
        where = f"within its results on line {lines[0]}" if same_line else f"(lines {lines[0]} and {lines[1]})"
        raise InputError(
            path,
            f"chunk {first['chunk_id']!r} appears twice for query {first['query_id']!r} {where}; expected each "
            "chunk once per query (use --keep-first to keep the first)",
            lines[1],
        )


def _may_repeat(frame: pl.DataFrame) -> bool:
    """False when no (query, chunk) pair repeats: each pair's 64-bit hash, sorted, differs from its neighbour
    (numpy sorts 8 MB of hashes of a million rows in ~5 ms; polars' group_by of chunks per query took ~30 ms,
    one hash set of the pairs 230 MB). True sends the frame to the exact check: a repeat, or a collision."""
    import numpy as np

    queries = frame.get_column("query_id")
    queries = queries.to_physical() if queries.dtype == pl.Categorical else queries.hash(seed=_HASH_SEED)
    pairs = frame.get_column("chunk_id").hash(seed=_HASH_SEED).to_numpy(writable=True)
    mixed = queries.to_numpy().astype(np.uint64)
    mixed *= np.uint64(_PAIR_MIX)
    pairs ^= mixed
    del mixed
    pairs.sort()
    return bool((pairs[1:] == pairs[:-1]).any())


_HASH_SEED = 0x5EED
