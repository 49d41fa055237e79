"""TREC runs (`qid Q0 chunk rank score tag`): `TrecRun`, the reader of a whole file and of a file bigger than
memory, a slice of queries at a time.

A whole file: the common case (single spaces, six columns, no comment, blank line or BOM: `_is_plain`) through
polars' CSV reader, anything else through the general path, whose messages name the line and what is wrong.

In parts (`TrecRun.in_parts`, for `ragdiff eval` of runs bigger than memory, core/metrics/partitioned.py): one
streaming pass (polars' streaming engine) splits the run by a hash of the query id into parts on disk, each a
few million rows, which are then read one at a time and ordered as a whole run is (core/io/run_order.py). A
line polars refuses is named as the whole-file reader names it (`_bad_line`).
"""

from __future__ import annotations

import errno
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError
from ragdiff.core.io import textio
from ragdiff.core.io.run_reader import RunRead, RunReader, first_refusal, score_refusal
from ragdiff.core.io.textio import BOM, SPACE, fields, plain_block, read_text, whitespace_columns

ROWS_PER_PART = 2_000_000  # a part this size loads and sorts in ~0.5 GB


class TrecRun(RunReader):
    """The TREC run reader: six columns a line; ordered by score, ties by chunk id (trec_eval's rule)."""

    name = "trec"

    def sniff(self, head: bytes, first: str | None) -> bool:
        return first is not None and len(fields(first)) == 6

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        return RunRead(_load_trec(path, ahead), True)

    def is_plain(self, path: Path) -> bool:
        """Whether polars' CSV reader takes the file line for line (`_is_plain`): then it can be read early."""
        return _is_plain(path)

    def plain_query(self, path: Path) -> pl.LazyFrame:
        """The plain reader's query, for a file `is_plain` (core/io/runs.start_run collects it in a thread)."""
        return _plain_trec_query(path)

    @contextmanager
    def in_parts(self, path: Path, aliases: dict[str, str], rows_per_part: int = ROWS_PER_PART,
                 folder: Path | None = None) -> Iterator[Iterator[Callable[[], pl.DataFrame]]]:
        """The run split into parts of whole queries on disk (query texts renamed by `aliases` first), as an
        iterator of functions that each read one part's rows (query_id, chunk_id, score, rank, line; unordered):
        one part in memory at a time. A tidy file (`_is_tidy`, one pass before the split) is split as it is;
        any other from `_plain_copy` (as much disk again as the run), which says every line as trec_eval and the
        whole-file reader split it. A line polars refuses is a bad line, named as the whole-file reader names
        it. The parts are deleted when the block ends."""
        with tempfile.TemporaryDirectory(prefix="ragdiff-plain-", dir=folder) as tmp:
            try:
                copy = None if _is_tidy(path) else _plain_copy(path, Path(tmp) / path.name)
            except OSError as err:
                raise (_no_room(Path(tmp).parent, err) or err) from None
            try:
                parts = split(path, aliases, rows_per_part, folder, copy)
                try:
                    yield (partial(_read_part, part) for part in parts.parts)
                finally:
                    shutil.rmtree(parts.folder, ignore_errors=True)
            except _Refused:
                raise _bad_line(path) from None


def _read_part(part: Path) -> pl.DataFrame:
    """One part's rows as the whole-file reader gives them; _Refused when polars read a line of it as it would
    not (a field missing, a negative rank, a score that is not finite)."""
    frame = pl.read_parquet(part)
    ok = frame.select(pl.all_horizontal(pl.all().is_not_null()).all() & (pl.col("rank") >= 0).all()
                      & pl.col("score").is_finite().all()).item()
    if not ok:
        raise _Refused
    return frame.select("query_id", "chunk_id", "score", pl.lit(0, dtype=pl.UInt32).alias("rank"), "line")


# --------------------------------------------------------------------------------------------------------------
# the whole file


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
# in-parts reader (`_bad_line` below) names a refused file's bad line with these same functions, a block of
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
    return (score_refusal(path, parsed),
            first_refusal(path, parsed.filter(pl.col("rank").is_null() | (pl.col("rank") < 0)),
                          lambda row: f"rank {row['rank_raw']!r} is not a whole number >= 0 (column 4)"))


# --------------------------------------------------------------------------------------------------------------
# in parts


_HASH_SEED = 0x5EED
_TREC_COLUMNS = {"query_id": pl.String, "q0": pl.String, "chunk_id": pl.String, "rank": pl.Int64,
                 "score": pl.Float64, "tag": pl.String}


@dataclass
class Parts:
    """A run split by query on disk: one folder of parquet files per part."""

    folder: Path
    parts: list[Path]


def split(path: Path, aliases: dict[str, str], rows_per_part: int = ROWS_PER_PART, folder: Path | None = None,
          source: Path | None = None) -> Parts:
    """One streaming pass over a plain TREC file into parts of whole queries (by a hash of the query id, taken
    after renaming query texts to the gold set's ids, `aliases`). `source`: `_plain_copy(path)` to read instead, whose
    _SKIP lines are dropped after they are counted (each line keeps its number in `path`)."""
    scanned = source or path
    size = scanned.stat().st_size
    with scanned.open("rb") as handle:
        head = handle.read(1 << 20)
    rows = size / max(1, len(head) / max(1, head.count(b"\n")))
    count = max(1, math.ceil(rows / rows_per_part))
    folder = Path(tempfile.mkdtemp(prefix="ragdiff-parts-", dir=folder))
    query = pl.col("query_id")
    if aliases:
        query = query.replace(aliases)
    lazy = (pl.scan_csv(scanned, separator=" ", has_header=False, quote_char=None, schema=_TREC_COLUMNS,
                        truncate_ragged_lines=True, encoding="utf8")  # like trec_eval: text past column 6 is ignored
            .with_row_index("line", offset=1))
    if source is not None:
        lazy = lazy.filter(pl.col("query_id") != "#")  # _SKIP lines
    lazy = (lazy
            .select(query.alias("query_id"), "chunk_id", "score", "rank", "tag", pl.col("line").cast(pl.UInt32),
                    part=(query.hash(seed=_HASH_SEED) % count).cast(pl.UInt32)))
    try:
        lazy.sink_parquet(pl.PartitionBy(folder, key="part", include_key=False), mkdir=True)
    except Exception as err:  # polars refused a line (ragged, not a number), or could not write the parts
        shutil.rmtree(folder, ignore_errors=True)
        raise (_no_room(folder.parent, err) or _Refused()) from None
    return Parts(folder=folder, parts=sorted(p for p in folder.iterdir() if p.is_dir()))


_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})  # the disk full, a quota, a file-size limit


def _no_room(folder: Path, err: Exception) -> InputError | None:
    """The parts or the plain copy could not be written for want of room: said as that, naming the folder —
    not as a bad line of the run, nor as the report's own output lost. None for any other failure."""
    found = re.search(r"\(os error (\d+)\)", str(err))  # polars says an OSError so: "... (os error 28)"
    number = err.errno if isinstance(err, OSError) else int(found.group(1)) if found else None
    if number not in _NO_ROOM:
        return None
    return InputError(folder, f"cannot write the run's parts here ({os.strerror(number)}); reading a run in parts "
                              "needs about as much free space in the temporary folder as the run (TMPDIR chooses "
                              "the folder)")


class _Refused(Exception):
    """polars could not take the file line for line as it stands: a short line or a value that is not a number."""


# A line of the plain copy that the reader skips (blank, white space only, a comment): the copy keeps it as a
# line so that every line keeps its number, of six fields of the right types (polars takes the number of
# columns from the first line). No data line of the copy starts with "#" (that is a comment), so its query id
# "#" is never a real one.
_SKIP = b"# - - 0 0 -"


def _plain_line(line: bytes) -> bytes:
    """A line as trec_eval splits it (bytes.split() is textio.SPACE's rule): its first six fields (it ignores
    the rest) joined by one space."""
    fields_ = line.split(maxsplit=6)[:6]
    return b" ".join(fields_) if fields_ and not fields_[0].startswith(b"#") else _SKIP


def _plain_lines(lines: bytes) -> bytes:
    """Whole lines (not the file's first) as polars' plain reader takes them, each line's first six fields as
    trec_eval splits them. The separators (tabs, CR, \\v, \\f: textio.SPACE) become spaces, runs of spaces one,
    spaces at a line's start go and blank lines become _SKIP, each a pass in C over the block (a space left
    before a line end is an empty field past the sixth, which the reader drops); only a block with a comment
    line goes line by line in Python (bench/big_eval.py: the copy of a million-line run with tabs
    1.0 s -> 0.12 s)."""
    lines = lines.translate(textio.TO_SPACE)
    if textio.tidy_lines(lines):  # tabs or CRLF: the separators were all
        return lines
    while b"  " in lines:
        lines = lines.replace(b"  ", b" ")
    lines = lines.replace(b"\n ", b"\n").removeprefix(b" ")
    if b"#" in lines and (lines.startswith(b"#") or b"\n#" in lines):  # a comment line
        body, nl = (lines[:-1], b"\n") if lines.endswith(b"\n") else (lines, b"")
        return b"\n".join(map(_plain_line, body.split(b"\n"))) + nl
    while b"\n\n" in lines:  # a blank line (white space only: now empty), two at a time
        lines = lines.replace(b"\n\n", b"\n" + _SKIP + b"\n")
    return _SKIP + lines if lines.startswith(b"\n") else lines


def _checked_blocks(path: Path, block: int = 4 * 2**20):
    """The file in blocks of whole lines (the last may lack its line end; a leading BOM dropped), each checked
    as textio.read_text checks a whole file (NUL, invalid UTF-8, and at the end nothing but white space), with
    whether polars' plain reader takes it line for line as trec_eval reads it (textio.tidy_lines; the first
    line must also be exactly six fields, which polars takes the number of columns from)."""
    blank = True
    with path.open("rb", buffering=0) as handle:
        bom = handle.read(len(textio.BOM)) == textio.BOM
        handle.seek(len(textio.BOM) * bom)
        for start, lines in _line_blocks(handle, block):
            tidy = textio.tidy_lines(lines)
            if not tidy:  # a tidy block is text
                try:
                    textio.check_text(path, lines)
                    if textio.odd_space_bytes(lines):  # an id holding one is refused (trec_lines says where)
                        trec_lines(path, lines.decode("utf-8"))
                except InputError as err:  # the line within the block: add the lines before it
                    raise InputError(path, err.message, err.line + _lines_before(path, start)) from None
            blank = blank and textio.is_blank(lines)
            first = start == len(textio.BOM) * bom
            if first:
                tidy = tidy and not bom and len(lines.partition(b"\n")[0].split(b" ")) == 6
            yield lines, tidy, first
    if blank:
        raise textio.empty_file(path)


def _line_blocks(handle, block: int):
    """(offset in the file, a block of whole lines) from where `handle` stands; the last may lack its line end."""
    start = handle.tell()
    while data := handle.read(block):
        while data.rfind(b"\n") < 0 and (more := handle.read(block)):  # a line longer than the block
            data += more
        end = data.rfind(b"\n") + 1 or len(data)
        if end < len(data):
            data = data[:end]
            handle.seek(start + end)  # the rest is read again with the next block: no copy to join them
        yield start, data
        start += end


def _lines_before(path: Path, offset: int) -> int:
    """The line ends in the first `offset` bytes of `path` (an error's line, found late: blocks are not counted)."""
    with path.open("rb") as handle:
        return handle.read(offset).count(b"\n")


def _is_tidy(path: Path) -> bool:
    """polars' plain reader takes the file line for line as it stands (`_checked_blocks`): a first pass that
    stops at the first block it does not; one it reads to its end has said what read_text would refuse."""
    return all(tidy for _lines, tidy, _first in _checked_blocks(path))


def _plain_copy(path: Path, copy: Path, block: int = 4 * 2**20) -> Path:
    """`path` written line for line as polars' plain reader takes it, into `copy`: each line's first six fields
    as trec_eval splits them, blank and comment lines as _SKIP, the BOM dropped. A block of whole lines that is
    already tidy is copied as it is, the others through `_plain_lines`; the first line is always made six
    fields. NUL and invalid UTF-8 are refused with the in-memory reader's words."""
    with copy.open("wb") as dst:
        for lines, tidy, first in _checked_blocks(path, block):
            if first:  # polars takes the number of columns from the first line: make it six
                head, nl, lines = lines.partition(b"\n")
                dst.write(_plain_line(head) + nl)
            dst.write(lines if tidy or not lines else _plain_lines(lines))
    return copy


def _bad_line(path: Path, block: int = 4 * 2**20) -> InputError:
    """The in-memory reader's refusal of a file polars refused in parts, found by its own rules and words
    (runs.not_another_format, trec_lines, trec_refusals) a block of whole lines at a time (the in-memory reader
    would hold the whole file): the first data line if it is another format, else the first line of too few
    columns, else the first score that is not a finite number, else the first rank that is not a whole number
    >= 0 — the order in which the in-memory reader checks the whole file. The file's text was checked by the
    first pass (`_checked_blocks`)."""
    refused: tuple[InputError | None, ...] = (None, None)  # the file's first refused score, its first refused rank
    seen_data = False  # a data line was among the blocks before: only the first is looked at for another format
    with path.open("rb", buffering=0) as handle:
        handle.seek(len(textio.BOM) * (handle.read(len(textio.BOM)) == textio.BOM))
        line = 1
        for _start, lines in _line_blocks(handle, block):
            text = lines.decode("utf-8", errors="replace")
            if not seen_data:
                seen_data = not_another_format(path, text, line)
            try:
                parsed = trec_lines(path, text, line)
            except InputError as err:  # the file's first line of too few columns: said before any score
                return err
            refused = tuple(had or new for had, new in zip(refused, trec_refusals(path, parsed)))
            line += lines.count(b"\n")
    found = next((err for err in refused if err is not None), None)
    if found is None:  # pragma: no cover - polars refused a file whose lines all read as valid TREC
        return InputError(path, "could not read the run in parts; expected `qid Q0 chunk rank score tag` lines")
    return found
