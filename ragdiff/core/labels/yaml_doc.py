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
from ragdiff.core.labels.edits import _Edits, _eol_after, _insert_line, _line_start, _reads_as_string, yaml_id
from ragdiff.core.labels.errors import LabelFormatError
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

SECTIONS = ((vocab.GOLD, 1), (vocab.EVIDENCE, 1), (vocab.NOT_RELEVANT, 0))  # (key, default grade)
_DASH = re.compile(r"[ \t]*-[ \t]+")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _found(node) -> str:
    if node.__class__ is ScalarNode:
        return repr(node.value)[:40]
    return "a map" if node.__class__ is MappingNode else "a list"


def item_id(n: Node) -> str | None:
    if n.kind == "scalar":
        return n.value
    if n.kind == "map" and len(n.pairs) == 1 and n.pairs[0][0].kind == "scalar":
        return n.pairs[0][0].value
    return None


def map_grade(label: str, grade: int | None) -> int:
    """The grade a mark writes (and the loader then reads)."""
    if label in (vocab.GOLD, vocab.DRAFTED):
        return 1 if grade is None else grade
    return 0 if label == vocab.NOT_RELEVANT else 1


def quote_counts(nodes) -> str | None:
    """The quote style most used among the scalars under these (PyYAML) nodes (None when none is quoted)."""
    return preferred(count_quotes(nodes))


def preferred(counts: dict[str, int]) -> str | None:
    if not any(counts.values()):
        return None
    return "'" if counts["'"] > counts['"'] else '"'


def count_quotes(nodes) -> dict[str, int]:
    counts = {"'": 0, '"': 0}
    stack = list(nodes)
    while stack:
        n = stack.pop()
        cls = n.__class__
        if cls is ScalarNode:
            if n.style in counts:
                counts[n.style] += 1
        elif cls is SequenceNode:
            stack.extend(n.value)
        else:
            for k, v in n.value:
                stack.append(k)
                stack.append(v)
    return counts


def is_label_file(root, json_style: bool) -> bool:
    """The gold loader's rule: a map with `queries` (in JSON: whose value is a list) is a label file;
    any other map is the short form {query: [chunk ids]}."""
    for k, v in root.value:
        if k.__class__ is ScalarNode and k.value == "queries":
            return v.__class__ is SequenceNode if json_style else True
    return False


_NO_QUERIES = SequenceNode("tag:yaml.org,2002:seq", [])

# a query drafted by a model (`labels add --from DRAFTED.jsonl`), not yet kept by a person: `proposed: true`. Not
# `drafted: true`: `drafted:` is the query's section of drafted chunks, and one key cannot hold both
PROPOSED = "proposed"

# every key the reader reads (a key of the file's own is kept, unless it reads like one of these: _known_keys)
_TOP_KEYS = ("corpus", "queries")
_QUERY_KEYS = ("id", "text", *vocab.SECTIONS, "tags", "regression", "retrieval", "reviewed", PROPOSED)
_CORPUS_KEYS = ("path", "sha256")

# the sections a mark edits: a person's judgment moves a chunk out of `drafted:` too
_SECTION_NAMES = frozenset([*(n for n, _ in SECTIONS), vocab.DRAFTED])


class YamlLabelDoc(LabelDoc):
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

    # ------------------------------------------------------------------ planning

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
            ls = _line_start(t, entry.start)
            dash = t[ls : entry.start]
            if not _DASH.fullmatch(dash):
                return None
            spans.append((ls, _eol_after(t, content_end(t, entry)), qid, dash))
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
        for qid, (start, _at, _lines, size) in placed.items():
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
        return {k.value: (k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value in _SECTION_NAMES}

    def graded(self, qid: str) -> bool:
        for k, v in self.entries[qid].value:
            if k.__class__ is ScalarNode and k.value == vocab.GOLD:
                return v.__class__ is MappingNode
        return False

    def _section_values(self, qids):
        return (v for q in qids for k, v in self.entries[q].value
                if k.__class__ is ScalarNode and k.value in _SECTION_NAMES)

    def quote_style(self) -> str | None:
        """The quote style most used in the label sections (counted once per document: a reparse adjusts
        the counts by the one entry it read again)."""
        if getattr(self, "_quotes", None) is None:
            self._quotes = count_quotes(self._section_values(self.order))
        return preferred(self._quotes)

    def editor(self) -> _Edits:
        return _Edits(self.text, self.dialect, self.quote_style(), ascii_only=self.text.isascii())

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        ed = self.editor()
        self._plan(ed, qid, chunk, label, grade)
        return ed.result(), ed.notes

    def _plan(self, ed: _Edits, qid: str, chunk: str, label: str, grade: int | None) -> None:
        entry = self.entry(qid)
        nodes = self.sec_nodes(qid, entry)
        for s, (key, val) in nodes.items():
            if val.is_null():
                continue
            elems = [item_id(n) for n in val.items] if val.kind == "seq" else [k.value for k, _ in val.pairs]
            hits = [i for i, v in enumerate(elems) if v == chunk]
            if hits and s != label:
                if s == vocab.DRAFTED and len(elems) == 1 and self._drop_pair(ed, entry, key, val):
                    continue
                ed.seq_remove(val, hits[0], key) if val.kind == "seq" else ed.map_remove(val, hits[0], key)
        if label == "none":
            return
        if label in nodes:
            key, val = nodes[label]
            if val.is_null():
                ed.fill_null(key, val, self.new_value(ed, chunk, label, grade))
            elif val.kind == "seq":
                ids = [item_id(n) for n in val.items]
                present = chunk in ids
                graded_item = present and val.items[ids.index(chunk)].kind == "map"
                if label in (vocab.GOLD, vocab.DRAFTED) and grade is not None and (grade != 1 or graded_item):
                    if not graded_items(ed, val, chunk, grade):
                        ed.seq_to_map(val, key, {chunk: grade} if present else {},
                                      None if present else (chunk, grade))
                        ed.notes.append(f"{qid}'s {label} list became a graded map to hold grade {grade}")
                elif not present:
                    ed.seq_append(val, chunk)
            elif val.kind == "map":
                keys = [k.value for k, _ in val.pairs]
                g = map_grade(label, grade)
                if chunk in keys:
                    ed.map_set(val, keys.index(chunk), g)
                else:
                    ed.map_append(val, chunk, g)
            else:
                raise LabelFormatError(f"{label} of {qid} is neither a list nor a map")
            return
        self.add_section_key(ed, entry, label, self.new_value(ed, chunk, label, grade))

    # ------------------------------------------------------------------ file-level edits (YAML only)

    def _top(self) -> dict[str, tuple[Node, Node]]:
        root = to_node(self.whole_root())
        return {k.value: (k, v) for k, v in root.pairs if k.kind == "scalar"}

    def plan_add_query(self, qid: str | None, text: str, regression: bool, tags: list[str],
                       extra: list[tuple[str, object]] = ()) -> str:
        """`  - id: Q` / `    text: …` (and regression, tags) as new lines after the last query, in the
        file's own indentation; without an id the text is the id (DESIGN's default). In a flow list (every
        JSON label file) one `{id, text, …}` after the last query, on its own line where they stand one a line.
        `extra`: keys of the file's own after the text (a query from a log: count, source, variants, context)."""
        return self.plan_add_queries([(qid, text, regression, tags, extra)])

    def plan_add_queries(self, entries: list[tuple[str | None, str, bool, list[str], list[tuple[str, object]]]]) -> str:
        """Several new queries after the last one, in order, by `plan_add_query`'s rules (one edit)."""
        ed = self.editor()
        all_fields = [entry_fields(ed, *entry) for entry in entries]
        if self.dialect == "yaml" and self._empty_start(ed, all_fields):
            return ed.result()
        _key, seq = self._top()["queries"]
        if seq.flow or not seq.items:
            if seq.kind != "seq":
                raise LabelFormatError('"queries" is not a list; nothing was written')
            entries = ["{" + ", ".join(f"{self.key_text(k)}: {v}" for k, v in fields) + "}" for fields in all_fields]
            sub = _Edits(ed.text, ed.dialect, ed.quote, ed.ascii_only)
            sub._flow_append(seq, seq.items, [n.end for n in seq.items], "\0")
            start, end, inserted = sub.edits[0]
            # the entries after one another, parted as the one after the last query is from it
            joiner = inserted[: inserted.index("\0")] if seq.items else ", "
            ed.add(start, end, inserted.replace("\0", joiner.join(entries)))
            return ed.result()
        last = seq.items[-1]
        t = self.text
        prefix = t[_line_start(t, last.start) : last.start]
        if not prefix.rstrip(" \t").endswith("-") or prefix.strip(" \t-") != "":
            raise LabelFormatError("the last query does not start its own `- ` line; nothing was written")
        pos = _eol_after(t, content_end(t, last))
        block = ed.nl.join(block_entry(prefix, fields, ed.nl) for fields in all_fields)
        ed.add(*_insert_line(t, pos, block, ed.nl))
        return ed.result()

    def plan_keep_query(self, qid: str) -> str:
        """The entry's `proposed:` key goes (its own line, or its place in a flow entry); where it cannot go
        cleanly (it shares the `- ` line, or a comment), its value becomes `false`."""
        ed = self.editor()
        entry = self.entry(qid)
        found = [i for i, (k, _v) in enumerate(entry.pairs) if k.kind == "scalar" and k.value == PROPOSED]
        if not found:
            return self.text
        key, val = entry.pairs[found[0]]
        if not self._drop_pair(ed, entry, key, val):
            if val.kind != "scalar":
                raise LabelFormatError(f"{qid}'s proposed: is not written on one line; nothing was written")
            ed.add(val.start, val.end, "false")
        return ed.result()

    def plan_drop_query(self, qid: str) -> str:
        """Query `qid`'s entry out of the `queries:` list (its lines, or its place in a flow list); the last
        one leaves `queries: []`."""
        ed = self.editor()
        key, seq = self._top()["queries"]
        index = self.order.index(qid)
        if seq.kind != "seq" or len(seq.items) != len(self.order):
            raise LabelFormatError('"queries" is not the list of queries; nothing was written')
        ed.seq_remove(seq, index, key)
        return ed.result()

    def _empty_start(self, ed: _Edits, all_fields: list[list[tuple[str, str]]]) -> bool:
        """The first query of a file that has none yet, written as a block list (`  - text: …`): into a file
        of nothing but comments and blank lines (a `queries:` line is added at its end), after `queries:`
        alone, or in place of a block file's `queries: []`. False when the file is not one of these (a
        flow list that holds queries, or a flow root, keeps its flow style)."""
        t = self.text
        entry = ed.nl.join(block_entry("  - ", fields, ed.nl) for fields in all_fields)
        if self.blank:
            ed.add(*_insert_line(t, len(t), "queries:" + ed.nl + entry, ed.nl))
            return True
        top = self._top()
        key, seq = top["queries"]
        if to_node(self.whole_root()).flow or not (seq.is_null() or (seq.kind == "seq" and seq.flow and not seq.items)):
            return False
        if _line_start(t, key.start) != key.start:  # `queries:` is indented or shares its line: not the root's
            return False
        if not seq.is_null():  # `queries: []` -> `queries:`, the comment after it (if any) kept where it is
            ed.add(seq.start, content_end(t, seq), "")
            if t[key.end:seq.start].strip(" \t:") == "":  # `queries: []`: drop the space before the brackets too
                ed.add(self._colon_end(key), seq.start, "")
        ed.add(*_insert_line(t, _eol_after(t, key.end), entry, ed.nl))
        return True

    def _colon_end(self, key: Node) -> int:
        return self.text.index(":", key.end) + 1

    def plan_corpus(self, path: str, sha256: str) -> str:
        """`corpus: {path: P, sha256: S}`: the value replaced where the key is, else a new first line before
        `queries:` (comments above it stay above it). In JSON the same as the root's first key."""
        if self.blank:
            raise LabelFormatError("the label file has no queries yet; add one first (labels add, labels init); "
                                   "nothing was written")
        ed = self.editor()
        value = ("{" + self.key_text("path") + ": " + ed.fmt_id(path) + ", " + self.key_text("sha256") + ": "
                 + (ed.fmt_id(sha256) if self.dialect == "json" else sha256) + "}")
        top = self._top()
        if "corpus" in top:
            k, v = top["corpus"]
            if v.is_null():
                ed.fill_null(k, v, value)
            elif v.kind == "scalar" or v.flow:
                ed.add(v.start, content_end(self.text, v), value)
            else:
                raise LabelFormatError("the corpus entry is a block map; write it on one line as {path, sha256} "
                                       "and run this again; nothing was written")
            return ed.result()
        key, _v = top["queries"]
        root = to_node(self.whole_root())
        if root.flow and self.dialect == "json":
            first = root.pairs[0][0]
            t = self.text
            entry = self.key_text("corpus") + ": " + value + ","
            if t[_line_start(t, first.start) : first.start].strip(" \t") == "":  # the key stands on its own line
                ed.add(first.start, first.start, entry + ed.nl + t[_line_start(t, first.start) : first.start])
            else:
                ed.add(first.start, first.start, entry + " ")
            return ed.result()
        if root.flow:
            raise LabelFormatError("the label file is one flow map; nothing was written")
        start = _line_start(self.text, key.start)
        ed.add(*_insert_line(self.text, start, "corpus: " + value, ed.nl))
        return ed.result()

    records_reviewed = True

    def plan_reviewed(self, qid: str, day: str) -> str:
        """`reviewed: DAY` in the query's entry: the value replaced where the key is (in its own quoting),
        else a new key after the entry's last one; nothing else in the file changes."""
        ed = self.editor()
        entry = self.entry(qid)
        found = [(k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value == "reviewed"]
        if not found:
            self.add_section_key(ed, entry, "reviewed", ed.fmt_id(day) if self.dialect == "json" else day)
            return ed.result()
        _k, v = found[0]
        if v.kind == "scalar" and v.style in (None, "'", '"'):
            quote = v.style or ""
            ed.add(v.start, v.end, ed.fmt_id(day) if self.dialect == "json" else quote + day + quote)
        else:
            raise LabelFormatError(f"{qid}'s reviewed: is not written on one line; nothing was written")
        return ed.result()

    def _drop_pair(self, ed: _Edits, entry: Node, key: Node, val: Node) -> bool:
        """An entry's `drafted:` whose last draft goes leaves the file as a person would: the key goes with it
        (its own line or lines, or its place in a flow entry), where nothing else would go too — not a comment,
        not a `- ` that the key shares. Else False, and the section stays, empty (`drafted: {}`). A judgment
        section always stays: `gold: []` says the query has no answer."""
        t = self.text
        idx = next(i for i, (k, _v) in enumerate(entry.pairs) if k is key)
        end = content_end(t, val)
        if len(entry.pairs) < 2 or "#" in t[key.end : val.start] or "\n" in t[val.start : end]:
            return False
        if entry.flow and idx + 1 < len(entry.pairs):
            after = t[end : entry.pairs[idx + 1][0].start]  # what goes with it: the comma and white space
        else:
            after = t[end : _eol_after(t, end)]
        if "#" in after or (not entry.flow and after.strip(" \t\r\n")):
            return False
        try:
            ed.map_remove(entry, idx, None)  # checks the key stands on its own line, and writes nothing if not
        except LabelFormatError:
            return False
        return True

    def key_text(self, name: str) -> str:
        return name

    def new_value(self, ed: _Edits, chunk: str, label: str, grade: int | None) -> str:
        if label == vocab.DRAFTED:  # a draft always says its grade: `drafted: {chunk: 2}`
            return "{" + ed.fmt_id(chunk) + ": " + ed.fmt_grade(map_grade(label, grade)) + "}"
        if label == vocab.GOLD and grade is not None and grade != 1:
            return "{" + ed.fmt_id(chunk) + ": " + ed.fmt_grade(grade) + "}"
        return "[" + ed.fmt_id(chunk) + "]"

    def add_section_key(self, ed: _Edits, entry: Node, name: str, value: str) -> None:
        t = self.text
        if entry.flow:
            _k, lv = entry.pairs[-1]
            ed.add(lv.end, lv.end, ", " + self.key_text(name) + ": " + value)
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
        order = ["id", "text", vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.DRAFTED]
        if name in order:
            before = set(order[: order.index(name)])
            anchors = [(k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value in before]
        else:  # any other key goes after the entry's last one
            anchors = []
        _k, anchor = max(anchors, key=lambda kv: kv[0].start) if anchors else entry.pairs[-1]
        pos = _eol_after(t, content_end(t, anchor))
        ed.add(*_insert_line(t, pos, indent + name + ": " + value, ed.nl))


def entry_fields(ed: _Edits, qid: str | None, text: str, regression: bool, tags: list[str],
                 extra: list[tuple[str, object]] = ()) -> list[tuple[str, str]]:
    """A new query's keys and values as written, in order: id, text, the extra keys (a string, a whole number,
    true / false, or a map of string to number), regression, tags."""
    fields = ([("id", ed.fmt_id(qid))] if qid is not None else []) + [("text", _text_scalar(ed, text))]
    for key, value in extra:
        if isinstance(value, dict):
            written = "{" + ", ".join(f"{ed.fmt_id(k) if ed.dialect == 'json' else yaml_id(k, chr(34))}: {int(v)}"
                                      for k, v in value.items()) + "}"
        elif isinstance(value, bool):
            written = "true" if value else "false"
        elif not isinstance(value, (str, int)):
            raise TypeError(f"{key}: a string, a whole number, true/false or a map, not {type(value).__name__}")
        else:
            written = str(value) if isinstance(value, int) else _text_scalar(ed, value)
        fields.append((key, written))
    if regression:
        fields.append(("regression", "true"))
    if tags:
        fields.append(("tags", "[" + ", ".join(ed.fmt_id(t) for t in tags) + "]"))
    return fields


def block_entry(prefix: str, fields: list[tuple[str, str]], nl: str) -> str:
    """One query as block lines: `prefix` (its `- ` and indentation) before the first field, the others under it."""
    indent = " " * len(prefix)
    return nl.join([prefix + f"{fields[0][0]}: {fields[0][1]}"] + [indent + f"{k}: {v}" for k, v in fields[1:]])


# query text that YAML reads back as the same string when written plain (the writer re-reads to be sure)
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.,'()/+\-]*[A-Za-z0-9.)?]\Z|[A-Za-z0-9]\Z")


def _text_scalar(ed: _Edits, text: str) -> str:
    if ed.dialect == "yaml" and _PLAIN_TEXT.match(text) and "  " not in text and _reads_as_string(text):
        return text
    return ed.fmt_id(text)


def graded_items(ed: _Edits, seq: Node, chunk: str, grade: int) -> bool:
    """A list that already holds graded items (`- {chunk: 3}`) takes one more, or regrades one, in place."""
    if not any(n.kind == "map" for n in seq.items):
        return False
    ids = [item_id(n) for n in seq.items]
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
