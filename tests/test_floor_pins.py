"""scripts/test_floor.py turns each floor in pyproject.toml into a pin; a marker must survive the pinning."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _floor_module():
    spec = importlib.util.spec_from_file_location("test_floor_script", ROOT / "scripts" / "test_floor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("dependency", "pin"),
    [
        ("polars>=2.0", "polars==2.0"),
        ("textual>=8.0,<9", "textual==8.0"),
        ("rich >= 14.2", "rich==14.2"),
        ('tomli>=2.0; python_version < "3.11"', 'tomli==2.0; python_version < "3.11"'),
        ('pywin32>=306,<400 ; sys_platform == "win32"', 'pywin32==306; sys_platform == "win32"'),
        ("somepkg", "somepkg"),
        ('plain; os_name == "nt"', 'plain; os_name == "nt"'),
    ],
)
def test_a_floor_becomes_a_pin_and_keeps_its_marker(dependency, pin):
    assert _floor_module().floor_pin(dependency) == pin


def test_every_dependency_of_the_project_is_pinned_to_its_floor(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\ndependencies = ["a>=1.2", "b>=3,<4", \'c>=5; python_version >= "3.11"\']\n'
    )
    assert _floor_module().floor_pins(pyproject) == ["a==1.2", "b==3", 'c==5; python_version >= "3.11"']
    # the real file: every dependency it lists has a floor, so every one comes out pinned
    assert all("==" in pin for pin in _floor_module().floor_pins(ROOT / "pyproject.toml"))
