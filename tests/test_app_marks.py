"""Marking in the review screen: the header agrees with `ragdiff eval` on the written file, and a failed save
is said, kept, and retried with `r`."""

from __future__ import annotations

import errno
import json
import os

import pytest

from ragdiff.core.metrics.specs import default_metrics
from ragdiff.app.widgets.ranked_list import RankedList
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.journal import Journal, journal_path
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run

from test_app_pilot import SIZE, lesson_app


def eval_on_disk(lesson, k=3):
    gold = load_gold(lesson["gold"])
    settings = EvalSettings(k=k, depth=50)
    metrics = default_metrics(k, 50, "header")
    return [evaluate(load_run(lesson[side]), gold, settings, metrics).means for side in ("a", "b")]


def header_means(app):
    return [{m.name: getattr(m, side) for m in app.model.header.metrics} for side in ("a", "b")]


async def test_mark_undo_mark_again_matches_eval_on_the_file(lesson, screen, settled):
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        before = eval_on_disk(lesson)
        assert header_means(app) == before
        await pilot.press("tab", "tab")
        assert app.query_one("#list-b", RankedList).selected_chunk == "policy-31"
        await pilot.press("g")
        await settled(pilot)
        after_mark = eval_on_disk(lesson)
        assert after_mark != before and header_means(app) == after_mark
        await pilot.press("u")
        await settled(pilot)
        assert header_means(app) == eval_on_disk(lesson) == before
        await pilot.press("g")
        await settled(pilot)
        assert header_means(app) == eval_on_disk(lesson) == after_mark
        # and what the header prints is those numbers
        line = next(l for l in screen(app) if l.lstrip().startswith("recall@3"))
        assert f"B {after_mark[1]['recall@3']:.3f}".replace("0.", ".") in line or \
            f"B {after_mark[1]['recall@3']:.3f}" in line


async def test_a_failed_save_is_said_kept_and_retried(lesson, screen, pane, settled, monkeypatch):
    app = lesson_app(lesson, reviewer="tester")
    original = lesson["gold"].read_bytes()
    real_replace = os.replace

    def disk_full(src, dst, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")
        monkeypatch.setattr(os, "replace", disk_full)
        await pilot.press("g")
        await settled(pilot)
        status = "\n".join(pane(app, app.query_one("#status")))
        # the decision is durable in the journal (it is judged, and the next open writes it), the label file could
        # not be written: the screen says so, with the key that retries
        assert "not written (1 unsaved, r retries): cannot save gold.yaml: No space left" in status
        assert lesson["gold"].read_bytes() == original
        assert not [p for p in lesson["gold"].parent.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]
        assert [r["type"] for r in map(json.loads, journal_path(lesson["gold"]).read_text().splitlines())] == ["mark"]
        monkeypatch.setattr(os, "replace", real_replace)
        await pilot.press("r")
        await settled(pilot)
        assert "policy-31" in lesson["gold"].read_text()
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "1 decision written to gold.yaml" in status
        b_line = next(l for l in pane(app, app.query_one("#list-b")) if "policy-31" in l)
        assert "★" in b_line


async def test_a_full_disk_for_the_journal_too_keeps_the_mark_unjudged_and_retried(lesson, pane, settled,
                                                                                   monkeypatch):
    """Nothing could be made durable (the journal's folder is full too): the chunk stays unjudged on screen, the
    status says so; D gives the mark up, r once there is space again saves it."""
    app = lesson_app(lesson, reviewer="tester")
    original = lesson["gold"].read_bytes()
    real_append = Journal.append_many

    def disk_full(self, records):
        raise OSError(errno.ENOSPC, "No space left on device")

    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")
        monkeypatch.setattr(Journal, "append_many", disk_full)
        await pilot.press("g")
        await settled(pilot)
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "not written (1 unsaved, r retries): cannot save gold.yaml: cannot write the journal" in status
        assert lesson["gold"].read_bytes() == original
        b_line = next(l for l in pane(app, app.query_one("#list-b")) if "policy-31" in l)
        assert " ? " in b_line  # the screen does not pretend it was saved
        await pilot.press("D")  # given up: nothing left to retry, the file as it was
        await settled(pilot)
        assert "dropped 1 unsaved mark: it stays out of gold.yaml" in "\n".join(pane(app, app.query_one("#status")))
        await pilot.press("r")
        await settled(pilot)
        assert "no unsaved mark to retry" in "\n".join(pane(app, app.query_one("#status")))
        assert lesson["gold"].read_bytes() == original
        await pilot.press("g")  # again, and this time retried once there is space
        await settled(pilot)
        monkeypatch.setattr(Journal, "append_many", real_append)
        await pilot.press("r")
        await settled(pilot)
        assert "policy-31" in lesson["gold"].read_text()
        b_line = next(l for l in pane(app, app.query_one("#list-b")) if "policy-31" in l)
        assert "★" in b_line


async def test_which_k_view_shows_recall_at_k_and_depth(lesson, screen, settled):
    app = lesson_app(lesson, k=1)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("w")
        await settled(pilot)
        text = "\n".join(screen(app))
        ev = [evaluate(load_run(lesson[s]), load_gold(lesson["gold"]), EvalSettings(k=1, depth=50),
                       [parse_metric("recall@1"), parse_metric("recall@50")]).means for s in ("a", "b")]
        assert "which k" in text and "k=1" in text and "depth=50" in text
        for name, means in zip(("bm25", "dense"), ev):
            assert f"{name}  recall@1 {means['recall@1']:.3f} → recall@50 {means['recall@50']:.3f}" in text
        await pilot.press("escape")
        await settled(pilot)
        assert "which k: recall@j" not in "\n".join(screen(app))


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (121, 30), (140, 40), (200, 50)])
async def test_which_k_plot_fits_its_box_at_every_width(lesson, pane, settled, size):
    """The plot is drawn for its box's width: drawn for the app's width it was wider than the box (95% of it)
    past 120 columns, and every row wrapped its right end onto the next line."""
    from ragdiff.app.widgets.which_k import PLOT_HEIGHT

    app = lesson_app(lesson, k=1)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("w")
        await settled(pilot)
        plot = app.screen.query_one("#which-k-plot")
        lines = pane(app, plot)
        assert len(lines) == PLOT_HEIGHT + 2  # the rows, the axis, its ticks: nothing wrapped
        axis = lines[PLOT_HEIGHT]
        assert axis.lstrip().startswith("└") and axis.rstrip().endswith("─")
        assert len(axis.rstrip()) == plot.content_size.width  # the axis runs to the box's edge, no further
        assert "depth=50" in lines[-1] and "k=1" in lines[-1]


async def test_label_file_deleted_or_folder_gone_during_review(lesson, pane, settled, tmp_path):
    app = lesson_app(lesson, reviewer="tester")
    gold = lesson["gold"]
    kept = tmp_path / "kept.yaml"
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("tab", "tab")
        gold.rename(kept)  # someone deleted (moved away) the label file behind the app's back
        await pilot.press("g")
        await settled(pilot)
        status = "\n".join(pane(app, app.query_one("#status")))
        assert "not written (1 unsaved, r retries)" in status and "gold.yaml" in status
        assert not gold.exists()
        kept.rename(gold)
        await pilot.press("r")
        await settled(pilot)
        assert "policy-31" in gold.read_text()
        assert "saved to gold.yaml" in "\n".join(pane(app, app.query_one("#status")))

        folder = gold.parent
        moved = folder.with_name(folder.name + "-moved")
        folder.rename(moved)  # now the whole folder goes
        try:
            await pilot.press("down", "x")
            await settled(pilot)
            status = "\n".join(pane(app, app.query_one("#status")))
            assert "not written (1 unsaved, r retries)" in status and "is gone" in status
        finally:
            moved.rename(folder)
        await pilot.press("r")
        await settled(pilot)
        assert "saved to gold.yaml" in "\n".join(pane(app, app.query_one("#status")))
        assert app.is_running
