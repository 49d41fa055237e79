"""TREC qrels (`qid 0 chunk grade`, white space between) and BEIR qrels (`qrels/<split>.tsv`, tab-separated
`query-id corpus-id score`, an optional header line, `queries.jsonl` for the query texts).

Read with polars, one vectorised pass (a qrels file can have millions of lines); an edit changes, appends
or deletes one line, copying the separators of the query's other lines. Only grades can be said here:
evidence is refused with the reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.labels.document import JUDGMENT_SCHEMA, QUERY_SCHEMA, LabelDoc, check_grade
from ragdiff.core.labels.edits import _lines, _newline
from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.yaml_doc import map_grade

_TREC_LINE = re.compile(r"(\s*)(\S+)(\s+)(\S+)(\s+)(\S+)(\s+)(\S+)(\s*)")
_GRADE = re.compile(r"\s*([-+]?\d+)\s*")


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
        self._index: dict[str, dict[str, tuple[str, int, int | None]]] | None = None

    def _frame(self) -> pl.DataFrame:
        from ragdiff.core.textio import whitespace_columns

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
        from ragdiff.core.textio import text_frame

        queries = text_frame(self.path, {
            "query_id": self.order,
            "text": [self.texts.get(q) for q in self.order],
            "regression": [False] * len(self.order),
            "position": list(range(len(self.order))),
        }, QUERY_SCHEMA)
        return queries, self.frame

    # ---- the writer

    @property
    def judg(self):  # built on first use: the loader never needs it
        if self._index is None:
            index: dict[str, dict[str, tuple[str, int, int | None]]] = {q: {} for q in self.order}
            for q, c, g, lv, line in self.frame.iter_rows():
                index[q][c] = (lv, g, line)
            self._index = index
        return self._index

    @judg.setter
    def judg(self, value) -> None:  # LabelDoc.__init__ sets an empty one
        self._index = None

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

    def _bad_id(self, s: str) -> bool:
        """TREC qrels split on white space, skip `#` lines, and a NUL makes the file binary."""
        return s == "" or any(ch.isspace() for ch in s) or s.startswith("#") or "\x00" in s

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        if label == vocab.EVIDENCE:
            raise LabelFormatError(f"{self.shape} have only grades; evidence cannot be said there "
                                   "(use the ragdiff YAML label file)")
        lines = _lines(self.text)
        nl = _newline(self.text)
        notes: list[str] = []
        hit = self.judg.get(qid, {}).get(chunk)
        if label == "none":
            if hit is None:
                return self.text, notes
            i = hit[2] - 1
            if i == len(lines) - 1 and not lines[i].endswith("\n") and i > 0:
                lines[i - 1] = lines[i - 1].rstrip("\r\n")  # keep "no final newline"
            del lines[i]
            if set(self.judg.get(qid, {})) == {chunk}:
                notes.append(f"{qid} has no judgment left in {self.path.name}")
            return "".join(lines), notes
        g = map_grade(label, grade)
        if hit is not None:
            i = hit[2] - 1
            split = self._row_parts(lines[i])
            if split is None:
                raise LabelFormatError(f"{self.path.name}:{i + 1}: cannot find the grade on this line")
            parts, gi = split
            m = _GRADE.fullmatch(parts[gi])
            if not m:
                raise LabelFormatError(f"{self.path.name}:{i + 1}: cannot find the grade on this line")
            parts[gi] = parts[gi][: m.start(1)] + str(g) + parts[gi][m.end(1):]
            lines[i] = "".join(parts)
            return "".join(lines), notes
        if self._bad_id(qid) or self._bad_id(chunk):
            raise LabelFormatError(f"{self.shape} cannot hold an empty id or one with white space "
                                   f"({qid!r}, {chunk!r})")
        same = [line for (_lv, _g, line) in self.judg.get(qid, {}).values()]
        if same:
            at = max(same)
        elif self.frame.height:
            at = int(self.frame.get_column("line").max())
        else:
            at = None
        template = lines[at - 1] if at is not None else None
        body = self._new_row(template, qid, chunk, g)
        pos = at if at is not None else len(lines)
        if pos == len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] = lines[-1] + nl
            lines.append(body)
        else:
            lines.insert(pos, body + nl)
        return "".join(lines), notes


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

    def _bad_id(self, s: str) -> bool:
        return s == "" or any(ch in s for ch in "\t\r\n\x00") or s.strip() == "" or (
            s.lower().startswith("query-id") and self.frame.height == 0)


def read_beir_queries(folder: Path) -> dict[str, str]:
    """_id -> text from a BEIR folder's queries.jsonl (none when there is no such file)."""
    from ragdiff.core.errors import InputError
    from ragdiff.core.textio import read_text

    texts: dict[str, str] = {}
    queries_path = folder / "queries.jsonl"
    if not queries_path.exists():
        return texts
    for number, raw in enumerate(read_text(queries_path).split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(queries_path, f"invalid JSON ({err.msg}); expected {{\"_id\", \"text\"}}", number) from None
        if not isinstance(record, dict) or "_id" not in record:
            raise InputError(queries_path, "expected {\"_id\", \"text\"} on each line", number)
        texts[str(record["_id"])] = str(record.get("text", ""))
    return texts
