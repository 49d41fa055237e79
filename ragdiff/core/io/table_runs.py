"""Table runs: CSV, TSV (a header naming the query and chunk columns, and rank or score) and Parquet (the same
columns): `CsvRun`, `TsvRun` and `ParquetRun`. Ordered by the file's ranks when it has them, else by score."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError
from ragdiff.core.io.run_reader import RunRead, RunReader, check_scores, first_refusal
from ragdiff.core.io.textio import read_text


class CsvRun(RunReader):
    name = "csv"
    separator = ","

    def sniff(self, head: bytes, first: str | None) -> bool:
        return first is not None and self.separator in first and "query_id" in first.split(self.separator)

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        return RunRead(*_load_table(path, self.name))


class TsvRun(CsvRun):
    name = "tsv"
    separator = "\t"


class ParquetRun(RunReader):
    name = "parquet"

    def sniff(self, head: bytes, first: str | None) -> bool:
        return head.startswith(b"PAR1")

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        return RunRead(*_load_table(path, self.name))


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
        check_scores(path, out)
    if rcol:
        refused = first_refusal(path, out.filter(pl.col("rank").is_null() | (pl.col("rank") < 0)),
                                lambda row: f"rank {row['rank_raw']!r} is not a whole number >= 0")
        if refused is not None:
            raise refused
    out = out.with_columns(pl.col("rank").cast(pl.UInt32)).select("query_id", "chunk_id", "score", "rank", "line")
    return out, ("rank" if rcol else True)
