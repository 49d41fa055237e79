"""The installed package, not the source tree: build the wheel, install it in a fresh venv and run `ragdiff demo`
in a pseudo-terminal to its first screen (DESIGN: "`ragdiff demo` works from an installed package").

Offline: the wheel is built with the test venv's setuptools (--no-build-isolation) and installed with --no-deps
--no-index; the fresh venv sees the test venv's dependencies through a .pth line, which does not run the editable
install's finder, so `ragdiff` there can only be the wheel's.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import sysconfig
import termios
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEMO_FILES = ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with only the built wheel installed in it; returns its bin/ folder."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    shutil.copytree(REPO / "ragdiff", src / "ragdiff", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "dist"),
                    str(src)], check=True, cwd=root)
    (wheel,) = (root / "dist").glob("ragdiff-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "test-venv-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def test_wheel_holds_the_sample_runs(installed):
    (wheel,) = installed.parent.parent.joinpath("dist").glob("ragdiff-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"ragdiff/sample_runs/{n}" for n in DEMO_FILES} <= names
    assert "ragdiff/app/app.tcss" in names


def test_ragdiff_in_the_fresh_venv_is_the_wheel(installed):
    out = subprocess.run([installed / "python", "-c", "import ragdiff; print(ragdiff.__file__)"],
                         capture_output=True, text=True, check=True, cwd=installed).stdout
    assert Path(out.strip()).is_relative_to(installed.parent), out


def _read_until(fd: int, wanted: list[bytes], seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(w in seen for w in wanted):
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_demo_from_the_wheel_reaches_its_first_screen(installed, tmp_path):
    """`ragdiff demo` at 80x24 in a pty: the header, the scores, the 72 sample queries and the temporary copy's
    folder appear, `q` quits with 0 and the copy is gone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEXTUAL"))}
    env.update(TERM="xterm-256color", COLUMNS="80", LINES="24", TMPDIR=str(tmp_path), HOME=str(tmp_path))
    pid, fd = pty.fork()
    if pid == 0:  # the child: the installed console script, run from an empty folder (no source tree near it)
        os.chdir(tmp_path)
        os.execve(str(installed / "ragdiff"), [str(installed / "ragdiff"), "demo"], env)
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        screen = _read_until(fd, [b"bm25.jsonl", b"k=5 depth=50", b"recall@5", b"all 72", b"ragdiff-demo-"], 60)
        folders = list(tmp_path.glob("ragdiff-demo-*"))
        for words in (b"bm25.jsonl", b"k=5 depth=50", b"recall@5", b"all 72"):  # header, scores, 72 queries
            assert words in screen, (words, screen[-2000:])
        assert b"ragdiff-demo-" in screen, "the status line names the temporary copy"
        assert len(folders) == 1 and (folders[0] / "gold.yaml").is_file()
        os.write(fd, b"q")
        _read_until(fd, [b"\0never"], 20)  # drain until the app exits and closes the terminal
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 0
        assert not folders[0].exists(), "without --keep the demo deletes its copy"
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
