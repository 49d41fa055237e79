"""`ragdiff eval` of TREC runs bigger than memory: read a run a slice of queries at a time.

One streaming pass (polars' streaming engine) splits the run by a hash of the query id into parts on disk, each
a few million rows; each part is then loaded, ordered and prepared exactly as `load_run` + `metrics.prepare` do a
whole run, and only what scoring needs is kept of it: the judged rows with their ranks and the count of rows
per query. Scoring the kept rows of every part together is then the same computation, on the same rows in the
same order within each query, as scoring the whole run in memory — so the numbers are the same
(tests/test_partitioned.py). Peak memory grows with the rows of one part (fixed, `ROWS_PER_PART`), the gold set
and the judged rows, not with the run's length (bench/RESULTS.md).
"""

from __future__ import annotations

import errno
import math
import os
import re
import resource
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ragdiff.core.io import textio
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.specs import EvalSettings, Metric, PreparedRun, RunEval, prepare, score
from ragdiff.core.io.runs import (RUN_SCHEMA, Run, not_another_format, ordered_frame, sniff_run_format, trec_lines,
                                trec_refusals)

ROWS_PER_PART = 2_000_000  # a part this size loads and sorts in ~0.5 GB
IN_MEMORY_BYTES_PER_FILE_BYTE = 2.5  # `eval` of a TREC file in memory peaks near this many bytes per file byte
_HASH_SEED = 0x5EED
_TREC_COLUMNS = {"query_id": pl.String, "q0": pl.String, "chunk_id": pl.String, "rank": pl.Int64,
                 "score": pl.Float64, "tag": pl.String}


def memory_limit() -> int | None:
    """The smallest of the address-space limit (ulimit -v), the cgroup's memory limit and the memory available
    now, in bytes; None when none is known."""
    limits = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        limits.append(soft)
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            limits.append(int(text))
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return min(limits) if limits else None


def too_big_for_memory(paths: list[Path], fmt: str | None = None) -> bool:
    """True when the runs are TREC files whose in-memory evaluation would not fit in the memory limit."""
    limit = memory_limit()
    if limit is None:
        return False
    try:
        if any((fmt or sniff_run_format(p)) != "trec" for p in paths):
            return False
        largest = max(p.stat().st_size for p in paths)
    except (InputError, OSError):
        return False  # the ordinary path reports the problem with its own words
    # runs are read one after another, but the first one's frame stays while the second loads
    need = IN_MEMORY_BYTES_PER_FILE_BYTE * largest * 2 + 300 * 2**20
    return need > 0.7 * limit


@dataclass
class Parts:
    """A run split by query on disk: one folder of parquet files per part."""

    folder: Path
    parts: list[Path]


def split(path: Path, gold: Gold, rows_per_part: int = ROWS_PER_PART, folder: Path | None = None,
          source: Path | None = None) -> Parts:
    """One streaming pass over a plain TREC file into parts of whole queries (by a hash of the query id, taken
    after renaming query texts to the gold set's ids). `source`: `_plain_copy(path)` to read instead, whose
    _SKIP lines are dropped after they are counted (each line keeps its number in `path`)."""
    scanned = source or path
    size = scanned.stat().st_size
    with scanned.open("rb") as handle:
        head = handle.read(1 << 20)
    rows = size / max(1, len(head) / max(1, head.count(b"\n")))
    count = max(1, math.ceil(rows / rows_per_part))
    folder = Path(tempfile.mkdtemp(prefix="ragdiff-parts-", dir=folder))
    query = pl.col("query_id")
    aliases = gold.aliases()
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


def evaluate_partitioned(path: str | Path, gold: Gold, settings: EvalSettings, metrics: list[Metric],
                         keep_first: bool = False, name: str | None = None, rows_per_part: int = ROWS_PER_PART,
                         folder: Path | None = None, bounds: bool = False) -> RunEval:
    """`evaluate(load_run(path), gold, settings, metrics, bounds)` for a TREC file, a part at a time.

    A tidy file (single spaces, no tab, CR, BOM, comment or blank line: `_is_tidy`, one pass before the split)
    is split as it is; any other is split from `_plain_copy` (as much disk again as the run), which says every
    line as trec_eval and the in-memory reader split it. A line polars refuses then is a bad line, named as
    the in-memory reader names it."""
    path = Path(path)
    args = (gold, settings, metrics, keep_first, name, rows_per_part, folder, bounds)
    with tempfile.TemporaryDirectory(prefix="ragdiff-plain-", dir=folder) as tmp:
        try:
            copy = None if _is_tidy(path) else _plain_copy(path, Path(tmp) / path.name)
        except OSError as err:
            raise (_no_room(Path(tmp).parent, err) or err) from None
        try:
            return _evaluate_parts(path, copy, *args)
        except _Refused:
            raise _bad_line(path) from None


def _evaluate_parts(path: Path, source: Path | None, gold: Gold, settings: EvalSettings, metrics: list[Metric],
                    keep_first: bool, name: str | None, rows_per_part: int, folder: Path | None,
                    bounds: bool) -> RunEval:
    parts = split(path, gold, rows_per_part, folder, source)
    run = Run(name=name or path.stem, path=path, format="trec", frame=pl.DataFrame(schema=RUN_SCHEMA))
    try:
        returned, judged, unjudged, run_queries = [], [], [], []
        prepared = None
        for part in parts.parts:
            frame = pl.read_parquet(part)
            ok = frame.select(pl.all_horizontal(pl.all().is_not_null()).all() & (pl.col("rank") >= 0).all()
                              & pl.col("score").is_finite().all()).item()
            if not ok:
                raise _Refused
            frame = frame.select("query_id", "chunk_id", "score", pl.lit(0, dtype=pl.UInt32).alias("rank"), "line")
            piece = Run(name=run.name, path=path, format="trec", frame=ordered_frame(path, frame, True, keep_first))
            del frame
            prepared = prepare(piece, gold, settings)
            returned.append(prepared.returned)
            judged.append(prepared.judged)
            unjudged.append(prepared.unjudged)  # the top max(k, depth) only: small, for the upper bound
            run_queries.append(piece.frame.get_column("query_id").unique())
            del piece
    finally:
        shutil.rmtree(parts.folder, ignore_errors=True)
    if prepared is None:
        raise InputError(path, "the run has no results; expected at least one ranked chunk")
    run_ids = pl.concat(run_queries)
    run.queries = run_ids.to_list()
    # which queries are missing, unknown or left out, by prepare's own rules: a stand-in run with one row per
    # query the run has
    stand_in = Run(name=run.name, path=path, format="trec", frame=pl.DataFrame(
        {"query_id": run_ids, "chunk_id": [""] * len(run_ids), "score": None, "rank": 1, "line": 1},
        schema=RUN_SCHEMA))
    queries = prepare(stand_in, gold, settings).queries
    whole = PreparedRun(run=run, queries=queries, scored=prepared.scored, returned=pl.concat(returned),
                        judged=pl.concat(judged), qrels=prepared.qrels, unjudged=pl.concat(unjudged),
                        unjudged_depth=prepared.unjudged_depth)
    return score(whole, settings, metrics, bounds)
