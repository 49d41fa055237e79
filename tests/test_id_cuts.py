"""Every chunk id readable at every width: an id too wide for its column keeps its start and its distinguishing
end (one rule, `ragdiff.app.text.IdCuts`, used by every list), no two different ids on screen look the same,
and none shows fewer than 12 of its characters."""

from __future__ import annotations

import json
import shutil

from rich.cells import cell_len

from ragdiff.app.text import MIN_ID, IdCuts, clean
from ragdiff.app.widgets.line_list import LineList
from ragdiff.app.widgets.pool_list import PoolList
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList

from conftest import screen_lines, settle

RUNS = ("bm25.jsonl", "dense.jsonl", "rrf.jsonl")
WIDTHS = range(80, 161)
SHOWN = 12  # characters of an id a cut keeps at the least


def run_ids(sample_runs) -> dict[str, list[str]]:
    """query -> every chunk id any sample run returned for it (what one query's screens can show together)."""
    ids: dict[str, list[str]] = {}
    for name in RUNS:
        for line in (sample_runs / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            ids.setdefault(record["query_id"], []).extend(
                r["id"] if isinstance(r, dict) else r for r in record["results"])
    return ids


def reads_as(shown: str, chunk: str) -> bool:
    """`shown` is `chunk` whole, or its start … (a middle part …) its end."""
    parts = shown.split("…")
    if len(parts) == 1:
        return shown == chunk
    if not (chunk.startswith(parts[0]) and chunk.endswith(parts[-1])):
        return False
    inner = chunk[len(parts[0]):len(chunk) - len(parts[-1])]
    return all(part in inner for part in parts[1:-1]) and len(inner) > sum(map(len, parts[1:-1]))


def test_cuts_tell_every_id_of_a_query_apart_at_every_column_width(sample_runs):
    """The rule alone, on the sample runs' ids (the three runs' top 50 of each query together), at every
    column width from the narrowest a list gives an id to wider than the widest id."""
    for query, ids in run_ids(sample_runs).items():
        cuts = IdCuts(ids)
        distinct = list(dict.fromkeys(ids))
        for width in range(MIN_ID, cuts.widest + 2):
            shown = {chunk: cuts.show(chunk, width) for chunk in distinct}
            assert len(set(shown.values())) == len(distinct), (query, width)
            for chunk, look in shown.items():
                assert reads_as(look, chunk) and cell_len(look) <= width, (query, width, chunk, look)
                if look != chunk:
                    assert len(look.replace("…", "")) >= SHOWN and cell_len(look) == width, (chunk, look)
                    # read as this id only, or else every other id it could be read as (one that holds it at
                    # its start and its end) is shown in a form read as that id alone
                    for other in distinct:
                        if other != chunk and cell_len(other) > width and reads_as(look, other):
                            assert [c for c in distinct if cell_len(c) > width and reads_as(shown[other], c)] \
                                == [other], (query, width, look, shown[other])


def test_the_end_that_tells_ids_apart_is_kept():
    """The judging queue's pool at 80x24 showed `subprocess.Pop…` for both Popen#0 and Popen#1 and
    `json.JSONDecode…` for three chunks: the end that tells them apart was the part cut."""
    ids = ["subprocess.Popen#0", "subprocess.Popen#1", "json.JSONDecodeError#0", "json.JSONDecoder#0",
           "json.JSONDecoder#1", "x" * 40 + "a" + "y" * 40, "x" * 40 + "b" + "y" * 40]
    cuts = IdCuts(ids)
    assert cuts.show("subprocess.Popen#1", 16) == "subproce…Popen#1"
    assert [cuts.show(i, 14) for i in ids[:5]] == ["subproc…open#0", "subproc…open#1", "json.JS…rror#0",
                                                   "json.JS…oder#0", "json.JS…oder#1"]
    # alike at both ends: the part where they differ is shown between two …
    a, b = cuts.show(ids[5], 16), cuts.show(ids[6], 16)
    assert a.count("…") == 2 and a.replace("a", "b") == b
    assert cuts.show("short", 14, pad=True) == "short" + " " * 9


def visible_ids(widget: LineList) -> list[str]:
    """The ids of the lines `widget` shows now, top to bottom (None where a line shows no id)."""
    top, count = int(widget.scroll_offset.y), widget.line_count()
    out = []
    for index in range(top, min(count, top + widget.scrollable_content_region.height)):
        if isinstance(widget, RankedList):
            item = widget.items[index]
            out.append(item.row.chunk_id if item.kind in ("row", "missed") else None)
        elif isinstance(widget, PoolList):
            out.append(widget.queue.entries[widget.query_id][index].chunk_id)
        else:
            out.append(widget.ids[index])
    return out


def check_screen(app, where: str) -> int:
    """Every id on screen, read off the screen's characters: shown whole or cut to at least 12 of its
    characters, and no two different ids shown alike anywhere on the screen. The number of ids checked."""
    lines = screen_lines(app)
    looks: dict[str, set[str]] = {}
    for widget in app.screen.query(LineList):
        if not widget.display or not widget.region.width:
            continue
        region = widget.scrollable_content_region
        for y, chunk in enumerate(visible_ids(widget)):
            if chunk is None:
                continue
            row = lines[region.y + y][region.x:region.right]
            want = clean(chunk)
            found = [token for token in row.split() if reads_as(token, want)]
            assert found, (where, chunk, row)
            look = found[0]
            if look != want:
                assert len(look.replace("…", "")) >= SHOWN, (where, chunk, look)
            looks.setdefault(look, set()).add(chunk)
    clashes = {look: ids for look, ids in looks.items() if len(ids) > 1}
    assert not clashes, (where, clashes)
    return sum(len(ids) for ids in looks.values())


async def sweep(pilot, height: int, where) -> int:
    """check_screen at every width of WIDTHS, the next query (]) at each; the ids checked."""
    checked = 0
    for width in WIDTHS:
        await pilot.resize_terminal(width, height)
        await pilot.pause()
        checked += check_screen(pilot.app, (width, where()))
        await pilot.press("right_square_bracket")
    return checked


def copy_runs(sample_runs, folder):
    for name in (*RUNS, "gold.yaml", "corpus.jsonl"):
        shutil.copy2(sample_runs / name, folder / name)
    return folder


async def test_review_ids_at_every_width_from_80_to_160(sample_runs, tmp_path):
    """The review at every width from 80 to 160 columns (30 rows), a different query at each: the two run
    lists and the query list."""
    from ragdiff.app.app import ReviewApp, ReviewInputs
    from ragdiff.core.metrics.specs import EvalSettings

    folder = copy_runs(sample_runs, tmp_path)
    app = ReviewApp(ReviewInputs(run_a=folder / "bm25.jsonl", run_b=folder / "dense.jsonl", gold=folder / "gold.yaml",
                                 settings=EvalSettings(k=5, depth=50), corpus=folder / "corpus.jsonl"))
    async with app.run_test(size=(WIDTHS[0], 30)) as pilot:
        await settle(pilot)
        checked = await sweep(pilot, 30, lambda: app.query_one(QueryList).selected)
        assert checked > 20 * len(WIDTHS)  # ids were on screen to check


async def test_judge_ids_at_every_width_from_80_to_160(sample_runs, tmp_path):
    """`ragdiff judge` on the three sample runs (the fused run brings chunks from ranks 11-50: the biggest
    pools) at every width from 80 to 160 columns (24 rows), a different query at each."""
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    from test_judge import opened

    folder = copy_runs(sample_runs, tmp_path)
    app = JudgeApp(JudgeInputs(runs=[folder / name for name in RUNS], gold=folder / "gold.yaml",
                               corpus=folder / "corpus.jsonl", reviewer="tester"))
    async with app.run_test(size=(WIDTHS[0], 24)) as pilot:
        await opened(pilot)
        checked = await sweep(pilot, 24, lambda: app.screen.query_one(PoolList).query_id)
        assert checked > 10 * len(WIDTHS)
