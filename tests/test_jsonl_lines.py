"""JSONL is split on \\n alone, by every reader of it, as the runs' and the journal's readers and JSON itself
have it: U+2028, U+2029 and U+0085 may stand raw inside a JSON string (json.dumps(..., ensure_ascii=False)
writes them so), and str.splitlines() breaks a line there. The drafts reader refused such a line ("invalid
JSON"), and a judge flag on such a chunk was written by add_flag and dropped by read_flags as a torn line."""

from __future__ import annotations

import json

import pytest

from ragdiff.core.judge.drafts import read_drafts
from ragdiff.core.judge.pool import add_flag, read_flags

ODD = ["\u2028", "\u2029", "\u0085"]


@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_drafts_with_a_line_separator_inside_a_string_read_whole(tmp_path, odd):
    path = tmp_path / "drafts.jsonl"
    records = [{"query_id": "q1", "chunk_id": f"a{odd}b", "grade": 2}, {"query_id": "q1", "chunk_id": "c", "grade": 0}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    drafts = read_drafts(path, ["q1"])
    assert [(d.query_id, d.chunk_id, d.grade, d.line) for d in drafts] == [("q1", f"a{odd}b", 2, 1), ("q1", "c", 0, 2)]


@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_a_flag_on_such_a_chunk_is_read_back(tmp_path, odd):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: q1\n    gold: [c1]\n")
    add_flag(gold, "q1", f"a{odd}b", "tester")
    add_flag(gold, "q1", "c1", "tester")
    assert read_flags(gold) == {("q1", f"a{odd}b"), ("q1", "c1")}
