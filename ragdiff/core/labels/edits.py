"""The span editor: a mark becomes a few edits of the text, ids written so they read back as written.

Nothing here parses; the node spans come from `spans`. Edits are collected, checked not to overlap, and
applied together; the caller re-parses the result and verifies it (`session`).

Quoting rule for ids written into YAML: an id is written plain only when it matches the conservative set
``[A-Za-z0-9_][A-Za-z0-9_.\\-/+@#]*`` AND both YAML 1.1 (PyYAML's resolver) and YAML 1.2 (the core
schema) read it back as a string (so ``007``, ``no``, ``on``, ``y``, ``1e3``, ``true``, ``null``,
``1_000``, ``2001-12-14`` are quoted) AND the list it joins does not quote all its items. Otherwise it is
quoted in the style the list uses, else the style most used in the file's label sections, else double
quotes, with escapes for anything non-printable and for the line breaks YAML knows besides \\n
(U+0085, U+2028, U+2029). JSON ids are JSON strings, \\u-escaped when the file is pure ASCII.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re

import yaml

from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.spans import Node, content_end
from ragdiff.core.io.textio import BOM_CHAR

_content_end = content_end
_Node = Node

def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_lines(text: str) -> list[str]:
    """Lines with their endings, split on \\n only (CRLF stays inside the line)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def eol_after(text: str, i: int) -> int:
    """Index just past the line break of the line holding position i (len(text) on a last line)."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def insert_line(text: str, pos: int, line: str, nl: str) -> tuple[int, int, str]:
    """An edit that inserts `line` (no ending) as a whole line at a line boundary `pos`.

    At the end of a file without a final newline the new line goes after a line break and itself gets
    none, so the file's final-newline state is kept.
    """
    if pos >= len(text) and text and not text.endswith("\n"):
        return pos, pos, nl + line
    return pos, pos, line + nl


# ------------------------------------------------------------------------------------------ id quoting


# `#` is plain inside an id: it opens a comment only after white space (`json.dumps#0` stays unquoted)
_PLAIN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/+@#]*\Z")
_YAML_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan", "inf"}
# YAML 1.2's core schema: what a 1.2 reader would take for something other than a string
_CORE_12 = re.compile(
    r"(~|null|Null|NULL|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)\Z"
)
_RESOLVER_11 = yaml.resolver.Resolver()


@functools.lru_cache(maxsize=1 << 16)  # a log's queries repeat words like `true`; the resolver is ~10 us a call
def reads_as_string(s: str) -> bool:
    """Would both a YAML 1.1 reader (PyYAML's implicit resolvers) and a YAML 1.2 one read this plain
    scalar as a string?"""
    if s.lower() in _YAML_SPECIAL or _CORE_12.match(s):
        return False
    return _RESOLVER_11.resolve(yaml.ScalarNode, s, (True, False)) == "tag:yaml.org,2002:str"


def _yaml_printable(ch: str) -> bool:
    c = ord(ch)
    return (
        ch in "\t"
        or 0x20 <= c <= 0x7E
        or c == 0x85
        or 0xA0 <= c <= 0xD7FF
        or 0xE000 <= c <= 0xFFFD
        or 0x10000 <= c <= 0x10FFFF
    ) and ch != BOM_CHAR


_DOUBLE_AS_IS = re.compile(r'[ !#-\[\]-~]*\Z')  # printable ASCII but `"` and `\`: written as it is


def _yaml_double(s: str) -> str:
    if _DOUBLE_AS_IS.match(s):
        return '"' + s + '"'
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
    if quote is None and _PLAIN_ID.match(s) and reads_as_string(s):
        return s
    if quote == "'" and all(_yaml_printable(ch) and ch not in "\x85\u2028\u2029" for ch in s) and s.strip(" \t") == s:
        return "'" + s.replace("'", "''") + "'"
    return _yaml_double(s)


# --------------------------------------------------------------------------------------- the span editor


class SpanEdits:
    """Span edits of one text, applied together (they must not overlap)."""

    def __init__(self, text: str, dialect: str, quote: str | None, ascii_only: bool = False):
        self.text = text
        self.nl = newline_of(text)
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
        # one join, not a copy of the whole text per edit: a batch of marks is thousands of edits of one text
        pieces, at = [], 0
        for _, (s, e, r) in edits:
            pieces += (self.text[at:s], r)
            at = e
        pieces.append(self.text[at:])
        return "".join(pieces)

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
        ls = line_start(self.text, node.start)
        prefix = self.text[ls : node.start]
        return prefix if prefix.strip(" \t") == "" else " " * len(prefix)

    # ---- flow collections: insert before the closing bracket

    def flow_append(self, coll: _Node, elems: list[_Node], ends: list[int], new: str) -> None:
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
            self.flow_append(seq, seq.items, [n.end for n in seq.items], item)
            return
        last = seq.items[-1]
        ls = line_start(self.text, last.start)
        prefix = self.text[ls : last.start]
        if not re.fullmatch(r"[ \t]*-[ \t]+", prefix):
            raise LabelFormatError("the list's last item does not start its own `- ` line")
        pos = eol_after(self.text, _content_end(self.text, last))
        self.add(*insert_line(self.text, pos, prefix + item, self.nl))

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
            elif "\n" in t[elems[idx - 1][1] : start]:
                self._remove_last_line_item(elems[idx - 1][1], start, end)
            else:
                self.add(elems[idx - 1][1], end, "")
            return
        ls = line_start(t, start)
        prefix = t[ls:start]
        ok = re.fullmatch(r"[ \t]*-[ \t]+", prefix) if coll.kind == "seq" else prefix.strip(" \t") == ""
        if not ok:
            raise LabelFormatError("the item to remove does not stand on its own line")
        self.add(ls, eol_after(t, end), "")
        if len(elems) == 1:
            if key is None:
                raise LabelFormatError("removing the only item would leave nothing behind")
            colon = self._colon_after(key)
            self.add(colon + 1, colon + 1, " []" if coll.kind == "seq" else " {}")

    def _remove_last_line_item(self, prev_end: int, start: int, end: int) -> None:
        """The last item of a flow list that spans lines: drop the comma after the item before it (not
        that item's comment, which follows the comma) and the removed item's own line."""
        t = self.text
        comma = t.find(",", prev_end, start)
        if comma < 0 or t[prev_end:comma].strip(" \t") != "":
            raise LabelFormatError("cannot find the comma before the item to remove")
        self.add(comma, comma + 1, "")
        ls = line_start(t, start)
        eol = eol_after(t, end)
        rest = t[end:eol].rstrip("\r\n").strip(" \t")
        if t[ls:start].strip(" \t") == "" and (rest == "" or rest.startswith("#")):
            self.add(ls, eol, "")  # the item stood on its own line (with its own comment): the line goes
        else:
            self.add(ls if t[ls:start].strip(" \t") == "" else start, end, "")

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
            self.flow_append(m, [k for k, _ in m.pairs], [v.end for _, v in m.pairs], elem)
            return
        lk, lv = m.pairs[-1]
        ls = line_start(self.text, lk.start)
        prefix = self.text[ls : lk.start]
        if prefix.strip(" \t") != "":
            prefix = " " * len(prefix)
        pos = eol_after(self.text, _content_end(self.text, lv))
        self.add(*insert_line(self.text, pos, prefix + elem, self.nl))

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
                sub = SpanEdits(t, self.dialect, self.quote, self.ascii_only)
                sub.flow_append(seq, seq.items, [n.end for n in seq.items], "\0")
                (_s, _e, ins) = sub.edits[0]
                pieces.append(ins.replace("\0", self.fmt_id(extra[0], seq) + sep + self.fmt_grade(extra[1])))
            pieces.append(t[prev : seq.end - 1])
            pieces.append("}")
            self.add(seq.start, seq.end, "".join(pieces))
            return
        # block list: `- a` lines become `a: 1` lines
        key_col = 0
        if key is not None:
            key_col = key.start - line_start(t, key.start)
        new_prefix = None
        for n in seq.items:
            if n.kind != "scalar" or n.style in ("|", ">") or "\n" in t[n.start : n.end]:
                raise LabelFormatError("the list has an item over several lines")
            ls = line_start(t, n.start)
            prefix = t[ls : n.start]
            m = re.fullmatch(r"([ \t]*)-[ \t]+", prefix)
            if not m:
                raise LabelFormatError("a list item does not start its own `- ` line")
            if new_prefix is None:
                dash_col = len(m.group(1))
                new_prefix = m.group(1) if dash_col > key_col or key is None else " " * (key_col + 2)
            self.add(ls, n.end, new_prefix + t[n.start : n.end] + sep + self.fmt_grade(grades.get(n.value, 1)))
        if extra is not None:
            pos = eol_after(t, _content_end(t, seq.items[-1]))
            elem = new_prefix + self.fmt_id(extra[0], seq) + sep + self.fmt_grade(extra[1])
            self.add(*insert_line(t, pos, elem, self.nl))

    # ---- a null value (`gold:` or `gold: ~`) gets its first element

    def fill_null(self, key: _Node, val: _Node, new: str) -> None:
        if val.value == "":
            colon = self._colon_after(key)
            self.add(colon + 1, colon + 1, " " + new)
        else:
            self.add(val.start, val.end, new)

