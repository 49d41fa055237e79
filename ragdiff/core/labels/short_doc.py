"""The lesson's short form, in YAML or JSON: `{query: [chunk ids]}` or `{query: {chunk: grade}}`.

A list says gold; a map gives grades, grade 0 (or below) meaning judged not relevant. There is no place for
evidence: a mark of evidence is refused with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.labels.document import LabelDoc, check_unique_here, read_chunks
from ragdiff.core.labels.edits import SpanEdits
from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.spans import MappingNode, ScalarNode, SequenceNode, is_null, to_node
from ragdiff.core.labels.yaml_edits import graded_items, item_id, map_grade, quote_counts


class ShortDoc(LabelDoc):
    shape = "short form"
    kinds = (vocab.GOLD, vocab.NOT_RELEVANT)

    def __init__(self, path: Path, text: str, root, fmt: str):
        super().__init__(path, text)
        self.fmt = fmt
        self.root = root
        self.values: dict[str, tuple] = {}
        if root.__class__ is not MappingNode:
            raise self.error('expected a map {query: [chunk ids]} or a label file with "queries:", found a '
                             + ("list" if root.__class__ is SequenceNode else "str"), 1)
        check_unique_here(self, root)
        for k, v in root.value:
            at = self.line_of(k.start_mark.index)
            if k.__class__ is not ScalarNode or is_null(k) or not k.value.strip():
                raise self.error("expected query text or ids as keys", at)
            qid = k.value
            self.values[qid] = (k, v)
            self.order.append(qid)
            self.texts[qid] = qid
            self.judg[qid] = {}
            for chunk, grade, line in read_chunks(self, v, f"query {qid!r}", 1, at):
                self.add(qid, chunk, vocab.GOLD if grade > 0 else vocab.NOT_RELEVANT, grade, line)

    def graded(self, qid: str) -> bool:
        return self.values[qid][1].__class__ is MappingNode

    def quote_style(self) -> str | None:
        return None if self.fmt == "json" else quote_counts(v for _k, v in self.values.values())

    def kv_sep(self, ed: SpanEdits) -> str:
        """The file's own `key: value` separator (the last one on one line), for new map items."""
        for k, v in reversed(self.root.value):
            sep = self.text[k.end_mark.index : v.start_mark.index]
            if re.fullmatch(r"\s*:\s*", sep) and "\n" not in sep:
                return sep
        return ed.default_kv

    def plan(self, qid: str, chunk: str, label: str, grade: int | None) -> tuple[str, list[str]]:
        if label == vocab.EVIDENCE:
            raise LabelFormatError(
                f"the short form {{query: [chunk ids]}} in {self.fmt.upper()} has no place for evidence; "
                "use the ragdiff YAML label file for a second level"
            )
        ed = self.editor()
        self._plan(ed, qid, chunk, label, grade)
        return ed.result(), ed.notes

    def editor(self) -> SpanEdits:
        ed = SpanEdits(self.text, "json" if self.fmt == "json" else "yaml", self.quote_style(),
                    ascii_only=self.text.isascii())
        ed.default_kv = self.kv_sep(ed)
        return ed

    def _plan(self, ed: SpanEdits, qid: str, chunk: str, label: str, grade: int | None) -> None:
        key, val = (to_node(n) for n in self.values[qid])
        if val.is_null():
            if label == "none":
                return
            g = map_grade(label, grade)
            if label == vocab.GOLD and g == 1:
                new = "[" + ed.fmt_id(chunk) + "]"
            else:
                new = "{" + ed.fmt_id(chunk) + ed.default_kv + ed.fmt_grade(g) + "}"
            if self.fmt == "json":
                ed.add(val.start, val.end, new)
            else:
                ed.fill_null(key, val, new)
            return
        if val.kind == "seq":
            items = [item_id(n) for n in val.items]
            hits = [i for i, v in enumerate(items) if v == chunk]
            if label == "none":
                if hits:
                    ed.seq_remove(val, hits[0], key)
                return
            g = map_grade(label, grade)
            if label == vocab.GOLD and g == 1 and (not hits or val.items[hits[0]].kind == "scalar"):
                if not hits:
                    ed.seq_append(val, chunk)
                return
            if graded_items(ed, val, chunk, g):
                return
            ed.seq_to_map(val, key, {chunk: g} if hits else {}, None if hits else (chunk, g))
            what = f"grade {g}" if label == vocab.GOLD else "a not-relevant judgment (grade 0)"
            ed.notes.append(f"{qid}'s list became a graded map to hold {what}")
            return
        if val.kind == "map":
            keys = [k.value for k, _ in val.pairs]
            hits = [i for i, v in enumerate(keys) if v == chunk]
            if label == "none":
                if hits:
                    ed.map_remove(val, hits[0], key)
                return
            g = map_grade(label, grade)
            if hits:
                ed.map_set(val, hits[0], g)
            else:
                ed.map_append(val, chunk, g)
            return
        raise LabelFormatError(f"the value of {qid} is neither a list nor a map")
