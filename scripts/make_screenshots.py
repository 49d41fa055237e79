"""Pictures of the real review screen and the HTML report on the real sample runs, for the README.

    .venv/bin/python scripts/make_screenshots.py [--out screenshots] [--only review|report]

Opens `ragdiff review sample_runs/bm25.jsonl sample_runs/dense.jsonl --gold sample_runs/gold.yaml
--corpus sample_runs/corpus.jsonl` at 140×40 on a temporary copy (nothing in the repository is written but
the pictures) and saves SVGs of the main screen, the hit→miss filter, the help screen and which k; then
`ragdiff judge bm25 dense` on a copy with the first three queries' judgments removed, after three decisions.

Then writes `ragdiff report bm25 dense` to a temporary HTML file and has headless Chromium render it to
PNGs (desktop width and phone width). Chromium is the Debian package `chromium`; this script installs it
with apt-get when it is missing (the tests never need it). The browser runs with networking off, so the
picture also shows that the page needs nothing from the network.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ragdiff.app.app import ReviewApp, ReviewInputs  # noqa: E402
from ragdiff.core.metrics.specs import EvalSettings  # noqa: E402

FILES = ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl")
SHOTS = (
    ("review-main.svg", [], "ragdiff review: bm25 vs dense, flipped queries first"),
    ("review-hit-to-miss.svg", ["f", "tab", "tab"], "ragdiff review: the hit→miss filter, list B"),
    ("review-help.svg", ["question_mark"], "ragdiff review: every key (generated from the bindings)"),
    ("review-which-k.svg", ["w"], "ragdiff review: which k, recall@j of both runs from 1 to depth"),
)


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def shoot(folder: Path, out: Path, name: str, keys: list[str], title: str) -> None:
    app = ReviewApp(ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl",
                                 gold=folder / "gold.yaml", settings=EvalSettings(k=5, depth=50),
                                 corpus=folder / "corpus.jsonl"))
    app.verdict_delay = 0
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        app.save_screenshot(filename=name, path=str(out))
        print(out / name)


async def shoot_judge(folder: Path, out: Path, name: str = "judge.svg") -> None:
    """`ragdiff judge` on a copy whose first three queries have no judgments: q01 half judged."""
    import re

    from ragdiff.app.judge import JudgeScreen
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    judge = folder / "judge"
    judge.mkdir()
    for file in FILES:
        shutil.copy2(folder / file, judge / file)
    lines, current, stripped = [], None, []
    for line in (judge / "gold.yaml").read_text().splitlines(keepends=True):
        match = re.match(r"  - id: (\S+)", line)
        if match:
            current = match.group(1)
            if len(stripped) < 3:
                stripped.append(current)
        if not (current in stripped and re.match(r"    (gold|evidence|not_relevant|drafted):", line)):
            lines.append(line)
    (judge / "gold.yaml").write_text("".join(lines))
    app = JudgeApp(JudgeInputs(runs=[judge / "bm25.jsonl", judge / "dense.jsonl"], gold=judge / "gold.yaml",
                               corpus=judge / "corpus.jsonl", reviewer="screenshots"))
    async with app.run_test(size=(140, 40)) as pilot:
        while not isinstance(app.screen, JudgeScreen):
            await pilot.pause(0.05)
        await settle(pilot)
        for key in ("3", "1", "x"):  # json#0 gold ★3, json.JSONEncoder#1 gold ★1, json.dumps#0 not relevant
            await pilot.press(key)
            await settle(pilot)
        app.save_screenshot(filename=name, path=str(out))
        print(out / name)


REPORT_SHOTS = (("report.png", 1200, 2200), ("report-phone.png", 420, 2400))


def chromium() -> str:
    """The headless browser: Debian's chromium, installed here (never by the tests) when it is missing."""
    found = shutil.which("chromium")
    if found:
        return found
    print("make_screenshots: installing the Debian package chromium (apt-get) …", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"], check=True)
    return shutil.which("chromium") or "/usr/bin/chromium"


def shoot_report(folder: Path, out: Path) -> None:
    from ragdiff.cli.main import main as ragdiff_main

    # run from a folder holding sample_runs/ so the page names the files as a reader of the README would
    root = folder / "report"
    (root / "sample_runs").mkdir(parents=True)
    for name in FILES:
        shutil.copy2(folder / name, root / "sample_runs" / name)
    page = root / "report.html"
    here = os.getcwd()
    os.chdir(root)
    try:
        code = ragdiff_main(["report", "sample_runs/bm25.jsonl", "sample_runs/dense.jsonl", "--gold",
                             "sample_runs/gold.yaml", "--corpus", "sample_runs/corpus.jsonl", "-o", "report.html"])
    finally:
        os.chdir(here)
    if code != 0:
        raise SystemExit(f"make_screenshots: ragdiff report exited {code}")
    browser = chromium()
    for name, width, height in REPORT_SHOTS:
        with tempfile.TemporaryDirectory(prefix="ragdiff-chromium-") as profile:
            target = out / name
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                            "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
                            "--hide-scrollbars", f"--window-size={width},{height}", f"--screenshot={target}",
                            page.as_uri()], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
            print(target)


def main() -> int:
    parser = argparse.ArgumentParser(description="screenshots of the review screen and the HTML report on sample_runs/")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--only", choices=("review", "report"), help="make only these pictures")
    args = parser.parse_args()
    source = REPO / "sample_runs"
    missing = [name for name in FILES if not (source / name).is_file()]
    if missing:
        print(f"make_screenshots: {source} lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragdiff-shots-") as tmp:
        folder = Path(tmp)
        for name in FILES:
            shutil.copy2(source / name, folder / name)
        if args.only in (None, "review"):
            for name, keys, title in SHOTS:
                asyncio.run(shoot(folder, args.out, name, keys, title))
            asyncio.run(shoot_judge(folder, args.out))
        if args.only in (None, "report"):
            shoot_report(folder, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
