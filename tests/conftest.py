"""Shared fixtures: a colour-independent environment for the app tests, and the lesson's example as files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_RUNS = REPO / "sample_runs"


@pytest.fixture(autouse=True)
def _colour_environment(monkeypatch):
    """Snapshots and rendered text must not depend on the terminal the tests run in."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)


# The lesson's three queries (DESIGN.md: its worked examples are tests), as a ragdiff label file with ids,
# one unanswerable query ("none" in the lesson), a second run B that flips at k, and a small corpus whose
# policy-31 chunk carries markup and an escape sequence that must show literally.
LESSON_GOLD = """\
# the lesson's eval set, plus one query the corpus cannot answer
queries:
  - id: q1
    text: refund window for ebooks
    gold: {policy-14: 3}
    not_relevant: [policy-9]
  - id: q2
    text: return an unopened blender
    gold: [policy-15]
  - id: q3
    text: who approves expenses over 5k
    gold: [finance-3, finance-4]
    evidence: [hr-1]
  - id: q4
    text: do you ship to mars
    gold: []
"""

# A is the lesson's run, best first; B moves the ebook answer to rank 4 and finds the others earlier
LESSON_RUN_A = [
    {"query_id": "q1", "query": "refund window for ebooks", "results": ["policy-14", "policy-2", "policy-9"]},
    {"query_id": "q2", "query": "return an unopened blender", "results": ["policy-2", "policy-9", "policy-15"]},
    {"query_id": "q3", "query": "who approves expenses over 5k", "results": ["hr-1", "finance-9", "finance-3"]},
    {"query_id": "q4", "query": "do you ship to mars", "results": ["policy-2", "policy-31"]},
]
LESSON_RUN_B = [
    {"query_id": "q1", "query": "refund window for ebooks",
     "results": [{"id": "policy-31", "score": 0.91}, {"id": "policy-2", "score": 0.88},
                 {"id": "policy-9", "score": 0.73}, {"id": "policy-14", "score": 0.70}]},
    {"query_id": "q2", "query": "return an unopened blender",
     "results": [{"id": "policy-15", "score": 0.95}, {"id": "policy-2", "score": 0.61},
                 {"id": "policy-31", "score": 0.40}]},
    {"query_id": "q3", "query": "who approves expenses over 5k",
     "results": [{"id": "finance-4", "score": 0.83}, {"id": "hr-1", "score": 0.80},
                 {"id": "finance-9", "score": 0.52}, {"id": "finance-3", "score": 0.50}]},
    {"query_id": "q4", "query": "do you ship to mars", "results": [{"id": "policy-31", "score": 0.30}]},
]
MARKUP_TEXT = "Ebooks bought in the app can be refunded within 14 days. [bold]x[/] then \x1b[31m red [link=x]y[/link]"
LESSON_CORPUS = [
    {"id": "policy-2", "title": "Returns", "text": "Items can be returned within 30 days with a receipt."},
    {"id": "policy-9", "title": "Shipping", "text": "We ship to every country on Earth."},
    {"id": "policy-14", "title": "Ebook refunds", "text": "Refund window for ebooks: 7 days from purchase."},
    {"id": "policy-15", "title": "Appliances", "text": "Unopened appliances such as a blender can be returned."},
    {"id": "policy-31", "title": "App store [i]purchases[/i]", "text": MARKUP_TEXT},
    {"id": "hr-1", "title": "Approvals", "text": "Managers approve expenses up to 5k."},
    {"id": "finance-3", "title": "Large expenses", "text": "Expenses over 5k are approved by the CFO."},
    {"id": "finance-4", "title": "Finance policy", "text": "The CFO approves expenses over 5k within a week."},
    {"id": "finance-9", "title": "Travel", "text": "Travel is booked through the portal."},
]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def lesson(tmp_path) -> dict[str, Path]:
    """The lesson's example as files: gold.yaml, bm25.jsonl (A), dense.jsonl (B), corpus.jsonl."""
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "gold.yaml").write_text(LESSON_GOLD, encoding="utf-8")
    return {
        "gold": folder / "gold.yaml",
        "a": _write_jsonl(folder / "bm25.jsonl", LESSON_RUN_A),
        "b": _write_jsonl(folder / "dense.jsonl", LESSON_RUN_B),
        "corpus": _write_jsonl(folder / "corpus.jsonl", LESSON_CORPUS),
    }


@pytest.fixture
def sample_runs() -> Path:
    """The repository's sample runs; the tests that use them skip cleanly until gold.yaml exists."""
    if not (SAMPLE_RUNS / "gold.yaml").is_file():
        pytest.skip("sample_runs/gold.yaml is not built yet")
    return SAMPLE_RUNS


def screen_lines(app) -> list[str]:
    """The characters on the app's screen now, one string per row (what a reader sees, no styles)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


async def settle(pilot, rounds: int = 3) -> None:
    """Let the workers (loading, corpus index, p-values, label writes) finish and their messages land.

    Every running worker is waited for, each to its own end: one ending cancelled does not end the wait.
    A p-value job replaced by a newer one (an exclusive group) ends cancelled while a mark is still being
    written; stopping at the first cancelled worker read the journal before that mark was in it. Only the
    app exiting (e.g. bad input: it cancels what was left) ends the wait early. A worker that failed fails
    the test."""
    import asyncio

    from textual.worker import WorkerFailed, WorkerState

    app = pilot.app
    for _ in range(rounds):
        while app.is_running:
            running = [worker for worker in app.workers if worker.state == WorkerState.RUNNING]
            if not running:
                break
            ends = await asyncio.gather(*(worker.wait() for worker in running), return_exceptions=True)
            failed = [end for end in ends if isinstance(end, WorkerFailed)]
            if failed:
                raise failed[0]
        if not app.is_running:
            return
        await pilot.pause()


def widget_lines(app, widget) -> list[str]:
    """The characters of one widget's region (border included), one string per row, cut by terminal cells:
    a wide character (CJK, most emoji) before the region takes two cells and one character."""
    region = widget.region
    strips = app.screen._compositor.render_strips()[region.y: region.y + region.height]
    return ["".join(seg.text for seg in strip.crop(region.x, region.x + region.width)) for strip in strips]


@pytest.fixture
def pane():
    return widget_lines


@pytest.fixture
def screen():
    return screen_lines


@pytest.fixture
def settled():
    return settle
