"""The judging queue's own help and legend, its key bar, and a status line that keeps what matters."""

from __future__ import annotations

from rich.text import Text

from ragdiff.app.text import cut_text_middle
from ragdiff.app.widgets.help_screen import HelpScreen, judge_legend_rows, legend_rows
from ragdiff.app.widgets.key_bar import KeyBar
from ragdiff.core import vocab

from conftest import screen_lines, settle
from test_app_keys import type_fast
from test_judge import judge_app_of, opened


async def test_the_judges_help_names_keys_as_typed_and_has_the_judges_legend(lesson):
    """`?` in the queue showed `exclamation_mark` for `!` (the binding's key_display was ignored) and the
    review's legend (the k cut, the which-k plot), none of it on the queue's screen."""
    app = judge_app_of(lesson)
    async with app.run_test(size=(100, 70)) as pilot:  # keys above the legend, every line whole
        await opened(pilot)
        await type_fast(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(screen_lines(app))
        assert "exclamation_mark" not in shown and "question_mark" not in shown
        rows = [" ".join(line.split("│")[1].split()) for line in screen_lines(app) if line.count("│") >= 2]
        assert any(row.startswith("! flag for a second opinion") for row in rows), rows
        assert any(row.startswith("space PgDn the chunk text one page down") for row in rows), rows
        for mark, _ in legend_rows()[1][1] + legend_rows()[3][1]:  # the review's run-list and which-k marks
            assert mark not in shown, mark
        for kind in vocab.KINDS.values():  # the judgment marks and words, from vocab
            assert kind.meaning in shown, kind.name
        assert "flagged for a second opinion" in shown and "found by searching the corpus" in shown


def test_the_judges_legend_is_the_judgment_vocabulary_and_the_pools_marks():
    titles = [title for title, _ in judge_legend_rows()]
    assert titles[0] == "a chunk's label" and "in the pool" in titles
    assert judge_legend_rows()[0][1] == vocab.legend()


async def test_the_key_bar_says_1_3_for_the_grade_keys(lesson):
    app = judge_app_of(lesson)
    async with app.run_test(size=(140, 40)) as pilot:
        await opened(pilot)
        bar = str(app.screen.query_one(KeyBar).render())
        assert " 1-3 gold grade " in bar and "0-x" not in bar, bar


def test_a_status_line_too_long_loses_its_middle():
    message = ("q01: json.dumps#0 is now gold ★3; saved to /a/rather/long/folder/name/that/goes/on/and/on/gold.yaml")
    for width in range(20, len(message)):
        shown = cut_text_middle(Text(message), width).plain
        assert len(shown) == width and shown.startswith("q01: ") and shown.endswith("on/and/on/gold.yaml"[-(width // 2):])
        assert "…" in shown
    assert cut_text_middle(Text(message), len(message)).plain == message


async def test_the_judges_status_line_keeps_the_file_name_at_80_columns(lesson):
    """At 80 columns the queue's status lost its end: "… saved to" and no file."""
    app = judge_app_of(lesson)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        message = ("policy-31 for q1: gold ★3 · saved to /a/rather/long/folder/name/that/goes/on/gold.yaml "
                   "(journal beside it)")
        screen.set_status(message)
        await pilot.pause()
        line = screen_lines(app)[screen.query_one("#judge-status").region.y]
        assert line.rstrip().endswith("gold.yaml (journal beside it)") and line.lstrip().startswith("policy-31")


async def test_the_queue_says_the_pool_is_done_until_the_next_key(lesson):
    """The last decision's save came back after the end-of-pool message and replaced it at once: nothing said
    the pool was done. Now it is said with the save, until the next key (here u, which undoes the last one)."""
    app = judge_app_of(lesson)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await opened(pilot)
        judged, total = screen.queue.progress()
        assert total > judged
        await type_fast(pilot, *["x"] * (total - judged))
        await settle(pilot)
        said = screen.query_one("#judge-status").text.plain
        assert screen.queue.progress() == (total, total)
        assert "saved to gold.yaml" in said and f"every pooled chunk is judged ({total}/{total})" in said, said
        await type_fast(pilot, "u")
        await settle(pilot)
        said = screen.query_one("#judge-status").text.plain
        assert "every pooled chunk is judged" not in said and said, said
