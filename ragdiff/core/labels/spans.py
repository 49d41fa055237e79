"""Node positions: PyYAML's composer for YAML, a small scanner for JSON, one node tree for both.

Every node keeps the character span it was written in (start, end: indices into the text) and, for a
scalar, the string exactly as written, unquoted and never type-resolved (`007`, `no`, `1e3`, `on` stay
strings). A standard tag is read as written: `!!int 007` is the id `007` — the gold loader and the label writer
both read this tree, so they can never disagree on what a tag means. Any other tag (`!custom`, `!!python/tuple`,
`!!set`) is refused with its line, as PyYAML's safe loader refuses it: neither reads it.

YAML goes through libyaml (PyYAML's CSafeLoader) where it is installed, the pure-Python SafeLoader
otherwise, or when libyaml refuses an escape that YAML allows (a UTF-16 surrogate pair written as two
\\u escapes, which ragdiff joins). Both count marks in characters of the text they are given, so a
character outside the BMP is one position, as in a Python str; a BOM is never passed in (libyaml does not
count it, the Python loader does). Where the two differ (libyaml takes a tab as separation inside a line,
the Python loader refuses it), a file is read the libyaml way or refused with its line, never read
differently (tests/test_yaml_positions.py).
"""

from __future__ import annotations

import bisect
import json
import re

import yaml

from ragdiff.core.io.textio import BOM_CHAR

_STR = "tag:yaml.org,2002:str"
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))


class ParseError(ValueError):
    """Text that is not YAML/JSON at all: the message and the 1-based line where it is wrong."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.message = message
        self.line = line


class Node:
    __slots__ = ("kind", "start", "end", "flow", "value", "style", "items", "pairs")

    def __init__(self, kind, start, end, flow=False, value=None, style=None):
        self.kind = kind  # "map" | "seq" | "scalar"
        self.start = start
        self.end = end
        self.flow = flow
        self.value = value  # scalars: the string as written, unquoted, never type-resolved
        self.style = style  # scalars: None (plain), "'", '"', "|", ">"
        self.items: list[Node] = []
        self.pairs: list[tuple[Node, Node]] = []

    def is_null(self) -> bool:
        """A plain null (`~`, `null`, nothing at all; JSON `null`): a quoted "null" is the string null."""
        return self.kind == "scalar" and self.style is None and self.value in _NULLS

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Node({self.kind}, {self.start}:{self.end}, {self.value!r})"


# ------------------------------------------------------------------------------------------------ YAML

_CLoader = getattr(yaml, "CSafeLoader", None)


def _string_resolve(self, kind, value, implicit):
    """Every untagged scalar is a string: no regex resolution at all (it is also faster)."""
    if kind is yaml.ScalarNode:
        return _STR
    return yaml.resolver.BaseResolver.resolve(self, kind, value, implicit)


class _PyLoader(yaml.SafeLoader):
    resolve = _string_resolve


_LOADERS = [_PyLoader]
if _CLoader is not None:
    class _CLoaderStr(_CLoader):
        resolve = _string_resolve

    _LOADERS.insert(0, _CLoaderStr)

LIBYAML = _CLoader is not None


def yaml_error(err: yaml.YAMLError) -> ParseError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = (getattr(err, "problem", None) or getattr(err, "context", None) or "invalid YAML").strip()
    return ParseError(f"invalid YAML: {problem}", line)


def compose_yaml(text: str):
    """PyYAML's node tree of a YAML text (None when it holds no document); ParseError on invalid YAML.

    The readers walk these nodes as they are (building a tree of our own for a 10,000-query file cost
    more than composing it); `to_node` copies the one subtree an edit needs."""
    if text.startswith(BOM_CHAR):
        raise ValueError("strip the BOM first")  # the two loaders disagree on whether it counts
    if "&" in text and "*" in text:
        line = alias_line(text)
        if line is not None:
            raise ParseError("YAML alias (*name) found; a label file spells out every id, "
                             "expected no anchors or aliases", line)
    last: yaml.YAMLError | None = None
    for loader in _LOADERS:
        try:
            root = yaml.compose(text, Loader=loader)
            break
        except yaml.YAMLError as err:
            last = err
            if "escape" in str(err) and loader is not _PyLoader:
                continue  # libyaml refuses \\ud83c\\udf89; the Python loader reads it (joined below)
            raise yaml_error(err) from None
        except RecursionError:
            raise ParseError("YAML nested too deeply", None) from None
    else:  # pragma: no cover - the Python loader raised and was re-raised above
        raise yaml_error(last)  # type: ignore[arg-type]
    if root is not None and "!" in text:  # no tag without a `!`: the walk is skipped for almost every file
        _refuse_tags(root)
    if root is not None and _ESCAPED_SURROGATE.search(text):
        _join_all(root)
    return root


# The tags a label file may carry: the standard scalar types (each read as the string written) and the plain
# list and map. PyYAML's safe loader refuses the rest (`!custom`, `!!python/tuple`); !!binary, !!set, !!omap and
# !!pairs it would build into bytes, sets or pairs, which no id or list of a label file is.
_STANDARD = "tag:yaml.org,2002:"
_TAGS = frozenset(_STANDARD + name for name in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map"))


def _refuse_tags(root) -> None:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.tag not in _TAGS:
            tag = "!!" + n.tag[len(_STANDARD):] if n.tag.startswith(_STANDARD) else n.tag
            raise ParseError(f"YAML tag {tag} found; a label file holds strings, lists and maps: expected no tag, "
                             "or a standard one such as !!str", n.start_mark.line + 1)
        if n.__class__ is SequenceNode:
            stack.extend(n.value)
        elif n.__class__ is MappingNode:
            for k, v in n.value:
                stack.append(k)
                stack.append(v)


def _join_surrogates(s: str) -> str:
    try:
        return s.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise ParseError("a lone UTF-16 surrogate escape (such as \\ud800) in an id or text; "
                         "expected valid Unicode", None) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


_ESCAPED_SURROGATE = re.compile(r"\\[uU]0{0,4}[dD][89a-fA-F]")


def _join_all(root) -> None:
    """Join escaped surrogate pairs in every scalar (only called when the text has such an escape)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.__class__ is ScalarNode:
            if _SURROGATE.search(n.value):
                n.value = _join_surrogates(n.value)
        elif n.__class__ is SequenceNode:
            stack.extend(n.value)
        else:
            for k, v in n.value:
                stack.append(k)
                stack.append(v)


ScalarNode, SequenceNode, MappingNode = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode


def is_null(n) -> bool:
    """A plain null (`~`, `null`, nothing at all; JSON `null`): a quoted "null" is the string null."""
    return n.__class__ is ScalarNode and not n.style and n.value in _NULLS


def check_unique(text: str, node, json_style: bool = False) -> None:
    """A key given twice in one map is an error naming the second one's line."""
    pairs = node.value
    if len(pairs) < 2:
        return
    keys = [k.value for k, _ in pairs if k.__class__ is ScalarNode]
    if len(set(keys)) == len(keys):
        return
    seen = set()
    for k, _ in pairs:
        if k.__class__ is ScalarNode:
            if k.value in seen:
                line = text.count("\n", 0, k.start_mark.index) + 1
                if json_style:
                    raise ParseError(f"key {k.value!r} appears twice; expected each key once", line)
                raise ParseError(f"duplicate key {k.value!r}; expected each key once", line)
            seen.add(k.value)


def to_node(root, shift: int = 0) -> Node:
    """A PyYAML subtree as Nodes (what the span editor works on), iteratively; `shift` is added to every
    position (a subtree composed from a fragment of the text, see YamlLabelDoc.reparse)."""

    def make(n) -> Node:
        cls = n.__class__
        if cls is ScalarNode:
            return Node("scalar", n.start_mark.index + shift, n.end_mark.index + shift, value=n.value,
                        style=n.style or None)
        return Node("seq" if cls is SequenceNode else "map", n.start_mark.index + shift, n.end_mark.index + shift,
                    flow=bool(n.flow_style))

    out = make(root)
    stack = [(root, out)]
    while stack:
        src, dst = stack.pop()
        if dst.kind == "seq":
            for child in src.value:
                node = make(child)
                dst.items.append(node)
                if node.kind != "scalar":
                    stack.append((child, node))
        elif dst.kind == "map":
            for k, v in src.value:
                kn, vn = make(k), make(v)
                dst.pairs.append((kn, vn))
                if kn.kind != "scalar":
                    stack.append((k, kn))
                if vn.kind != "scalar":
                    stack.append((v, vn))
    return out


def alias_line(text: str) -> int | None:
    """The line of the first YAML alias (`*name`), or None; only asked when the text has `&` and `*`."""
    for loader in _LOADERS:
        try:
            for event in yaml.parse(text, Loader=loader):
                if isinstance(event, yaml.AliasEvent):
                    return event.start_mark.line + 1
            return None
        except yaml.YAMLError:
            continue
    return None


# ------------------------------------------------------------------------------------------------ JSON


class _At:
    """A position, as PyYAML's Mark gives it (only the index is read)."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


_STR_TAG, _SEQ_TAG, _MAP_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


# one token of a JSON text that has passed json.loads: a string, a bracket, a number or literal; commas, colons
# and white space are what lies between tokens. NaN and Infinity, which json.loads takes, are group 1.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null'
                         r"|(NaN|-?Infinity)")


class JsonScan:
    """The node tree of a JSON text with the character span of every value, as PyYAML nodes (so one reader
    walks YAML and JSON alike). The text has passed json.loads (compose_json checks it first), so its
    structure is its tokens in order: one regular-expression pass finds them (strings, brackets, numbers,
    literals) and a stack builds the tree — no recursion, no character-by-character white space. This was a
    recursive scanner that stepped over white space one character at a time: 0.82 s of a 10,000-query
    JSON label file's 1.45 s parse (cProfile), see bench/labels_formats_bench.py for the sweep."""

    def __init__(self, text: str):
        self.text = text

    def parse(self):
        t = self.text
        stack: list[list] = []  # [node, is_map, the key waiting for its value]
        root = None
        scalar, mapping, sequence, at = ScalarNode, MappingNode, SequenceNode, _At
        for m in _JSON_TOKEN.finditer(t):
            s = m.group()
            c = s[0]
            if c == '"':
                if "\\" in s:
                    value = json.loads(s)
                    if _SURROGATE.search(value):
                        value = _join_surrogates(value)
                else:
                    value = s[1:-1]
                a, b = m.span()
                node = scalar(_STR_TAG, value, at(a), at(b), '"')
            elif c == "{":
                stack.append([mapping(_MAP_TAG, [], at(m.start()), None, True), True, None])
                continue
            elif c == "[":
                stack.append([sequence(_SEQ_TAG, [], at(m.start()), None, True), False, None])
                continue
            elif c == "}" or c == "]":
                node, is_map, _key = stack.pop()
                node.end_mark = at(m.end())
                if is_map:
                    check_unique(t, node, json_style=True)
            elif m.lastindex:
                raise ValueError(f"unexpected character {c!r} at offset {m.start()}")
            else:
                a, b = m.span()
                node = scalar(_STR_TAG, s, at(a), at(b), None)
            if not stack:
                root = node
                continue
            top = stack[-1]
            if not top[1]:
                top[0].value.append(node)
            elif top[2] is None:
                if node.__class__ is not scalar or node.style != '"':  # cannot pass json.loads; kept as a guard
                    raise ValueError(f"object key is not a string at offset {node.start_mark.index}")
                top[2] = node
            else:
                top[0].value.append((top[2], node))
                top[2] = None
        if root is None or stack:
            raise ValueError("unexpected end of JSON")
        return root


def compose_json(text: str):
    """The node tree of a JSON text (PyYAML nodes); ParseError (with the line) when it is not JSON."""
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(f"invalid JSON ({err.msg}, column {err.colno})", err.lineno) from None
    except RecursionError:
        raise ParseError("JSON nested too deeply; expected {query: [chunk ids]}", None) from None
    try:
        return JsonScan(text).parse()
    except RecursionError:
        raise ParseError("JSON nested too deeply; expected {query: [chunk ids]}", None) from None
    except ParseError:
        raise
    except ValueError as err:  # json.loads accepts NaN and Infinity, which are not JSON: said with the line
        at = re.search(r"at offset (\d+)", str(err))
        line = text.count("\n", 0, int(at.group(1))) + 1 if at else None
        why = "; NaN and Infinity are not JSON" if "unexpected character" in str(err) else ""
        raise ParseError(f"invalid JSON ({err}{why})", line) from None


# ---------------------------------------------------------------------------------------- positions


class Lines:
    """1-based line of a character offset, by bisection over the text's \\n positions."""

    def __init__(self, text: str):
        self._breaks = [m.start() for m in re.finditer("\n", text)]

    def of(self, offset: int) -> int:
        return bisect.bisect_left(self._breaks, offset) + 1


def content_end(text: str, node: Node) -> int:
    """Just past the last character of a node's own content (block scalars and block collections end
    at the next token, which may be lines further on)."""
    if node.kind == "scalar" or node.flow:
        end = node.end
        if node.kind == "scalar" and node.style in ("|", ">"):
            while end > node.start and text[end - 1] in " \t\r\n":
                end -= 1
        return max(end, node.start)
    if node.kind == "seq":
        return content_end(text, node.items[-1]) if node.items else node.end
    return content_end(text, node.pairs[-1][1]) if node.pairs else node.end
