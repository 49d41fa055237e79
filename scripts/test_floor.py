"""Run the test suite against the oldest versions pyproject.toml allows.

Every `name>=X` in [project].dependencies becomes `name==X` in a virtual environment of its own
(.venv-floor/), so a floor that no longer holds shows as a red suite here, not on a user's machine.
The test tools come from the test extras at their newest (the floors are the app's promise, not theirs).

usage: python3 scripts/test_floor.py [pytest args]      (or `make test-floor`)
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-floor"


def floor_pins(pyproject: Path) -> list[str]:
    """`name>=X[,<Y][; marker]` -> `name==X[; marker]`; a requirement without a floor is kept as written.

    The environment marker is kept: without it a dependency meant only for some Pythons or platforms would
    be pinned and installed everywhere."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return [floor_pin(dep) for dep in deps]


def floor_pin(dep: str) -> str:
    requirement, sep, marker = dep.partition(";")
    m = re.match(r"^\s*([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([^,\s]+)", requirement)
    if not m:
        return dep
    return f"{m.group(1)}=={m.group(2)}" + (f"; {marker.strip()}" if sep else "")


def main(argv: list[str]) -> int:
    pins = floor_pins(ROOT / "pyproject.toml")
    py = VENV / "bin" / "python"
    if not py.exists():
        print(f"test_floor: creating {VENV.name}/", flush=True)
        venv.create(VENV, with_pip=True)
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    print("test_floor: installing " + " ".join(pins), flush=True)
    # the test extras first (they may pull newer app dependencies), then the floors over them, then
    # ragdiff itself without dependencies so nothing is upgraded back
    subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
    subprocess.run([*pip, *pins], check=True)
    subprocess.run([*pip, "--no-deps", "-e", str(ROOT)], check=True)
    subprocess.run([str(py), "-m", "pip", "check"], check=False)
    return subprocess.run([str(py), "-m", "pytest", "-q", *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
