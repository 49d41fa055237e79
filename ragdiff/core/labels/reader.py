"""Text + format -> the one document class that reads it (for the loader and the writer alike)."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.spans import MappingNode, ParseError, compose_json, compose_yaml
from ragdiff.core.io.textio import BOM_CHAR

# each format's document class loads when a file of that format is read: a qrels gold set (`diff` on TREC files)
# needs none of the YAML file's reader and editor


@contextmanager
def gc_paused():
    """Composing a 10,000-query file makes ~300,000 node objects; the cyclic collector, run again and again
    as they pile up, walked all of them each time: 3.7-4.5 s for load_gold against 1.0-1.1 s with it paused
    (bench/labels_bench.py's file, both measured side by side). The nodes hold no cycles (aliases are refused), so nothing waits on
    the collector; it runs as usual once the document is built."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_document(path: Path, fmt: str, text: str, folder: Path | None = None, *, empty_start: bool = False) -> LabelDoc:
    """The document for `text` (BOM already dropped). InputError naming the file and line when the text is
    not a gold set of that format. empty_start (the writer): a YAML file of nothing but comments and blank
    lines is a label file with no query yet, which `labels add` starts; the loader calls it empty."""
    with gc_paused():
        return _parse_document(path, fmt, text, folder, empty_start)


def _parse_document(path: Path, fmt: str, text: str, folder: Path | None, empty_start: bool = False) -> LabelDoc:
    if fmt in ("qrels", "beir"):
        from ragdiff.core.labels.qrels_doc import BeirDoc, QrelsDoc

        return QrelsDoc(path, text) if fmt == "qrels" else BeirDoc(path, text, folder)
    if text.startswith(BOM_CHAR):  # one BOM is dropped on reading; the parsers disagree on a second
        raise InputError(path, "a second byte-order mark (U+FEFF) at the start of the file; expected one at most",
                         1)
    try:
        root = compose_json(text) if fmt == "json" else compose_yaml(text)
    except ParseError as err:
        raise InputError(path, err.message, err.line) from None
    from ragdiff.core.labels.yaml_doc import YamlLabelDoc, is_label_file

    if root is None:
        if empty_start and fmt == "yaml":
            return YamlLabelDoc(path, text, None)
        raise InputError(path, "the file is empty")
    if root.__class__ is MappingNode and is_label_file(root, json_style=fmt == "json"):
        from ragdiff.core.labels.json_doc import JsonLabelDoc

        return JsonLabelDoc(path, text, root) if fmt == "json" else YamlLabelDoc(path, text, root)
    from ragdiff.core.labels.short_doc import ShortDoc

    return ShortDoc(path, text, root, fmt)
