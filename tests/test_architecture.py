"""The core is the engine the CLI and the app share: it must never pull in Textual."""

import subprocess
import sys
from pathlib import Path

import ragdiff.core

CORE = Path(ragdiff.core.__file__).parent
CORE_MODULES = sorted(
    "ragdiff.core." + ".".join(p.relative_to(CORE).with_suffix("").parts) for p in CORE.rglob("*.py")
    if p.stem != "__init__"
)


def test_core_modules_found():
    assert {"ragdiff.core.io.runs", "ragdiff.core.labels.gold", "ragdiff.core.metrics.specs"} <= set(CORE_MODULES)


def test_core_imports_no_textual():
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
        "import ragdiff.cli.main, ragdiff.cli.eval_cmd\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# The core's layout is its architecture: shared words at the top of core/, then packages in floors, each of which
# imports only from the floors below it (and itself). A new module goes into the package its concern names.
SHARED = {"errors", "fmt", "vocab", "words", "visible", "folding"}
FLOORS = [{"io"}, {"labels"}, {"metrics"}, {"judge", "report", "retrieval"}]


def _floor(package: str) -> int:
    return -1 if package == "shared" else next(i for i, floor in enumerate(FLOORS) if package in floor)


def _package_of(module: str) -> str | None:
    """The core package a dotted module name belongs to ("shared" for core/*.py), None outside the core."""
    parts = module.split(".")
    if parts[:2] != ["ragdiff", "core"] or len(parts) < 3:
        return None
    return parts[2] if (CORE / parts[2]).is_dir() else "shared"


def _imports(path: Path) -> set[str]:
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_core_top_level_holds_only_shared_modules():
    top = {p.stem for p in CORE.glob("*.py")} - {"__init__"}
    packages = {p.name for p in CORE.iterdir() if (p / "__init__.py").exists()}
    assert top == SHARED
    assert packages == set().union(*FLOORS)


def test_core_packages_import_only_floors_below():
    wrong = []
    for path in CORE.rglob("*.py"):
        me = _package_of("ragdiff.core." + ".".join(path.relative_to(CORE).with_suffix("").parts))
        for module in _imports(path):
            if module.startswith(("ragdiff.app", "ragdiff.cli", "textual")):
                wrong.append(f"{path.relative_to(CORE)} imports {module}")
            target = _package_of(module)
            if target is None or target == me:
                continue
            if me == "shared" or _floor(target) >= _floor(me):
                wrong.append(f"{path.relative_to(CORE)} ({me}) imports {module} ({target})")
    assert wrong == []
