"""The benches' app subclasses run the review's handlers once, as the app does.

Textual calls the message handler of every class in the MRO that defines one (subclass first), so a bench
subclass whose `on_loaded` or `on_mark_done` also calls super() runs ReviewApp's handler twice and measures
work the app never does (bench_marks' double apply_change, cb66a0b; bench_review's double on_loaded)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ragdiff.app.app import ReviewApp, ReviewInputs
from ragdiff.app.model import ReviewModel
from ragdiff.core.metrics.specs import EvalSettings

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def bench_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_marks
    import bench_review

    yield bench_review, bench_marks
    for name in ("bench_review", "bench_marks"):
        sys.modules.pop(name, None)


def _inputs(sample_runs: Path, tmp_path: Path) -> ReviewInputs:
    """The sample runs copied, so the benches' apps may mark them."""
    folder = tmp_path / "runs"
    shutil.copytree(sample_runs, folder)
    return ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl", gold=folder / "gold.yaml",
                        settings=EvalSettings(k=5, depth=50))


async def test_bench_review_runs_on_loaded_once(bench_modules, sample_runs, tmp_path, monkeypatch, settled):
    bench_review, _ = bench_modules
    calls = []
    real = ReviewApp.on_loaded
    monkeypatch.setattr(ReviewApp, "on_loaded", lambda self, message: (calls.append(1), real(self, message)))
    app = bench_review.TimedApp(_inputs(sample_runs, tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        assert app.first_screen_at is not None and app.model is not None
        assert len(calls) == 1


async def test_bench_marks_applies_each_change_once(bench_modules, sample_runs, tmp_path, monkeypatch, settled):
    _, bench_marks = bench_modules
    applied = []
    real = ReviewModel.relabel
    monkeypatch.setattr(ReviewModel, "relabel", lambda self, changed: (applied.append(changed), real(self, changed)))
    app = bench_marks.TimedApp(_inputs(sample_runs, tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settled(pilot)
        await pilot.press("tab", "x")
        await settled(pilot)
        assert len(app.stamps) == 1 and "settled" in app.stamps[0]
        assert len(applied) == 1
