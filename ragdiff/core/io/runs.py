"""Loading retrieval runs: TREC, JSONL (incl. agent runs), JSON, CSV/TSV and Parquet.

Every loader ends in the same polars frame, ordered and ranked:

    query_id: str, chunk_id: str, score: f64 (null where the format has none), rank: u32 (1-based), line: u32

Order inside a query (DESIGN.md, "Metrics"): list formats keep the order in the file, which is what the
retriever returned; TREC runs and score maps are sorted by score descending, ties broken by chunk id in
descending byte order — trec_eval's rule, so the numbers match it exactly.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ragdiff.core.io.choices import RUN_FORMATS
from ragdiff.core.errors import InputError
from ragdiff.core.io.textio import (BOM, BOM_CHAR, SPACE, check_file, fields, json_error, line_of, plain_block, read_text,
                                  text_frame, whitespace_columns)

_EXTENSIONS = {
    ".trec": "trec",
    ".run": "trec",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# what the list formats collect before ranking
_LIST_SCHEMA = {"query_id": pl.String, "chunk_id": pl.String, "score": pl.Float64, "line": pl.UInt32}

RUN_SCHEMA = {
    "query_id": pl.String,
    "chunk_id": pl.String,
    "score": pl.Float64,
    "rank": pl.UInt32,
    "line": pl.UInt32,
}

@dataclass
class Run:
    """A retrieval run: ranked chunk ids per query, plus what the file says about each query."""

    name: str
    path: Path
    format: str
    frame: pl.DataFrame
    query_text: dict[str, str] = field(default_factory=dict)
    # agent runs: query id -> [(search query, [chunk ids])] in the order the agent searched
    searches: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    # the run's query ids when its rows are not kept (a run scored in parts, core/metrics/partitioned.py: frame is empty)
    queries: list[str] | None = None

    @property
    def query_ids(self) -> list[str]:
        if self.queries is not None:
            return self.queries
        # a query's rows come together (RUN_SCHEMA's order): its stretches are ~1,000 where the rows are a million
        return self.frame.get_column("query_id").rle().struct.field("value").unique(maintain_order=True).to_list()


def format_from_extension(path: Path) -> str | None:
    """The run format a file's name says (`.trec`, `.jsonl`, `.parquet`, ...), None when it says none: how a
    run is read, and how a run a command writes (`-o`) is written."""
    return _EXTENSIONS.get(Path(path).suffix.lower())


def sniff_run_format(path: Path) -> str:
    fmt = format_from_extension(path)
    if fmt:
        return fmt
    check_file(path)
    with path.open("rb") as handle:
        head = handle.read(65536)
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.decode("utf-8", errors="replace").lstrip(BOM_CHAR)
    lines = [ln for ln in text.split("\n") if ln.strip(SPACE) and not ln.lstrip(SPACE).startswith("#")]
    if not lines:
        raise InputError(path, "cannot tell the run's format: the file has no data lines; say it with --format")
    first = lines[0].strip(SPACE)
    if first.startswith("{"):
        try:
            json.loads(first)
            return "jsonl"
        except json.JSONDecodeError:
            return "json"
    if first.startswith("["):
        return "json"
    if "\t" in first and "query_id" in first.split("\t"):
        return "tsv"
    if "," in first and "query_id" in first.split(","):
        return "csv"
    columns = len(fields(first))
    if columns == 6:
        return "trec"
    if columns == 4:
        raise InputError(path, "looks like qrels (4 columns), not a run; a run has 6 (qid Q0 chunk rank score tag)", 1)
    raise InputError(
        path,
        f"cannot tell the run's format from the extension {path.suffix or '(none)'!r} or the content; "
        f"say it with --format {'|'.join(RUN_FORMATS)}",
    )


def load_run(path: str | Path, fmt: str | None = None, keep_first: bool = False, name: str | None = None,
             read: Callable[[], pl.DataFrame] | None = None) -> Run:
    """Load a run file. Duplicate chunks within a query are an error naming both lines unless keep_first.
    `read`: the plain TREC reader's frame of a file found plain, already on its way (`start_run`)."""
    path = Path(path)
    check_file(path)
    fmt = fmt or sniff_run_format(path)
    if fmt not in RUN_FORMATS:
        raise InputError(path, f"unknown run format {fmt!r}; expected one of {', '.join(RUN_FORMATS)}")
    query_text: dict[str, str] = {}
    searches: dict[str, list[tuple[str, list[str]]]] = {}
    if fmt == "trec":
        frame, sort_by_score = _load_trec(path, read), True
    elif fmt == "jsonl":
        frame, sort_by_score = _load_jsonl(path, query_text, searches), False
    elif fmt == "json":
        frame, sort_by_score = _load_json(path, query_text)
    else:
        frame, sort_by_score = _load_table(path, fmt)
    if frame.height == 0:
        raise InputError(path, "the run has no results; expected at least one ranked chunk")
    frame = ordered_frame(path, frame, sort_by_score, keep_first, allow=bool(searches))
    return Run(name=name or path.stem, path=path, format=fmt, frame=frame, query_text=query_text, searches=searches)


def jsonl_run(name: str, text: str) -> Run:
    """A JSONL run made in this process (`judge --bm25`'s BM25 run), read as the same text in a file would be."""
    path = Path(name)
    query_text: dict[str, str] = {}
    searches: dict[str, list[tuple[str, list[str]]]] = {}
    frame = ordered_frame(path, _load_jsonl(path, query_text, searches, text), False, allow=bool(searches))
    return Run(name=name, path=path, format="jsonl", frame=frame, query_text=query_text, searches=searches)


class PendingRun:
    """A run whose reading may have begun (`start_run`); `result()` is `load_run`'s Run, its errors included."""

    def __init__(self, path: Path, fmt: str | None, keep_first: bool, thread: threading.Thread | None = None,
                 box: dict | None = None):
        self.path, self.fmt, self.keep_first = path, fmt, keep_first
        self._thread, self._box = thread, box

    @property
    def started(self) -> bool:
        return self._thread is not None

    def result(self) -> Run:
        read = self._read if self._thread is not None else None
        return load_run(self.path, self.fmt, keep_first=self.keep_first, read=read)

    def _read(self) -> pl.DataFrame:
        self.cancel()
        box, self._box = self._box, None
        if "error" in box:
            raise box["error"]
        return box["frame"]

    def cancel(self) -> None:
        """Let the read end (another input failed first): nothing is left running behind the caller."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def start_run(path: str | Path, fmt: str | None = None, keep_first: bool = False,
              after: PendingRun | None = None) -> PendingRun:
    """Begin reading a plain TREC run (polars' CSV reader, in a thread that waits for polars' threads: the
    GIL is free meanwhile) and return at once, so the caller's own work (the command's imports, the gold set)
    runs beside it; `.result()` waits for it and orders it. Anything else (another format, a file that is not
    plain, one that is missing) is left to `.result()`, which reads it as `load_run` does and raises its
    errors then, in the order the caller asks for its inputs. `after`: a run whose read this one waits for
    before it begins (one read at a time: two at once stack their buffers).

    A thread, not polars' `collect(background=True)`: a background query whose handle is dropped before it
    ends panics in polars' pool (a failed send, polars 2.1), which aborts the process."""
    path = Path(path)
    try:
        if (fmt or sniff_run_format(path)) != "trec" or not _is_plain(path):
            return PendingRun(path, fmt, keep_first)
    except (InputError, OSError):
        return PendingRun(path, fmt, keep_first)  # said by .result(), in its turn
    box: dict = {}
    before = after._thread if after is not None else None

    def read() -> None:
        if before is not None:
            before.join()
        try:
            box["frame"] = _plain_trec_query(path).collect()
        except Exception as err:  # the plain reader's refusal: .result() sends the file to the general path
            box["error"] = err

    thread = threading.Thread(target=read, name=f"ragdiff: read {path.name}", daemon=True)
    thread.start()
    return PendingRun(path, fmt, keep_first, thread, box)


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


def _load_trec(path: Path, read: Callable[[], pl.DataFrame] | None = None) -> pl.DataFrame:
    frame = _load_plain_trec(path, read)
    return _load_any_trec(path) if frame is None else frame


# what the plain reader asks of each column: the query id as a Categorical (the u32 codes the ordering sorts,
# instead of a string column cast afterwards), the rank as an unsigned number (a negative or fractional one is
# a parse error, which sends the file to the general path and its message), the tag only to see it is there
_TREC_SCHEMA = {"query_id": pl.Categorical, "q0": pl.String, "chunk_id": pl.String, "rank": pl.UInt32,
                "score": pl.Float64, "tag": pl.String}


def _load_plain_trec(path: Path, read: Callable[[], pl.DataFrame] | None = None) -> pl.DataFrame | None:
    """The common case (single spaces, six columns, no comment, blank line or BOM) through polars' CSV reader,
    six times faster than the general path; None sends anything else to the general path, whose messages
    name the line and what is wrong.

    One streaming query: each batch of lines is read and checked (every field there, a finite score) into
    one boolean a row, so the rank and tag columns never exist whole (bench/run_bench.py: 30 MiB less at the
    peak of a million-line run, and as much less left in polars' allocator for the next run to stack on).
    `read`: that query's frame, already on its way (`start_run`, which checked the file is plain)."""
    if read is None:
        if not _is_plain(path):
            return None
        read = _plain_trec_query(path).collect
    try:
        frame = read()
    except Exception:  # any refusal (ragged, non-numeric, encoding): the general path says which line
        return None
    # a short line reads as nulls at its end
    if not frame.get_column("ok").all():
        return None
    # one chunk a column: the reader's batches are many, and gathering rows across them is four times slower
    return frame.select("query_id", "chunk_id", "score", pl.lit(0, dtype=pl.UInt32).alias("rank"),
                        pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).alias("line")).rechunk()


def _plain_trec_query(path: Path) -> pl.LazyFrame:
    """The plain reader's query: the three columns kept and one 'ok' a row (every field there, a finite score)."""
    whole = pl.all_horizontal(pl.col(c).is_not_null() for c in ("query_id", "chunk_id", "rank", "score", "tag"))
    return pl.scan_csv(path, separator=" ", has_header=False, quote_char=None, schema=_TREC_SCHEMA,
                       truncate_ragged_lines=False, encoding="utf8").select(
        "query_id", "chunk_id", "score", ok=whole & pl.col("score").is_finite())


def _is_plain(path: Path) -> bool:
    """No BOM, NUL, comment line or white space but single spaces and \\n (no tab, CR, \\v or \\f: trec_eval's
    separators, textio.SPACE, that the reader would keep inside a field): a file polars' CSV reader takes line
    for line, into the columns the general path reads.

    Blank or short lines need no scan: the reader gives them null fields, which send the file to the general
    path. The checks of each block: textio.plain_block.
    """
    if path.stat().st_size == 0:
        return False
    with path.open("rb", buffering=0) as handle:
        return _blocks_are_plain(handle)


def _blocks_are_plain(handle, block: int = 4 * 2**20) -> bool:
    """`_is_plain` over a file read into one buffer of `block` bytes (at least 3) at a time, each block searched
    with the byte before it. Read, not mapped: a mapped file's pages count in the process's resident memory
    while it is searched (46 MiB of a million-line run, on top of the run read before it), and whole against
    ulimit -v."""
    buffer = bytearray(block)
    previous = ord("\n")
    first = True
    while size := handle.readinto(buffer):
        if first and buffer.startswith(BOM):
            return False
        first = False
        if not plain_block(buffer, size, previous):
            return False
        previous = buffer[size - 1]
    return True


def _load_any_trec(path: Path) -> pl.DataFrame:
    text = read_text(path)
    not_another_format(path, text)
    parsed = trec_lines(path, text)
    refused = next((err for err in trec_refusals(path, parsed) if err is not None), None)
    if refused is not None:
        raise refused
    return parsed.select(
        "query_id", "chunk_id", "score", pl.lit(0, dtype=pl.UInt32).alias("rank"), pl.col("line").cast(pl.UInt32)
    )


# The general TREC reader's refusals, in the order it checks a whole file: the first data line (`not_another_
# format`), every line's columns (`trec_lines`), then every score and then every rank (`trec_refusals`). The
# in-parts reader (core/metrics/partitioned.py) names a refused file's bad line with these same functions, a block of
# lines at a time: one home for the rules and their words (tests/test_partitioned.py compares both readers).


def not_another_format(path: Path, text: str, first_line: int = 1) -> bool:
    """A file read as TREC (`--format trec`, or its name) whose first data line is JSON or a CSV header is not a
    TREC run: say that, rather than a column or score error about JSON text. `text`: whole lines from line
    `first_line`; True when a data line was among them (the one this looks at), False when none was."""
    for number, line in enumerate(text.split("\n"), first_line):
        stripped = line.strip(SPACE)
        if not stripped or stripped.startswith("#"):
            continue
        looks = ("JSON" if stripped[0] in "{[" else
                 "CSV" if "," in stripped and len(fields(stripped)) == 1 else
                 None)
        if looks:
            raise InputError(path, f"this is not a TREC run: its first line looks like {looks} "
                                   f"({stripped[:30]!r}); expected lines 'qid Q0 chunk rank score tag' — leave "
                                   f"out --format to detect the format, or give --format "
                                   f"{'jsonl or json' if looks == 'JSON' else 'csv'}", number)
        return True
    return False


def trec_lines(path: Path, text: str, first_line: int = 1) -> pl.DataFrame:
    """The data lines of `text` (whole lines of a TREC run from line `first_line`): line, query_id, chunk_id,
    rank_raw, score_raw, and score (f64) and rank (i64) as polars parses them, null where they are not numbers.
    A line of too few columns is an InputError naming the first one; like trec_eval, text after the sixth
    column is ignored (its own fixture results.trunc has some)."""
    parsed = whitespace_columns(path, text, ["query_id", None, "chunk_id", "rank_raw", "score_raw", None],
                                "qid Q0 chunk rank score tag", ignore_extra=True, first_line=first_line)
    return parsed.with_columns(
        score=pl.col("score_raw").cast(pl.Float64, strict=False),
        rank=pl.col("rank_raw").cast(pl.Int64, strict=False),
    )


def trec_refusals(path: Path, parsed: pl.DataFrame) -> tuple[InputError | None, InputError | None]:
    """What the reader refuses in `trec_lines`' lines, in the order it says it: (the first line whose score is
    not a finite number, the first whose rank is not a whole number >= 0), None where there is none."""
    return (_score_refusal(path, parsed),
            _first(path, parsed.filter(pl.col("rank").is_null() | (pl.col("rank") < 0)),
                   lambda row: f"rank {row['rank_raw']!r} is not a whole number >= 0 (column 4)"))


def _first(path: Path, bad: pl.DataFrame, words: Callable[[dict], str]) -> InputError | None:
    """An InputError on the first of the `bad` rows (with its `line`), in `words` of it; None when there is none."""
    if not bad.height:
        return None
    row = bad.row(0, named=True)
    return InputError(path, words(row), row["line"])


def _score_refusal(path: Path, frame: pl.DataFrame, raw: str = "score_raw") -> InputError | None:
    return _first(path, frame.filter(pl.col("score").is_null() | ~pl.col("score").is_finite()),
                  lambda row: f"score {row[raw]!r} is not a finite number")


def _check_scores(path: Path, frame: pl.DataFrame, raw: str = "score_raw") -> None:
    refused = _score_refusal(path, frame, raw)
    if refused is not None:
        raise refused


def _result_items(path: Path, results, line: int, where: str) -> tuple[list[str], list[float | None]]:
    if not isinstance(results, list):
        raise InputError(path, f"{where} must be a list of chunk ids or {{\"id\", \"score\"}} objects", line)
    if all(type(item) is str for item in results):
        return results, [None] * len(results)
    chunks: list[str] = []
    scores: list[float | None] = []
    for item in results:
        if isinstance(item, str):
            chunks.append(item)
            scores.append(None)
        elif isinstance(item, dict) and isinstance(item.get("id", item.get("chunk_id")), (str, int)):
            chunk = item.get("id", item.get("chunk_id"))
            score = item.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                      or not math.isfinite(score)):
                raise InputError(path, f"score {score!r} of chunk {chunk!r} is not a finite number", line)
            chunks.append(str(chunk))
            scores.append(None if score is None else float(score))
        else:
            raise InputError(path, f"{where}: expected a chunk id string or {{\"id\", \"score\"}}, found {item!r:.60}",
                             line)
    return chunks, scores


def _load_jsonl(path: Path, query_text: dict[str, str], searches: dict, text: str | None = None) -> pl.DataFrame:
    text = read_text(path) if text is None else text
    qids: list[str] = []
    chunks: list[str] = []
    scores: list[float | None] = []
    lines: list[int] = []
    seen_queries: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.strip()
        if not raw:
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(path, f"invalid JSON ({err.msg}); expected one JSON object per line", number) from None
        if not isinstance(record, dict):
            raise InputError(path, "expected a JSON object {\"query_id\", \"results\"} on each line", number)
        qid = record.get("query_id", record.get("qid"))
        if qid is None and isinstance(record.get("query"), str):
            qid = record["query"]
        if not isinstance(qid, (str, int)) or isinstance(qid, bool):
            raise InputError(path, "missing \"query_id\" (a string); expected {\"query_id\", \"results\"}", number)
        qid = str(qid)
        if qid in seen_queries:
            raise InputError(path, f"query {qid!r} appears twice (lines {seen_queries[qid]} and {number}); "
                                   "expected one line per query", number)
        seen_queries[qid] = number
        if isinstance(record.get("query"), str):
            query_text[qid] = record["query"]
        if "searches" in record:
            if not isinstance(record["searches"], list):
                raise InputError(path, "\"searches\" must be a list of {\"query\", \"results\"}", number)
            collected: list[tuple[str, list[str]]] = []
            for index, search in enumerate(record["searches"], start=1):
                if not isinstance(search, dict):
                    raise InputError(path, f"search {index} must be an object {{\"query\", \"results\"}}", number)
                got, got_scores = _result_items(path, search.get("results"), number, f"search {index} \"results\"")
                collected.append((str(search.get("query", "")), got))
                chunks.extend(got)
                scores.extend(got_scores)
                qids.extend([qid] * len(got))
                lines.extend([number] * len(got))
            searches[qid] = collected
            continue
        if "results" not in record:
            raise InputError(path, "missing \"results\"; expected {\"query_id\", \"results\": [...]}", number)
        got, got_scores = _result_items(path, record["results"], number, "\"results\"")
        chunks.extend(got)
        scores.extend(got_scores)
        qids.extend([qid] * len(got))
        lines.extend([number] * len(got))
    frame = text_frame(path, {"query_id": qids, "chunk_id": chunks, "score": scores, "line": lines}, _LIST_SCHEMA)
    # within a line, keep the list order: a secondary position column makes the sort stable and explicit
    return frame.with_columns(rank=pl.lit(0, dtype=pl.UInt32))


def _unique_pairs_hook(path: Path, text: str):
    def hook(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                first = line_of(text, json.dumps(key))
                second = line_of(text, json.dumps(key), text.find(json.dumps(key)) + 1)
                raise InputError(path, f"key {key!r} appears twice (lines {first} and {second}); "
                                       "expected each query once", second)
            seen.add(key)
        return dict(pairs)

    return hook


def _load_json(path: Path, query_text: dict[str, str]) -> tuple[pl.DataFrame, bool]:
    text = read_text(path)
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs_hook(path, text))
    except json.JSONDecodeError as err:
        raise json_error(path, text, err) from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply; expected {query: [chunk ids]}") from None
    if isinstance(data, list):
        # a JSON array of JSONL-style records: item N is read as line N
        return _load_jsonl(path, query_text, {}, "\n".join(json.dumps(item) for item in data)), False
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object {query: [chunk ids]} or {query: {chunk: score}}", 1)
    qids: list[str] = []
    chunks: list[str] = []
    scores: list[float | None] = []
    lines_out: list[int] = []
    shapes = set()
    for qid, value in data.items():
        number = line_of(text, json.dumps(qid)) or 1
        if isinstance(value, list):
            shapes.add("list")
            got, got_scores = _result_items(path, value, number, f"query {qid!r}")
        elif isinstance(value, dict):
            shapes.add("map")
            got, got_scores = [], []
            for chunk, score in value.items():
                if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                    raise InputError(path, f"score of chunk {chunk!r} for query {qid!r} is {score!r}; "
                                           "expected a finite number", line_of(text, json.dumps(chunk), number) or number)
                got.append(chunk)
                got_scores.append(float(score))
        else:
            raise InputError(path, f"query {qid!r}: expected a list of chunk ids or a map {{chunk: score}}, "
                                   f"found {type(value).__name__}", number)
        qids.extend([qid] * len(got))
        chunks.extend(got)
        scores.extend(got_scores)
        lines_out.extend([number] * len(got))
    if len(shapes) > 1:
        raise InputError(path, "mixes lists and score maps; expected one shape for every query")
    frame = text_frame(path, {"query_id": qids, "chunk_id": chunks, "score": scores, "line": lines_out},
                       _LIST_SCHEMA).with_columns(rank=pl.lit(0, dtype=pl.UInt32))
    # many results share a line here; _order's stable sort keeps their list order
    return frame, shapes == {"map"}


_QUERY_COLUMNS = ("query_id", "qid", "query-id", "topic")
_CHUNK_COLUMNS = ("chunk_id", "doc_id", "docid", "docno", "corpus-id", "chunk")


def _load_table(path: Path, fmt: str) -> tuple[pl.DataFrame, str | bool]:
    if fmt == "parquet":
        try:
            frame = pl.read_parquet(path)
        except Exception as err:  # polars raises several types for a bad parquet file
            raise InputError(path, f"not a readable Parquet file ({type(err).__name__}); "
                                   "expected columns query_id, chunk_id and rank or score") from None
        written = frame.columns
        frame = frame.with_row_index("line", offset=1)
        first_line = 1
    else:
        read_text(path)  # empty, binary and encoding errors, with their line
        try:
            frame = pl.read_csv(path, separator="," if fmt == "csv" else "\t", infer_schema=False,
                                quote_char='"' if fmt == "csv" else None, encoding="utf8-lossy")
        except Exception as err:
            raise InputError(path, f"not a readable {fmt.upper()} file: {str(err).splitlines()[0][:200]}") from None
        written = frame.columns  # the header as the user wrote it (before the line number is added)
        frame = frame.with_row_index("line", offset=2)  # line 1 is the header
        first_line = 2
    columns = {c.strip().lower(): c for c in frame.columns}
    qcol = next((columns[c] for c in _QUERY_COLUMNS if c in columns), None)
    ccol = next((columns[c] for c in _CHUNK_COLUMNS if c in columns), None)
    rcol = columns.get("rank")
    scol = columns.get("score")
    if qcol is None or ccol is None or (rcol is None and scol is None):
        shown = ", ".join(repr(c) for c in written[:8]) + (" …" if len(written) > 8 else "")
        missing = [what for what, col in (("a query column (query_id)", qcol), ("a chunk column (chunk_id)", ccol),
                                          ("rank or score", rcol or scol)) if col is None]
        raise InputError(path, f"the header has {shown}; it lacks {' and '.join(missing)} — expected query_id, "
                               "chunk_id and rank or score (also accepted: qid or topic; doc_id, docid or docno)",
                         first_line - 1 if fmt != "parquet" else None)
    out = frame.select(
        pl.col(qcol).cast(pl.String).alias("query_id"),
        pl.col(ccol).cast(pl.String).alias("chunk_id"),
        (pl.col(scol).cast(pl.String) if scol else pl.lit(None, dtype=pl.String)).alias("score_raw"),
        (pl.col(rcol).cast(pl.String) if rcol else pl.lit(None, dtype=pl.String)).alias("rank_raw"),
        pl.col("line").cast(pl.UInt32),
    )
    missing = out.filter(pl.col("query_id").is_null() | pl.col("chunk_id").is_null())
    if missing.height:
        raise InputError(path, "empty query_id or chunk_id", missing.row(0, named=True)["line"])
    out = out.with_columns(
        score=pl.col("score_raw").str.strip_chars().cast(pl.Float64, strict=False),
        rank=pl.col("rank_raw").str.strip_chars().cast(pl.Int64, strict=False),
    )
    if scol:
        _check_scores(path, out)
    if rcol:
        refused = _first(path, out.filter(pl.col("rank").is_null() | (pl.col("rank") < 0)),
                         lambda row: f"rank {row['rank_raw']!r} is not a whole number >= 0")
        if refused is not None:
            raise refused
    out = out.with_columns(pl.col("rank").cast(pl.UInt32)).select("query_id", "chunk_id", "score", "rank", "line")
    return out, ("rank" if rcol else True)
