"""Runs bigger than memory: `eval` of a TREC run read a slice of queries at a time gives the numbers the
in-memory path gives, to the last bit, and refuses bad lines with the same kind of message."""

from __future__ import annotations

import json
import random

import pytest

from ragdiff.cli.main import main
from ragdiff.core.io import trec_run
from ragdiff.core.metrics import partitioned
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.evaluate import evaluate
from ragdiff.core.metrics.specs import EvalSettings, Metric, default_metrics
from ragdiff.core.metrics.partitioned import evaluate_partitioned, too_big_for_memory
from ragdiff.core.io.runs import load_run


def write_case(folder, seed: int, queries: int = 60):
    """A TREC run with tied scores, queries the gold lacks, gold queries the run lacks, one unanswerable query,
    shuffled lines; and a YAML gold set with graded and not-relevant labels."""
    rng = random.Random(seed)
    gold_lines = ["queries:"]
    run_lines = []
    for q in range(queries):
        qid = f"q{q:03d}"
        pool = [f"d{rng.randint(0, 400)}" for _ in range(80)]
        pool = list(dict.fromkeys(pool))
        gold = {} if q == 7 else {c: rng.randint(1, 3) for c in rng.sample(pool, rng.randint(1, 4))}
        nonrel = [c for c in rng.sample(pool, 5) if c not in gold]
        text = "five" if q == 5 else f"query number {q}"  # a run keys query 5 by its text (one word)
        gold_lines += [f"  - id: {qid}", f"    text: {text}",
                       "    gold: {" + ", ".join(f"{c}: {g}" for c, g in gold.items()) + "}",
                       "    not_relevant: [" + ", ".join(nonrel) + "]"] + (["    retrieval: false"] if q == 9 else [])
        if q % 11 == 3:
            continue  # a gold query the run lacks: scores 0
        for rank, chunk in enumerate(rng.sample(pool, rng.randint(1, len(pool))), start=1):
            score = rng.choice([1.0, 0.5, 0.25]) if seed % 2 else round(rng.random() * 3, 2)
            run_lines.append(f"{text if q == 5 else qid} Q0 {chunk} {rank} {score} t")
    for q in range(3):
        run_lines.append(f"extra{q} Q0 d1 1 1.0 t")  # not in the gold set: left out and listed
    rng.shuffle(run_lines)
    (folder / "gold.yaml").write_text("\n".join(gold_lines) + "\n")
    (folder / "run.trec").write_text("\n".join(run_lines) + "\n")
    return folder / "run.trec", folder / "gold.yaml"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("rows_per_part", [37, 400, 10**6])
def test_parts_give_the_in_memory_numbers(tmp_path, seed, rows_per_part):
    run, gold_path = write_case(tmp_path, seed)
    gold = load_gold(gold_path)
    settings = EvalSettings(k=5, depth=20)
    metrics = default_metrics(5, 20) + [Metric("mrr", 3), Metric("precision", 10)]
    whole = evaluate(load_run(run), gold, settings, metrics)
    parts = evaluate_partitioned(run, gold, settings, metrics, rows_per_part=rows_per_part)
    assert parts.per_query.equals(whole.per_query)
    assert parts.means == whole.means  # exact, not approximately
    assert parts.queries == whole.queries
    assert whole.queries.missing_from_run and whole.queries.not_in_gold and whole.queries.unanswerable
    assert whole.queries.not_retrieval == ["q009"]
    assert sorted(parts.run.query_ids) == sorted(q if q != "five" else "q005" for q in load_run(run).query_ids)
    assert "q005" not in whole.queries.missing_from_run  # the alias matched


def test_the_split_really_makes_several_parts(tmp_path):
    run, gold_path = write_case(tmp_path, 1)
    parts = trec_run.split(run, load_gold(gold_path).aliases(), rows_per_part=200)
    try:
        assert len(parts.parts) > 3
    finally:
        import shutil

        shutil.rmtree(parts.folder)


def test_cli_low_memory_prints_the_same_document(tmp_path, capsys):
    run, gold_path = write_case(tmp_path, 2)
    args = ["eval", str(run), "--gold", str(gold_path), "--json", "--per-query", "-k", "3", "--depth", "10"]
    assert main(args) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main(args + ["--low-memory"]) == 0
    assert json.loads(capsys.readouterr().out) == whole


def test_too_big_runs_are_read_in_parts_by_themselves(tmp_path, capsys, monkeypatch):
    run, gold_path = write_case(tmp_path, 3)
    calls = []
    real = partitioned.evaluate_partitioned

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(partitioned, "evaluate_partitioned", counting)
    assert main(["eval", str(run), "--gold", str(gold_path), "--json"]) == 0
    assert calls == []
    monkeypatch.setattr(partitioned, "memory_limit", lambda: 100_000)  # 100 kB: nothing fits
    assert too_big_for_memory([run])
    assert main(["eval", str(run), "--gold", str(gold_path), "--json"]) == 0
    assert calls == [run]
    capsys.readouterr()


def test_only_trec_runs_are_read_in_parts(tmp_path, monkeypatch, capsys):
    (tmp_path / "run.jsonl").write_text('{"query_id": "q1", "results": ["a", "b"]}\n')
    (tmp_path / "gold.json").write_text('{"q1": ["a"]}')
    monkeypatch.setattr(partitioned, "memory_limit", lambda: 100_000)
    assert not too_big_for_memory([tmp_path / "run.jsonl"])
    code = main(["eval", str(tmp_path / "run.jsonl"), "--gold", str(tmp_path / "gold.json"), "--low-memory"])
    assert code == 2
    assert "--low-memory reads TREC runs only" in capsys.readouterr().err


@pytest.mark.parametrize("bad, message", [
    ("q1 Q0 d9 7 high t", "score 'high' is not a finite number"),
    ("q1 Q0 d9 seven 1.5 t", "rank 'seven' is not a whole number"),
    ("q1 Q0 d9 7", "expected 6 columns"),
])
def test_a_bad_line_is_named(tmp_path, bad, message):
    lines = [f"q{q} Q0 d{c} {c} {10 - c}.5 t" for q in range(1, 4) for c in range(1, 6)]
    lines.insert(8, bad)
    (tmp_path / "run.trec").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    gold = load_gold(tmp_path / "qrels.txt")
    with pytest.raises(InputError) as err:
        evaluate_partitioned(tmp_path / "run.trec", gold, EvalSettings(), default_metrics(5, 50), rows_per_part=4)
    assert err.value.line == 9 and message in str(err.value)


def _both_refuse(tmp_path, text: str) -> tuple[InputError, InputError]:
    """The in-memory reader's refusal of a run, and the in-parts reader's (a part every two rows)."""
    (tmp_path / "run.trec").write_text(text, encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    with pytest.raises(InputError) as whole:
        load_run(tmp_path / "run.trec")
    with pytest.raises(InputError) as parts:
        evaluate_partitioned(tmp_path / "run.trec", load_gold(tmp_path / "qrels.txt"), EvalSettings(),
                             default_metrics(5, 50), rows_per_part=2)
    return whole.value, parts.value


@pytest.mark.parametrize("gap", ["", "\n", " "])  # a blank line, a doubled space before the repeat: same lines named
def test_a_repeated_chunk_is_named_as_in_memory(tmp_path, gap):
    lines = [f"q{q} Q0 d{c} {c} {10 - c}.5 t" for q in range(1, 4) for c in range(1, 6)]
    lines.append(gap + "q2 Q0 d3 9 0.1 t")
    whole, parts = _both_refuse(tmp_path, "\n".join(lines) + "\n")
    assert str(parts) == str(whole)


def test_block_wise_plain_check_agrees_at_any_block_size(tmp_path):
    texts = {
        "plain": "q1 Q0 a#1 1 1.0 t\nq1 Q0 b 2 0.5 t\n",
        "comment": "q1 Q0 a 1 1.0 t\n# note\nq1 Q0 b 2 0.5 t\n",
        "first line a comment": "# note\nq1 Q0 a 1 1.0 t\n",
        "tab": "q1 Q0 a 1 1.0 t\nq1\tQ0 b 2 0.5 t\n",
        "bom": "\ufeffq1 Q0 a 1 1.0 t\n",
        "cr": "q1 Q0 a 1 1.0 t\r\n",
        "nul": "q1 Q0 a 1 1.0 t\nq1 Q0 b\x00 2 0.5 t\n",
    }
    for name, text in texts.items():
        path = tmp_path / f"{name}.trec"
        path.write_text(text, encoding="utf-8")
        whole = trec_run._is_plain(path)
        assert whole == (name == "plain"), name
        for block in (3, 4, 5, 7, 16):
            with path.open("rb") as handle:
                # small blocks put block boundaries inside every line, `\n#` included
                assert trec_run._blocks_are_plain(handle, block=block) == whole, (name, block)


def _untidy(text: str, rng: random.Random) -> str:
    """The same run as trec_eval and the in-memory reader read it, written untidily: blank and white-space-only
    lines, comment lines, doubled spaces, tabs, leading and trailing white space, CRLF line ends."""
    out = ["# written by hand", ""]
    for line in text.splitlines():
        cols = line.split(" ")
        seps = [rng.choice([" ", " ", "  ", "\t", " \t "]) for _ in cols[1:]]
        line = cols[0] + "".join(s + c for s, c in zip(seps, cols[1:]))
        line = rng.choice(["", "", " ", "\t"]) + line + rng.choice(["", "", " ", "\r", " extra words"])
        out.append(line)
        out += rng.choice([[], [], [], [""], ["   "], ["  # a comment after white space"]])
    return "\ufeff" + "\n".join(out) + "\n"


@pytest.mark.parametrize("rows_per_part", [37, 10**6])
def test_blank_lines_and_odd_white_space_give_the_in_memory_numbers(tmp_path, rows_per_part):
    run, gold_path = write_case(tmp_path, 4)
    run.write_text(_untidy(run.read_text(), random.Random(4)), encoding="utf-8")
    assert not trec_run._is_tidy(run)
    gold = load_gold(gold_path)
    settings = EvalSettings(k=5, depth=20)
    metrics = default_metrics(5, 20)
    whole = evaluate(load_run(run), gold, settings, metrics)
    parts = evaluate_partitioned(run, gold, settings, metrics, rows_per_part=rows_per_part)
    assert parts.per_query.equals(whole.per_query)
    assert parts.means == whole.means
    assert parts.queries == whole.queries


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 1.5 t\n",  # a blank line: the reader's "line 2: expected 6 columns, found 0"
    "q1 Q0 d1 1 2.5 t\nq1 Q0  d2 2 1.5 t\n",  # a doubled space
    " q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t \n",  # leading and trailing spaces
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq1 Q0 d3 3 0.5  t\n",  # a doubled space before the last field
])
def test_a_plain_looking_run_with_a_blank_line_or_doubled_space_is_split_once(tmp_path, monkeypatch, text):
    """The in-memory reader's quick check lets these through to polars (which then refuses them); the in-parts
    reader finds them in its first pass, before it splits: the run is split once, from the plain copy."""
    (tmp_path / "run.trec").write_text(text)
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\n")
    gold = load_gold(tmp_path / "qrels.txt")
    assert trec_run._is_plain(tmp_path / "run.trec")
    splits = []
    real = trec_run.split

    def counting(*args, **kwargs):
        splits.append(kwargs.get("source", args[4] if len(args) > 4 else None))
        return real(*args, **kwargs)

    monkeypatch.setattr(trec_run, "split", counting)
    whole = evaluate(load_run(tmp_path / "run.trec"), gold, EvalSettings(), default_metrics(5, 50))
    parts = evaluate_partitioned(tmp_path / "run.trec", gold, EvalSettings(), default_metrics(5, 50))
    assert parts.means == whole.means and whole.means["mrr"] == 0.5
    assert len(splits) == 1 and splits[0] is not None  # once, from the copy


def test_a_tidy_run_is_split_as_it_is(tmp_path, monkeypatch):
    run, gold_path = write_case(tmp_path, 1)
    assert trec_run._is_tidy(run)
    monkeypatch.setattr(trec_run, "_plain_copy", lambda *args, **kwargs: pytest.fail("copied a tidy run"))
    gold = load_gold(gold_path)
    whole = evaluate(load_run(run), gold, EvalSettings(), default_metrics(5, 50))
    assert evaluate_partitioned(run, gold, EvalSettings(), default_metrics(5, 50)).means == whole.means


@pytest.mark.parametrize("ends", ["\t", "\r\n", "\x0b", "\x0c"])
def test_a_run_with_tabs_or_crlf_is_made_plain_in_one_translate(tmp_path, monkeypatch, ends):
    """Only its separators differ from a plain run's: the copy is made block by block in C (bytes.translate),
    not line by line in Python (`_plain_line`, ~15x slower: bench/big_eval.py) — the first line alone is."""
    run, gold_path = write_case(tmp_path, 2)
    lines = run.read_text().splitlines()
    if ends == "\r\n":
        run.write_bytes("".join(line + "\r\n" for line in lines).encode())
    else:
        run.write_bytes("".join(line.replace(" ", ends) + "\n" for line in lines).encode())
    calls = []
    real = trec_run._plain_line
    monkeypatch.setattr(trec_run, "_plain_line", lambda line: calls.append(line) or real(line))
    gold = load_gold(gold_path)
    settings, metrics = EvalSettings(k=5, depth=20), default_metrics(5, 20)
    whole = evaluate(load_run(run), gold, settings, metrics)
    parts = evaluate_partitioned(run, gold, settings, metrics, rows_per_part=97)
    assert parts.per_query.equals(whole.per_query) and parts.means == whole.means
    assert len(calls) == 1


@pytest.mark.parametrize("bad, line", [
    ("q1 Q0 d9 7 high t", 5),  # after a blank line and a comment: still its own line number
    ("q1 Q0 d9 7", 5),
    ("q1 Q0 d9\x00 7 1.5 t", 5),
    ("q1 Q0 d9 7 1.5 t\n\nq1 Q0 d1 9 0.5 t", 7),  # a chunk twice in one query, both lines named
])
def test_a_bad_line_after_blank_lines_is_named_as_in_memory(tmp_path, bad, line):
    whole, parts = _both_refuse(tmp_path, "q1 Q0 d1 1 2.5 t\n\n# note\nq1\tQ0 d2 2 1.5 t\n" + bad + "\nq2 Q0 d3 1 1.0 t\n")
    assert whole.line == line
    assert str(parts) == str(whole)


@pytest.mark.parametrize("text", ["", "  \n\t\n", "# a comment\n\n", "\ufeff# a comment\n"])
def test_an_empty_run_is_said_as_in_memory(tmp_path, text):
    whole, parts = _both_refuse(tmp_path, text)
    assert str(parts) == str(whole)


def test_the_plain_copy_reads_the_same_at_any_block_size(tmp_path):
    # block boundaries fall inside lines, inside a CRLF, inside the BOM and around blank lines; a block is
    # copied as it is, translated, or rebuilt line by line, so the bytes differ, but never the six fields
    run, _gold = write_case(tmp_path, 5, queries=8)
    original = _untidy(run.read_text(), random.Random(5)).encode()
    run.write_bytes(original)
    lines = original.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    want = [trec_run._plain_line(line).split(b" ") if line else [b""] if n == len(lines) - 1 else
            trec_run._SKIP.split(b" ") for n, line in enumerate(lines)]
    for block in (1, 2, 3, 5, 7, 16, 100, 4 * 2**20):
        copy = trec_run._plain_copy(run, tmp_path / f"copy{block}.trec", block=block).read_bytes()
        assert [line.split(b" ")[:6] for line in copy.split(b"\n")] == want, block
        assert copy.split(b"\n")[0].split(b" ") == want[0]  # the first line exactly six fields


@pytest.mark.parametrize("bad, message", [(b"\x00", "binary data"), (b"\xff", "invalid UTF-8 (byte 0xff)")])
@pytest.mark.parametrize("block", [1, 5, 64, 4 * 2**20])
def test_binary_or_invalid_text_is_named_at_its_line_in_any_block(tmp_path, bad, message, block):
    """textio's refusals, at the line the in-memory reader names, wherever the block that holds them starts."""
    lines = [f"q{q} Q0 d{c} {c} 1.5 t".encode() for q in range(1, 4) for c in range(1, 6)]
    lines[11] = lines[11].replace(b"d", b"d" + bad)
    (tmp_path / "run.trec").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError) as whole:
        load_run(tmp_path / "run.trec")
    assert whole.value.line == 12 and message in str(whole.value)
    with pytest.raises(InputError) as first_pass:
        list(trec_run._checked_blocks(tmp_path / "run.trec", block))
    assert str(first_pass.value) == str(whole.value)
    with pytest.raises(InputError) as copy:
        trec_run._plain_copy(tmp_path / "run.trec", tmp_path / "copy.trec", block=block)
    assert str(copy.value) == str(whole.value)


@pytest.mark.parametrize("variant", ["plain", "tab", "crlf", "blank lines", "doubled space", "comment", "bom",
                                     "all at once"])
def test_cli_low_memory_prints_the_in_memory_document_for_any_white_space(tmp_path, capsys, variant):
    run, gold_path = write_case(tmp_path, 6)
    lines = run.read_text().splitlines()
    rng = random.Random(6)
    text = {
        "plain": lambda: "\n".join(lines) + "\n",
        "tab": lambda: "\n".join(line.replace(" ", "\t") for line in lines) + "\n",
        "crlf": lambda: "".join(line + "\r\n" for line in lines),
        "blank lines": lambda: "\n".join(line + "\n" * rng.choice([0, 0, 1, 2]) for line in lines) + "\n",
        "doubled space": lambda: "\n".join(line.replace(" ", "  ", rng.choice([0, 0, 1])) for line in lines) + "\n",
        "comment": lambda: "# a run\n" + "\n".join(line + rng.choice(["", "", "\n# a note"]) for line in lines) + "\n",
        "bom": lambda: "\ufeff" + "\n".join(lines) + "\n",
        "all at once": lambda: _untidy("\n".join(lines), rng),
    }[variant]()
    run.write_bytes(text.encode())
    args = ["eval", str(run), "--gold", str(gold_path), "--json", "--per-query", "-k", "3", "--depth", "10"]
    assert main(args) == 0
    whole = capsys.readouterr().out
    assert main(args + ["--low-memory"]) == 0
    assert capsys.readouterr().out == whole


@pytest.mark.parametrize("bad", [
    ["q1 Q0 d9 7 1_0 t"],  # Python's float() reads 10.0, polars (and so the in-memory reader) nothing
    ["q1 Q0 d9 7 \u0661 t"],  # an Arabic-Indic digit one
    ["q1 Q0 d9 99999999999999999999 1.5 t"],  # a rank past 2^63
    ["q1 Q0 d9 +7 1.5 t", "q2 Q0 d8 3 high t"],  # +7 is a rank to polars: the score after it is the error
    ["q1 Q0 d9 seven 1.5 t", "q2 Q0 d8 3 high t"],  # the in-memory reader checks every score before any rank
    ["q1 Q0 d9 7 high t", "q2 Q0 d8"],  # and every line's columns before any score
])
def test_a_bad_line_is_the_one_the_in_memory_reader_names(tmp_path, bad):
    lines = [f"q{q} Q0 d{c} {c} {10 - c}.5 t" for q in range(1, 4) for c in range(1, 6)]
    lines[4:4] = bad[:1]
    lines[10:10] = bad[1:]
    whole, parts = _both_refuse(tmp_path, "\n".join(lines) + "\n")
    assert str(parts) == str(whole)


_FILE_SIZE_LIMIT = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 12, resource.RLIM_INFINITY))
from ragdiff.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("separator", [" ", "\t"])  # split as it is / copied first: each write refused
def test_no_room_for_the_parts_is_said_as_that(tmp_path, separator):
    """The temporary folder cannot take the parts (or the plain copy): one message naming the folder and what
    is needed, exit 2 — before, `could not read the run in parts; expected ... lines` (the run is fine) or
    `cannot write the output` (the report is stdout)."""
    import os
    import subprocess
    import sys

    (tmp_path / "tmp").mkdir()
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q{q}{separator}Q0 d{c} {c} {c / 7:.3f} t\n" for q in range(200) for c in range(1, 100)))
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), PYTHONDONTWRITEBYTECODE="1")
    got = subprocess.run([sys.executable, "-c", _FILE_SIZE_LIMIT, "eval", str(run), "--gold",
                          str(tmp_path / "qrels.txt"), "--low-memory", "--json"], env=env, capture_output=True,
                         text=True)
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr == (f"ragdiff: {tmp_path / 'tmp'}: cannot write the run's parts here (File too large); reading "
                          "a run in parts needs about as much free space in the temporary folder as the run (TMPDIR "
                          "chooses the folder)\n")
    assert os.listdir(tmp_path / "tmp") == []  # nothing left behind


# Every refusal of the in-memory TREC reader (core/io/trec_run.py: not_another_format, trec_lines, trec_refusals, the
# text checks and the repeat check), each as (lines put in at line 5, lines put in at line 11 of a good run, the
# line the refusal names and its words). The line and words are written here, not taken from the readers (which
# share those rules): a rule that changes in both fails here, not only one that differs between them.
_COLUMNS = "expected 6 columns (qid Q0 chunk rank score tag), found {}"
_SCORE = "score {!r} is not a finite number"
_RANK = "rank {!r} is not a whole number >= 0 (column 4)"
_REFUSALS = {
    "a short line": (["q1 Q0 d9 7"], [], 5, _COLUMNS.format(4)),
    "a line of one column": (["q1"], [], 5, _COLUMNS.format(1)),
    "a score that is a word": (["q1 Q0 d9 7 high t"], [], 5, _SCORE.format("high")),
    "an infinite score": (["q1 Q0 d9 7 inf t"], [], 5, _SCORE.format("inf")),
    "a score that is not a number": (["q1 Q0 d9 7 nan t"], [], 5, _SCORE.format("nan")),
    "a score past a double": (["q1 Q0 d9 7 1e999 t"], [], 5, _SCORE.format("1e999")),
    "a score with an underscore": (["q1 Q0 d9 7 1_0 t"], [], 5, _SCORE.format("1_0")),  # Python's float() reads 10.0
    "a score of a non-ASCII digit": (["q1 Q0 d9 7 \u0661 t"], [], 5, _SCORE.format("\u0661")),
    "a hexadecimal score": (["q1 Q0 d9 7 0x10 t"], [], 5, _SCORE.format("0x10")),
    "a negative rank": (["q1 Q0 d9 -7 1.5 t"], [], 5, _RANK.format("-7")),
    "a fractional rank": (["q1 Q0 d9 7.5 1.5 t"], [], 5, _RANK.format("7.5")),
    "a rank that is a word": (["q1 Q0 d9 seven 1.5 t"], [], 5, _RANK.format("seven")),
    "a rank past 2^63": (["q1 Q0 d9 9223372036854775808 1.5 t"], [], 5, _RANK.format("9223372036854775808")),
    "a rank of a non-ASCII digit": (["q1 Q0 d9 \u0661 1.5 t"], [], 5, _RANK.format("\u0661")),
    "a rank in exponent form": (["q1 Q0 d9 1e3 1.5 t"], [], 5, _RANK.format("1e3")),
    # +7 is a rank (trec_eval's atol reads it), so the score after it is what is said
    "a signed rank, then a bad score": (["q1 Q0 d9 +7 1.5 t"], ["q2 Q0 d8 3 high t"], 11, _SCORE.format("high")),
    "a bad rank, then a bad score": (["q1 Q0 d9 seven 1.5 t"], ["q2 Q0 d8 3 high t"], 11,  # every score first
                                     _SCORE.format("high")),
    "a bad score, then a short line": (["q1 Q0 d9 7 high t"], ["q2 Q0 d8"], 11, _COLUMNS.format(3)),  # columns first
    # the good run's q2 d3 is on line 8, line 9 once the repeat is put in before it at line 5
    "a chunk twice in a query": (["q2 Q0 d3 9 0.1 t"], [], 9,
                                 "chunk 'd3' appears twice for query 'q2' (lines 5 and 9); expected each chunk once per "
                                 "query (use --keep-first to keep the first)"),
    "a NUL byte": (["q1 Q0 d9\x00 7 1.5 t"], [], 5, "binary data (a NUL byte); expected a text file"),
}
_GOOD = [f"q{q} Q0 d{c} {c} {10 - c}.5 t" for q in range(1, 4) for c in range(1, 6)]


@pytest.mark.parametrize("refusal", list(_REFUSALS))
def test_both_readers_refuse_every_bad_run_in_the_same_words(tmp_path, refusal):
    """Every refusal of the in-memory reader, each case alone and where two compete, names the line and says the
    words written down in _REFUSALS, and the in-parts reader (which names a refused run's line with the
    in-memory reader's own rules) says the same."""
    early, late, line, words = _REFUSALS[refusal]
    lines = list(_GOOD)
    lines[4:4] = early
    lines[10:10] = late
    whole, parts = _both_refuse(tmp_path, "\n".join(lines) + "\n")
    assert (whole.line, whole.message) == (line, words)
    assert str(parts) == str(whole)


@pytest.mark.parametrize("first", ['{"query_id": "q1", "results": ["d1"]}', "query_id,chunk_id,score",
                                   "\n# a comment\n[1, 2]"])
def test_a_run_of_another_format_is_said_as_in_memory(tmp_path, first):
    """A .trec file whose first data line is JSON or a CSV header: both readers say it is not a TREC run (the
    in-parts reader said a column count)."""
    whole, parts = _both_refuse(tmp_path, first + "\n" + "\n".join(_GOOD) + "\n")
    assert "this is not a TREC run" in str(whole)
    assert str(parts) == str(whole)


@pytest.mark.parametrize("block", [16, 64, 1000, 4 * 2**20])
@pytest.mark.parametrize("refusal", ["a short line", "a bad rank, then a bad score", "a bad score, then a short line",
                                     "a rank past 2^63"])
def test_the_bad_line_search_names_the_in_memory_line_at_any_block_size(tmp_path, refusal, block):
    """The in-parts reader searches a refused run a block of whole lines at a time (with polars, not a line at a
    time in Python): at any block size, bad lines in later blocks, behind blank lines, comments and a BOM, it
    names the line and words of the in-memory reader."""
    from ragdiff.core.io.trec_run import _bad_line

    early, late, _line, words = _REFUSALS[refusal]
    lines = ["q0 Q0 d1 1 2.5 t", "", "# note", *_GOOD * 3]
    lines[30:30] = early
    lines[44:44] = late
    path = tmp_path / "run.trec"
    path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    with pytest.raises(InputError) as whole:
        load_run(path)
    assert whole.value.line > 30 and whole.value.message == words
    assert str(_bad_line(path, block)) == str(whole.value)
