"""The label writer's package stays readable: each module one concern (no module over 600 lines, no class over
400), and private names stay in their module (nothing imports a `_name` from another module of the package)."""

from __future__ import annotations

import ast
from pathlib import Path

import ragdiff.core.labels

PACKAGE = Path(ragdiff.core.labels.__file__).parent


def modules():
    return sorted(PACKAGE.glob("*.py"))


def test_no_module_over_600_lines_and_no_class_over_400():
    too_long = []
    for path in modules():
        text = path.read_text()
        if text.count("\n") > 600:
            too_long.append(f"{path.name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 400:
                too_long.append(f"{path.name}: class {node.name} {node.end_lineno - node.lineno + 1} lines")
    assert too_long == []


def test_no_private_name_is_imported_from_another_module():
    imported = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragdiff"):
                imported += [f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert imported == []
