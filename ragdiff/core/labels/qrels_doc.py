"""TREC qrels (`qid 0 chunk grade`, white space between) and BEIR qrels (`qrels/<split>.tsv`, tab-separated
`query-id corpus-id score`, an optional header line, `queries.jsonl` for the query texts).

Read with polars, one vectorised pass (a qrels file can have millions of lines); an edit changes, appends
or deletes one line, copying the separators of the query's other lines. Only grades can be said here:
evidence is refused with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import polars as pl

from ragdiff.core import vocab
from ragdiff.core.labels.atomic import changed_lines
from ragdiff.core.labels.document import JUDGMENT_SCHEMA, QUERY_SCHEMA, LabelDoc, check_grade
from ragdiff.core.labels.edits import newline_of, text_lines
from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.yaml_edits import map_grade
from ragdiff.core.io.textio import FIELD_CLASS, SPACE, SPACE_CLASS, json_objects, odd_space

# a line's pieces, separators kept, split by trec_eval's white space (textio.SPACE) as the reader splits it
_TREC_LINE = re.compile("({s}*)({f}+)({s}+)({f}+)({s}+)({f}+)({s}+)({f}+)({s}*)".format(s=SPACE_CLASS, f=FIELD_CLASS))
_GRADE = re.compile(f"{SPACE_CLASS}*([-+]?[0-9]+){SPACE_CLASS}*")


class QrelsDoc(LabelDoc):
    fmt = "qrels"
    shape = "TREC qrels"
    kinds = (vocab.GOLD, vocab.NOT_RELEVANT)

    def __init__(self, path: Path, text: str, folder: Path | None = None):
        super().__init__(path, text)
        self.folder = folder
        self.header: int | None = None  # 1-based line of a BEIR header
        frame = self._frame()
        self._check(frame)
        self.frame = frame.with_columns(
            level=pl.when(pl.col("grade") > 0).then(pl.lit(vocab.GOLD)).otherwise(pl.lit(vocab.NOT_RELEVANT))
        ).select(list(JUDGMENT_SCHEMA))
        self.order = self.frame.get_column("query_id").unique(maintain_order=True).to_list()
        self._index: _Judgments | None = None
        self._starts: np.ndarray | None = None  # line start offsets, worked out when a mark needs them

    def _frame(self) -> pl.DataFrame:
        from ragdiff.core.io.textio import whitespace_columns

        parts = whitespace_columns(self.path, self.text, ["query_id", None, "chunk_id", "grade_raw"],
                                   "qid 0 chunk grade")
        parts = parts.with_columns(grade=pl.col("grade_raw").cast(pl.Int64, strict=False))
        bad = parts.filter(pl.col("grade").is_null())
        if bad.height:
            row = bad.row(0, named=True)
            raise self.error(f"grade {row['grade_raw']!r} is not a whole number (column 4)", row["line"])
        return parts.select("query_id", "chunk_id", "grade", pl.col("line").cast(pl.UInt32))

    def _check(self, frame: pl.DataFrame) -> None:
        big = frame.filter(pl.col("grade").abs() > 2**31 - 1)
        if big.height:
            row = big.row(0, named=True)
            raise self.error(check_grade(row["grade"]) or "grade out of range", row["line"])
        dup = frame.filter(pl.struct("query_id", "chunk_id").is_duplicated())
        if dup.height:
            row = dup.row(0, named=True)
            lines = dup.filter((pl.col("query_id") == row["query_id"]) & (pl.col("chunk_id") == row["chunk_id"]))["line"]
            raise self.error(f"chunk {row['chunk_id']!r} is judged twice for query {row['query_id']!r} "
                             f"(lines {lines[0]} and {lines[1]}); expected one judgment", lines[1])

    # ---- the loader

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        from ragdiff.core.io.textio import text_frame

        queries = text_frame(self.path, {
            "query_id": self.order,
            "text": [self.texts.get(q) for q in self.order],
            "regression": [False] * len(self.order),
            "position": list(range(len(self.order))),
        }, QUERY_SCHEMA)
        return queries, self.frame

    # ---- the writer

    @property
    def judg(self):  # read from the frame on first use: the loader never needs it
        if self._index is None:
            self._index = _Judgments(self.frame, self.order)
        return self._index

    @judg.setter
    def judg(self, value) -> None:  # LabelDoc.__init__ sets an empty one
        self._index = None

    def reparse(self, new_text: str, qid: str) -> QrelsDoc | None:
        """The document of `new_text` when it differs from this one only in lines of query `qid` (the one
        line a mark edits, appends or deletes), without reading the whole file again. None when that cannot
        be shown to read the same as a whole parse (the caller then parses the whole text).

        Why it reads the same: the loader reads a qrels file one physical line at a time (split on \\n,
        blank and `#` lines skipped in TREC); everything before the changed lines and after them is the
        same text, starting and ending on line boundaries, so it reads as the same rows, the ones after
        moved by the change in line count. The changed lines are read on their own by this class's own
        reader; rows of other queries among them must come back unchanged, and a chunk of `qid` read there
        must not be judged elsewhere in the file (the whole parse would refuse the duplicate). A BEIR
        file's first line may be its header: a change there is read whole."""
        t = self.text
        start, end_old, end_new = changed_lines(t, new_text)
        if start == end_old == end_new:
            return None
        first = t.count("\n", 0, start) + 1  # the line number of the first changed line, in both texts
        if first == 1 and isinstance(self, BeirDoc):
            return None
        old_part, new_part = t[start:end_old], new_text[start:end_new]
        if isinstance(self, BeirDoc) and new_part.lower().startswith("query-id"):
            return None  # a fragment's first line would be read as a header, the file's line `first` not
        n_old = len(text_lines(old_part))  # physical lines replaced (the last may lack its newline)
        delta = new_part.count("\n") - old_part.count("\n")  # how far the lines after them move
        try:
            part = type(self)(self.path, new_part) if new_part.strip() else None
        except Exception:  # noqa: BLE001 - whatever the reader says, the whole parse says it properly
            return None
        line = pl.col("line")
        frame = self.frame
        before = frame.filter(line < first)
        was = frame.filter((line >= first) & (line < first + n_old))
        after = frame.filter(line >= first + n_old)
        now = (part.frame if part is not None else frame.clear()).with_columns(
            (line.cast(pl.Int64) + (first - 1)).cast(pl.UInt32))
        mine = pl.col("query_id") == qid
        theirs = ["query_id", "chunk_id", "grade"]
        if not was.filter(~mine).select(theirs).equals(now.filter(~mine).select(theirs)):
            return None  # another query's line changed too
        chunks = now.filter(mine).get_column("chunk_id")
        if chunks.len() and pl.concat([before, after]).filter(mine & pl.col("chunk_id").is_in(chunks.implode())).height:
            return None  # judged twice: the whole parse names both lines
        if delta:
            after = after.with_columns((line.cast(pl.Int64) + delta).cast(pl.UInt32))
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.text, new._lines = new_text, None
        new.frame = pl.concat([before, now, after])
        new.order = new.frame.get_column("query_id").unique(maintain_order=True).to_list()
        new._index = None
        if self._starts is not None:
            moved = len(new_part) - len(old_part)
            new._starts = np.concatenate((self._starts[: first - 1], _starts_of(new_part) + start,
                                          self._starts[first - 1 + n_old:] + moved))
        return new

    def graded(self, qid: str) -> bool:
        return True

    def _row_parts(self, line: str) -> tuple[list[str], int] | None:
        """(the line split into text pieces, index of the grade piece) so one piece can be replaced."""
        body = line.rstrip("\r\n")
        m = _TREC_LINE.fullmatch(body)
        if not m:
            return None
        return [m.group(i) for i in range(1, 10)] + [line[len(body):]], 7

    def _new_row(self, template: str | None, qid: str, chunk: str, g: int) -> str:
        if template is not None:
            parts, _gi = self._row_parts(template)
            return parts[0] + qid + parts[2] + parts[3] + parts[4] + chunk + parts[6] + str(g) + parts[8]
        return f"{qid} 0 {chunk} {g}"

    def _bad_id(self, s: str) -> str | None:
        """Why a TREC qrels line cannot hold this id (they split on white space, skip `#` lines, and a NUL
        makes the file binary), or None."""
        if s == "":
            return "it is empty"
        if any(ch in SPACE for ch in s):
            return "it holds white space"
        odd = odd_space(s)
        if odd is not None:  # read back whole by ragdiff and trec_eval, as two columns by Python's tools
            return f"it holds a {odd}, white space to Python's str.split()"
        if s.startswith("#"):
            return "it starts with # (a comment line there)"
        return "it holds a NUL" if "\x00" in s else None

    def line_starts(self) -> np.ndarray:
        """Where each physical line starts (line n at [n - 1]), as `text_lines` splits the text: on \\n, a last
        line without one counted. Worked out once per file; a reparse shifts it instead."""
        if self._starts is None:
            self._starts = _starts_of(self.text)
        return self._starts

    def _span(self, i: int) -> tuple[int, int]:
        """(start, end) of 0-based line i, its ending included."""
        starts = self.line_starts()
        return int(starts[i]), (int(starts[i + 1]) if i + 1 < len(starts) else len(self.text))

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        if label == vocab.EVIDENCE:
            raise LabelFormatError(f"{self.shape} have only grades; evidence cannot be said there "
                                   "(use the ragdiff YAML label file)")
        t = self.text
        count = len(self.line_starts())
        notes: list[str] = []
        hit = self.judg.get(qid, {}).get(chunk)
        if label == "none":
            if hit is None:
                return t, notes
            i = hit[2] - 1
            a, b = self._span(i)
            if set(self.judg.get(qid, {})) == {chunk}:
                notes.append(f"{qid} has no judgment left in {self.path.name}")
            if i == count - 1 and not t.endswith("\n") and i > 0:
                pa, _pb = self._span(i - 1)
                return t[:pa] + t[pa:a].rstrip("\r\n"), notes  # keep "no final newline"
            return t[:a] + t[b:], notes
        g = map_grade(label, grade)
        if hit is not None:
            i = hit[2] - 1
            a, b = self._span(i)
            split = self._row_parts(t[a:b])
            if split is None:
                raise LabelFormatError(f"{self.path.name}:{i + 1}: cannot find the grade on this line")
            parts, gi = split
            m = _GRADE.fullmatch(parts[gi])
            if not m:
                raise LabelFormatError(f"{self.path.name}:{i + 1}: cannot find the grade on this line")
            parts[gi] = parts[gi][: m.start(1)] + str(g) + parts[gi][m.end(1):]
            return t[:a] + "".join(parts) + t[b:], notes
        for what, value in (("query id", qid), ("chunk id", chunk)):
            why = self._bad_id(value)
            if why:
                raise LabelFormatError(f"{self.shape} cannot hold the {what} {value!r}: {why}; nothing was written")
        same = [line for (_lv, _g, line) in self.judg.get(qid, {}).values()]
        if same:
            at = max(same)
        elif self.frame.height:
            at = int(self.frame.get_column("line").max())
        else:
            at = None
        template = None
        if at is not None:
            ta, tb = self._span(at - 1)
            template = t[ta:tb]
        body = self._new_row(template, qid, chunk, g)
        nl = newline_of(t)
        pos = at if at is not None else count
        if pos == count and count and not t.endswith("\n"):
            return t + nl + body, notes
        off = self._span(pos)[0] if pos < count else len(t)
        return t[:off] + body + nl + t[off:], notes


def _starts_of(text: str) -> np.ndarray:
    """Start offsets of the physical lines of text (see QrelsDoc.line_starts)."""
    pieces = text.split("\n")
    if not pieces[-1]:
        pieces.pop()  # the text ends with \n (or is empty): no line after it
    lens = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + 1
    starts = np.zeros(len(pieces), dtype=np.int64)
    if len(pieces) > 1:
        np.cumsum(lens[:-1], out=starts[1:])
    return starts


class _Judgments(Mapping):
    """A qrels document's judgments, qid -> {chunk: (level, grade, line)}, read from its frame as asked: one
    query at a time (a filter) for the writer's few look-ups per mark; every query in one pass once it is
    iterated or asked about many queries (a 130,000-line file takes ~100 ms that way, too much per mark)."""

    _FEW = 16

    def __init__(self, frame: pl.DataFrame, order: list[str]):
        self._frame, self._order = frame, order
        self._known: set[str] | None = None
        self._held: dict[str, dict[str, tuple[str, int, int | None]]] = {}
        self._looked, self._all = 0, False

    def __contains__(self, qid) -> bool:
        if self._known is None:
            self._known = set(self._order)
        return qid in self._known

    def __getitem__(self, qid: str) -> dict[str, tuple[str, int, int | None]]:
        held = self._held.get(qid)
        if held is not None:
            return held
        if qid not in self:
            raise KeyError(qid)
        self._looked += 1
        if self._looked > self._FEW:
            self._read_all()
            return self._held[qid]
        rows = self._frame.filter(pl.col("query_id") == qid)
        held = self._held[qid] = {c: (lv, g, line) for _q, c, g, lv, line in rows.iter_rows()}
        return held

    def _read_all(self) -> None:
        if not self._all:
            index: dict[str, dict[str, tuple[str, int, int | None]]] = {q: {} for q in self._order}
            for q, c, g, lv, line in self._frame.iter_rows():
                index[q][c] = (lv, g, line)
            self._held, self._all = index, True

    def __iter__(self):
        self._read_all()
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class BeirDoc(QrelsDoc):
    fmt = "beir"
    shape = "BEIR qrels"

    def __init__(self, path: Path, text: str, folder: Path | None = None):
        super().__init__(path, text, folder)
        if folder is not None:
            self.texts = read_beir_queries(folder)

    def _frame(self) -> pl.DataFrame:
        rows = [ln.rstrip("\r") for ln in self.text.split("\n")]
        start = 1 if rows and rows[0].lower().startswith("query-id") else 0
        if start:
            self.header = 1
        frame = (
            pl.Series("raw", rows).to_frame().with_row_index("line", offset=1).slice(start)
            .filter(pl.col("raw").str.strip_chars() != "")
            .with_columns(parts=pl.col("raw").str.split("\t"))
        )
        bad = frame.filter(pl.col("parts").list.len() != 3)
        if bad.height:
            row = bad.row(0, named=True)
            raise self.error(f"expected 3 tab-separated columns (query-id, corpus-id, score), "
                             f"found {len(row['parts'])}", row["line"])
        frame = frame.with_columns(
            query_id=pl.col("parts").list.get(0), chunk_id=pl.col("parts").list.get(1),
            grade_raw=pl.col("parts").list.get(2),
        ).with_columns(grade=pl.col("grade_raw").str.strip_chars().cast(pl.Int64, strict=False))
        bad = frame.filter(pl.col("grade").is_null())
        if bad.height:
            row = bad.row(0, named=True)
            raise self.error(f"score {row['grade_raw']!r} is not a whole number (column 3)", row["line"])
        return frame.select("query_id", "chunk_id", "grade", pl.col("line").cast(pl.UInt32))

    def _row_parts(self, line: str):
        body = line.rstrip("\r\n")
        cols = body.split("\t")
        if len(cols) != 3:
            return None
        return [cols[0], "\t", cols[1], "\t", cols[2], line[len(body):]], 4

    def _new_row(self, template: str | None, qid: str, chunk: str, g: int) -> str:
        return f"{qid}\t{chunk}\t{g}"

    def _bad_id(self, s: str) -> str | None:
        if s.strip() == "":
            return "it is empty or blank"
        if any(ch in s for ch in "\t\r\n\x00"):
            return "it holds a tab, a line break or a NUL"
        if s.lower().startswith("query-id") and self.frame.height == 0:
            return "a first line starting with query-id is read as the header"
        return None


def read_beir_queries(folder: Path) -> dict[str, str | None]:
    """_id -> text from a BEIR folder's queries.jsonl (none when there is no such file). A text that is null or
    missing is no text (None, as BEIR's loader reads it); an _id is a string or a whole number; anything else,
    or an _id twice, is refused with its line rather than read as something it does not say."""
    from ragdiff.core.errors import InputError
    from ragdiff.core.io.textio import read_text

    texts: dict[str, str | None] = {}
    lines: dict[str, int] = {}
    queries_path = folder / "queries.jsonl"
    if not queries_path.exists():
        return texts
    expected = '{"_id", "text"} on each line'
    for number, record in json_objects(queries_path, read_text(queries_path), expected):
        if "_id" not in record:
            raise InputError(queries_path, f"no _id; expected {expected}", number)
        qid, text = record["_id"], record.get("text")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)):
            raise InputError(queries_path, f"_id is {json.dumps(qid)}; expected a string (or a whole number)", number)
        if text is not None and not isinstance(text, str):
            raise InputError(queries_path, f"text is {json.dumps(text)}; expected a string or null", number)
        qid = str(qid)
        if qid in lines:
            raise InputError(queries_path, f"query {qid!r} is there twice (lines {lines[qid]} and {number}); "
                                           "expected one line per query", number)
        lines[qid] = number
        texts[qid] = text
    return texts
