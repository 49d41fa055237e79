"""Text from files reaches the terminal literally: markup is data, escape and control characters show as
placeholders, wide and right-to-left text does not break a command."""

import json

import pytest

from ragdiff.cli.main import main
from ragdiff.core.visible import visible

TEXTS = ["[bold]refund[/] window", "esc \x1b[31mred\x1b[0m here", "rtl \u202eevil\u202c text", "cjk 日本語の検索 wide",
         "combining e\u0301 and emoji 🎉", "[link=http://x]click[/link]", "ctrl \x07bell \x08bs \x9bcsi"]


@pytest.fixture
def hostile(tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n" + "".join(
        f"  - id: \"q{i}\\e[2J\"\n    text: {json.dumps(t)}\n    gold: [c{i}]\n" for i, t in enumerate(TEXTS)))
    run_a = tmp_path / "[red]A\x1b[1m.jsonl"
    run_a.write_text("".join(json.dumps({"query_id": f"q{i}\x1b[2J", "results": [f"c{i}", "[bold]x"]}) + "\n"
                             for i in range(len(TEXTS))))
    run_b = tmp_path / "B.jsonl"
    run_b.write_text("".join(json.dumps({"query_id": f"q{i}\x1b[2J", "results": ["[bold]x", "\x1b[2Jclear"]}) + "\n"
                             for i in range(len(TEXTS))))
    return gold, run_a, run_b


def assert_literal(out: str):
    assert "\x1b" not in out and "\x07" not in out and "\x08" not in out and "\x9b" not in out
    assert "\u202e" not in out


def test_diff_report(hostile, capsys):
    gold, run_a, run_b = hostile
    assert main(["diff", str(run_a), str(run_b), "--gold", str(gold), "--flips", "200"]) == 0
    out = capsys.readouterr().out
    assert_literal(out)
    assert "[bold]refund[/] window" in out and "[link=http://x]click[/link]" in out
    assert "esc ␛[31mred␛[0m here" in out and "rtl <U+202E>evil<U+202C> text" in out
    assert "ctrl ␇bell ␈bs \\x9bcsi" in out and "cjk 日本語の検索 wide" in out
    assert "[red]A␛[1m" in out and "q0␛[2J" in out


def test_eval_and_history(hostile, tmp_path, capsys):
    gold, run_a, _ = hostile
    log = tmp_path / "history.csv"
    assert main(["eval", str(run_a), "--gold", str(gold), "--per-query", "--log", str(log)]) == 0
    assert main(["history", str(log)]) == 0
    out = capsys.readouterr().out
    assert_literal(out)
    assert "[red]A␛[1m" in out and "q3␛[2J" in out


def test_json_keeps_the_data_exact(hostile, capsys):
    gold, run_a, run_b = hostile
    assert main(["diff", str(run_a), str(run_b), "--gold", str(gold), "--json", "--flips", "200"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "q0\x1b[2J" in doc["flips"]["hit_to_miss"]


def test_visible_is_one_to_one_for_plain_text():
    assert visible("plain text, [bold] and 日本") == "plain text, [bold] and 日本"
    assert visible("a\tb\nc") == "a␉b␊c" and visible("a\tb\nc", multiline=True) == "a    b\nc"


def test_label_commands_print_ids_and_texts_literally(hostile, capsys):
    """labels add / undo / stale / log echo query texts and ids from the file and the command line: an escape
    sequence in them is shown, never sent to the terminal."""
    from ragdiff.core.labels import LabelFile, Mark

    gold, _a, _b = hostile
    assert main(["labels", "add", str(gold), "more \x1b[31mred", "--id", "new\x1b[2J", "--reviewer", "me"]) == 0
    LabelFile(gold, reviewer="me").apply(Mark("q1\x1b[2J", "c\x1b[31mx", "gold"))
    assert main(["labels", "undo", str(gold), "--reviewer", "me"]) == 0
    assert main(["labels", "stale", str(gold)]) == 0
    assert main(["labels", "log", str(gold)]) == 0
    out = capsys.readouterr().out
    assert_literal(out)
    assert "␛[31mred" in out and "c␛[31mx" in out


def test_history_shows_the_hashes_it_reads_literally(hostile, tmp_path, capsys):
    """The history's hash columns are text from the file too (a hand-edited or hostile history)."""
    gold, run_a, _ = hostile
    log = tmp_path / "history.csv"
    assert main(["eval", str(run_a), "--gold", str(gold), "--log", str(log)]) == 0
    text = log.read_text()
    from ragdiff.core.report.history import load_history

    row = load_history(log).rows[0]
    log.write_text(text.replace(row.get("run_sha256"), "\x1b[2J\x1b[31mxx").replace(row.get("gold_sha256"), "\x07\x1b]0;t"))
    capsys.readouterr()
    assert main(["history", str(log)]) == 0
    assert_literal(capsys.readouterr().out)


def test_zero_width_characters_that_hide_are_visible():
    """Two ids that differ by a zero-width no-break space or word joiner must not look the same."""
    for code in (0xFEFF, 0x2060, 0x061C):
        assert visible(f"a{chr(code)}b") == f"a<U+{code:04X}>b"
