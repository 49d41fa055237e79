"""`ragdiff labels init GOLD --from LOG` and `labels add GOLD --from LOG` (issue 31): a label file from real
traffic, over a corpus of logs in tests/data/logs (a CSV with a query, a conversation and a status column, a
JSONL of tickets, a plain text search log with typos and repeats)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from ragdiff.cli.main import main
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.io.runs import load_run

LOGS = Path(__file__).parent / "data" / "logs"


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _entries(path: Path) -> list[dict]:
    """The file as plain strings (every scalar a string, as ragdiff reads ids)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)["queries"]


def _log_lines(log: Path) -> int:
    """Queries in the log, blank ones left out: its non-blank lines (a CSV: rows with a query)."""
    lines = log.read_text(encoding="utf-8").split("\n")
    if log.suffix == ".csv":
        import csv

        return sum(1 for row in csv.DictReader(lines) if row["query"].strip())
    return sum(1 for line in lines if line.strip())


@pytest.mark.parametrize("name", ["chat.csv", "tickets.jsonl", "search.txt"])
def test_init_makes_a_file_eval_and_judge_read_whose_counts_add_up(tmp_path, capsys, name):
    log = LOGS / name
    gold = tmp_path / "gold.yaml"
    code, out, err = _run(capsys, "labels", "init", gold, "--from", log)
    assert code == 0, err
    entries = _entries(gold)
    assert sum(int(e["count"]) for e in entries) == _log_lines(log)
    for e in entries:  # a variant's lines are inside its group's count
        assert sum(int(c) for c in e.get("variants", {}).values()) < int(e["count"])
        assert e["source"] == name
    loaded = load_gold(gold)
    assert loaded.queries.get_column("query_id").to_list() == [e["id"] for e in entries]
    assert loaded.judgments.height == 0  # all unjudged
    # eval scores a run keyed by the new ids; judge's loader and writer take the file
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"query_id": e["id"], "results": ["c1", "c2"]}) + "\n" for e in entries))
    assert _run(capsys, "eval", run, "--gold", gold)[0] == 0
    queue = JudgeQueue.build([load_run(run)], loaded, 10)
    assert queue is not None
    assert LabelFile(gold).queries == [e["id"] for e in entries]


def test_the_csv_log_folds_groups_and_keeps_follow_ups_and_failures(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    code, out, _ = _run(capsys, "labels", "init", gold, "--from", LOGS / "chat.csv")
    assert code == 0
    by_text = {e["text"]: e for e in _entries(gold)}
    reset = by_text["How do I reset my password?"]  # exact duplicate (case, punctuation) + a rewording
    assert reset["count"] == "3" and reset["variants"] == {"reset password how": "1"}
    assert reset["regression"] == "true" and "failed" in reset["tags"]  # one of its lines failed
    tz = by_text["timezone aware datetime"]  # the most frequent spelling is kept, the typo is a variant
    assert tz["count"] == "3" and tz["variants"] == {"timzone aware datetime": "1"}
    # one slip in a short word or a digit is another query, not a typo
    assert {"ssl connection error", "sql connection error", "error 404", "error 405"} <= set(by_text)
    stderr_too = by_text["and stderr too?"]
    assert stderr_too["context"] == "subprocess run capture output" and "follow-up" in stderr_too["tags"]
    gzip = by_text["and for gzip?"]  # the same follow-up after the same query, twice
    assert gzip["context"] == "list files in zip archive" and gzip["count"] == "2"
    markup = "<b>bold</b> & {{template}} # not a comment, [red]markup[/red]"
    assert markup in by_text  # kept literally, quoted so YAML reads it back
    assert "near-duplicate groups (2" in out and "'reset password how' (1)" in out and "'timzone aware datetime' (1)" in out
    assert "column 'status'" in out and "column 'conversation_id'" in out


def test_the_text_log_keeps_control_characters_and_yaml_words_literally(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    assert _run(capsys, "labels", "init", gold, "--from", LOGS / "search.txt")[0] == 0
    texts = load_gold(gold).queries.get_column("text").to_list()
    for literal in ("no", "007", "null", "- dash", '"quoted"', "tab\there", "bell\x07char", "esc \x1b[31mred\x1b[0m"):
        assert literal in texts
    by_text = {e["text"]: e for e in _entries(gold)}
    assert by_text["subprocess run capture output"]["variants"] == {"subproces run capture output": "1"}
    assert by_text["TLS verify hostname certificate"]["variants"] == {"verify TLS hostname certificates": "1"}


def test_the_same_seed_gives_the_same_bytes(tmp_path, capsys):
    log = tmp_path / "big.txt"
    lines = [f"common question {i}" for i in range(5) for _ in range(200)] + [f"rare thing number {i}" for i in range(300)]
    log.write_text("\n".join(lines) + "\n")
    made = []
    for n, seed in ((1, 7), (2, 7), (3, 8)):
        gold = tmp_path / f"g{n}.yaml"
        assert _run(capsys, "labels", "init", gold, "--from", log, "--sample", 20, "--seed", seed)[0] == 0
        made.append(gold.read_bytes())
    assert made[0] == made[1]
    assert made[0] != made[2]


def test_a_sample_spreads_over_the_frequency_bands_and_keeps_every_failure(tmp_path, capsys):
    log = tmp_path / "log.csv"
    rows = ["query,failed"]
    rows += [f"popular question {chr(97 + i)},false" for i in range(4) for _ in range(500)]  # the head: 2000 lines
    rows += [f"once asked {i} thing,false" for i in range(400)]  # the tail: 400 queries asked once
    rows += ["broken search everyone hits,true"] * 3
    log.write_text("\n".join(rows) + "\n")
    gold = tmp_path / "gold.yaml"
    code, out, _ = _run(capsys, "labels", "init", gold, "--from", log, "--sample", 10, "--seed", 1)
    assert code == 0
    entries = _entries(gold)
    counts = [int(e["count"]) for e in entries]
    assert len(entries) == 10
    assert any(c == 500 for c in counts) and any(c == 1 for c in counts)  # head and tail both there
    assert [e["text"] for e in entries if e.get("regression") == "true"] == ["broken search everyone hits"]
    assert "sampled 10 with seed 1" in out


def test_bad_logs_are_one_message_each_and_write_nothing(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    cases = {
        "binary.log": (b"\x00\x01\x02query\n", "not a text file"),
        "empty.txt": (b"\n  \n", "the log is empty"),
        "latin1.txt": ("caf\u00e9\n".encode("latin-1"), "not UTF-8"),
        "bad.jsonl": (b'{"query": "a"}\n{"query": \n', "invalid JSON"),
    }
    for name, (data, words) in cases.items():
        log = tmp_path / name
        log.write_bytes(data)
        code, out, err = _run(capsys, "labels", "init", gold, "--from", log)
        assert code == 2 and words in err and err.count("\n") == 1 and name in err, (name, err)
        assert not gold.exists()
    code, _, err = _run(capsys, "labels", "init", gold, "--from", LOGS / "chat.csv", "--column", "question")
    assert code == 2 and "no column 'question'" in err and "'timestamp', 'conversation_id', 'query', 'status'" in err
    assert not gold.exists()
    both = tmp_path / "two.csv"
    both.write_text("title,body\nhello there,some long body text\nmore words,and more text here\n")
    code, _, err = _run(capsys, "labels", "init", gold, "--from", both)
    assert code == 2 and "--column" in err and "'title', 'body'" in err
    assert not gold.exists()
    assert list(tmp_path.glob(".gold.yaml*")) == []  # no temporary file left behind


def test_only_duplicates_and_a_sample_larger_than_the_log_are_said(tmp_path, capsys):
    log = tmp_path / "same.txt"
    log.write_text("refund window\nRefund window!\nrefund  window\n")
    gold = tmp_path / "gold.yaml"
    code, out, _ = _run(capsys, "labels", "init", gold, "--from", log, "--sample", 50)
    assert code == 0
    assert "every line is the same query" in out and "--sample 50 is not fewer than the 1 queries there are: all taken" in out
    [entry] = _entries(gold)
    assert entry["text"] == "refund window" and entry["count"] == "3"


def test_init_never_overwrites_and_add_from_appends_only_what_is_new(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    shutil.copy(Path(__file__).parent.parent / "sample_runs" / "gold.yaml", gold)
    before = gold.read_bytes()
    code, _, err = _run(capsys, "labels", "init", gold, "--from", LOGS / "search.txt")
    assert code == 2 and "already exists" in err and "labels add" in err
    assert gold.read_bytes() == before
    log = tmp_path / "log.txt"
    log.write_text("JSON pretty print indent\nregex named group\nsomething nobody asked before\n")
    code, out, err = _run(capsys, "labels", "add", gold, "--from", log, "--reviewer", "ann")
    assert code == 0, err
    assert "2 already in" in out and "1 unjudged query added" in out
    after = gold.read_bytes()
    assert after.startswith(before)  # appended, nothing else touched
    loaded = load_gold(gold)
    assert loaded.queries.height == 73 and loaded.queries["text"][-1] == "something nobody asked before"
    code, _, err = _run(capsys, "labels", "add", gold, "--from", log)
    assert code == 2 and "nothing to add" in err
    assert gold.read_bytes() == after
    assert _run(capsys, "labels", "undo", gold, "--reviewer", "ann")[0] == 0
    assert gold.read_bytes() == before


def test_add_from_into_an_empty_file(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text("")
    assert _run(capsys, "labels", "add", gold, "--from", LOGS / "tickets.jsonl")[0] == 0
    entries = _entries(gold)
    assert [e["text"] for e in entries] == ["uuid4 string", "secure token for password reset link",
                                           "read ini config file", "decimal round half up 2 places"]
    assert entries[1]["regression"] == "true" and entries[2]["variants"] == {"read ini config files": "1"}
