"""The ragdiff label file (DESIGN.md "File formats"), in YAML; the JSON label file (json_doc) is the same
tree read the same way and edited in JSON's own syntax.

    corpus: {path: corpus.jsonl, sha256: ...}
    queries:
      - id: q01            # optional; defaults to the text
        text: refund window for ebooks
        gold: [policy-14]  # or {policy-14: 3}; a list item may be {policy-14: 3}
        evidence: [policy-2]
        not_relevant: [policy-9]
        regression: true
"""

from __future__ import annotations

import re
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.labels.document import LabelDoc, check_unique_here, read_chunks, scalar_text
from ragdiff.core.labels.edits import eol_after, line_start
from ragdiff.core.labels.spans import (
    MappingNode,
    Node,
    ParseError,
    ScalarNode,
    SequenceNode,
    compose_yaml,
    content_end,
    is_null,
    to_node,
)
from ragdiff.core.labels.yaml_edits import PROPOSED, SECTION_NAMES, SECTIONS, YamlEdits, count_quotes

_DASH = re.compile(r"[ \t]*-[ \t]+")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _found(node) -> str:
    if node.__class__ is ScalarNode:
        return repr(node.value)[:40]
    return "a map" if node.__class__ is MappingNode else "a list"


def is_label_file(root, json_style: bool) -> bool:
    """The gold loader's rule: a map with `queries` (in JSON: whose value is a list) is a label file;
    any other map is the short form {query: [chunk ids]}."""
    for k, v in root.value:
        if k.__class__ is ScalarNode and k.value == "queries":
            return v.__class__ is SequenceNode if json_style else True
    return False


_NO_QUERIES = SequenceNode("tag:yaml.org,2002:seq", [])

# every key the reader reads (a key of the file's own is kept, unless it reads like one of these: _known_keys)
_TOP_KEYS = ("corpus", "queries")
_QUERY_KEYS = ("id", "text", *vocab.SECTIONS, "tags", "regression", "retrieval", "reviewed", PROPOSED)
_CORPUS_KEYS = ("path", "sha256")

class YamlLabelDoc(YamlEdits, LabelDoc):
    """The file read (`_read`, and `reparse` / `reparse_many` of the entries an edit changed); its edits are
    `YamlEdits`'."""

    fmt = "yaml"
    shape = "label file"
    kinds = (*vocab.MARKABLE, vocab.DRAFTED)
    dialect = "yaml"

    def __init__(self, path: Path, text: str, root=None):
        super().__init__(path, text)
        if root is None:
            try:
                root = compose_yaml(text)
            except ParseError as err:
                raise self.parse_error(err) from None
        self.root = root
        self.entries: dict = {}  # qid -> its PyYAML entry node
        self.shift: dict[str, int] = {}  # qid -> what to add to its nodes' positions (after a reparse)
        # nothing but comments and blank lines: the writer's empty start (the loader says "the file is empty")
        self.blank = root is None
        if not self.blank:
            self._read()

    def _read(self) -> None:
        root = self.root
        check_unique_here(self, root)
        top = {k.value: (k, v) for k, v in root.value if k.__class__ is ScalarNode}
        key, queries = top["queries"]
        if is_null(queries):  # `queries:` alone: a file started by hand, no query yet (the first add fills it)
            queries = _NO_QUERIES
        elif queries.__class__ is not SequenceNode:
            raise self.error('"queries" must be a list of {id, text, gold}', self.line_of(key.start_mark.index))
        self._known_keys(root, _TOP_KEYS, "the label file", near=0.6)  # `query:` is 0.67 like `queries`
        if "corpus" in top:
            self.corpus = self._read_corpus(*top["corpus"])
        seen: dict[str, int] = {}
        line_of = self.line_of
        for position, entry in enumerate(queries.value):
            at = line_of(entry.start_mark.index)
            if entry.__class__ is not MappingNode:
                found = f"{entry.value!r:.40}" if entry.__class__ is ScalarNode else "a list"
                raise self.error(f"query {position + 1}: expected a map with text and gold, found {found}", at)
            check_unique_here(self, entry)
            self._known_keys(entry, _QUERY_KEYS, f"query {position + 1}")
            keys = {k.value: (k, v) for k, v in entry.value if k.__class__ is ScalarNode}
            if "id" in keys:
                node = keys["id"][1]
                if node.__class__ is not ScalarNode:
                    raise self.error(f"query {position + 1}: id must be a string, found {_found(node)}", at)
                qid = scalar_text(node)
                if qid is None or not qid.strip():
                    raise self.error(f"query {position + 1}: id is empty; expected a string (or no id: the text "
                                     "is then the id)", at)
            else:
                qid = scalar_text(keys["text"][1]) if "text" in keys else None
            if qid is None or not qid.strip():
                raise self.error(f"query {position + 1} has neither id nor text; expected at least one", at)
            if qid in seen:
                raise self.error(f"query {qid!r} appears twice (lines {seen[qid]} and {at}); expected each once", at)
            seen[qid] = at
            text = keys.get("text")
            if text is not None and text[1].__class__ is not ScalarNode:
                raise self.error(f"query {qid!r}: text must be a string", line_of(text[0].start_mark.index))
            self.order.append(qid)
            self.entries[qid] = entry
            self.texts[qid] = scalar_text(text[1]) if text else None
            # a typo (`regression: ture`) is an error, never a silent false that --fail-on-regression ignores
            self.regression[qid] = "regression" in keys and self._read_flag(qid, "regression", *keys["regression"])
            held = self.judg[qid] = {}
            # an entry without gold has no answer labelled yet: it is counted and listed as unanswerable
            for name, default in SECTIONS:
                if name not in keys:
                    continue
                k, v = keys[name]
                for chunk, grade, line in read_chunks(self, v, f"query {qid!r} {name}", default,
                                                      line_of(k.start_mark.index)):
                    if name != vocab.NOT_RELEVANT and grade < 1:  # the writer's rule too (LabelFile refuses gold 0)
                        raise self.error(f"query {qid!r} {name} {chunk!r}: grade {grade} is not {name}; expected 1 "
                                         "or more (a chunk judged not relevant goes under not_relevant)", line)
                    if name == vocab.NOT_RELEVANT and grade != 0:  # it is read as 0: a 3 would be dropped
                        raise self.error(f"query {qid!r} not_relevant {chunk!r}: grade {grade}; a chunk judged not "
                                         "relevant has grade 0 (write it as a plain id; a graded answer goes under "
                                         "gold)", line)
                    if chunk in held:
                        self.add(qid, chunk, name, grade, line)  # raises: labelled twice
                    held[chunk] = (name, 0 if name == vocab.NOT_RELEVANT else grade, line)
            if vocab.DRAFTED in keys:
                self._read_drafts(qid, *keys[vocab.DRAFTED])
            if "tags" in keys:
                self.tags[qid] = self._read_tags(qid, *keys["tags"])
            if "retrieval" in keys:
                self.retrieval[qid] = self._read_flag(qid, "retrieval", *keys["retrieval"])
            if "reviewed" in keys:
                self.reviewed[qid] = self._read_date(qid, "reviewed", *keys["reviewed"])
            if PROPOSED in keys:
                self.proposed[qid] = self._read_flag(qid, PROPOSED, *keys[PROPOSED])

    def _known_keys(self, node, known: tuple[str, ...], what: str, own_keys: bool = True, near: float = 0.8) -> None:
        """A key the reader does not read is skipped: a key of the file's own (`notes:`, `owner:`) is kept as
        written, but a misspelt one (`not-relevant:`, `golds:`, `query:`) would leave its chunks unread and the
        file scored as if they were not there, so a key that is not one of `known` yet reads like one is
        refused (`near`: how alike, difflib's ratio). own_keys=False: every key must be one of `known`."""
        from difflib import get_close_matches

        for k, _ in node.value:
            if k.__class__ is not ScalarNode or k.value in known:
                continue
            name = k.value.strip().lower().replace("-", "_").replace(" ", "_")
            like = [name] if name in known else get_close_matches(name, known, n=1, cutoff=near)
            if like or not own_keys:
                said = f" (is it {like[0]} misspelt?)" if like else ""
                raise self.error(f"{what}: unknown key {_found(k)}{said}; expected one of {', '.join(known)}"
                                 + ("; a key of your own is kept as written but must not read like one of them"
                                    if own_keys else ""), self.line_of(k.start_mark.index))

    def _read_corpus(self, key, value) -> tuple[str | None, str | None]:
        """`corpus: {path: P, sha256: S}` (sha256 optional), or `corpus: P`; a null is no corpus."""
        line = self.line_of(value.start_mark.index)
        expected = "expected {path: corpus.jsonl, sha256: …} or a path"
        if value.__class__ is ScalarNode:
            return scalar_text(value), None
        if value.__class__ is not MappingNode:
            raise self.error(f"corpus: found {_found(value)}; {expected}", line)
        check_unique_here(self, value)
        self._known_keys(value, _CORPUS_KEYS, "corpus", own_keys=False)
        fields = {k.value: v for k, v in value.value}
        for name, node in fields.items():
            if node.__class__ is not ScalarNode or not (scalar_text(node) or "").strip():
                raise self.error(f"corpus {name}: found {_found(node) if node.__class__ is not ScalarNode else 'nothing'}"
                                 f"; {expected}", self.line_of(node.start_mark.index))
        if "path" not in fields:
            raise self.error(f"corpus: no path; {expected}", line)
        return scalar_text(fields["path"]), scalar_text(fields["sha256"]) if "sha256" in fields else None

    def _read_drafts(self, qid: str, key, value) -> None:
        """`drafted: {chunk: grade}`: a model's proposals, held apart from the judgments (never scored)."""
        held, drafts = self.judg[qid], {}
        for chunk, grade, line in read_chunks(self, value, f"query {qid!r} drafted", 1, self.line_of(key.start_mark.index)):
            if chunk in held:
                raise self.error(f"chunk {chunk!r} is labelled twice for query {qid!r} ({held[chunk][0]} and drafted); "
                                 "expected a draft only for a chunk nobody has judged", line)
            if chunk in drafts:
                raise self.error(f"chunk {chunk!r} is drafted twice for query {qid!r}; expected one draft per chunk", line)
            if grade < 0:
                raise self.error(f"query {qid!r} drafted {chunk!r}: grade {grade}; expected 0 or more", line)
            drafts[chunk] = (grade, line)
        if drafts:
            self.drafts[qid] = drafts

    def _read_tags(self, qid: str, key, value) -> list[str]:
        line = self.line_of(value.start_mark.index)
        if value.__class__ is ScalarNode and scalar_text(value) is None:
            return []
        if value.__class__ is not SequenceNode:
            raise self.error(f"query {qid!r} tags: expected a list of tags like [typo, follow-up]", line)
        tags: list[str] = []
        for item in value.value:
            tag = scalar_text(item) if item.__class__ is ScalarNode else None
            if tag is None or not tag.strip():
                raise self.error(f"query {qid!r} tags: expected each tag a word, found {_found(item)}",
                                 self.line_of(item.start_mark.index))
            if tag not in tags:
                tags.append(tag)
        return tags

    def _read_flag(self, qid: str, name: str, key, value) -> bool:
        text = scalar_text(value) if value.__class__ is ScalarNode else None
        word = (text or "").strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise self.error(f"query {qid!r} {name}: expected true or false, found {_found(value)}",
                         self.line_of(value.start_mark.index))

    def _read_date(self, qid: str, name: str, key, value) -> str:
        from datetime import date, datetime

        text = (scalar_text(value) if value.__class__ is ScalarNode else None) or ""
        try:
            date.fromisoformat(text.strip()) if len(text.strip()) == 10 else datetime.fromisoformat(text.strip())
        except ValueError:
            raise self.error(f"query {qid!r} {name}: expected a date like 2026-11-30, found {_found(value)}",
                             self.line_of(value.start_mark.index)) from None
        return text.strip()

    # ------------------------------------------------------------------ the entries, as the editor reads them

    def whole_root(self):
        """The whole file's PyYAML root with true positions (a document made by `reparse` composes it again
        on first use: its entries were shifted, the root it inherited was not)."""
        if self.root is None:
            self.root = compose_yaml(self.text)
        return self.root

    def entry(self, qid: str) -> Node:
        """The query's entry as Nodes, for the span editor."""
        return to_node(self.entries[qid], self.shift.get(qid, 0))

    def reparse(self, new_text: str, qid: str) -> YamlLabelDoc | None:
        """The document of `new_text` when it differs from this one only inside query `qid`'s entry, read
        without composing the whole file again: the entry's lines are composed on their own (as the one
        item of a `queries:` list) and every other entry is reused, its positions shifted. None when that
        cannot be shown to read the same as a whole parse (the caller then parses the whole text).

        Why it reads the same: everything before the entry's `- ` line and after its last line is
        byte-identical; the entry starts on its own dash line; the first line after it that is not blank
        or a comment is indented no deeper than the dash (so no new content can reach into it); and the
        edited lines compose, alone, to exactly one entry with this id."""
        return self.reparse_many(new_text, {qid: len(new_text) - len(self.text)})

    def reparse_many(self, new_text: str, grown: dict[str, int]) -> YamlLabelDoc | None:
        """`reparse` for several entries at once (a batch of marks on different queries, one span edit each
        set): `grown` says by how many characters each edited entry grew. Every stretch between the edited
        entries must be byte-identical, each edited entry read alone by the rules of `reparse`; the other
        entries are reused, their positions shifted by what the entries before them grew."""
        if type(self) is not YamlLabelDoc or not grown:
            return None
        t = self.text
        spans = []  # (old line start, old end, qid, its dash)
        for qid in grown:
            if qid not in self.entries:
                return None
            entry = self.entry(qid)
            ls = line_start(t, entry.start)
            dash = t[ls : entry.start]
            if not _DASH.fullmatch(dash):
                return None
            spans.append((ls, eol_after(t, content_end(t, entry)), qid, dash))
        spans.sort()
        if sum(grown.values()) != len(new_text) - len(t):
            return None
        head = "queries:\n"
        # the edited entries composed together, as the items of one `queries:` list (one compose call: each
        # call costs ~1 ms however small its text); each must come out as exactly its own one entry
        pieces, placed = [head], {}  # qid -> (start in the fragment, start in the new text, lines before each)
        at_old, at_new, line, frag, frag_line = 0, 0, 0, len(head), 1
        for ls, le, qid, dash in spans:
            if ls < at_old:
                return None  # two edited entries overlap: not one entry each
            gap = ls - at_old
            if new_text[at_new : at_new + gap] != t[at_old:ls]:
                return None
            line += new_text.count("\n", at_new, at_new + gap)
            at_new += gap
            region = new_text[at_new : at_new + le - ls + grown[qid]]
            if not region.startswith(dash) or (le < len(t) and not region.endswith("\n")):
                return None
            column = len(dash) - len(dash.lstrip(" \t"))
            for following in t[le : le + 4096].split("\n"):
                body = following.strip()
                if body and not body.startswith("#"):
                    if len(following) - len(following.lstrip(" \t")) > column:
                        return None
                    break
            if not region.endswith("\n") and qid != spans[-1][2]:
                return None
            placed[qid] = (frag, at_new, line - frag_line, len(region))
            pieces.append(region)
            frag += len(region)
            n = region.count("\n")
            line += n
            frag_line += n
            at_new += len(region)
            at_old = le
        if new_text[at_new:] != t[at_old:]:
            return None
        try:
            part = YamlLabelDoc(self.path, "".join(pieces))
        except (InputError, ValueError):
            return None
        if part.order != [qid for _ls, _le, qid, _dash in spans]:
            return None
        for qid, (start, _at, text_lines, size) in placed.items():
            if not start <= part.entries[qid].start_mark.index < start + size:
                return None
        new = object.__new__(YamlLabelDoc)
        new.__dict__.update(self.__dict__)
        new.text, new._lines = new_text, None
        new.root = None  # stale positions: whole_root() composes the new text if a file-level edit needs it
        new.entries = dict(self.entries)
        new.judg = dict(self.judg)
        per_query = {name: dict(getattr(self, name)) for name in self.PER_QUERY}
        for qid, (_start, _at, lines, _size) in placed.items():
            new.entries[qid] = part.entries[qid]
            new.judg[qid] = {c: (lv, g, None if ln is None else ln + lines)
                             for c, (lv, g, ln) in part.judg[qid].items()}
            for name, mine in per_query.items():  # text, tags, drafts, ... of each re-read entry
                theirs = getattr(part, name)
                if qid in theirs:
                    mine[qid] = theirs[qid]
                else:
                    mine.pop(qid, None)
        for name, mine in per_query.items():
            setattr(new, name, mine)
        if getattr(self, "_quotes", None) is not None:
            old_q, new_q = count_quotes(self._section_values(list(placed))), count_quotes(part._section_values(list(placed)))
            new._quotes = {k: self._quotes[k] - old_q[k] + new_q[k] for k in self._quotes}
        shift = dict(self.shift)
        delta = 0
        for q in self.order:
            if q in placed:
                shift[q] = placed[q][1] - placed[q][0]
                delta += grown[q]
            elif delta:
                shift[q] = shift.get(q, 0) + delta
        new.shift = shift
        return new

    def sec_nodes(self, qid: str, entry: Node | None = None) -> dict[str, tuple[Node, Node]]:
        entry = entry or self.entry(qid)
        return {k.value: (k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value in SECTION_NAMES}

    def graded(self, qid: str) -> bool:
        for k, v in self.entries[qid].value:
            if k.__class__ is ScalarNode and k.value == vocab.GOLD:
                return v.__class__ is MappingNode
        return False

    records_reviewed = True
