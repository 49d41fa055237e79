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
    assert {"ragdiff.core.runs", "ragdiff.core.gold", "ragdiff.core.metrics"} <= set(CORE_MODULES)


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
