"""Editing the ragdiff label file in YAML (JSON's own syntax through the same span editor, json_doc): a mark
planned as span edits of the text (`plan`), and the file-level edits (a query added, kept or dropped, the
corpus snapshot, `reviewed:`), each the smallest change of the file's own lines. The quote style most used
in the file is kept.

Mixed into `ragdiff.core.labels.yaml_doc.YamlLabelDoc`, which reads the file.
"""

from __future__ import annotations

import re

from ragdiff.core import vocab
from ragdiff.core.labels.edits import SpanEdits, eol_after, insert_line, line_start, reads_as_string, yaml_id
from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.spans import Node, ScalarNode, SequenceNode, content_end, to_node

SECTIONS = ((vocab.GOLD, 1), (vocab.EVIDENCE, 1), (vocab.NOT_RELEVANT, 0))  # (key, default grade)

# a query drafted by a model (`labels add --from DRAFTED.jsonl`), not yet kept by a person: `proposed: true`. Not
# `drafted: true`: `drafted:` is the query's section of drafted chunks, and one key cannot hold both
PROPOSED = "proposed"

# the sections a mark edits: a person's judgment moves a chunk out of `drafted:` too
SECTION_NAMES = frozenset([*(n for n, _ in SECTIONS), vocab.DRAFTED])


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


class YamlEdits:
    """The edits of a `YamlLabelDoc` (its `entries`, `entry`, `sec_nodes` and `whole_root` read the file)."""

    def quote_style(self) -> str | None:
        """The quote style most used in the label sections (counted once per document: a reparse adjusts
        the counts by the one entry it read again)."""
        if getattr(self, "_quotes", None) is None:
            self._quotes = count_quotes(self._section_values(self.order))
        return preferred(self._quotes)

    def _section_values(self, qids):
        return (v for q in qids for k, v in self.entries[q].value
                if k.__class__ is ScalarNode and k.value in SECTION_NAMES)

    def editor(self) -> SpanEdits:
        return SpanEdits(self.text, self.dialect, self.quote_style(), ascii_only=self.text.isascii())

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        ed = self.editor()
        self._plan(ed, qid, chunk, label, grade)
        return ed.result(), ed.notes

    def _plan(self, ed: SpanEdits, qid: str, chunk: str, label: str, grade: int | None) -> None:
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

    # ---- file-level edits (YAML only)

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
            sub = SpanEdits(ed.text, ed.dialect, ed.quote, ed.ascii_only)
            sub.flow_append(seq, seq.items, [n.end for n in seq.items], "\0")
            start, end, inserted = sub.edits[0]
            # the entries after one another, parted as the one after the last query is from it
            joiner = inserted[: inserted.index("\0")] if seq.items else ", "
            ed.add(start, end, inserted.replace("\0", joiner.join(entries)))
            return ed.result()
        last = seq.items[-1]
        t = self.text
        prefix = t[line_start(t, last.start) : last.start]
        if not prefix.rstrip(" \t").endswith("-") or prefix.strip(" \t-") != "":
            raise LabelFormatError("the last query does not start its own `- ` line; nothing was written")
        pos = eol_after(t, content_end(t, last))
        block = ed.nl.join(block_entry(prefix, fields, ed.nl) for fields in all_fields)
        ed.add(*insert_line(t, pos, block, ed.nl))
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

    def _empty_start(self, ed: SpanEdits, all_fields: list[list[tuple[str, str]]]) -> bool:
        """The first query of a file that has none yet, written as a block list (`  - text: …`): into a file
        of nothing but comments and blank lines (a `queries:` line is added at its end), after `queries:`
        alone, or in place of a block file's `queries: []`. False when the file is not one of these (a
        flow list that holds queries, or a flow root, keeps its flow style)."""
        t = self.text
        entry = ed.nl.join(block_entry("  - ", fields, ed.nl) for fields in all_fields)
        if self.blank:
            ed.add(*insert_line(t, len(t), "queries:" + ed.nl + entry, ed.nl))
            return True
        top = self._top()
        key, seq = top["queries"]
        if to_node(self.whole_root()).flow or not (seq.is_null() or (seq.kind == "seq" and seq.flow and not seq.items)):
            return False
        if line_start(t, key.start) != key.start:  # `queries:` is indented or shares its line: not the root's
            return False
        if not seq.is_null():  # `queries: []` -> `queries:`, the comment after it (if any) kept where it is
            ed.add(seq.start, content_end(t, seq), "")
            if t[key.end:seq.start].strip(" \t:") == "":  # `queries: []`: drop the space before the brackets too
                ed.add(self._colon_end(key), seq.start, "")
        ed.add(*insert_line(t, eol_after(t, key.end), entry, ed.nl))
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
            if t[line_start(t, first.start) : first.start].strip(" \t") == "":  # the key stands on its own line
                ed.add(first.start, first.start, entry + ed.nl + t[line_start(t, first.start) : first.start])
            else:
                ed.add(first.start, first.start, entry + " ")
            return ed.result()
        if root.flow:
            raise LabelFormatError("the label file is one flow map; nothing was written")
        start = line_start(self.text, key.start)
        ed.add(*insert_line(self.text, start, "corpus: " + value, ed.nl))
        return ed.result()

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

    def _drop_pair(self, ed: SpanEdits, entry: Node, key: Node, val: Node) -> bool:
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
            after = t[end : eol_after(t, end)]
        if "#" in after or (not entry.flow and after.strip(" \t\r\n")):
            return False
        try:
            ed.map_remove(entry, idx, None)  # checks the key stands on its own line, and writes nothing if not
        except LabelFormatError:
            return False
        return True

    def key_text(self, name: str) -> str:
        return name

    def new_value(self, ed: SpanEdits, chunk: str, label: str, grade: int | None) -> str:
        if label == vocab.DRAFTED:  # a draft always says its grade: `drafted: {chunk: 2}`
            return "{" + ed.fmt_id(chunk) + ": " + ed.fmt_grade(map_grade(label, grade)) + "}"
        if label == vocab.GOLD and grade is not None and grade != 1:
            return "{" + ed.fmt_id(chunk) + ": " + ed.fmt_grade(grade) + "}"
        return "[" + ed.fmt_id(chunk) + "]"

    def add_section_key(self, ed: SpanEdits, entry: Node, name: str, value: str) -> None:
        t = self.text
        if entry.flow:
            _k, lv = entry.pairs[-1]
            ed.add(lv.end, lv.end, ", " + self.key_text(name) + ": " + value)
            return
        indent = None
        for k, _v in entry.pairs:
            prefix = t[line_start(t, k.start) : k.start]
            if prefix.strip(" \t") == "":
                indent = prefix
                break
        if indent is None:
            k0 = entry.pairs[0][0]
            indent = " " * (k0.start - line_start(t, k0.start))
        order = ["id", "text", vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.DRAFTED]
        if name in order:
            before = set(order[: order.index(name)])
            anchors = [(k, v) for k, v in entry.pairs if k.kind == "scalar" and k.value in before]
        else:  # any other key goes after the entry's last one
            anchors = []
        _k, anchor = max(anchors, key=lambda kv: kv[0].start) if anchors else entry.pairs[-1]
        pos = eol_after(t, content_end(t, anchor))
        ed.add(*insert_line(t, pos, indent + name + ": " + value, ed.nl))


def entry_fields(ed: SpanEdits, qid: str | None, text: str, regression: bool, tags: list[str],
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


def _text_scalar(ed: SpanEdits, text: str) -> str:
    if ed.dialect == "yaml" and _PLAIN_TEXT.match(text) and "  " not in text and reads_as_string(text):
        return text
    return ed.fmt_id(text)


def graded_items(ed: SpanEdits, seq: Node, chunk: str, grade: int) -> bool:
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
        ed.flow_append(seq, seq.items, [n.end for n in seq.items], new)
    else:
        ed.seq_append(seq, chunk, raw=new)
    return True
