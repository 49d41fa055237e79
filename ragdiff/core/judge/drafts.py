"""`ragdiff labels import GOLD DRAFTS.jsonl`: a model's proposals added to the label file as `drafted:`; and
`ragdiff labels add GOLD --from DRAFTED.jsonl`: queries a model drafted from chunks, added as `proposed: true`.

DRAFTS.jsonl holds one `{"query_id", "chunk_id", "grade"}` a line (any model's output; ragdiff never calls a
model). The whole file is checked before anything is written; then the drafts go through the label writer as
one journaled, atomic edit (`LabelFile.add_drafts`: one write however many drafts, one `labels undo` takes the
import back), and a chunk a person has judged is never touched: the draft is skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.labels import LabelFile
from ragdiff.core.labels.document import check_grade
from ragdiff.core.io.textio import json_objects, read_text


@dataclass(frozen=True)
class Draft:
    query_id: str
    chunk_id: str
    grade: int
    line: int


def _records(path: Path, expected: str):
    return json_objects(path, read_text(path), f"{expected} on each line")


def _check_grade(path: Path, grade, number: int) -> None:
    if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
        raise InputError(path, f"grade {grade!r}: expected a whole number >= 0 (0 proposes not relevant)", number)
    if check_grade(grade):
        raise InputError(path, check_grade(grade), number)


def read_drafts(path: Path, known_queries: list[str]) -> list[Draft]:
    """Every draft in the file, checked: bad input names the line and what was expected."""
    path = Path(path)
    known = set(known_queries)
    seen: dict[tuple[str, str], int] = {}
    drafts = []
    for number, record in _records(path, '{"query_id", "chunk_id", "grade"}'):
        qid, chunk, grade = record.get("query_id"), record.get("chunk_id"), record.get("grade")
        for name, value in (("query_id", qid), ("chunk_id", chunk)):
            if not isinstance(value, str) or not value.strip():
                raise InputError(path, f"{name} {value!r}: expected a non-empty string", number)
        _check_grade(path, grade, number)
        if qid not in known:
            raise InputError(path, f"query {qid!r} is not in the label file; expected one of its query ids "
                                   "(ragdiff labels add appends a new query)", number)
        if (qid, chunk) in seen:
            raise InputError(path, f"chunk {chunk!r} of query {qid!r} is drafted twice (lines {seen[qid, chunk]} "
                                   f"and {number}); expected one draft per chunk", number)
        seen[qid, chunk] = number
        drafts.append(Draft(qid, chunk, grade, number))
    return drafts


@dataclass
class DraftedQuery:
    """A query a model drafted from one or more chunks (`labels add --from DRAFTED.jsonl`)."""

    id: str
    text: str  # as the model wrote it (the first spelling, when it wrote one question twice)
    drafts: dict[str, int]  # chunk -> proposed grade
    line: int  # its first line in the file
    key: str = ""  # the folded text (what tells queries apart)


DRAFTED_FIELDS = '{"query", "chunk_id"} (and an optional "grade")'


def is_drafted_queries(path: Path) -> bool:
    """Is this a file of drafted queries rather than a query log: JSON lines whose first record names a
    chunk_id (a query log's records name no chunk)?"""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    record = json.loads(raw)
                    return isinstance(record, dict) and "chunk_id" in record
    except (OSError, ValueError):
        return False
    return False


def read_drafted_queries(path: Path, taken_ids: set[str]) -> list[DraftedQuery]:
    """Every line checked (bad input names the line and what was expected), then one query per question: the
    same question drafted from two chunks (equal after folding case, white space and punctuation, as `labels
    init` folds a log) is one query holding both chunks as drafts. Ids as `labels init` makes them."""
    from ragdiff.core.judge import querylog

    path = Path(path)
    rows: list[tuple[str, str, int, int]] = []
    for number, record in _records(path, DRAFTED_FIELDS):
        text, chunk, grade = record.get("query"), record.get("chunk_id"), record.get("grade", 1)
        if "query" not in record and "query_id" in record:
            raise InputError(path, f"a draft for an existing query (query_id); expected {DRAFTED_FIELDS} for a new "
                                   "query (drafts for queries the file has: ragdiff labels import)", number)
        for name, value in (("query", text), ("chunk_id", chunk)):
            if not isinstance(value, str) or not value.strip():
                raise InputError(path, f"{name} {value!r}: expected a non-empty string ({DRAFTED_FIELDS})", number)
        _check_grade(path, grade, number)
        rows.append((text, chunk, grade, number))
    if not rows:
        raise InputError(path, f"no drafted query in it; expected one {DRAFTED_FIELDS} a line")
    # a text of punctuation alone folds to nothing: it stands for itself
    keys = [k or t.strip() for k, (t, _c, _g, _n) in zip(querylog.fold_texts([r[0] for r in rows]), rows)]
    queries: dict[str, DraftedQuery] = {}
    seen: dict[tuple[str, str], int] = {}
    for (text, chunk, grade, number), key in zip(rows, keys):
        if (key, chunk) in seen:
            raise InputError(path, f"chunk {chunk!r} is drafted twice for the query {text!r} (lines "
                                   f"{seen[key, chunk]} and {number}); expected one draft per chunk", number)
        seen[key, chunk] = number
        query = queries.setdefault(key, DraftedQuery("", text, {}, number, key))
        query.drafts[chunk] = grade
    out = list(queries.values())
    for query, qid in zip(out, querylog.make_ids([q.key for q in out], taken_ids)):
        query.id = qid
    return out


@dataclass
class ImportResult:
    added: int = 0  # a new draft for an unjudged chunk
    regraded: int = 0  # an existing draft given the new grade
    same: int = 0  # already drafted at that grade
    judged: list[Draft] = field(default_factory=list)  # a person's judgment is there: left alone

    def sentence(self, path: Path, source: Path) -> str:
        parts = [f"{self.added} draft{'s' if self.added != 1 else ''} added"]
        if self.regraded:
            parts.append(f"{self.regraded} regraded")
        if self.same:
            parts.append(f"{self.same} already drafted")
        if self.judged:
            parts.append(f"{len(self.judged)} skipped: a person has judged the chunk")
        return f"{source} → {path}: " + ", ".join(parts)


def import_drafts(labels: LabelFile, drafts: list[Draft], source: str) -> ImportResult:
    """Add each draft through the label writer; judged chunks are never touched."""
    if not labels.can_say(vocab.DRAFTED):
        raise InputError(labels.path, f"a {labels.shape} has no place for drafted labels; expected the ragdiff label "
                                      "file (YAML or JSON with queries:)")
    result = ImportResult()
    todo = []
    for d in drafts:
        kind, grade = labels.current_label(d.query_id, d.chunk_id)
        if kind in vocab.MARKABLE:
            result.judged.append(d)
            continue
        if kind == vocab.DRAFTED and grade == d.grade:
            result.same += 1
            continue
        todo.append((d.query_id, d.chunk_id, d.grade))
        if kind == vocab.DRAFTED:
            result.regraded += 1
        else:
            result.added += 1
    if todo:  # one write and one journal entry for the whole import; `labels undo` takes it all back
        labels.add_drafts(todo, source)
    return result
