"""`ragdiff judge` driven by keys at machine speed (Pilot), checked against the run files and the journal."""

from __future__ import annotations

import json
import re
import shutil
from contextlib import asynccontextmanager

from ragdiff.app.judge import JudgeScreen
from ragdiff.app.judge_app import JudgeApp, JudgeInputs
from ragdiff.app.widgets.chunk_view import ChunkView

from conftest import settle
from test_app_keys import demo_copy, journal, type_fast
from test_app_pilot import SIZE, lesson_app

STRIPPED = 10


def strip_judgments(gold, count: int) -> list[str]:
    """Remove every judgment of the first `count` queries of a ragdiff YAML label file; their ids."""
    out, current, stripped = [], None, []
    for line in gold.read_text().splitlines(keepends=True):
        match = re.match(r"  - id: (\S+)", line)
        if match:
            current = match.group(1)
            if len(stripped) < count:
                stripped.append(current)
        if current in stripped and re.match(r"    (gold|evidence|not_relevant|drafted):", line):
            continue
        out.append(line)
    gold.write_text("".join(out))
    return stripped


def pool_order(folder, queries, depth=10) -> list[tuple[str, str]]:
    """The queue order worked out from the run files: per query (in label-file order), the union of each
    run's top `depth`, best rank across the runs first, then chunks both runs hold, then by id."""
    ranks: dict[str, list[dict[str, int]]] = {}
    for name in ("bm25.jsonl", "dense.jsonl"):
        for line in (folder / name).read_text().splitlines():
            record = json.loads(line)
            ids = [r["id"] if isinstance(r, dict) else r for r in record["results"]]
            ranks.setdefault(record["query_id"], []).append({c: i + 1 for i, c in reversed(list(enumerate(ids)))})
    out = []
    for qid in queries:
        runs = ranks[qid]
        pool = {c for run in runs for c, r in run.items() if r <= depth}
        key = lambda c: (min(run.get(c, 10**9) for run in runs), -sum(c in run for run in runs), c)  # noqa: E731
        out += [(qid, c) for c in sorted(pool, key=key)]
    return out


def judge_app(folder, **options) -> JudgeApp:
    return JudgeApp(JudgeInputs(runs=[folder / "bm25.jsonl", folder / "dense.jsonl"], gold=folder / "gold.yaml",
                                corpus=folder / "corpus.jsonl", reviewer="tester", **options))


async def opened(pilot) -> JudgeScreen:
    for _ in range(500):
        if isinstance(pilot.app.screen, JudgeScreen):
            break
        await pilot.pause(0.01)
    await settle(pilot)
    assert isinstance(pilot.app.screen, JudgeScreen), pilot.app.failure
    return pilot.app.screen


def header(app) -> str:
    return str(app.screen.query_one("#judge-header").render())


async def test_x_pressed_p_times_judges_p_distinct_unjudged_pool_chunks_in_queue_order(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    stripped = strip_judgments(folder / "gold.yaml", STRIPPED)
    expected = pool_order(folder, stripped)
    presses = 17  # past the first query's pool, into the next one
    assert len(expected) > presses
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        judged, total = screen.queue.progress()
        assert total - judged == len(expected)  # the other queries' pools were judged already
        assert f"{judged}/{total} judged" in header(app) and f"this session 0/{len(expected)}" in header(app)
        await type_fast(pilot, *["x"] * presses)
        marks = [(r["query"], r["chunk"], r["label"]) for r in journal(folder / "gold.yaml") if r["type"] == "mark"]
        assert marks == [(q, c, "not_relevant") for q, c in expected[:presses]]
        assert len(set(marks)) == presses
        assert f"{judged + presses}/{total} judged" in header(app)
        assert f"this session {presses}/{len(expected)}" in header(app)
        assert screen.queue.entry_at(screen.position)[1].chunk_id == expected[presses][1]
        await type_fast(pilot, "q")
    assert app.return_code == 0
    app = judge_app(folder)  # starting again resumes at the next unjudged chunk
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        qid, entry = screen.queue.entry_at(screen.position)
        assert (qid, entry.chunk_id) == expected[presses]
        assert f"{judged + presses}/{total} judged" in header(app)
        assert expected[presses][1] in str(screen.query_one(ChunkView).border_title)


async def test_one_key_per_decision_skip_flag_undo(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    stripped = strip_judgments(folder / "gold.yaml", 2)
    expected = pool_order(folder, stripped)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await type_fast(pilot, "3", "0", "s", "!", "g", "e", "1")
        marks = [(r["query"], r["chunk"], r["label"], r["grade"]) for r in journal(folder / "gold.yaml")
                 if r["type"] == "mark"]
        (q0, c0), (q1, c1), (q2, c2), (q3, c3), (q4, c4), (q5, c5), (q6, c6) = expected[:7]
        assert marks == [(q0, c0, "gold", 3), (q1, c1, "not_relevant", None), (q4, c4, "gold", None),
                         (q5, c5, "evidence", None), (q6, c6, "gold", 1)]
        flags = (folder / "gold.yaml.ragdiff-flags.jsonl").read_text()
        assert json.loads(flags)["chunk"] == c3 and not screen.queue.is_judged(q3, c3)
        assert not screen.queue.is_judged(q2, c2)  # skipped: still unjudged
        await type_fast(pilot, "u")  # back to the last decision, to judge it again
        assert screen.queue.entry_at(screen.position)[1].chunk_id == c6 and not screen.queue.is_judged(q6, c6)
        await type_fast(pilot, "x")
        assert screen.queue.label_of(q6, c6)[0] == "not_relevant"


async def test_the_chunk_text_scrolls_to_its_end(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)  # q01's first chunk (json#0) is longer than the pane
        view = screen.query_one(ChunkView)
        first, last, total = view.where()
        assert first == 1 and last < total and "more below" in str(view.border_subtitle)
        await type_fast(pilot, "j", "j")
        assert view.where()[0] == 3
        await type_fast(pilot, *["space"] * (total // max(1, last - first) + 2))
        first, last, total = view.where()
        assert last == total and "the end" in str(view.border_subtitle)


async def test_search_the_corpus_and_judge_a_chunk_no_run_returned(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    strip_judgments(folder / "gold.yaml", 1)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        qid = screen.queue.queries[screen.position.query]
        pooled = {e.chunk_id for e in screen.queue.entries[qid]}
        await type_fast(pilot, "/", "ctrl+u", *"base64 encode", "enter")
        for _ in range(300):  # the search runs in a worker, then lists what it found
            if pilot.app.screen is not screen:
                break
            await pilot.pause(0.01)
        hits = pilot.app.screen.hits
        pick = next(i for i, h in enumerate(hits) if h.chunk_id not in pooled)
        await type_fast(pilot, *["down"] * pick, "enter")
        chunk = hits[pick].chunk_id
        assert pilot.app.screen is screen and screen.queue.entry_at(screen.position)[1].chunk_id == chunk
        await type_fast(pilot, "2")
        marks = [(r["query"], r["chunk"], r["label"], r["grade"]) for r in journal(folder / "gold.yaml")
                 if r["type"] == "mark"]
        assert marks == [(qid, chunk, "gold", 2)]


@asynccontextmanager
async def queue_in_review(lesson, settled):
    """(app, pilot, screen): `ragdiff review` of the lesson, its judging queue opened with J on q3."""
    app = lesson_app(lesson, reviewer="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await type_fast(pilot, "]", "]", "J")  # q3
        yield app, pilot, pilot.app.screen


async def test_review_opens_the_queue_for_the_query_on_screen(lesson, settled):
    async with queue_in_review(lesson, settled) as (app, pilot, screen):
        assert isinstance(screen, JudgeScreen)
        qid, entry = screen.queue.entry_at(screen.position)
        assert qid == "q3" and not screen.queue.is_judged(qid, entry.chunk_id)
        await type_fast(pilot, "x", "escape")
        assert pilot.app.screen is app.screen_stack[0] and app.selected_query == "q3"
        assert app.model.label_of("q3", entry.chunk_id)[0] == "not_relevant"  # the review's model took it
        assert [(r["query"], r["chunk"]) for r in journal(lesson["gold"]) if r["type"] == "mark"] == \
            [("q3", entry.chunk_id)]


def test_strip_keeps_the_queries(sample_runs, tmp_path):
    gold = tmp_path / "gold.yaml"
    shutil.copy2(sample_runs / "gold.yaml", gold)
    before = gold.read_text().count("  - id: ")
    assert len(strip_judgments(gold, 3)) == 3 and gold.read_text().count("  - id: ") == before


async def test_the_corpus_hits_keep_the_picked_one_in_view(sample_runs, tmp_path):
    folder = demo_copy(sample_runs, tmp_path)
    app = judge_app(folder)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        await type_fast(pilot, "/", "ctrl+u", *"file", "enter")
        for _ in range(300):
            if pilot.app.screen is not screen:
                break
            await pilot.pause(0.01)
        hits_screen = pilot.app.screen
        assert len(hits_screen.hits) == 20  # more than the box shows at 100x30
        await type_fast(pilot, *["down"] * 15)
        shown = str(hits_screen.query_one("#hits-list").render())
        assert hits_screen.cursor == 15 and hits_screen.hits[15].chunk_id in shown
        assert "16 of 20" in str(hits_screen.query_one("#hits-box").border_subtitle)


async def test_the_decision_that_finishes_a_query_writes_its_reviewed_date_and_nothing_else(sample_runs, tmp_path):
    """DESIGN: `reviewed:` is when a person last read this query's labels. In the queue that is the decision
    that leaves none of the query's pool unjudged; one line of its entry changes, the rest stays byte for byte."""
    from datetime import datetime, timezone

    from ragdiff.core.labels.gold import load_gold

    folder = demo_copy(sample_runs, tmp_path)
    first, second = strip_judgments(folder / "gold.yaml", 2)
    expected = pool_order(folder, [first, second])
    size = sum(q == first for q, _ in expected)
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await type_fast(pilot, *["x"] * (size - 1))
        before = (folder / "gold.yaml").read_text()
        assert "reviewed:" not in before  # one chunk of the first query still unjudged
        await type_fast(pilot, "x", "x")  # finishes the first query; one of the second's
        await settle(pilot)
        after = (folder / "gold.yaml").read_text()
        await type_fast(pilot, "q")
    today = datetime.now(timezone.utc).date().isoformat()
    reviewed = dict(load_gold(folder / "gold.yaml").queries.select("query_id", "reviewed").iter_rows())
    assert reviewed[first] == today and reviewed[second] is None
    assert after.count("reviewed:") == 1
    marks = [r for r in journal(folder / "gold.yaml") if r["type"] == "mark"]
    assert len(marks) == size + 1  # the date is an edit of its own, not a mark `u` would take back
    edits = [r for r in journal(folder / "gold.yaml") if r["type"] == "edit"]
    assert [(r["edit"], r["query"], r["reviewed"]) for r in edits] == [("reviewed", first, today)]


async def test_undoing_the_decision_that_finished_a_query_takes_back_its_reviewed_date(sample_runs, tmp_path, capsys):
    """u after the decision that finished a query: the chunk is unjudged again and the query no longer says it was
    read (the date went with the decision that set it), byte for byte; `labels log` says where the date came
    from."""
    from ragdiff.cli.main import main

    folder = demo_copy(sample_runs, tmp_path)
    first, _second = strip_judgments(folder / "gold.yaml", 2)
    before = (folder / "gold.yaml").read_text()
    size = sum(q == first for q, _ in pool_order(folder, [first]))
    app = judge_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await type_fast(pilot, *["x"] * (size - 1))
        await settle(pilot)
        unfinished = (folder / "gold.yaml").read_text()
        await type_fast(pilot, "x")
        await settle(pilot)
        assert "reviewed:" in (folder / "gold.yaml").read_text()
        await type_fast(pilot, "u")
        await settle(pilot)
        assert "reviewed: date" in str(app.screen.query_one("#judge-status").render())
        await type_fast(pilot, "q")
    assert (folder / "gold.yaml").read_text() == unfinished != before
    undone = [(r["type"], r.get("edit")) for r in journal(folder / "gold.yaml") if r["type"] in ("edit", "undo")]
    assert undone == [("edit", "reviewed"), ("undo", "reviewed"), ("undo", None)]
    capsys.readouterr()
    assert main(["labels", "log", str(folder / "gold.yaml")]) == 0
    dated = [line for line in capsys.readouterr().out.splitlines() if "reviewed: 20" in line]
    assert len(dated) == 2 and "judge: query finished" in dated[0]  # not "labels snapshot"; then its undo


async def test_finishing_a_query_in_the_queue_inside_review_writes_its_date_too(lesson, settled):
    """The same queue one key away in review (J) writes `reviewed:` the same way, and the review goes on."""
    from datetime import datetime, timezone

    from ragdiff.core.labels.gold import load_gold

    async with queue_in_review(lesson, settled) as (app, pilot, screen):
        done, size = screen.queue.query_progress("q3")
        await type_fast(pilot, *["x"] * (size - done))
        await settle(pilot)
        said = str(screen.query_one("#judge-status").render())
        assert "not written" not in said and "q3 reviewed " in said, said
        await type_fast(pilot, "escape")
        assert pilot.app.screen is app.screen_stack[0]
    reviewed = dict(load_gold(lesson["gold"]).queries.select("query_id", "reviewed").iter_rows())
    assert reviewed["q3"] == datetime.now(timezone.utc).date().isoformat()
    assert [q for q, day in reviewed.items() if day] == ["q3"]


async def test_a_decision_whose_save_fails_after_the_queue_closed_can_be_judged_again(lesson, settled, monkeypatch):
    """The review keeps its judging queue from one J to the next. A decision still being saved when J closed,
    whose save then failed, must leave the queue's in-flight set: else the chunk counts as done, nothing was
    written, and the queue skips it at every later opening."""
    import threading

    from ragdiff.app.session import LabelSession

    release = threading.Event()

    def failing_write(self, *args):
        assert release.wait(30)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(LabelSession, "_mark", failing_write)
    async with queue_in_review(lesson, settled) as (app, pilot, screen):
        queue = screen.queue
        qid, entry = queue.entry_at(screen.position)
        await pilot.press("x", "escape")  # not type_fast: it waits for the label writes, held here
        assert app.screen is app.screen_stack[0] and (qid, entry.chunk_id) in queue.in_flight  # still saving
        release.set()
        await settled(pilot)
        assert not queue.is_done(qid, entry.chunk_id)
        await type_fast(pilot, "J")
        assert pilot.app.screen.queue is queue and pilot.app.screen.queue.entry_at(pilot.app.screen.position) == (qid, entry)


async def test_the_queue_takes_each_outcome_once_whichever_screen_is_up(lesson, settled, monkeypatch):
    """The review's on_mark_done and the judging screen's mark_done both applied a saved Change to the one
    queue when J was up (twice per decision); now the judgment store applies it once, and the queue hears it
    once, whichever screen is up."""
    from ragdiff.core.labels.store import Judgments
    from ragdiff.core.judge.pool import JudgeQueue

    applied, heard = [], []
    real_apply, real_changed = Judgments.apply, JudgeQueue.changed
    monkeypatch.setattr(Judgments, "apply", lambda self, changes: (
        applied.extend((c.query_id, c.chunk_id) for c in changes), real_apply(self, changes))[1])
    monkeypatch.setattr(JudgeQueue, "changed", lambda self, changes: (
        heard.extend((c.query_id, c.chunk_id) for c in changes), real_changed(self, changes))[1])
    async with queue_in_review(lesson, settled) as (app, pilot, screen):
        applied.clear(), heard.clear()
        qid, entry = screen.queue.entry_at(screen.position)
        await type_fast(pilot, "x")
        await settled(pilot)
        assert applied == heard == [(qid, entry.chunk_id)]
        await type_fast(pilot, "escape", "u")  # on the review screen: the undo reaches the queue, once
        await settled(pilot)
        assert applied == heard == [(qid, entry.chunk_id)] * 2 and not screen.queue.is_done(qid, entry.chunk_id)
    app = judge_app_of(lesson)
    async with app.run_test(size=SIZE) as pilot:  # `ragdiff judge` on its own: once too
        screen = await opened(pilot)
        applied.clear(), heard.clear()
        qid, entry = screen.queue.entry_at(screen.position)
        await type_fast(pilot, "x")
        await settled(pilot)
        assert applied == heard == [(qid, entry.chunk_id)]


def judge_app_of(lesson) -> JudgeApp:
    return JudgeApp(JudgeInputs(runs=[lesson["a"], lesson["b"]], gold=lesson["gold"], corpus=lesson["corpus"],
                                reviewer="tester"))


async def test_a_decision_that_changes_nothing_is_one_complete_journal_line(lesson, settled):
    """x on a chunk already judged not relevant (revisited with n) saves nothing: it is journaled as what it is,
    one mark line with noop: true and no "saved" after it (nothing was saved), and every reader takes it as
    complete — no recovery note at the next start, `labels log` says no change, `labels stale` counts the look,
    and the queue does not keep it in flight."""
    from datetime import datetime, timezone

    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.labels import LabelFile
    from ragdiff.core.judge.provenance import NO_CHANGE, history
    from ragdiff.core.judge.stale import CorpusCheck, stale_queries

    app = judge_app_of(lesson)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        queue = screen.queue
        assert screen.position.query == 0 and queue.label_of("q1", "policy-9")[0] == "not_relevant"
        steps = [e.chunk_id for e in queue.entries["q1"]].index("policy-9") - screen.position.entry
        await type_fast(pilot, *["n"] * steps, "x")
        assert not queue.in_flight and queue.is_judged("q1", "policy-9")
        assert "already not relevant" in str(screen.query_one("#judge-status").render())
    records = journal(lesson["gold"])
    assert [r["type"] for r in records] == ["mark"] and records[0]["noop"] is True
    assert (records[0]["query"], records[0]["chunk"], records[0]["label"]) == ("q1", "policy-9", "not_relevant")
    assert LabelFile(lesson["gold"]).recovery_notes == []
    assert [e.status for e in history(lesson["gold"])] == [NO_CHANGE]
    today = datetime.now(timezone.utc).date()
    stale = stale_queries(load_gold(lesson["gold"]), history(lesson["gold"]), today, 30, CorpusCheck(None, None, None))
    assert "q1" not in {q.query_id for q in stale} and {"q2", "q3"} <= {q.query_id for q in stale}


async def test_a_decision_saved_under_help_shows_when_help_closes(lesson, settled):
    """x then ? in the queue inside the review: the save came back while ? was up, and the review handed it to
    the screen on top (help) only — the queue's screen still said 'saving …' when ? closed."""
    async with queue_in_review(lesson, settled) as (app, pilot, screen):
        qid, entry = screen.queue.entry_at(screen.position)
        await type_fast(pilot, "x", "question_mark")
        await settled(pilot)
        await type_fast(pilot, "escape")
        assert app.screen is screen
        said = str(screen.query_one("#judge-status").render())
        assert "saved to gold.yaml" in said and "saving" not in said, said
