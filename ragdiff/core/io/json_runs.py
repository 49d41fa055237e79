"""JSON runs: JSONL (one query a line, agent runs' searches included) and a JSON document (a score map or lists
per query, or an array of JSONL-style records): `JsonlRun` and `JsonRun`. Both keep each list's order, except a
score map, which is ordered by score (trec_eval's rule, core/io/run_order.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError
from ragdiff.core.io.run_reader import RunRead, RunReader
from ragdiff.core.io.textio import json_error, json_objects, line_of, read_text, text_frame


class JsonlRun(RunReader):
    """One JSON object a line: {"query_id", "results": [...]} or an agent's {"query_id", "searches": [...]}."""

    name = "jsonl"

    def sniff(self, head: bytes, first: str | None) -> bool:
        if first is None or not first.startswith("{"):
            return False
        try:
            json.loads(first)
        except json.JSONDecodeError:
            return False  # the first line of a JSON document that goes on
        return True

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        return self.read_text(path)

    def read_text(self, path: Path, text: str | None = None) -> RunRead:
        """The file's rows, or `text`'s read as that file's would be (a run made in this process)."""
        query_text: dict[str, str] = {}
        searches: dict[str, list[tuple[str, list[str]]]] = {}
        frame = _load_jsonl(path, query_text, searches, text)
        return RunRead(frame, False, query_text, searches)


class JsonRun(RunReader):
    """One JSON document: {query: [chunk ids]}, {query: {chunk: score}} or an array of JSONL-style records."""

    name = "json"

    def sniff(self, head: bytes, first: str | None) -> bool:
        return first is not None and first.startswith(("{", "["))

    def read(self, path: Path, ahead: Callable[[], pl.DataFrame] | None = None) -> RunRead:
        query_text: dict[str, str] = {}
        frame, sort_by_score = _load_json(path, query_text)
        return RunRead(frame, sort_by_score, query_text)


# what the list formats collect before ranking
_LIST_SCHEMA = {"query_id": pl.String, "chunk_id": pl.String, "score": pl.Float64, "line": pl.UInt32}


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
    for number, record in json_objects(path, text, 'one JSON object {"query_id", "results"} a line'):
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
