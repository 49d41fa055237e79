"""`--judged-only` (DESIGN: "bpref and --judged-only (drop unjudged chunks before scoring, condensed lists)") from
the command line: the numbers are trec_eval -J's (tests/test_pytrec_eval_property.py holds every metric to it);
here, that eval and diff say it, carry it in --json, and that a history is not mixed with condensed numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core.words import JUDGED_ONLY_WORDS

QRELS = "q1 0 rel 1\nq1 0 zero 0\nq2 0 rel2 2\n"
# q1: an unjudged chunk above the relevant one; q2: two unjudged chunks above it
RUN_A = "q1 Q0 new 1 3.0 a\nq1 Q0 rel 2 2.0 a\nq2 Q0 x 1 3.0 a\nq2 Q0 y 2 2.0 a\nq2 Q0 rel2 3 1.0 a\n"
RUN_B = "q1 Q0 rel 1 3.0 b\nq2 Q0 rel2 1 3.0 b\n"


def _files(tmp_path: Path) -> list[str]:
    for name, text in (("qrels.txt", QRELS), ("a.trec", RUN_A), ("b.trec", RUN_B)):
        (tmp_path / name).write_text(text)
    return [str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--gold", str(tmp_path / "qrels.txt")]


def test_eval_json_carries_the_setting_and_the_condensed_numbers(tmp_path, capsys):
    args = ["eval", *_files(tmp_path), "--metrics", "mrr,recall@1", "--json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--judged-only"]) == 0
    condensed = json.loads(capsys.readouterr().out)
    assert plain["settings"]["judged_only"] is False and condensed["settings"]["judged_only"] is True
    means = {doc: {r["name"]: r["metrics"] for r in d["runs"]} for doc, d in (("plain", plain), ("cond", condensed))}
    assert means["plain"]["a"] == {"mrr": pytest.approx((1 / 2 + 1 / 3) / 2, abs=1e-9), "recall@1": 0.0}
    assert means["cond"]["a"] == {"mrr": 1.0, "recall@1": 1.0}
    assert means["plain"]["b"] == means["cond"]["b"] == {"mrr": 1.0, "recall@1": 1.0}


def test_eval_and_diff_say_it_in_their_text(tmp_path, capsys):
    files = _files(tmp_path)
    for command in (["eval", *files], ["diff", *files], ["diff", *files, "--markdown"]):
        assert main([*command, "--judged-only"]) == 0, command
        assert JUDGED_ONLY_WORDS in capsys.readouterr().out.replace("\n", " "), command
        assert main(command) == 0
        assert "trec_eval -J" not in capsys.readouterr().out, command


def test_a_history_is_not_mixed_with_condensed_numbers(tmp_path, capsys):
    log = tmp_path / "history.csv"
    assert main(["eval", *_files(tmp_path), "--judged-only", "--log", str(log)]) == 2
    assert "--judged-only" in capsys.readouterr().err
    assert not log.exists()
