"""The JSON label file: the ragdiff label file's shape in JSON, `{"queries": [{"id", "text", "gold", ...}]}`.

Read exactly as the YAML label file is (the same tree, the same rules); edits are written in JSON: ids
as JSON strings, new keys quoted, every collection a flow one.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragdiff.core.labels.spans import ParseError, compose_json
from ragdiff.core.labels.yaml_doc import YamlLabelDoc


class JsonLabelDoc(YamlLabelDoc):
    fmt = "json"
    shape = "JSON label file"  # in messages: "a label file cannot take a new query" said nothing to tell it by
    dialect = "json"

    def __init__(self, path: Path, text: str, root=None):
        if root is None:
            try:
                root = compose_json(text)
            except ParseError as err:
                from ragdiff.core.errors import InputError

                raise InputError(path, err.message, err.line) from None
        super().__init__(path, text, root)

    def key_text(self, name: str) -> str:
        return json.dumps(name)

    def quote_style(self) -> str | None:
        return None
