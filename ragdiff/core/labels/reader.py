"""Text + format -> the one document class that reads it (for the loader and the writer alike)."""

from __future__ import annotations

from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.json_doc import JsonLabelDoc
from ragdiff.core.labels.qrels_doc import BeirDoc, QrelsDoc
from ragdiff.core.labels.short_doc import ShortDoc
from ragdiff.core.labels.spans import MappingNode, ParseError, compose_json, compose_yaml
from ragdiff.core.labels.yaml_doc import YamlLabelDoc, is_label_file


def parse_document(path: Path, fmt: str, text: str, folder: Path | None = None) -> LabelDoc:
    """The document for `text` (BOM already dropped). InputError naming the file and line when the text is
    not a gold set of that format."""
    if fmt == "qrels":
        return QrelsDoc(path, text)
    if fmt == "beir":
        return BeirDoc(path, text, folder)
    try:
        root = compose_json(text) if fmt == "json" else compose_yaml(text)
    except ParseError as err:
        raise InputError(path, err.message, err.line) from None
    if root is None:
        raise InputError(path, "the file is empty")
    if root.__class__ is MappingNode and is_label_file(root, json_style=fmt == "json"):
        return JsonLabelDoc(path, text, root) if fmt == "json" else YamlLabelDoc(path, text, root)
    return ShortDoc(path, text, root, fmt)
