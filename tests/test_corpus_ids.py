"""A corpus line's own id (`id`, else `_id`) names its chunk: the quick search for the id may not take an "id" nested
in a field or written inside a text, nor read `1.5` as 1; an id twice is bad input naming both lines."""

from __future__ import annotations

import json

import pytest

from ragdiff.core.io.corpus import Corpus
from ragdiff.core.errors import InputError


def _corpus(tmp_path, lines: list[str]) -> Corpus:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return Corpus(path)


def test_each_line_is_found_by_its_own_id(tmp_path):
    records = [{"metadata": {"id": "other"}, "_id": "a", "text": "A"},
               {"text": 'say "id": "7" now', "id": "b"},
               {"valid": True, "id": "c", "text": "C"},
               {"id": 4, "text": "four"},
               {"_id": "e", "text": "E"}]
    corpus = _corpus(tmp_path, [json.dumps(r) for r in records])
    assert sorted(corpus.index()) == ["4", "a", "b", "c", "e"]
    assert [corpus.get(k).text for k in ("a", "b", "c", "4", "e")] == ["A", 'say "id": "7" now', "C", "four", "E"]


@pytest.mark.parametrize("lines,line,words", [
    (['{"id": 1.5, "text": "x"}'], 1, "the id 1.5 is not a string or a whole number"),
    (['{"id": 2e3, "text": "x"}'], 1, "is not a string or a whole number"),
    (['{"id": "a", "text": "x"}', '{"id": "b", "text": "y"}', '{"id": "a", "text": "z"}'], 3,
     "chunk id 'a' is on line 1 and again here"),
])
def test_an_id_that_is_no_id_or_is_there_twice_is_bad_input(tmp_path, lines, line, words):
    with pytest.raises(InputError) as err:
        _corpus(tmp_path, lines).index()
    assert err.value.line == line and words in str(err.value)
