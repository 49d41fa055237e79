"""The legend and the keys in `?` and in docs/keys.md are the same: every mark the screen draws, with its
meaning, and every key the review and judge screens bind."""

from __future__ import annotations

import re
from pathlib import Path

from ragdiff.app.app import ReviewApp
from ragdiff.app.judge import JudgeScreen
from ragdiff.app.widgets.chunk_view import ChunkView
from ragdiff.app.widgets.help_screen import key_names, legend_rows
from ragdiff.app.widgets.line_list import LineList
from ragdiff.core import vocab

KEYS_DOC = Path(__file__).resolve().parent.parent / "docs" / "keys.md"


def section(title: str) -> str:
    """The text of docs/keys.md under the `## title` heading, up to the next one."""
    text = KEYS_DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\b.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, title
    return match.group(1)


def documented_keys(title: str) -> set[str]:
    """Every `key` written in the first column of the section's key table."""
    rows = [line.split("|")[1] for line in section(title).splitlines() if line.startswith("| ")]
    keys = {key for cell in rows for key in re.findall(r"`([^`]+)`", cell)}
    for cell in rows:  # a run of digits written `1`…`9`
        for first, last in re.findall(r"`(\d)`…`(\d)`", cell):
            keys |= {str(n) for n in range(int(first), int(last) + 1)}
    return keys


def test_keys_doc_has_every_legend_row():
    text = section("Legend")
    for title, rows in legend_rows():
        assert f"| **{title}** | |" in text, title
        for mark, meaning in rows:
            assert f"| `{mark}` | {meaning} |" in text, (mark, meaning)


def bound_keys(*binding_lists) -> set[str]:
    names = {"exclamation_mark": "!"}
    return {names.get(name, name) for bindings in binding_lists for b in bindings for name in key_names(b).split()}


def test_keys_doc_lists_every_review_key():
    documented = documented_keys("The review screen")
    missing = bound_keys(ReviewApp.BINDINGS, LineList.BINDINGS) - documented
    assert not missing, f"review keys not in docs/keys.md: {sorted(missing)}"
    # the chunk pane's keys are told in the sentence under the table
    assert all(f"`{k}`" in section("The review screen") for k in bound_keys(ChunkView.BINDINGS))


def test_keys_doc_lists_every_judge_key():
    documented = documented_keys("The judging queue")
    missing = bound_keys(JudgeScreen.BINDINGS) - documented
    assert not missing, f"judge keys not in docs/keys.md: {sorted(missing)}"


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
