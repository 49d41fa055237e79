"""Pictures of the real review screen on the real sample runs, for the README.

    .venv/bin/python scripts/make_screenshots.py [--out screenshots]

Opens `ragdiff review sample_runs/bm25.jsonl sample_runs/dense.jsonl --gold sample_runs/gold.yaml
--corpus sample_runs/corpus.jsonl` at 140×40 on a temporary copy (nothing in the repository is written but
the pictures) and saves three SVGs: the main screen, the hit→miss filter, and the help screen.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ragdiff.app.app import ReviewApp, ReviewInputs  # noqa: E402
from ragdiff.core.metrics import EvalSettings  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description="SVG screenshots of the review screen on sample_runs/")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
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
        for name, keys, title in SHOTS:
            asyncio.run(shoot(folder, args.out, name, keys, title))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
