"""Loading retrieval runs: TREC, JSONL (incl. agent runs), JSON, CSV/TSV and Parquet.

Each format is one reader class (core/io/trec_run.py, json_runs.py, table_runs.py), found by its name, its
extension or its content in core/io/formats.py's RUN_READERS. Every reader's rows end in the same polars frame,
ordered and ranked (core/io/run_order.py):

    query_id: str, chunk_id: str, score: f64 (null where the format has none), rank: u32 (1-based), line: u32
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError
from ragdiff.core.io.choices import RUN_FORMATS
from ragdiff.core.io.formats import RUN_READERS, run_format_from_extension, sniff_run_format
from ragdiff.core.io.run_order import RUN_SCHEMA, ordered_frame
from ragdiff.core.io.textio import check_file

# what other modules take from here: the run, its loaders and its frame's schema
__all__ = ["RUN_SCHEMA", "PendingRun", "Run", "jsonl_run", "load_run", "ordered_frame", "run_format_from_extension",
           "sniff_run_format", "start_run"]

_TREC = RUN_READERS["trec"]


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


def load_run(path: str | Path, fmt: str | None = None, keep_first: bool = False, name: str | None = None,
             read: Callable[[], pl.DataFrame] | None = None) -> Run:
    """Load a run file. Duplicate chunks within a query are an error naming both lines unless keep_first.
    `read`: the plain TREC reader's frame of a file found plain, already on its way (`start_run`)."""
    path = Path(path)
    check_file(path)
    fmt = fmt or sniff_run_format(path)
    if fmt not in RUN_FORMATS:
        raise InputError(path, f"unknown run format {fmt!r}; expected one of {', '.join(RUN_FORMATS)}")
    got = RUN_READERS[fmt].read(path, read)
    if got.frame.height == 0:
        raise InputError(path, "the run has no results; expected at least one ranked chunk")
    frame = ordered_frame(path, got.frame, got.sort_by_score, keep_first, allow=bool(got.searches))
    return Run(name=name or path.stem, path=path, format=fmt, frame=frame, query_text=got.query_text,
               searches=got.searches)


def jsonl_run(name: str, text: str) -> Run:
    """A JSONL run made in this process (`judge --bm25`'s BM25 run), read as the same text in a file would be."""
    path = Path(name)
    got = RUN_READERS["jsonl"].read_text(path, text)
    frame = ordered_frame(path, got.frame, False, allow=bool(got.searches))
    return Run(name=name, path=path, format="jsonl", frame=frame, query_text=got.query_text, searches=got.searches)


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
        if (fmt or sniff_run_format(path)) != "trec" or not _TREC.is_plain(path):
            return PendingRun(path, fmt, keep_first)
    except (InputError, OSError):
        return PendingRun(path, fmt, keep_first)  # said by .result(), in its turn
    box: dict = {}
    before = after._thread if after is not None else None

    def read() -> None:
        if before is not None:
            before.join()
        try:
            box["frame"] = _TREC.plain_query(path).collect()
        except Exception as err:  # the plain reader's refusal: .result() sends the file to the general path
            box["error"] = err

    thread = threading.Thread(target=read, name=f"ragdiff: read {path.name}", daemon=True)
    thread.start()
    return PendingRun(path, fmt, keep_first, thread, box)
