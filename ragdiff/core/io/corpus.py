"""Chunk text from a corpus JSONL (`id` or `_id`, `text`, optional `title`), read lazily.

A corpus can hold hundreds of thousands of chunks; the review screen needs a handful at a time. One pass
records where each line starts (no text is kept), and a chunk is read by seeking to its line.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.io.textio import check_file

# the id is found without parsing the whole line; the line is parsed only when its text is asked for
_ID = re.compile(rb'"_?id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_NUMBER_GOES_ON = (b".", b"e", b"E")  # `"id": 1.5` is not the id 1


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    title: str | None = None


class Corpus:
    def __init__(self, path: str | Path, cache_size: int = 512):
        self.path = Path(path)
        check_file(self.path)
        self._offsets: dict[str, tuple[int, int]] | None = None
        self._cache: OrderedDict[str, Chunk | None] = OrderedDict()
        self._cache_size = cache_size

    def index(self) -> dict[str, tuple[int, int]]:
        """id -> (byte offset, line number). Built once, on first use (call it from a worker)."""
        if self._offsets is None:
            offsets: dict[str, tuple[int, int]] = {}
            with self.path.open("rb") as handle:
                offset = 0
                for number, line in enumerate(handle, start=1):
                    match = _ID.search(line)
                    if match and line.count(b'id"') == 1 and line[match.end():match.end() + 1] not in _NUMBER_GOES_ON:
                        raw = match.group(1)
                        try:
                            key = json.loads(raw.decode("utf-8")) if raw.startswith(b'"') else raw.decode()
                        except (UnicodeDecodeError, json.JSONDecodeError):
                            raise InputError(self.path, "the id is not a valid JSON string in UTF-8", number) from None
                    elif match:  # another "id" in the line (nested, or inside a text) or a number id read on
                        key = self._top_level_id(line, number)
                    elif line.strip():
                        raise InputError(self.path, "expected {\"id\", \"text\"} on each line", number)
                    else:
                        offset += len(line)
                        continue
                    key = str(key)
                    if key in offsets:
                        raise InputError(self.path, f"chunk id {key!r} is on line {offsets[key][1]} and again here; "
                                                    "expected each id once", number)
                    offsets[key] = (offset, number)
                    offset += len(line)
            self._offsets = offsets
        return self._offsets

    def _top_level_id(self, line: bytes, number: int) -> str:
        """The line's own `id` (else `_id`), read by parsing it: what the quick search cannot be sure of."""
        try:
            record = json.loads(line.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(self.path, f"invalid JSON line ({err}); expected {{\"id\", \"text\"}}", number) from None
        key = record.get("id", record.get("_id")) if isinstance(record, dict) else None
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            raise InputError(self.path, f"the id {key!r} is not a string or a whole number; expected "
                                        "{\"id\", \"text\"} on each line", number)
        return str(key)

    def __contains__(self, chunk_id: str) -> bool:
        return chunk_id in self.index()

    def __len__(self) -> int:
        return len(self.index())

    def get_many(self, chunk_ids) -> dict[str, Chunk]:
        """Every known id's chunk, read in one pass over the file in offset order (an export of thousands of
        labelled chunks opens the corpus once, not once per chunk)."""
        index = self.index()
        wanted = sorted({c for c in chunk_ids if c in index}, key=lambda c: index[c][0])
        out: dict[str, Chunk] = {}
        try:
            with self.path.open("rb") as handle:
                for chunk_id in wanted:
                    offset, number = index[chunk_id]
                    handle.seek(offset)
                    out[chunk_id] = self._parse(handle.readline(), chunk_id, number)
        except OSError as err:  # moved or deleted since it was indexed
            raise InputError(self.path, f"cannot read the corpus: {err.strerror or err}") from None
        return out

    def _parse(self, raw: bytes, chunk_id: str, number: int) -> Chunk:
        try:
            record = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(self.path, f"invalid JSON line ({err}); expected {{\"id\", \"text\"}}", number) from None
        if not isinstance(record, dict):
            raise InputError(self.path, "expected {\"id\", \"text\"} on each line", number)
        text, title = record.get("text"), record.get("title")  # a null is no text (str() made it "None")
        return Chunk(id=chunk_id, text="" if text is None else str(text), title=None if title is None else str(title))

    def get(self, chunk_id: str) -> Chunk | None:
        if chunk_id in self._cache:
            self._cache.move_to_end(chunk_id)
            return self._cache[chunk_id]
        where = self.index().get(chunk_id)
        chunk = None
        if where is not None:
            offset, number = where
            try:
                with self.path.open("rb") as handle:
                    handle.seek(offset)
                    raw = handle.readline()
            except OSError as err:  # moved or deleted since it was indexed
                raise InputError(self.path, f"cannot read the corpus: {err.strerror or err}") from None
            chunk = self._parse(raw, chunk_id, number)
        self._cache[chunk_id] = chunk
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return chunk
