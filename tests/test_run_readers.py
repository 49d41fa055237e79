"""The run readers' registry (core/io/formats.py): one reader class per --format name, found by a file's
extension or else its content, each reading the same run to the same frame."""

from __future__ import annotations

import json

import polars as pl
import pytest

from ragdiff.core.io.choices import RUN_EXTENSIONS, RUN_FORMATS
from ragdiff.core.io.formats import RUN_READERS, run_format_from_extension, sniff_run_format
from ragdiff.core.io.runs import load_run

# one run: two queries, scores falling down each list (so list formats and score-ordered ones agree)
ROWS = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d3", 1.0), ("q2", "d9", 5.5), ("q2", "d4", 0.5)]


def _write(path, fmt: str) -> None:
    by_query: dict[str, list] = {}
    for q, d, s in ROWS:
        by_query.setdefault(q, []).append({"id": d, "score": s})
    if fmt == "trec":
        path.write_text("".join(f"{q} Q0 {d} {i} {s} tag\n" for i, (q, d, s) in enumerate(ROWS, 1)))
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps({"query_id": q, "results": r}) + "\n" for q, r in by_query.items()))
    elif fmt == "json":
        path.write_text(json.dumps({q: {r["id"]: r["score"] for r in rs} for q, rs in by_query.items()}, indent=1))
    else:
        frame = pl.DataFrame({"query_id": [r[0] for r in ROWS], "chunk_id": [r[1] for r in ROWS],
                              "score": [r[2] for r in ROWS]})
        if fmt == "parquet":
            frame.write_parquet(path)
        else:
            frame.write_csv(path, separator="," if fmt == "csv" else "\t")


def test_one_reader_per_format_and_extension():
    assert sorted(RUN_READERS) == sorted(RUN_FORMATS)
    for fmt, extensions in RUN_EXTENSIONS.items():
        assert RUN_READERS[fmt].name == fmt
        for ext in extensions:
            assert run_format_from_extension(f"run{ext.upper()}") == fmt
    assert run_format_from_extension("run.txt") is None


@pytest.mark.parametrize("fmt", RUN_FORMATS)
def test_each_format_is_known_by_its_content_and_reads_the_same_run(tmp_path, fmt):
    bare = tmp_path / f"run_{fmt}"  # no extension: the content says the format
    _write(bare, fmt)
    assert sniff_run_format(bare) == fmt
    run = load_run(bare)
    assert run.format == fmt
    assert run.frame.select("query_id", "chunk_id", "rank").rows() == [
        ("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 3), ("q2", "d9", 1), ("q2", "d4", 2)]
