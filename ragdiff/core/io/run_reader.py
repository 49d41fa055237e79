"""What a run reader is: one class per run format (core/io/trec_run.py, json_runs.py, table_runs.py), listed
in core/io/formats.py's RUN_READERS, which the loader (core/io/runs.py), the extension rule and the sniffer
read. Also the refusals the line-based readers share, in the same words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError


@dataclass
class RunRead:
    """A file's rows before ordering (query_id, chunk_id, score, rank, line), how `ordered_frame` orders them
    (True: by score, trec_eval's rule; "rank": by the file's ranks; False: in file order) and what the file
    says about each query beside its chunks (agent runs: the searches, in order)."""

    frame: pl.DataFrame
    sort_by_score: str | bool
    query_text: dict[str, str] = field(default_factory=dict)
    searches: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)


class RunReader:
    """One run format: its --format name, how its content is recognised and how a file of it is read."""

    name: str  # its --format name, a key of core/io/choices.py's RUN_EXTENSIONS

    def sniff(self, head: bytes, first: str | None) -> bool:
        """Whether a file that starts with `head` and whose first data line is `first` (None: it has none; a
        comment is not data) is of this format."""
        raise NotImplementedError

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        """The file's rows, or an InputError naming the file and line. `ahead`: the rows already on their way
        (core/io/runs.start_run), for a reader that reads early."""
        raise NotImplementedError


def first_refusal(path: Path, bad: pl.DataFrame, words: Callable[[dict], str]) -> InputError | None:
    """An InputError on the first of the `bad` rows (with its `line`), in `words` of it; None when there is none."""
    if not bad.height:
        return None
    row = bad.row(0, named=True)
    return InputError(path, words(row), row["line"])


def score_refusal(path: Path, frame: pl.DataFrame, raw: str = "score_raw") -> InputError | None:
    return first_refusal(path, frame.filter(pl.col("score").is_null() | ~pl.col("score").is_finite()),
                         lambda row: f"score {row[raw]!r} is not a finite number")


def check_scores(path: Path, frame: pl.DataFrame, raw: str = "score_raw") -> None:
    refused = score_refusal(path, frame, raw)
    if refused is not None:
        raise refused
