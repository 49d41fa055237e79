"""One vocabulary of judgments (ragdiff.core.vocab): every consumer spells a kind the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiff.core import vocab
from ragdiff.core.labels import Change, Judgment, LabelFile, Mark

ROOT = Path(__file__).parent.parent / "ragdiff"


def test_every_kind_has_a_distinct_word_and_glyph():
    kinds = list(vocab.KINDS.values())
    assert [k.name for k in kinds] == ["gold", "evidence", "not_relevant", "drafted", "unjudged"]
    assert len({k.word for k in kinds}) == len(kinds)
    assert len({k.glyph for k in kinds}) == len(kinds)
    assert vocab.word("not_relevant") == "not relevant"
    assert vocab.word("gold", 3) == "gold ★3" and vocab.word(None) == "unjudged"
    assert vocab.glyph("gold", 3) == "★3" and vocab.glyph("gold", 12) == "★" and vocab.glyph("drafted", 2) == "☆2"
    assert vocab.glyph("gold", -1) == "?"  # a negative qrels grade is unjudged, as in trec_eval


def test_legend_lists_every_glyph():
    glyphs = [g for g, _ in vocab.legend()]
    assert glyphs == ["★n", "◆", "·", "☆n", "?"]


@pytest.mark.parametrize("word", ['"not relevant"', "'not relevant'", '"unlabelled"'])
def test_the_words_live_only_in_vocab(word):
    """No module but vocab spells a kind's word as a literal (the four copies issue 15 folded)."""
    hits = [p for p in ROOT.rglob("*.py") if word in p.read_text(encoding="utf-8") and p.name != "vocab.py"]
    assert hits == []


def test_a_mark_returns_its_change(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: [a]\n    not_relevant: [b]\n", encoding="utf-8")
    lf = LabelFile(path, reviewer="ana")
    change = lf.apply(Mark("q1", "b", "gold", grade=3))
    assert change == Change("q1", "b", Judgment("not_relevant", 0), Judgment("gold", 3), change.message, True)
    assert "was not relevant" in change.message
    same = lf.apply(Mark("q1", "a", "gold"))
    assert not same.saved and same.before == same.after == Judgment("gold", 1)
    back = lf.undo()
    assert (back.before, back.after, back.saved) == (Judgment("gold", 3), Judgment("not_relevant", 0), True)
    assert back.message.startswith("undid: ")
    assert lf.apply(Mark("q1", "a", vocab.UNJUDGED)).after == Judgment("unjudged", None)


def test_a_negative_grade_reads_as_unjudged_in_words_as_in_its_glyph():
    # a qrels line `q 0 c -1` is scored as unjudged (trec_eval); its word must not say "not relevant" beside "?"
    for level in ("not_relevant", "gold"):
        assert vocab.glyph(level, -1) == vocab.KINDS["unjudged"].glyph
        assert vocab.word(level, -1).startswith(vocab.KINDS["unjudged"].word)
    assert vocab.word("not_relevant", 0) == "not relevant"
