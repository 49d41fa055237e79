"""One interface for every label format: parse with positions, the judgments held, plan an edit, and
what the format can express. `ragdiff.core.labels.gold.load_gold` and `LabelFile` both read a file through
these classes, so every file one accepts the other accepts, with the same judgments.

A document's judgments are the gold loader's: per query, chunk -> (level, grade, line), where level is a
kind from ragdiff.core.vocab and grade the number scored with (gold >= 1 with a plain list entry 1,
evidence 1 unless graded, not relevant 0; a qrels grade as written, negatives included).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.labels.spans import Lines, MappingNode, ParseError, ScalarNode, SequenceNode, check_unique, is_null

QUERY_SCHEMA = {"query_id": pl.String, "text": pl.String, "regression": pl.Boolean, "position": pl.UInt32}
JUDGMENT_SCHEMA = {"query_id": pl.String, "chunk_id": pl.String, "grade": pl.Int64, "level": pl.String,
                   "line": pl.UInt32}
QUERY_DETAILS = {"query_id": pl.String, "tags": pl.List(pl.String), "retrieval": pl.Boolean, "reviewed": pl.String}
DRAFT_SCHEMA = {"query_id": pl.String, "chunk_id": pl.String, "grade": pl.Int64, "line": pl.UInt32}

# a grade is a small whole number; one that does not fit in 32 bits is a typo (and would overflow the scores)
MAX_GRADE = 2**31 - 1


def check_grade(g: int) -> str | None:
    """Why a grade cannot be stored, or None."""
    if not -MAX_GRADE <= g <= MAX_GRADE:
        return f"grade {g} is out of range; expected a whole number from {-MAX_GRADE} to {MAX_GRADE}"
    return None


def parse_grade(value: str) -> int | None:
    """A grade as written ("3", " 3 ", "3.0", "1e0"), or None when it is not a whole number."""
    s = value.strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        f = float(s)
    except ValueError:
        return None
    if f != f or f in (float("inf"), float("-inf")) or not f.is_integer():
        return None
    return int(f)


class LabelDoc:
    """A parsed label file. Subclasses set fmt, shape and kinds, and fill order/queries/judg in __init__."""

    fmt: str  # "yaml" | "json" | "qrels" | "beir"
    shape: str  # what people call it, for messages: "label file", "short form", "TREC qrels", "BEIR qrels"
    kinds: tuple[str, ...]  # the kinds a mark can set in it (vocab.MARKABLE or fewer)

    def __init__(self, path: Path, text: str):
        self.path = Path(path)
        self.text = text
        self.order: list[str] = []
        self.texts: dict[str, str | None] = {}
        self.regression: dict[str, bool] = {}
        self.judg: dict[str, dict[str, tuple[str, int, int | None]]] = {}
        self.corpus: tuple[str | None, str | None] = (None, None)
        # per query, what only the ragdiff label file can say (other formats leave these empty)
        self.tags: dict[str, list[str]] = {}
        self.retrieval: dict[str, bool] = {}  # False: the answer is not inside a chunk; left out of every score
        self.reviewed: dict[str, str] = {}  # when a person last read the query's labels, as written
        self.drafts: dict[str, dict[str, tuple[int, int | None]]] = {}  # a model's proposals: chunk -> (grade, line)
        self.proposed: dict[str, bool] = {}  # True: the query itself was drafted by a model, not yet kept by a person
        self._lines: Lines | None = None

    # ---- positions and errors

    def line_of(self, offset: int) -> int:
        if self._lines is None:
            self._lines = Lines(self.text)
        return self._lines.of(offset)

    def error(self, message: str, line: int | None = None) -> InputError:
        return InputError(self.path, message, line)

    def parse_error(self, err: ParseError) -> InputError:
        return InputError(self.path, err.message, err.line)

    def add(self, qid: str, chunk: str, level: str, grade: int, line: int | None) -> None:
        """One judgment; the same chunk twice for a query is an error naming both levels and the line."""
        held = self.judg[qid]
        if chunk in held:
            first = held[chunk][0]
            raise self.error(f"chunk {chunk!r} is labelled twice for query {qid!r} ({first} and {level}); "
                             "expected one label per chunk", line)
        held[chunk] = (level, grade, line)

    # ---- what the writer asks

    def can_express(self, kind: str) -> bool:
        return kind in self.kinds or kind in ("none", vocab.UNJUDGED)

    def current(self, qid: str, chunk: str) -> tuple[str, int | None]:
        """(level, grade) of one chunk, ("drafted", grade) for a model's proposal, ("none", None) when
        unjudged (or the query is not in the file)."""
        hit = self.judg.get(qid, {}).get(chunk)
        if hit is None:
            draft = self.drafts.get(qid, {}).get(chunk)
            return ("none", None) if draft is None else (vocab.DRAFTED, draft[0])
        return (hit[0], hit[1])

    # what a document holds per query besides its judgments (a reparse of one entry refreshes each)
    PER_QUERY = ("texts", "regression", "tags", "retrieval", "reviewed", "drafts", "proposed")

    def state_of(self, qid: str) -> dict[str, tuple[str, int]]:
        """{chunk: (level, grade)} of one query, drafts included (what `state` says for it)."""
        out = {c: (lv, g) for c, (lv, g, _line) in self.judg.get(qid, {}).items()}
        out.update((c, (vocab.DRAFTED, g)) for c, (g, _line) in self.drafts.get(qid, {}).items())
        return out

    def state(self) -> dict[str, dict[str, tuple[str, int]]]:
        """{qid: {chunk: (level, grade)}} in file order, drafts included: what verification compares."""
        out = {q: {c: (lv, g) for c, (lv, g, _line) in self.judg[q].items()} for q in self.order}
        for q, held in self.drafts.items():
            out[q].update((c, (vocab.DRAFTED, g)) for c, (g, _line) in held.items())
        return out

    def graded(self, qid: str) -> bool:
        """Does this query's gold already say grades (a map, qrels)? A gold mark without a grade then
        writes grade 1 and says so."""
        return False

    def quote_style(self) -> str | None:
        return None

    def plan_add_query(self, qid: str | None, text: str, regression: bool, tags: list[str],
                       extra: list[tuple[str, object]] = ()) -> str:
        """The whole new text with one query appended (`labels add`). LabelFormatError when the format has
        no place for it."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} cannot take a new query from ragdiff; expected the ragdiff label "
                               "file (YAML or JSON, with queries:)")

    def plan_add_queries(self, entries: list[tuple[str | None, str, bool, list[str], list[tuple[str, object]]]]) -> str:
        """`plan_add_query` for several queries at once, in order (one write: `labels add --from DRAFTED`)."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} cannot take a new query from ragdiff; expected the ragdiff label "
                               "file (YAML or JSON, with queries:)")

    def plan_keep_query(self, qid: str) -> str:
        """The whole new text with query `qid` no longer `proposed:` (a person kept the drafted query)."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} has no drafted queries; expected the ragdiff label file")

    def plan_drop_query(self, qid: str) -> str:
        """The whole new text without query `qid`'s entry (a person dropped the drafted query)."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} has no drafted queries; expected the ragdiff label file")

    def plan_corpus(self, path: str, sha256: str) -> str:
        """The whole new text with `corpus: {path, sha256}` recorded (`labels snapshot`)."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} has no place for a corpus snapshot; expected the ragdiff label "
                               "file (YAML or JSON, with queries:)")

    # can the file say `reviewed:` (when a person last read a query's labels)? Only the ragdiff label file
    # has a place for it; elsewhere the journal's marks are the record (`labels stale` reads both)
    records_reviewed = False

    def plan_reviewed(self, qid: str, day: str) -> str:
        """The whole new text with query `qid`'s `reviewed:` set to `day` (an ISO date)."""
        from ragdiff.core.labels.errors import LabelFormatError

        raise LabelFormatError(f"a {self.shape} has no place for a reviewed: date; expected the ragdiff label file "
                               "(YAML or JSON, with queries:)")

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        """The whole new text for one mark, and notes for the status sentence. LabelFormatError when the
        format cannot say it (or this file cannot take it cleanly)."""
        raise NotImplementedError

    # ---- what the loader asks

    def query_details(self) -> pl.DataFrame:
        """query_id, tags, retrieval, reviewed per query in file order (QUERY_DETAILS): the loader adds them to
        the queries frame."""
        from ragdiff.core.io.textio import text_frame

        # no tags at all (a qrels file): one empty list repeated, where 10,000 of them built by polars from
        # Python lists held the GIL for ~30-60 ms of the review's loading
        tags = ([self.tags.get(q, []) for q in self.order] if any(self.tags.values()) else
                pl.Series("tags", [[]], dtype=QUERY_DETAILS["tags"]).new_from_index(0, len(self.order)))
        return text_frame(self.path, {
            "query_id": self.order,
            "tags": tags,
            "retrieval": [self.retrieval.get(q, True) for q in self.order],
            "reviewed": [self.reviewed.get(q) for q in self.order],
        }, QUERY_DETAILS)

    def drafts_frame(self) -> pl.DataFrame:
        """query_id, chunk_id, grade, line (DRAFT_SCHEMA): the drafted proposals, never scored as judgments."""
        from ragdiff.core.io.textio import text_frame

        rows = [(q, c, g, line) for q in self.order for c, (g, line) in self.drafts.get(q, {}).items()]
        return text_frame(self.path, rows, list(DRAFT_SCHEMA.items()), orient="row")

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(queries, judgments) frames in Gold's schema."""
        from ragdiff.core.io.textio import text_frame

        queries = [(q, self.texts.get(q), self.regression.get(q, False), i) for i, q in enumerate(self.order)]
        judgments = [(q, c, g, lv, line) for q in self.order for c, (lv, g, line) in self.judg[q].items()]
        return (text_frame(self.path, queries, list(QUERY_SCHEMA.items()), orient="row"),
                text_frame(self.path, judgments, list(JUDGMENT_SCHEMA.items()), orient="row"))


def scalar_text(node) -> str | None:
    """A scalar's string, None for a null or a missing/non-scalar node."""
    if node is None or node.__class__ is not ScalarNode or is_null(node):
        return None
    return node.value


def _shown(node) -> str:
    if node.__class__ is ScalarNode:
        return "null" if is_null(node) else repr(node.value)[:40]
    return "a map" if node.__class__ is MappingNode else "a list"


def _is_id(node) -> bool:
    return node.__class__ is ScalarNode and not is_null(node) and node.value.strip() != ""


def read_chunks(doc: LabelDoc, node, what: str, default: int,
                line: int | None) -> list[tuple[str, int, int | None]]:
    """(chunk, grade, line) from a section value: a list of ids (an item may be `{id: grade}`), a map
    {id: grade}, or a null (nothing). The same rules for every format that has a tree (YAML and JSON)."""
    if node is None or is_null(node):
        return []
    out = []
    cls = node.__class__
    if cls is MappingNode:
        check_unique_here(doc, node)
        for k, v in node.value:
            at = doc.line_of(k.start_mark.index)
            if not _is_id(k):
                raise doc.error(f"{what}: expected chunk ids as keys", at)
            out.append((k.value, grade_of(doc, v, what, k.value, at), at))
        return out
    if cls is SequenceNode:
        for item in node.value:
            at = doc.line_of(item.start_mark.index)
            if item.__class__ is ScalarNode and _is_id(item):
                out.append((item.value, default, at))
            elif item.__class__ is MappingNode and len(item.value) == 1 and _is_id(item.value[0][0]):
                k, v = item.value[0]
                out.append((k.value, grade_of(doc, v, what, k.value, at), at))
            else:
                raise doc.error(f"{what}: expected a chunk id, found {_shown(item)}", at)
        return out
    raise doc.error(f"{what}: expected a list of chunk ids or a map {{chunk: grade}}, found {_shown(node)}", line)


def check_unique_here(doc: LabelDoc, node) -> None:
    try:
        check_unique(doc.text, node, json_style=doc.fmt == "json")
    except ParseError as err:
        raise doc.parse_error(err) from None


def grade_of(doc: LabelDoc, node, what: str, chunk: str, line: int | None) -> int:
    if node.__class__ is not ScalarNode:
        raise doc.error(f"{what} {chunk!r}: grade {_shown(node)} is not a whole number", line)
    g = parse_grade(node.value)
    if g is None:
        raise doc.error(f"{what} {chunk!r}: grade {node.value!r} is not a whole number", line)
    if not -MAX_GRADE <= g <= MAX_GRADE:
        raise doc.error(f"{what} {chunk!r}: {check_grade(g)}", line)
    return g
