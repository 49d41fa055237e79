"""The modules and classes of ragdiff/ over the house's size limits: a module over 600 lines, a class over 400.

    python3 scripts/sizes.py [--modules N] [--classes N] [ROOT]

A module's size is its line count (as `wc -l` gives it); a class's runs from its `class` line (decorators
included) to its last line. Largest first; exits 0 whatever it finds (a list to work from, not a gate).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

MODULE_LIMIT = 600
CLASS_LIMIT = 400


def sizes(root: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(lines, name) of every module ("ragdiff/core/diff.py") and every class ("ragdiff/app/app.py:ReviewApp")
    at any depth below `root`, named from `root`'s parent."""
    modules, classes = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root.parent).as_posix()
        modules.append((len(text.splitlines()), name))
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                classes.append((node.end_lineno - first + 1, f"{name}:{node.name}"))
    return modules, classes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent / "ragdiff")
    parser.add_argument("--modules", type=int, default=MODULE_LIMIT, metavar="N", help="list modules over N lines")
    parser.add_argument("--classes", type=int, default=CLASS_LIMIT, metavar="N", help="list classes over N lines")
    args = parser.parse_args()
    modules, classes = sizes(args.root.resolve())
    for title, found, limit in (("modules", modules, args.modules), ("classes", classes, args.classes)):
        over = sorted((item for item in found if item[0] > limit), reverse=True)
        print(f"{title} over {limit} lines: {len(over)}")
        for lines, name in over:
            print(f"  {lines:5d}  {name}")
        if found:
            lines, name = max(found)
            print(f"  largest: {name} ({lines} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
