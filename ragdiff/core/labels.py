"""Write one reviewer's mark into a label file, losing nothing (DESIGN.md, "Writing labels back").

A label file is a team's most expensive artefact, so a mark changes only the lines of the one query entry
it touches. Every other byte (comments, blank lines, key order, quoting, flow or block style, line endings,
the final newline, a BOM) is kept. How:

- Formats: the ragdiff YAML label file, the lesson's short form ``{query: [chunks]}`` /
  ``{query: {chunk: grade}}`` in YAML or JSON, TREC qrels (``qid 0 chunk grade``) and BEIR qrels TSV.
- YAML and JSON are *parsed only to find things*: ruamel.yaml's composer (or a small JSON scanner here)
  gives the character span of every node, every scalar kept as the string written (``007``, ``no``,
  ``1e3`` stay strings: no type resolution at all). The mark becomes a few span edits of the text (insert
  ``, new-id`` before ``]``, a ``- new-id`` line after the last block item, ``new-id: 2`` in a map, a new
  ``evidence: [x]`` key line, removing one item). The result is parsed again and must say exactly the old
  judgments with this one change, or nothing is written (LabelFormatError).
- qrels and BEIR: one line changes, is appended (next to the query's other lines, copying their
  separators) or is deleted.
- Each write is atomic: a temporary file in the same folder, written, fsync'd, renamed over the label file
  (the file's mode is kept), then the folder is fsync'd. A crash leaves the old file or the new one, whole.
- Every mark and undo goes to the journal beside the file (ragdiff.core.journal) BEFORE the rename, and a
  "saved" line after it. Undo reads the journal, so it works across restarts.
- Before every write the file is read again. If someone else changed it, the mark is applied to their
  version; if they changed the label of this very chunk, LabelConflictError (never overwrite their edit).

Grades (the choice asked for in issue 5):

- A gold mark without a grade on a *graded* gold set (a map, qrels, BEIR) writes grade 1 and says so.
- A gold mark with grade 1 (or none) on a plain list adds a plain list entry.
- A gold mark with grade > 1 on a plain list turns that one query's list into a map in place, every other
  chunk getting ``: 1`` (what a list entry means), nothing else moving: ``[a, b]`` -> ``{a: 1, b: 1, c: 3}``,
  ``- a`` lines -> ``a: 1`` lines. This is the least disruptive way to say the grade (only that query's
  gold lines change, and the status sentence says it happened); a list this cannot be done to cleanly
  (items spread over lines with other things, comments between the brackets that would move...) is caught
  by the verification and refused with LabelFormatError rather than written oddly.
- A list that already holds graded items (``[a, {b: 3}]``, which ragdiff.core.gold reads) instead takes
  one more ``{c: 2}`` item, or regrades the item in place: nothing else changes.
- In the short form, a list can only say gold; not relevant is grade 0 in a map, so the same in-place
  conversion is used. Evidence has no place in the short form or qrels: LabelFormatError.
- Grade 0 is not relevant, never a skip: a gold mark with grade 0 is refused (use not_relevant).

Quoting rule for ids written into YAML: an id is written plain only when it matches the conservative set
``[A-Za-z0-9_][A-Za-z0-9_.\\-/+@#]*`` AND both the YAML 1.1 and 1.2 resolvers read it back as a string (so
``007``, ``no``, ``on``, ``y``, ``1e3``, ``true``, ``null``, ``1_000``, ``2001-12-14`` are quoted) AND the
list it joins does not quote all its items. Otherwise it is quoted in the style the list uses, else the
style most used in the file's label sections, else double quotes (with escapes for anything
non-printable). JSON ids are JSON strings, \\u-escaped when the file is pure ASCII.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import getpass
import hashlib
import json
import os
import re
import stat
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.journal import Journal, Op, _fsync_dir, journal_path, replay, utc_now

LABELS = (*vocab.MARKABLE, "none")  # "none" (or vocab.UNJUDGED) = remove any judgment; used by undo
SECTIONS = vocab.MARKABLE
FORMATS = ("yaml", "json", "qrels", "beir")
TEMP_SUFFIX = ".ragdiff-tmp"


def _word(label: str) -> str:
    return vocab.kind_of(label).word


# --------------------------------------------------------------------------------------------------- API


@dataclass(frozen=True)
class Mark:
    query_id: str  # the id as ragdiff knows it (YAML: `id`, else the text)
    chunk_id: str
    label: str  # "gold" | "evidence" | "not_relevant" | "none" (none = remove any label; used by undo)
    grade: int | None = None  # for gold in a graded set; None = the file's default (plain entry / grade 1)
    run: str | None = None  # which run and rank it was marked from (journal only)
    rank: int | None = None


@dataclass(frozen=True)
class Judgment:
    """What a label file says about one (query, chunk): a kind from ragdiff.core.vocab and its grade.

    The grade is the one the gold loader scores with: gold >= 1 (a plain list entry is 1), not relevant 0,
    evidence 1, unjudged None.
    """

    kind: str
    grade: int | None = None

    @property
    def word(self) -> str:
        return vocab.word(self.kind, self.grade)


UNJUDGED = Judgment(vocab.UNJUDGED, None)


@dataclass(frozen=True)
class Change:
    """What one mark or undo did: the app updates its model from this alone, never by re-reading the file.

    saved is False when nothing needed writing (the chunk already had that judgment): before == after.
    """

    query_id: str
    chunk_id: str
    before: Judgment
    after: Judgment
    message: str
    saved: bool

    def __str__(self) -> str:
        return self.message


def _judgment(label: str, grade: int | None) -> Judgment:
    """The writer's (label, grade as written) as a Judgment with the grade the loader scores with."""
    if label in ("none", vocab.UNJUDGED):
        return UNJUDGED
    if label == vocab.GOLD:
        return Judgment(vocab.GOLD, 1 if grade is None else grade)
    if label == vocab.NOT_RELEVANT:
        return Judgment(vocab.NOT_RELEVANT, 0)
    return Judgment(label, 1 if grade is None else grade)


class LabelFormatError(Exception):
    """The mark cannot be said in this file's format, or this file cannot take it cleanly; nothing written."""


class UnknownQueryError(LabelFormatError, KeyError):
    """The label file has no such query; ragdiff does not create queries silently."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class LabelConflictError(Exception):
    """The file changed on disk in a way the mark cannot be re-applied to; nothing written."""


class LabelWriteError(Exception):
    """The write failed (read-only, disk full, folder gone). The file is untouched; the mark can be retried."""


# ------------------------------------------------------------------------------------------ text helpers


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on \\n only (CRLF stays inside the line)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _eol_after(text: str, i: int) -> int:
    """Index just past the line break of the line holding position i (len(text) on a last line)."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def _insert_line(text: str, pos: int, line: str, nl: str) -> tuple[int, int, str]:
    """An edit that inserts `line` (no ending) as a whole line at a line boundary `pos`.

    At the end of a file without a final newline the new line goes after a line break and itself gets
    none, so the file's final-newline state is kept.
    """
    if pos >= len(text) and text and not text.endswith("\n"):
        return pos, pos, nl + line
    return pos, pos, line + nl


# ---------------------------------------------------------------------------------- the span tree (YAML/JSON)


class _Node:
    __slots__ = ("kind", "start", "end", "flow", "value", "style", "items", "pairs")

    def __init__(self, kind, start, end, flow=False, value=None, style=None):
        self.kind = kind  # "map" | "seq" | "scalar"
        self.start = start
        self.end = end
        self.flow = flow
        self.value = value  # scalars: the string as written, unquoted, never type-resolved
        self.style = style  # scalars: None (plain), "'", '"', "|", ">"
        self.items: list[_Node] = []
        self.pairs: list[tuple[_Node, _Node]] = []

    def is_null(self) -> bool:
        return self.kind == "scalar" and self.style is None and self.value in ("", "~", "null", "Null", "NULL")


def _compose_yaml(text: str) -> _Node | None:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    node = YAML(typ="rt", pure=True).compose(text)
    memo: dict[int, _Node] = {}

    def conv(n):
        if id(n) in memo:
            return memo[id(n)]
        if isinstance(n, ScalarNode):
            out = _Node("scalar", n.start_mark.index, n.end_mark.index, value=n.value, style=n.style)
        elif isinstance(n, SequenceNode):
            out = _Node("seq", n.start_mark.index, n.end_mark.index, flow=bool(n.flow_style))
        elif isinstance(n, MappingNode):
            out = _Node("map", n.start_mark.index, n.end_mark.index, flow=bool(n.flow_style))
        else:  # pragma: no cover
            raise ValueError(f"unexpected YAML node {type(n).__name__}")
        memo[id(n)] = out
        if isinstance(n, SequenceNode):
            out.items = [conv(x) for x in n.value]
        elif isinstance(n, MappingNode):
            out.pairs = [(conv(k), conv(v)) for k, v in n.value]
        return out

    return None if node is None else conv(node)


class _JsonScan:
    """A JSON parser that keeps the character span of every value (json.loads checks the result)."""

    _WS = " \t\r\n"

    def __init__(self, text: str):
        self.text = text

    def parse(self) -> _Node:
        node, i = self._value(self._ws(0))
        if self._ws(i) != len(self.text):
            raise ValueError(f"extra data at offset {i}")
        return node

    def _ws(self, i):
        while i < len(self.text) and self.text[i] in self._WS:
            i += 1
        return i

    def _value(self, i):
        t = self.text
        if i >= len(t):
            raise ValueError("unexpected end of JSON")
        ch = t[i]
        if ch == "{":
            node = _Node("map", i, i, flow=True)
            i = self._ws(i + 1)
            if t[i : i + 1] == "}":
                node.end = i + 1
                return node, i + 1
            while True:
                key, i = self._value(self._ws(i))
                if key.style != '"':
                    raise ValueError(f"object key is not a string at offset {key.start}")
                i = self._ws(i)
                if t[i : i + 1] != ":":
                    raise ValueError(f"expected ':' at offset {i}")
                val, i = self._value(self._ws(i + 1))
                node.pairs.append((key, val))
                i = self._ws(i)
                if t[i : i + 1] == ",":
                    i += 1
                    continue
                if t[i : i + 1] == "}":
                    node.end = i + 1
                    return node, i + 1
                raise ValueError(f"expected ',' or '}}' at offset {i}")
        if ch == "[":
            node = _Node("seq", i, i, flow=True)
            i = self._ws(i + 1)
            if t[i : i + 1] == "]":
                node.end = i + 1
                return node, i + 1
            while True:
                item, i = self._value(self._ws(i))
                node.items.append(item)
                i = self._ws(i)
                if t[i : i + 1] == ",":
                    i += 1
                    continue
                if t[i : i + 1] == "]":
                    node.end = i + 1
                    return node, i + 1
                raise ValueError(f"expected ',' or ']' at offset {i}")
        if ch == '"':
            j = i + 1
            while True:
                j = t.find('"', j)
                if j < 0:
                    raise ValueError(f"unterminated string at offset {i}")
                k = j - 1
                while t[k] == "\\":
                    k -= 1
                if (j - 1 - k) % 2 == 0:
                    break
                j += 1
            return _Node("scalar", i, j + 1, value=json.loads(t[i : j + 1]), style='"'), j + 1
        m = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|null").match(t, i)
        if not m:
            raise ValueError(f"unexpected character {ch!r} at offset {i}")
        return _Node("scalar", i, m.end(), value=m.group(0), style=None), m.end()


def _content_end(text: str, node: _Node) -> int:
    """Just past the last character of a node's own content (block scalars and block collections end
    at the next token, which may be lines further on)."""
    if node.kind == "scalar" or node.flow:
        end = node.end
        if node.kind == "scalar" and node.style in ("|", ">"):
            while end > node.start and text[end - 1] in " \t\r\n":
                end -= 1
        return max(end, node.start)
    if node.kind == "seq":
        return _content_end(text, node.items[-1]) if node.items else node.end
    return _content_end(text, node.pairs[-1][1]) if node.pairs else node.end


# ------------------------------------------------------------------------------------------ id quoting


# `#` is plain inside an id: it opens a comment only after white space (`json.dumps#0` stays unquoted)
_PLAIN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/+@#]*\Z")
_YAML_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan", "inf"}
_RESOLVERS: list = []


def _reads_as_string(s: str) -> bool:
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    if not _RESOLVERS:
        _RESOLVERS.extend(VersionedResolver(version=v) for v in ((1, 1), (1, 2)))
    if s.lower() in _YAML_SPECIAL:
        return False
    return all(str(r.resolve(ScalarNode, s, (True, False))) == "tag:yaml.org,2002:str" for r in _RESOLVERS)


def _yaml_printable(ch: str) -> bool:
    c = ord(ch)
    return (
        ch in "\t"
        or 0x20 <= c <= 0x7E
        or c == 0x85
        or 0xA0 <= c <= 0xD7FF
        or 0xE000 <= c <= 0xFFFD
        or 0x10000 <= c <= 0x10FFFF
    ) and ch not in "\ufeff"


def _yaml_double(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif _yaml_printable(ch) and ch not in "\x85\u2028\u2029":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def yaml_id(s: str, quote: str | None = None) -> str:
    """How an id is written in YAML so that it reads back as exactly this string.

    quote: None = plain when safe, else double quotes; "'" or '"' = always that style (double when single
    quotes cannot hold it).
    """
    if quote is None and _PLAIN_ID.match(s) and _reads_as_string(s):
        return s
    if quote == "'" and all(_yaml_printable(ch) and ch not in "\x85\u2028\u2029" for ch in s) and s.strip(" \t") == s:
        return "'" + s.replace("'", "''") + "'"
    return _yaml_double(s)


# --------------------------------------------------------------------------------------- the span editor


class _Edits:
    """Span edits of one text, applied together (they must not overlap)."""

    def __init__(self, text: str, dialect: str, quote: str | None, ascii_only: bool = False):
        self.text = text
        self.nl = _newline(text)
        self.dialect = dialect  # "yaml" | "json"
        self.quote = quote  # the file's preferred quote style for YAML ids
        self.ascii_only = ascii_only
        self.edits: list[tuple[int, int, str]] = []
        self.notes: list[str] = []
        self.default_kv = ": "  # the key/value separator of a new map (the file's own, where it has one)

    def add(self, start: int, end: int, repl: str) -> None:
        self.edits.append((start, end, repl))

    def result(self) -> str:
        edits = sorted(enumerate(self.edits), key=lambda e: (e[1][0], e[1][1], e[0]))
        prev_end = -1
        for _, (s, e, _r) in edits:
            if s < prev_end:
                raise LabelFormatError("the change would touch one place twice")
            prev_end = max(prev_end, e)
        text = self.text
        for _, (s, e, r) in reversed(edits):
            text = text[:s] + r + text[e:]
        return text

    # ---- formatting

    def fmt_id(self, s: str, coll: _Node | list | None = None) -> str:
        if self.dialect == "json":
            return json.dumps(s, ensure_ascii=self.ascii_only)
        quote = None
        scalars = []
        if isinstance(coll, list):
            scalars = coll
        elif coll is not None:
            scalars = coll.items if coll.kind == "seq" else [k for k, _ in coll.pairs]
        styles = {n.style for n in scalars if n.kind == "scalar"}
        if scalars and len(styles) == 1 and next(iter(styles)) in ("'", '"'):
            quote = next(iter(styles))  # the list quotes every item: so does the new one
        text = yaml_id(s, quote)
        if text != s and quote is None and self.quote:
            text = yaml_id(s, self.quote)  # it needs quotes: the style the file uses
        return text

    def fmt_grade(self, g: int) -> str:
        return str(int(g))

    def kv_sep(self, m: _Node) -> str:
        for k, v in reversed(m.pairs):
            sep = self.text[k.end : v.start]
            if re.fullmatch(r"\s*:\s*", sep) and "\n" not in sep:
                return sep
        return self.default_kv

    def _indent_of(self, node: _Node) -> str:
        ls = _line_start(self.text, node.start)
        prefix = self.text[ls : node.start]
        return prefix if prefix.strip(" \t") == "" else " " * len(prefix)

    # ---- flow collections: insert before the closing bracket

    def _flow_append(self, coll: _Node, elems: list[_Node], ends: list[int], new: str) -> None:
        """Insert element text `new` after the last element (or into the empty brackets)."""
        t = self.text
        if not elems:
            self.add(coll.start + 1, coll.end - 1, new)
            return
        last = elems[-1]
        last_end = ends[-1]
        one_per_line = (
            len(elems) >= 2 and t.count("\n", elems[-2].start, last.start) > 0
        ) or (len(elems) == 1 and t.count("\n", coll.start, last.start) > 0)
        if one_per_line:
            self.add(last_end, last_end, "," + self.nl + self._indent_of(last) + new)
            return
        sep = ", "
        if len(elems) >= 2:
            between = t[ends[-2] : last.start]
            if re.fullmatch(r"\s*,[ \t]*", between):
                sep = between.lstrip(" \t")
        self.add(last_end, last_end, sep + new)

    # ---- sequences

    def seq_append(self, seq: _Node, chunk: str, raw: str | None = None) -> None:
        item = raw if raw is not None else self.fmt_id(chunk, [n for n in seq.items if n.kind == "scalar"])
        if seq.flow:
            self._flow_append(seq, seq.items, [n.end for n in seq.items], item)
            return
        last = seq.items[-1]
        ls = _line_start(self.text, last.start)
        prefix = self.text[ls : last.start]
        if not re.fullmatch(r"[ \t]*-[ \t]+", prefix):
            raise LabelFormatError("the list's last item does not start its own `- ` line")
        pos = _eol_after(self.text, _content_end(self.text, last))
        self.add(*_insert_line(self.text, pos, prefix + item, self.nl))

    def _remove_elem(self, coll: _Node, idx: int, key: _Node | None) -> None:
        t = self.text
        if coll.kind == "seq":
            elems = [(n.start, _content_end(t, n), n) for n in coll.items]
        else:
            elems = [(k.start, _content_end(t, v), k) for k, v in coll.pairs]
        start, end, first = elems[idx]
        if coll.flow:
            if len(elems) == 1:
                self.add(coll.start + 1, coll.end - 1, "")
            elif idx < len(elems) - 1:
                self.add(start, elems[idx + 1][0], "")
            else:
                self.add(elems[idx - 1][1], end, "")
            return
        ls = _line_start(t, start)
        prefix = t[ls:start]
        ok = re.fullmatch(r"[ \t]*-[ \t]+", prefix) if coll.kind == "seq" else prefix.strip(" \t") == ""
        if not ok:
            raise LabelFormatError("the item to remove does not stand on its own line")
        self.add(ls, _eol_after(t, end), "")
        if len(elems) == 1:
            if key is None:
                raise LabelFormatError("removing the only item would leave nothing behind")
            colon = self._colon_after(key)
            self.add(colon + 1, colon + 1, " []" if coll.kind == "seq" else " {}")

    def _colon_after(self, key: _Node) -> int:
        m = re.compile(r"[ \t]*:").match(self.text, key.end)
        if not m:
            raise LabelFormatError("cannot find the ':' after a key")
        return m.end() - 1

    def seq_remove(self, seq: _Node, idx: int, key: _Node | None) -> None:
        self._remove_elem(seq, idx, key)

    # ---- maps

    def map_append(self, m: _Node, chunk: str, grade: int) -> None:
        elem = self.fmt_id(chunk, m) + self.kv_sep(m) + self.fmt_grade(grade)
        if m.flow:
            self._flow_append(m, [k for k, _ in m.pairs], [v.end for _, v in m.pairs], elem)
            return
        lk, lv = m.pairs[-1]
        ls = _line_start(self.text, lk.start)
        prefix = self.text[ls : lk.start]
        if prefix.strip(" \t") != "":
            prefix = " " * len(prefix)
        pos = _eol_after(self.text, _content_end(self.text, lv))
        self.add(*_insert_line(self.text, pos, prefix + elem, self.nl))

    def map_set(self, m: _Node, idx: int, grade: int) -> None:
        v = m.pairs[idx][1]
        if v.kind != "scalar":
            raise LabelFormatError("a grade in the map is not a number")
        self.add(v.start, v.end, self.fmt_grade(grade))

    def map_remove(self, m: _Node, idx: int, key: _Node | None) -> None:
        self._remove_elem(m, idx, key)

    # ---- a plain list that must hold a grade becomes a map, in place

    def seq_to_map(self, seq: _Node, key: _Node | None, grades: dict[str, int], extra: tuple[str, int] | None):
        t = self.text
        sep = self.default_kv if seq.flow else ": "
        if seq.flow:
            if not seq.items:
                assert extra is not None
                self.add(seq.start, seq.end, "{" + self.fmt_id(extra[0]) + sep + self.fmt_grade(extra[1]) + "}")
                return
            if t[seq.start] != "[" or t[seq.end - 1] != "]":
                raise LabelFormatError("the list's brackets are not where expected")
            pieces = ["{"]
            prev = seq.start + 1
            for n in seq.items:
                pieces.append(t[prev : n.end])
                pieces.append(sep + self.fmt_grade(grades.get(n.value, 1)))
                prev = n.end
            if extra is not None:
                sub = _Edits(t, self.dialect, self.quote, self.ascii_only)
                sub._flow_append(seq, seq.items, [n.end for n in seq.items], "\0")
                (_s, _e, ins) = sub.edits[0]
                pieces.append(ins.replace("\0", self.fmt_id(extra[0], seq) + sep + self.fmt_grade(extra[1])))
            pieces.append(t[prev : seq.end - 1])
            pieces.append("}")
            self.add(seq.start, seq.end, "".join(pieces))
            return
        # block list: `- a` lines become `a: 1` lines
        key_col = 0
        if key is not None:
            key_col = key.start - _line_start(t, key.start)
        new_prefix = None
        for n in seq.items:
            if n.kind != "scalar" or n.style in ("|", ">") or "\n" in t[n.start : n.end]:
                raise LabelFormatError("the list has an item over several lines")
            ls = _line_start(t, n.start)
            prefix = t[ls : n.start]
            m = re.fullmatch(r"([ \t]*)-[ \t]+", prefix)
            if not m:
                raise LabelFormatError("a list item does not start its own `- ` line")
            if new_prefix is None:
                dash_col = len(m.group(1))
                new_prefix = m.group(1) if dash_col > key_col or key is None else " " * (key_col + 2)
            self.add(ls, n.end, new_prefix + t[n.start : n.end] + sep + self.fmt_grade(grades.get(n.value, 1)))
        if extra is not None:
            pos = _eol_after(t, _content_end(t, seq.items[-1]))
            elem = new_prefix + self.fmt_id(extra[0], seq) + sep + self.fmt_grade(extra[1])
            self.add(*_insert_line(t, pos, elem, self.nl))

    # ---- a null value (`gold:` or `gold: ~`) gets its first element

    def fill_null(self, key: _Node, val: _Node, new: str) -> None:
        if val.value == "":
            colon = self._colon_after(key)
            self.add(colon + 1, colon + 1, " " + new)
        else:
            self.add(val.start, val.end, new)


# ------------------------------------------------------------------------------------ parsed label files


def _norm(section: str, grade: int | None):
    if section == "gold":
        return 1 if grade is None else grade
    if section == "not_relevant":
        return 0
    return None


def _grade(node: _Node, where: str) -> int:
    if node.kind != "scalar":
        raise LabelFormatError(f"{where}: a grade must be a whole number")
    try:
        return int(node.value)
    except ValueError:
        try:
            f = float(node.value)
        except ValueError:
            raise LabelFormatError(f"{where}: grade {node.value!r} is not a number") from None
        if not f.is_integer():  # also nan and inf
            raise LabelFormatError(f"{where}: grade {node.value!r} is not a whole number") from None
        return int(f)


def _chunks_of(node: _Node | None, where: str, graded: bool) -> dict[str, int | None]:
    """chunk -> grade (None for a list entry) of one section value."""
    if node is None or node.is_null():
        return {}
    out: dict[str, int | None] = {}
    if node.kind == "seq":
        for n in node.items:
            if n.kind == "map" and len(n.pairs) == 1 and n.pairs[0][0].kind == "scalar":
                k, v = n.pairs[0]  # a graded item: `- {chunk: 3}`
                out.setdefault(k.value, _grade(v, where) if graded else None)
                continue
            if n.kind != "scalar":
                raise LabelFormatError(f"{where}: a list item is not a chunk id")
            out.setdefault(n.value, None)
        return out
    if node.kind == "map":
        for k, v in node.pairs:
            if k.kind != "scalar":
                raise LabelFormatError(f"{where}: a key is not a chunk id")
            out.setdefault(k.value, _grade(v, where) if graded else None)
        return out
    raise LabelFormatError(f"{where}: expected a list or a map of chunk ids")


class _Doc:
    """A parsed label file: judgments per query, plus what the format-specific planner needs."""

    fmt: str
    order: list[str]

    def sections(self, qid: str) -> dict[str, dict[str, int | None]]:  # pragma: no cover
        raise NotImplementedError

    def state(self) -> dict:
        """{qid: {section: {chunk: normalised grade}}}: what verification compares."""
        out = {}
        for q in self.order:
            out[q] = {s: {c: _norm(s, g) for c, g in d.items()} for s, d in self.sections(q).items() if d}
        return out

    def current(self, qid: str, chunk: str) -> tuple[str, int | None]:
        if qid not in self.order:
            return ("none", None)
        for s, d in self.sections(qid).items():
            if chunk in d:
                return (s, d[chunk] if s == "gold" else None)
        return ("none", None)


class _YamlLabels(_Doc):
    fmt = "yaml"

    def __init__(self, text: str, root: _Node):
        self.text = text
        self.root = root
        queries = next(v for k, v in root.pairs if k.kind == "scalar" and k.value == "queries")
        self.entries: dict[str, _Node] = {}
        self.dups: set[str] = set()
        self.order = []
        if queries.is_null():
            return
        for e in queries.items:
            if e.kind != "map":
                raise LabelFormatError("an entry under `queries:` is not a mapping")
            keys = {k.value: v for k, v in e.pairs if k.kind == "scalar"}
            qid_node = keys.get("id") or keys.get("text")
            if qid_node is None or qid_node.kind != "scalar":
                continue
            qid = qid_node.value
            if qid in self.entries:
                self.dups.add(qid)
                continue
            self.entries[qid] = e
            self.order.append(qid)

    def sec_nodes(self, qid: str) -> dict[str, tuple[_Node, _Node]]:
        return {k.value: (k, v) for k, v in self.entries[qid].pairs if k.kind == "scalar" and k.value in SECTIONS}

    def sections(self, qid):
        nodes = self.sec_nodes(qid)
        return {
            s: _chunks_of(nodes[s][1], f"{s} of query {qid!r}", s == "gold") if s in nodes else {} for s in SECTIONS
        }


class _Short(_Doc):
    """The lesson's short form {query: [chunks]} / {query: {chunk: grade}} (grade 0 = not relevant)."""

    def __init__(self, text: str, root: _Node, fmt: str):
        self.text = text
        self.root = root
        self.fmt = fmt
        self.values: dict[str, tuple[_Node, _Node]] = {}
        self.dups: set[str] = set()
        self.order = []
        for k, v in root.pairs:
            if k.kind != "scalar":
                raise LabelFormatError("a query key is not a string")
            if k.value in self.values:
                self.dups.add(k.value)
                continue
            self.values[k.value] = (k, v)
            self.order.append(k.value)

    def sections(self, qid):
        _k, v = self.values[qid]
        chunks = _chunks_of(v, f"query {qid!r}", True)
        gold = {c: g for c, g in chunks.items() if g is None or g > 0}
        nr = {c: None for c, g in chunks.items() if g is not None and g <= 0}
        return {"gold": gold, "evidence": {}, "not_relevant": nr}


@dataclass
class _Row:
    line: int  # index into lines
    qid: str
    chunk: str
    grade: int
    m: re.Match


_TREC_ROW = re.compile(r"([ \t]*)(\S+)([ \t]+)(\S+)([ \t]+)(\S+)([ \t]+)(\S+)([ \t]*)(\r?\n)?\Z")
_BEIR_ROW = re.compile(r"()([^\t\r\n]+)(\t)([^\t\r\n]+)(\t)([^\t\r\n]+)()()([ \t]*)(\r?\n)?\Z")


class _Qrels(_Doc):
    def __init__(self, text: str, fmt: str, path: Path, extra_queries: list[str] = ()):
        self.text = text
        self.fmt = fmt
        self.lines = _lines(text)
        self.rows: list[_Row] = []
        self.header: int | None = None
        self.order = []
        self.judg: dict[str, dict[str, int]] = {}
        self.dup_pairs: set[tuple[str, str]] = set()
        pattern = _BEIR_ROW if fmt == "beir" else _TREC_ROW
        for i, line in enumerate(self.lines):
            body = line.rstrip("\r\n")
            if not body.strip() or body.lstrip().startswith("#"):
                continue
            m = pattern.match(line)
            if fmt == "beir" and self.header is None and not self.rows and (m is None or not _is_int(m.group(6))):
                self.header = i
                continue
            if not m:
                want = "query-id<TAB>corpus-id<TAB>score" if fmt == "beir" else "qid 0 chunk grade"
                raise LabelFormatError(f"{path.name}:{i + 1}: expected `{want}`")
            grade_s = m.group(8) if fmt == "trec" else m.group(6)
            if not _is_int(grade_s):
                raise LabelFormatError(f"{path.name}:{i + 1}: grade {grade_s!r} is not a whole number")
            qid = m.group(2)
            chunk = m.group(6) if fmt == "trec" else m.group(4)
            row = _Row(i, qid, chunk, int(grade_s), m)
            self.rows.append(row)
            if qid not in self.judg:
                self.judg[qid] = {}
                self.order.append(qid)
            if chunk in self.judg[qid]:
                self.dup_pairs.add((qid, chunk))
            self.judg[qid][chunk] = row.grade
        for q in extra_queries:
            if q not in self.judg:
                self.judg[q] = {}
                self.order.append(q)

    def sections(self, qid):
        d = self.judg.get(qid, {})
        return {
            "gold": {c: g for c, g in d.items() if g > 0},
            "evidence": {},
            "not_relevant": {c: None for c, g in d.items() if g <= 0},
        }


def _is_int(s: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", s) is not None


# ------------------------------------------------------------------------------------------- sniffing


def _resolve_path(path: Path, fmt: str | None) -> tuple[Path, Path | None]:
    """(the file written, the BEIR folder when there is one)."""
    if path.is_dir():
        qrels = path / "qrels"
        if (qrels / "test.tsv").is_file():
            return qrels / "test.tsv", path
        tsvs = sorted(qrels.glob("*.tsv")) if qrels.is_dir() else []
        if len(tsvs) == 1:
            return tsvs[0], path
        raise LabelFormatError(f"{path}: a BEIR folder needs qrels/test.tsv (or a single qrels/*.tsv)")
    if path.suffix.lower() == ".tsv" and path.parent.name == "qrels":
        return path, path.parent.parent
    return path, None


def _sniff(path: Path, text: str) -> str:
    ext = path.suffix.lower()
    if ext in (".yaml", ".yml"):
        return "yaml"
    if ext == ".json":
        return "json"
    if ext == ".tsv":
        return "beir"
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        return "json"
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("query-id"):
            return "beir"
        if len(line.split()) == 4:
            return "qrels"
        break
    return "yaml"


def _parse(text: str, fmt: str, path: Path, beir_dir: Path | None) -> _Doc:
    if fmt in ("qrels", "beir"):
        extra: list[str] = []
        if fmt == "beir" and beir_dir is not None and (beir_dir / "queries.jsonl").is_file():
            for line in (beir_dir / "queries.jsonl").read_text(encoding="utf-8-sig").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                qid = rec.get("_id", rec.get("id")) if isinstance(rec, dict) else None
                if qid is not None:
                    extra.append(str(qid))
        return _Qrels(text, "beir" if fmt == "beir" else "trec", path, extra)
    if fmt == "json":
        try:
            root = _JsonScan(text).parse()
            json.loads(text)
        except (ValueError, json.JSONDecodeError) as err:
            raise LabelFormatError(f"{path.name}: not valid JSON ({err})") from None
        if root.kind != "map":
            raise LabelFormatError(f"{path.name}: expected a JSON object {{query: [chunk ids]}}")
        return _Short(text, root, "json")
    try:
        root = _compose_yaml(text)
    except Exception as err:  # ruamel's errors carry the line
        raise LabelFormatError(f"{path.name}: not valid YAML ({err})") from None
    if root is None or root.kind != "map":
        raise LabelFormatError(f"{path.name}: expected a mapping at the top (`queries:` or query: [chunk ids])")
    keys = {k.value: v for k, v in root.pairs if k.kind == "scalar"}
    q = keys.get("queries")
    if q is not None and (q.kind == "seq" and all(e.kind == "map" for e in q.items) or q.is_null()):
        return _YamlLabels(text, root)
    return _Short(text, root, "yaml")


def _preferred_quote(doc: _Doc) -> str | None:
    counts = {"'": 0, '"': 0}

    def walk(n: _Node):
        if n.kind == "scalar":
            if n.style in counts:
                counts[n.style] += 1
        for x in n.items:
            walk(x)
        for k, v in n.pairs:
            walk(k)
            walk(v)

    if isinstance(doc, _YamlLabels):
        for q in doc.order:
            for _k, v in doc.sec_nodes(q).values():
                walk(v)
    elif isinstance(doc, _Short):
        for _k, v in doc.values.values():
            walk(v)
    if not any(counts.values()):
        return None
    return "'" if counts["'"] > counts['"'] else '"'


# ----------------------------------------------------------------------------------------- the planners


def _plan_yaml_labels(doc: _YamlLabels, qid: str, chunk: str, label: str, grade: int | None, ed: _Edits) -> None:
    entry = doc.entries[qid]
    nodes = doc.sec_nodes(qid)
    for s, (key, val) in nodes.items():
        if val.is_null():
            continue
        elems = [_item_id(n) for n in val.items] if val.kind == "seq" else [k.value for k, _ in val.pairs]
        hits = [i for i, v in enumerate(elems) if v == chunk]
        if len(hits) > 1:
            raise LabelFormatError(f"{chunk} is listed {len(hits)} times in {s} of {qid}; fix that by hand first")
        if hits and s != label:
            ed.seq_remove(val, hits[0], key) if val.kind == "seq" else ed.map_remove(val, hits[0], key)
    if label == "none":
        return
    if label in nodes:
        key, val = nodes[label]
        if val.is_null():
            ed.fill_null(key, val, _new_value(ed, chunk, label, grade))
        elif val.kind == "seq":
            ids = [_item_id(n) for n in val.items]
            present = chunk in ids
            graded_item = present and val.items[ids.index(chunk)].kind == "map"
            if label == "gold" and grade is not None and (grade != 1 or graded_item):
                if not _graded_items(ed, val, chunk, grade):
                    ed.seq_to_map(val, key, {chunk: grade} if present else {}, None if present else (chunk, grade))
                    ed.notes.append(f"{qid}'s gold list became a graded map to hold grade {grade}")
            elif not present:
                ed.seq_append(val, chunk)
        elif val.kind == "map":
            keys = [k.value for k, _ in val.pairs]
            g = _map_grade(label, grade)
            if chunk in keys:
                ed.map_set(val, keys.index(chunk), g)
            else:
                ed.map_append(val, chunk, g)
        else:
            raise LabelFormatError(f"{label} of {qid} is neither a list nor a map")
        return
    _add_section_key(doc, ed, entry, label, _new_value(ed, chunk, label, grade))


def _item_id(n: _Node) -> str | None:
    if n.kind == "scalar":
        return n.value
    if n.kind == "map" and len(n.pairs) == 1 and n.pairs[0][0].kind == "scalar":
        return n.pairs[0][0].value
    return None


def _graded_items(ed: _Edits, seq: _Node, chunk: str, grade: int) -> bool:
    """A list that already holds graded items (`- {chunk: 3}`) takes one more, or regrades one, in place."""
    if not any(n.kind == "map" for n in seq.items):
        return False
    ids = [_item_id(n) for n in seq.items]
    new = "{" + ed.fmt_id(chunk) + ed.default_kv + ed.fmt_grade(grade) + "}"
    if chunk in ids:
        n = seq.items[ids.index(chunk)]
        if n.kind == "map":
            v = n.pairs[0][1]
            ed.add(v.start, v.end, ed.fmt_grade(grade))
        else:
            ed.add(n.start, n.end, new)
        return True
    if seq.flow:
        ed._flow_append(seq, seq.items, [n.end for n in seq.items], new)
    else:
        ed.seq_append(seq, chunk, raw=new)
    return True


def _map_grade(label: str, grade: int | None) -> int:
    if label == "gold":
        return 1 if grade is None else grade
    return 0 if label == "not_relevant" else 1


def _new_value(ed: _Edits, chunk: str, label: str, grade: int | None) -> str:
    if label == "gold" and grade is not None and grade != 1:
        return "{" + ed.fmt_id(chunk) + ": " + ed.fmt_grade(grade) + "}"
    return "[" + ed.fmt_id(chunk) + "]"


def _add_section_key(doc: _YamlLabels, ed: _Edits, entry: _Node, name: str, value: str) -> None:
    t = doc.text
    if entry.flow:
        _k, lv = entry.pairs[-1]
        ed.add(lv.end, lv.end, ", " + name + ": " + value)
        return
    indent = None
    for k, _v in entry.pairs:
        prefix = t[_line_start(t, k.start) : k.start]
        if prefix.strip(" \t") == "":
            indent = prefix
            break
    if indent is None:
        k0 = entry.pairs[0][0]
        indent = " " * (k0.start - _line_start(t, k0.start))
    order = ["id", "text", "gold", "evidence", "not_relevant"]
    before = set(order[: order.index(name)])
    anchors = [(k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value in before]
    _k, anchor = max(anchors, key=lambda kv: kv[0].start) if anchors else entry.pairs[-1]
    pos = _eol_after(t, _content_end(t, anchor))
    ed.add(*_insert_line(t, pos, indent + name + ": " + value, ed.nl))


def _plan_short(doc: _Short, qid: str, chunk: str, label: str, grade: int | None, ed: _Edits) -> None:
    if label == "evidence":
        raise LabelFormatError(
            f"the short form {{query: [chunk ids]}} in {doc.fmt.upper()} has no place for evidence; "
            "use the ragdiff YAML label file for a second level"
        )
    key, val = doc.values[qid]
    if val.is_null():
        if label == "none":
            return
        g = _map_grade(label, grade)
        if label == "gold" and g == 1:
            new = "[" + ed.fmt_id(chunk) + "]"
        else:
            new = "{" + ed.fmt_id(chunk) + ed.default_kv + ed.fmt_grade(g) + "}"
        if doc.fmt == "json":
            ed.add(val.start, val.end, new)
        else:
            ed.fill_null(key, val, new)
        return
    if val.kind == "seq":
        items = [_item_id(n) for n in val.items]
        hits = [i for i, v in enumerate(items) if v == chunk]
        if len(hits) > 1:
            raise LabelFormatError(f"{chunk} is listed {len(hits)} times for {qid}; fix that by hand first")
        if label == "none":
            if hits:
                ed.seq_remove(val, hits[0], key)
            return
        g = _map_grade(label, grade)
        if label == "gold" and g == 1 and (not hits or val.items[hits[0]].kind == "scalar"):
            if not hits:
                ed.seq_append(val, chunk)
            return
        if _graded_items(ed, val, chunk, g):
            return
        ed.seq_to_map(val, key, {chunk: g} if hits else {}, None if hits else (chunk, g))
        what = f"grade {g}" if label == "gold" else "a not-relevant judgment (grade 0)"
        ed.notes.append(f"{qid}'s list became a graded map to hold {what}")
        return
    if val.kind == "map":
        keys = [k.value for k, _ in val.pairs]
        hits = [i for i, v in enumerate(keys) if v == chunk]
        if len(hits) > 1:
            raise LabelFormatError(f"{chunk} is listed {len(hits)} times for {qid}; fix that by hand first")
        if label == "none":
            if hits:
                ed.map_remove(val, hits[0], key)
            return
        g = _map_grade(label, grade)
        if hits:
            ed.map_set(val, hits[0], g)
        else:
            ed.map_append(val, chunk, g)
        return
    raise LabelFormatError(f"the value of {qid} is neither a list nor a map")


def _plan_qrels(doc: _Qrels, qid: str, chunk: str, label: str, grade: int | None) -> str:
    what = "BEIR qrels" if doc.fmt == "beir" else "TREC qrels"
    if label == "evidence":
        raise LabelFormatError(f"{what} have only grades; evidence cannot be said there (use the ragdiff YAML label file)")
    if (qid, chunk) in doc.dup_pairs:
        raise LabelFormatError(f"{chunk} has more than one line for {qid}; fix that by hand first")
    lines = list(doc.lines)
    nl = _newline(doc.text)
    row = next((r for r in doc.rows if r.qid == qid and r.chunk == chunk), None)
    if label == "none":
        if row is None:
            return doc.text
        i = row.line
        if i == len(lines) - 1 and not lines[i].endswith("\n") and i > 0:
            lines[i - 1] = lines[i - 1].rstrip("\r\n")  # keep "no final newline"
        del lines[i]
        return "".join(lines)
    g = _map_grade(label, grade)
    if row is not None:
        m = row.m
        gi = 8 if doc.fmt == "trec" else 6
        line = lines[row.line]
        lines[row.line] = line[: m.start(gi)] + str(g) + line[m.end(gi) :]
        return "".join(lines)
    same = [r for r in doc.rows if r.qid == qid]
    tmpl = same[-1] if same else (doc.rows[-1] if doc.rows else None)
    if tmpl is not None:
        m = tmpl.m
        if doc.fmt == "trec":
            body = m.group(1) + qid + m.group(3) + m.group(4) + m.group(5) + chunk + m.group(7) + str(g) + m.group(9)
        else:
            body = qid + "\t" + chunk + "\t" + str(g)
        at = tmpl.line + 1
    else:
        body = qid + ("\t" + chunk + "\t" if doc.fmt == "beir" else " 0 " + chunk + " ") + str(g)
        at = len(lines)
    if any(ch in qid + chunk for ch in (" \t\r\n" if doc.fmt == "trec" else "\t\r\n")):
        raise LabelFormatError(f"{what} cannot hold an id with whitespace ({qid!r}, {chunk!r})")
    if at == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] = lines[-1] + nl
        lines.append(body)
    else:
        lines.insert(at, body + nl)
    return "".join(lines)


# ---------------------------------------------------------------------------------------- line patches


def _patch(old: str, new: str, context: int = 2) -> dict:
    a, b = _lines(old), _lines(new)
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    s = 0
    while s < len(a) - p and s < len(b) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    return {
        "at": p,
        "before": a[max(0, p - context) : p],
        "old": a[p : len(a) - s],
        "new": b[p : len(b) - s],
        "after": a[len(a) - s : len(a) - s + context],
    }


def _unpatch(text: str, patch: dict) -> str | None:
    """Turn the patch's `new` side back into its `old` side, if it can be found exactly once
    (preferring the recorded place)."""
    cur = _lines(text)
    block = patch["before"] + patch["new"] + patch["after"]
    preferred = patch["at"] - len(patch["before"])
    n = len(block)
    hits = [i for i in range(0, len(cur) - n + 1) if cur[i : i + n] == block]
    if preferred in hits:
        i = preferred
    elif len(hits) == 1:
        i = hits[0]
    else:
        return None
    return "".join(cur[:i] + patch["before"] + patch["old"] + patch["after"] + cur[i + n :])


# ------------------------------------------------------------------------------------------ LabelFile


@dataclass
class _Snapshot:
    raw: bytes
    sha: str
    stat: tuple
    bom: bool
    text: str
    doc: _Doc


@contextmanager
def _file_lock(path: Path):
    """An exclusive advisory lock held for one read-edit-rename of the label file.

    It is taken on the journal beside it: a file that is never replaced (a lock on the label file itself
    would stay on the old inode after the rename) and that the marks create anyway, so no lock file is
    left in the user's folder.
    """
    try:
        handle = open(journal_path(path), "a+b")
    except OSError as err:
        if not path.parent.is_dir():
            raise LabelWriteError(f"cannot save {path}: its folder {path.parent} is gone ({err.strerror})") from None
        raise LabelWriteError(f"cannot save {path}: cannot lock it ({err.strerror})") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # closing releases the lock


def _stat_key(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _who(reviewer: str | None) -> str:
    if reviewer:
        return reviewer
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


class LabelFile:
    """One label file open for marking. Every `apply` and `undo` is written to disk before it returns.

    After opening, `recovery_notes` says in plain words what the journal showed about marks whose save
    was never confirmed (a crash or a failed write), and `pending` lists the marks that are journaled but
    not in the file; `retry()` applies them, `discard_pending()` gives them up.
    """

    def __init__(self, path, fmt: str | None = None, reviewer: str | None = None):
        given = Path(path)
        if fmt is not None and fmt not in FORMATS:
            raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, not {fmt!r}")
        self.path, self._beir_dir = _resolve_path(given, fmt)
        self.reviewer = _who(reviewer)
        self.journal = Journal(journal_path(self.path))
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such label file")
        self._snap = self._read()
        self.fmt = fmt or _sniff(self.path, self._snap.text)
        if self.fmt == "beir" and self._beir_dir is None and self.path.parent.name == "qrels":
            self._beir_dir = self.path.parent.parent
        self._snap.doc = self._parse(self._snap.text)
        self._pending: list[tuple[Mark, str | None]] = []  # (mark, journal op id)
        self._deferred: list[dict] = []  # resolutions found on open, written with the next journal line
        self.recovery_notes: list[str] = []
        self.stray_temp_files = self._clean_stray_temps()
        self._replay = replay(self.journal.read())
        self._recover()

    # ------------------------------------------------------------------ reading

    def _read(self) -> _Snapshot:
        try:
            raw = self.path.read_bytes()
            st = os.stat(self.path)
        except FileNotFoundError as err:
            if not self.path.parent.is_dir():
                raise LabelWriteError(
                    f"cannot save {self.path}: its folder {self.path.parent} is gone ({err.strerror})"
                ) from None
            raise LabelWriteError(f"cannot save {self.path}: the file is gone ({err.strerror})") from None
        except OSError as err:
            raise LabelWriteError(f"cannot read {self.path} ({err.strerror})") from None
        bom = raw.startswith(b"\xef\xbb\xbf")
        try:
            text = raw[3 if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError as err:
            raise LabelFormatError(f"{self.path.name}: invalid UTF-8 at byte {err.start}") from None
        return _Snapshot(raw, _sha(raw), _stat_key(st), bom, text, None)  # type: ignore[arg-type]

    def _parse(self, text: str) -> _Doc:
        return _parse(text, self.fmt, self.path, self._beir_dir)

    def _encode(self, text: str, bom: bool) -> bytes:
        return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")

    # ------------------------------------------------------------------ reading API

    @property
    def queries(self) -> list[str]:
        return list(self._snap.doc.order)

    def current_label(self, query_id: str, chunk_id: str) -> tuple[str, int | None]:
        """("gold", 3) for a graded gold chunk, ("gold", None) for a plain list entry, ("evidence", None),
        ("not_relevant", None), or ("none", None) when unjudged (also for a query the file lacks)."""
        return self._snap.doc.current(query_id, chunk_id)

    @property
    def pending(self) -> list[Mark]:
        return [m for m, _ in self._pending]

    # ------------------------------------------------------------------ marks

    def apply(self, mark: Mark) -> Change:
        """Write one mark; the Change says what the chunk's judgment was and is now, and the sentence."""
        return self._apply(_normal_mark(mark), kind="mark")

    def _check(self, mark: Mark) -> None:
        if mark.label not in LABELS:
            raise LabelFormatError(f"unknown label {mark.label!r}; expected one of {', '.join(LABELS)}")
        g = mark.grade
        if g is not None and (isinstance(g, bool) or not isinstance(g, int)):
            raise LabelFormatError(f"grade must be a whole number, not {g!r}")
        if mark.label == "gold" and g is not None and g < 1:
            raise LabelFormatError(
                f"grade {g} is not gold (grade 0 means judged not relevant); mark {mark.chunk_id} not relevant instead"
            )
        if mark.label == "not_relevant" and g not in (None, 0):
            raise LabelFormatError(f"not relevant has grade 0, not {g}")
        if mark.label in ("evidence", "none") and g is not None:
            raise LabelFormatError(f"{_word(mark.label)} takes no grade (got {g})")

    def _require_query(self, doc: _Doc, qid: str) -> None:
        if qid not in doc.order:
            raise UnknownQueryError(
                f"{self.path.name} has no query {qid!r}; ragdiff does not add queries to a label file by itself"
            )
        if qid in getattr(doc, "dups", ()):
            raise LabelFormatError(f"{self.path.name} has query {qid!r} more than once; fix that by hand first")

    def _is_noop(self, doc: _Doc, mark: Mark) -> bool:
        cur, cur_g = doc.current(mark.query_id, mark.chunk_id)
        if cur != mark.label:
            return False
        if mark.label == "gold" and mark.grade is not None:
            return (1 if cur_g is None else cur_g) == mark.grade
        return True

    def _plan(self, snap: _Snapshot, mark: Mark) -> tuple[str, list[str]]:
        """The new text for this mark on this snapshot, verified; raises LabelFormatError."""
        doc = snap.doc
        qid, chunk, label, grade = mark.query_id, mark.chunk_id, mark.label, mark.grade
        notes: list[str] = []
        if isinstance(doc, _Qrels):
            new_text = _plan_qrels(doc, qid, chunk, label, grade)
        else:
            dialect = "json" if doc.fmt == "json" else "yaml"
            ed = _Edits(snap.text, dialect, _preferred_quote(doc), ascii_only=snap.text.isascii())
            if isinstance(doc, _YamlLabels):
                _plan_yaml_labels(doc, qid, chunk, label, grade, ed)
            else:
                ed.default_kv = ed.kv_sep(doc.root)
                _plan_short(doc, qid, chunk, label, grade, ed)
            new_text = ed.result()
            notes = ed.notes
        if label == "gold" and grade is None and self._graded(doc, qid):
            notes.append("grade 1, the default for this graded set")
        if isinstance(doc, _Qrels) and label == "none" and set(doc.judg.get(qid, {})) == {chunk}:
            notes.append(f"{qid} has no judgment left in {self.path.name}")
        self._verify(snap, new_text, mark)
        return new_text, notes

    def _graded(self, doc: _Doc, qid: str) -> bool:
        if isinstance(doc, _Qrels):
            return True
        if isinstance(doc, _YamlLabels):
            nodes = doc.sec_nodes(qid)
            return "gold" in nodes and nodes["gold"][1].kind == "map"
        if isinstance(doc, _Short):
            return doc.values[qid][1].kind == "map"
        return False

    def _verify(self, snap: _Snapshot, new_text: str, mark: Mark) -> None:
        expected = snap.doc.state()
        q = expected.setdefault(mark.query_id, {})
        for s in list(q):
            q[s].pop(mark.chunk_id, None)
            if not q[s]:
                del q[s]
        if mark.label != "none":
            g = _map_grade(mark.label, mark.grade) if mark.label == "gold" else None
            q.setdefault(mark.label, {})[mark.chunk_id] = _norm(mark.label, g)
        try:
            if self.fmt == "json":
                json.loads(new_text)
            got_doc = self._parse(new_text)
            got = got_doc.state()
        except LabelFormatError as err:
            raise LabelFormatError(f"cannot write this mark into {self.path.name} cleanly ({err}); nothing was written") from None
        except Exception as err:
            raise LabelFormatError(f"cannot write this mark into {self.path.name} cleanly ({err}); nothing was written") from None
        if isinstance(snap.doc, _Qrels):
            # a qrels query exists only through its lines: removing its last one drops it
            expected = {q: d for q, d in expected.items() if d}
            got = {q: d for q, d in got.items() if d}
            order_ok = True
        else:
            order_ok = list(got) == list(expected)
        if got != expected or not order_ok:
            raise LabelFormatError(
                f"cannot write {mark.chunk_id} → {_word(mark.label)} for {mark.query_id} into {self.path.name} "
                "cleanly (the edited file would not say exactly that); nothing was written"
            )

    def _sentence(self, mark: Mark, prev: tuple[str, int | None], notes: list[str], saved: bool) -> str:
        what = _word(mark.label)
        if mark.label == "gold" and mark.grade is not None:
            what += f" (grade {mark.grade})"
        if mark.label == "none":
            head = f"{mark.chunk_id}: label removed for {mark.query_id}"
        else:
            head = f"{mark.chunk_id} → {what} for {mark.query_id}"
        extras = []
        if prev[0] != "none" and prev[0] != mark.label:
            extras.append(f"was {_word(prev[0])}")
        elif prev[0] == "gold" and mark.label == "gold" and prev[1] != mark.grade:
            extras.append(f"was grade {1 if prev[1] is None else prev[1]}")
        extras += notes
        if extras:
            head += f" ({'; '.join(extras)})"
        return head + (f", saved to {self.path.name}" if saved else "")

    def _apply(self, mark: Mark, kind: str, undoes: Op | None = None, retry_of: str | None = None,
               unpatch: dict | None = None) -> Change:
        self._check(mark)
        # two reviewers marking the same file: the read, the edit and the rename happen under one lock, so
        # each one re-reads the other's save and applies its mark on top of it
        try:
            with _file_lock(self.path):
                return self._apply_locked(mark, kind, undoes, retry_of, unpatch)
        except LabelWriteError:
            # the mark stays in memory (and, once journaled, in the journal) for retry()
            if kind == "mark" and retry_of is None and not any(m == mark for m, _ in self._pending):
                self._pending.append((mark, None))
            raise

    def _apply_locked(self, mark: Mark, kind: str, undoes: Op | None, retry_of: str | None,
                      unpatch: dict | None) -> Change:
        for _attempt in range(3):
            snap = self._refresh(mark)
            if not (kind == "undo" and isinstance(snap.doc, _Qrels)):  # undo may bring back a qrels query
                self._require_query(snap.doc, mark.query_id)
            prev = snap.doc.current(mark.query_id, mark.chunk_id)
            if self._is_noop(snap.doc, mark) and kind == "mark":
                self._journal_noop(mark, prev, retry_of)
                word = _word(mark.label) + (f" (grade {prev[1]})" if mark.label == "gold" and prev[1] is not None else "")
                if mark.label == "none":
                    sentence = f"{mark.chunk_id} has no label for {mark.query_id}; nothing to save"
                else:
                    sentence = f"{mark.chunk_id} is already {word} for {mark.query_id}; nothing to save"
                before = _judgment(*prev)
                return Change(mark.query_id, mark.chunk_id, before, before, sentence, saved=False)
            new_text = None
            notes: list[str] = []
            if unpatch is not None:
                cand = _unpatch(snap.text, unpatch)
                if cand is not None:
                    try:
                        self._verify(snap, cand, mark)
                        new_text = cand
                    except LabelFormatError:
                        new_text = None
            if new_text is None:
                new_text, notes = self._plan(snap, mark)
            new_raw = self._encode(new_text, snap.bom)
            rec = {
                "type": kind,
                "id": uuid.uuid4().hex,
                "file": self.path.name,
                "query": mark.query_id,
                "chunk": mark.chunk_id,
                "label": mark.label,
                "grade": mark.grade,
                "prev_label": prev[0],
                "prev_grade": prev[1],
                "who": self.reviewer,
                "when": utc_now(),
                "run": mark.run,
                "rank": mark.rank,
                "before_sha256": snap.sha,
                "after_sha256": _sha(new_raw),
                "patch": _patch(snap.text, new_text),
            }
            if undoes is not None:
                rec["undoes"] = undoes.id
            if retry_of is not None:
                rec["retry_of"] = retry_of
            sentence = self._sentence(mark, prev, notes, saved=True)
            self._journal(rec, mark, retry_of)
            try:
                done = self._atomic_write(new_raw, snap)
            except LabelWriteError as err:
                self._fail(rec, mark, err)
                raise
            if not done:  # changed on disk between our read and the rename: the op is void, go again
                self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": "changed on disk; re-applied"})
                self._replay.ops[rec["id"]].status = "failed"
                self._replay.ops[rec["id"]].retried_by = "-"
                continue
            self._snap = _Snapshot(new_raw, _sha(new_raw), done, snap.bom, new_text, self._parse(new_text))
            self._journal_quiet({"type": "saved", "id": rec["id"], "when": utc_now()})
            op = self._replay.ops[rec["id"]]
            op.status = "saved"
            if undoes is not None:
                undoes.undone_by = rec["id"]
            if retry_of is not None:
                self._pending = [(m, i) for m, i in self._pending if i != retry_of]
            return Change(mark.query_id, mark.chunk_id, _judgment(*prev), _judgment(mark.label, mark.grade),
                          sentence, saved=True)
        raise LabelConflictError(f"{self.path.name} keeps changing on disk; the mark was not written")

    def _refresh(self, mark: Mark, check: bool = True) -> _Snapshot:
        """The file as it is on disk now; if someone else changed it, their version (conflict-checked)."""
        cur = self._read()
        if cur.sha == self._snap.sha:
            self._snap.stat = cur.stat
            return self._snap
        try:
            cur.doc = self._parse(cur.text)
        except LabelFormatError as err:
            raise LabelConflictError(
                f"{self.path.name} changed on disk and no longer reads as a label file ({err}); the mark was not written"
            ) from None
        old = self._snap.doc
        if mark.query_id in old.order and mark.query_id not in cur.doc.order:
            self._snap = cur
            raise LabelConflictError(
                f"{self.path.name} changed on disk and no longer has query {mark.query_id!r}; the mark was not written"
            )
        before = old.current(mark.query_id, mark.chunk_id)
        now = cur.doc.current(mark.query_id, mark.chunk_id)
        self._snap = cur
        if check and before != now:
            raise LabelConflictError(
                f"{self.path.name} changed on disk: someone else set {mark.chunk_id} for {mark.query_id} to "
                f"{_word(now[0])} (it was {_word(before[0])} here); the mark was not written, the file was re-read"
            )
        return cur

    # ------------------------------------------------------------------ writing

    def _atomic_write(self, data: bytes, snap: _Snapshot):
        """Temp file in the same folder, fsync, rename over the label file, fsync the folder.

        Returns the new stat key, or None when the file changed on disk since `snap` (nothing written).
        """
        path = self.path
        folder = path.parent
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if not folder.is_dir():
                raise LabelWriteError(f"cannot save {path}: its folder {folder} is gone") from None
            raise LabelWriteError(f"cannot save {path}: the file is gone") from None
        if not (st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(path, os.W_OK):
            raise LabelWriteError(f"cannot save {path}: the file is read-only ({os.strerror(errno.EACCES)})")
        fd = -1
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
            if hasattr(os, "fchmod"):
                os.fchmod(fd, stat.S_IMODE(st.st_mode))  # mkstemp makes 0600: keep the file's own mode
            os.close(fd)
            fd = -1
            if _stat_key(os.stat(path)) != snap.stat:
                os.unlink(tmp)
                return None
            os.replace(tmp, path)
            tmp = None
        except OSError as err:
            reason = err.strerror or str(err)
            raise LabelWriteError(f"cannot save {path}: {reason} (errno {err.errno}); the file was not changed") from None
        finally:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        _fsync_dir(folder)
        return _stat_key(os.stat(path))

    def _clean_stray_temps(self) -> list[Path]:
        """Temp files left by a writer that died before its rename. They are never the label file; those of
        a process that no longer runs are removed, the others are listed."""
        left = []
        for p in self.path.parent.glob(f".{self.path.name}.*{TEMP_SUFFIX}"):
            m = re.match(rf"\.{re.escape(self.path.name)}\.(\d+)\.", p.name)
            alive = False
            if m:
                pid = int(m.group(1))
                if pid == os.getpid():
                    alive = True
                else:
                    try:
                        os.kill(pid, 0)
                        alive = True
                    except ProcessLookupError:
                        alive = False
                    except PermissionError:
                        alive = True
            if not alive:
                try:
                    p.unlink()
                    continue
                except OSError:
                    pass
            left.append(p)
        return left

    # ------------------------------------------------------------------ the journal

    def _journal(self, rec: dict, mark: Mark, retry_of: str | None) -> None:
        try:
            for d in self._deferred:
                self.journal.append(d)
            self._deferred = []
            self.journal.append(rec)
        except OSError as err:
            if retry_of is None and not any(m == mark for m, _ in self._pending):
                self._pending.append((mark, None))
            raise LabelWriteError(
                f"cannot save {self.path}: cannot write the journal {self.journal.path} "
                f"({err.strerror or err}); the file was not changed, the mark is kept for retry()"
            ) from None
        self._replay.ops[rec["id"]] = Op(rec)
        if retry_of in self._replay.ops:
            self._replay.ops[retry_of].retried_by = rec["id"]

    def _journal_quiet(self, rec: dict) -> bool:
        try:
            self.journal.append(rec)
            return True
        except OSError:
            return False

    def _journal_noop(self, mark: Mark, prev, retry_of) -> None:
        rec = {
            "type": "mark", "id": uuid.uuid4().hex, "file": self.path.name, "query": mark.query_id,
            "chunk": mark.chunk_id, "label": mark.label, "grade": mark.grade, "prev_label": prev[0],
            "prev_grade": prev[1], "who": self.reviewer, "when": utc_now(), "run": mark.run, "rank": mark.rank,
            "noop": True,
        }
        if retry_of is not None:
            rec["retry_of"] = retry_of
        if self._journal_quiet(rec):
            op = Op(rec, status="saved")
            self._replay.ops[rec["id"]] = op
            if retry_of in self._replay.ops:
                self._replay.ops[retry_of].retried_by = rec["id"]
        if retry_of is not None:
            self._pending = [(m, i) for m, i in self._pending if i != retry_of]

    def _fail(self, rec: dict, mark: Mark, err: Exception) -> None:
        self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": str(err)})
        op = self._replay.ops.get(rec["id"])
        if op is not None:
            op.status = "failed"
        if rec["type"] == "mark":
            retry_of = rec.get("retry_of")
            if retry_of is not None:
                # the retry failed again: the retry op is now the one to retry
                self._pending = [(m, rec["id"] if i == retry_of else i) for m, i in self._pending]
            else:
                self._pending.append((mark, rec["id"]))

    def _recover(self) -> None:
        """Resolve journal ops whose save was never confirmed, from what the file now says."""
        snap = self._snap
        for op in self._replay.unconfirmed():
            r = op.record
            mark = _mark_of(r)
            if snap.sha == r.get("after_sha256"):
                applied = True
            elif snap.sha == r.get("before_sha256"):
                applied = False
            else:
                applied = _holds(snap.doc.current(mark.query_id, mark.chunk_id), mark)
            when = r.get("when", "?")
            desc = self._sentence(mark, (r.get("prev_label", "none"), r.get("prev_grade")), [], saved=False)
            if applied:
                op.status = "saved"
                op.recovered = True
                self._deferred.append({"type": "saved", "id": op.id, "when": utc_now(), "recovered": True})
                if op.kind == "undo":
                    target = self._replay.ops.get(r.get("undoes"))
                    if target is not None:
                        target.undone_by = op.id
                self.recovery_notes.append(
                    f"{'undo: ' if op.kind == 'undo' else ''}{desc} (journaled {when}) was saved to {self.path.name}, "
                    "but the program stopped before confirming it; the file has it"
                )
            elif op.kind == "mark":
                self._pending.append((mark, op.id))
                self.recovery_notes.append(
                    f"{desc} (journaled {when}) never reached {self.path.name}: the program stopped before saving it; "
                    "retry() applies it, discard_pending() drops it"
                )
            else:
                op.status = "failed"
                self._deferred.append({"type": "failed", "id": op.id, "when": utc_now(), "error": "not saved (found on restart)"})
                self.recovery_notes.append(
                    f"undo: {desc} (journaled {when}) never reached {self.path.name}; the mark it meant to undo is still there"
                )
        for op in self._replay.failed():
            if op.id not in [i for _, i in self._pending]:
                mark = _mark_of(op.record)
                self._pending.append((mark, op.id))
                self.recovery_notes.append(
                    f"{self._sentence(mark, (op.record.get('prev_label', 'none'), op.record.get('prev_grade')), [], False)} "
                    f"could not be saved to {self.path.name} earlier; retry() applies it, discard_pending() drops it"
                )

    # ------------------------------------------------------------------ undo / retry

    def undo(self) -> Change | None:
        """Revert the last mark not yet undone (repeatable; survives restarts through the journal).

        Byte for byte when the file still holds that mark's lines as written; otherwise the previous label
        is set again with the same care as a mark. LabelConflictError when the chunk's label has changed
        since (someone else's edit is never undone).
        """
        # a mark that changed nothing stays in the journal as a record of what was looked at, but `u` means
        # "take back my last change": it goes to the last mark that changed the file
        stack = [op for op in self._replay.undo_stack() if not op.record.get("noop")]
        if not stack:
            return None
        op = stack[-1]
        r = op.record
        mark = _mark_of(r)
        back = Mark(mark.query_id, mark.chunk_id, r.get("prev_label") or "none", r.get("prev_grade"), mark.run, mark.rank)
        snap = self._refresh(back, check=False)
        now = snap.doc.current(mark.query_id, mark.chunk_id)
        if not _holds(now, mark):
            raise LabelConflictError(
                f"cannot undo {mark.chunk_id} → {_word(mark.label)} for {mark.query_id}: it is now "
                f"{_word(now[0])} in {self.path.name} (changed since); nothing was written"
            )
        change = self._apply(back, kind="undo", undoes=op, unpatch=r.get("patch"))
        return dataclasses.replace(change, message="undid: " + change.message)

    def retry(self) -> list[Change]:
        """Apply again every mark that is journaled but not in the file. Returns one Change each."""
        out = []
        for mark, op_id in list(self._pending):
            if op_id is None:
                self._pending = [(m, i) for m, i in self._pending if not (m == mark and i is None)]
                out.append(self._apply(mark, kind="mark"))
            else:
                out.append(self._apply(mark, kind="mark", retry_of=op_id))
        return out

    def discard_pending(self) -> int:
        n = 0
        for _mark, op_id in self._pending:
            if op_id is not None:
                self._journal_quiet({"type": "dropped", "id": op_id, "when": utc_now()})
                if op_id in self._replay.ops:
                    self._replay.ops[op_id].status = "dropped"
            n += 1
        self._pending = []
        return n


def _normal_mark(mark: Mark) -> Mark:
    """vocab.UNJUDGED is the writer's "none" (remove the judgment)."""
    return dataclasses.replace(mark, label="none") if mark.label == vocab.UNJUDGED else mark


def _mark_of(r: dict) -> Mark:
    return Mark(r["query"], r["chunk"], r["label"], r.get("grade"), r.get("run"), r.get("rank"))


def _holds(now: tuple[str, int | None], mark: Mark) -> bool:
    """Does a chunk's current (label, grade) say what `mark` set?"""
    if now[0] != mark.label:
        return False
    if mark.label == "gold" and mark.grade is not None:
        return (1 if now[1] is None else now[1]) == mark.grade
    return True
