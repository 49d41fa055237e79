"""The legend in `?` and in the README are the same table: every mark the screen draws, with its meaning."""

from __future__ import annotations

from pathlib import Path

from ragdiff.app.widgets.help_screen import legend_rows
from ragdiff.core import vocab

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_has_every_legend_row():
    text = README.read_text(encoding="utf-8")
    for title, rows in legend_rows():
        assert f"| **{title}** | |" in text, title
        for mark, meaning in rows:
            assert f"| `{mark}` | {meaning} |" in text, (mark, meaning)


def test_legend_covers_every_judgment_and_the_marks_the_issue_names():
    marks = " ".join(mark for _, rows in legend_rows() for mark, _ in rows)
    for kind in vocab.KINDS.values():
        assert kind.glyph in marks, kind.name
    for mark in ("★n", "◆", "·", "?", "B#n", "B —", "◉"):
        assert mark in marks, mark


def test_not_relevant_and_unjudged_are_told_apart_in_words():
    meanings = {mark: meaning for _, rows in legend_rows() for mark, meaning in rows}
    assert "dimmed" in meanings[vocab.KINDS[vocab.NOT_RELEVANT].glyph]
    assert "reversed" in meanings[vocab.KINDS[vocab.UNJUDGED].glyph]
