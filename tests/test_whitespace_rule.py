"""One white-space rule for TREC runs and qrels, trec_eval's: C's isspace() in the "C" locale (space, \\t, \\n,
\\v, \\f, \\r; get_trec_results.c and get_qrels.c split on it and never call setlocale). The fast TREC reader,
the general one, the qrels reader and writer and the format sniffers all split by it, so a file reads the same
whichever path takes it: a no-break space inside an id reads whole with LF and with CRLF line ends (it failed
with CRLF: "rank 'one' is not a whole number"), and a vertical tab separates columns on every path (the fast
path kept it inside the id)."""

from __future__ import annotations

import ctypes
import ctypes.util
import locale

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ragdiff.cli.main import main
from ragdiff.core.io import formats
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.io.runs import RUN_SCHEMA, load_run, ordered_frame, sniff_run_format
from ragdiff.core.io.trec_run import _load_any_trec, _load_plain_trec
from ragdiff.core.errors import InputError
from ragdiff.core.io.textio import ODD_SPACE, SPACE, fields

# characters Python's str.split() or the regex \s take as white space and trec_eval does not: never a column
# break; an id holding one of the str.split() ones (ODD) is refused, the others (zero-width) are part of an id
NOT_SPACE = ["\u00a0", "\u2003", "\u0085", "\u2028", "\u3000", "\x1c", "\x1f", "\u200b", "\ufeff"]
ODD = [c for c in NOT_SPACE if c.isspace()]
IN_AN_ID = [c for c in NOT_SPACE if not c.isspace()]
# trec_eval's separators besides the single space (a \r mid-line too: it is white space, not a line end)
SEPARATORS = [" ", "  ", "\t", "\x0b", "\x0c", "\r", " \t\x0b "]


def trec_eval_fields(line: str) -> list[str]:
    """The oracle: bytes.split() splits on exactly the six bytes C's isspace() takes in the "C" locale."""
    return [part.decode() for part in line.encode().split()]


def test_the_rule_is_c_isspace_in_the_c_locale():
    libc = ctypes.util.find_library("c")
    if libc is None:  # pragma: no cover - every Linux and macOS has one
        pytest.skip("no C library to ask")
    isspace = ctypes.CDLL(libc).isspace
    saved = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")
        c_space = {chr(b) for b in range(256) if isspace(b)}
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert set(SPACE) == c_space == {chr(b) for b in range(256) if bytes([b]).isspace()}
    line = "a" + "b".join(NOT_SPACE) + "".join(SEPARATORS) + "c"
    assert fields(line) == trec_eval_fields(line) == ["a" + "b".join(NOT_SPACE), "c"]


def _run_text(rows, seps, eol):
    return "".join(seps[i % len(seps)].join(row) + eol for i, row in enumerate(rows))


def _expected(text):
    """(query, chunk, score) of each line as trec_eval splits it."""
    out = []
    for raw in text.split("\n"):
        parts = trec_eval_fields(raw)
        if parts:
            out.append((parts[0], parts[2], float(parts[4])))
    return out


def _check_every_path(tmp_path, text):
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode())
    general = _load_any_trec(path)
    got = list(zip(general["query_id"], general["chunk_id"], general["score"]))
    assert got == _expected(text)
    fast = _load_plain_trec(path)
    if fast is not None:
        # the one difference, on purpose: the plain reader reads query ids as the Categorical ordered_frame sorts
        assert dict(fast.schema) == {**general.schema, "query_id": pl.Categorical}
        assert_frame_equal(fast.with_columns(pl.col("query_id").cast(pl.String)), general, check_exact=True)
        assert_frame_equal(ordered_frame(path, fast.clone(), True), ordered_frame(path, general.clone(), True),
                           check_exact=True)
    run = load_run(path)
    assert dict(run.frame.schema) == RUN_SCHEMA
    bare = tmp_path / "run_without_extension"
    bare.write_bytes(text.encode())
    assert sniff_run_format(bare) == "trec"
    assert_frame_equal(load_run(bare, name="run").frame, run.frame, check_exact=True)
    return run


def test_the_odd_white_space_is_what_str_split_takes_and_trec_eval_does_not():
    assert set(ODD_SPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()} - set(SPACE)


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("odd", IN_AN_ID, ids=[f"U+{ord(c):04X}" for c in IN_AN_ID])
def test_an_id_with_a_zero_width_character_reads_whole_with_either_line_end(tmp_path, odd, eol):
    rows = [("q1", "Q0", f"doc{odd}one", "1", "0.9", "t"), (f"q{odd}2", "Q0", "b", "1", "0.5", "t")]
    run = _check_every_path(tmp_path, _run_text(rows, [" "], eol))
    assert dict(zip(run.frame["query_id"], run.frame["chunk_id"])) == {"q1": f"doc{odd}one", f"q{odd}2": "b"}


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_an_id_with_unicode_white_space_is_refused_with_its_line_on_every_path(tmp_path, odd, eol, capsys):
    """A no-break space (or U+2028, \\x1c, … every str.split() separator) inside an id: trec_eval reads it
    whole, Python's tools as two columns. Refused, as an ASCII space is, naming the file, the line and the
    character — on the general path, the fast one and the in-parts one (--low-memory)."""
    (tmp_path / "gold.qrels").write_text("q1 0 a 1\n")
    for rows, line, what in (([("q1", "Q0", "a", "1", "0.9", "t"), ("q1", "Q0", f"doc{odd}one", "2", "0.5", "t")],
                              2, "chunk id"),
                             ([(f"q{odd}2", "Q0", "b", "1", "0.5", "t")], 1, "query id")):
        path = tmp_path / "run.trec"
        path.write_bytes(_run_text(rows, [" "], eol).encode())
        assert _load_plain_trec(path) is None  # the fast path leaves it to the general one
        with pytest.raises(InputError, match=f"U\\+{ord(odd):04X}") as refused:
            _load_any_trec(path)
        assert refused.value.line == line and refused.value.message.startswith(what)
        for low in ([], ["--low-memory"]):
            assert main(["eval", str(path), "--gold", str(tmp_path / "gold.qrels"), *low]) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"ragdiff: {path}:{line}: {what} ") and f"(U+{ord(odd):04X})" in err, err


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("sep", SEPARATORS[1:], ids=[repr(s) for s in SEPARATORS[1:]])
def test_each_ascii_separator_splits_on_every_path(tmp_path, sep, eol):
    rows = [("q1", "Q0", f"d{i}", str(i), str(1 - i / 10), "t") for i in range(1, 4)]
    run = _check_every_path(tmp_path, _run_text(rows, [" ", sep], eol))
    assert run.frame["chunk_id"].to_list() == ["d1", "d2", "d3"]


def test_a_vertical_tab_inside_an_id_splits_it_as_trec_eval_does(tmp_path, capsys):
    """`d\\vx` is two columns to trec_eval; the fast reader kept it as one id. Now the line has seven columns,
    so its rank is `x`: one message naming the file and line, exit 2."""
    (tmp_path / "gold.qrels").write_text("q1 0 d 1\n")
    for eol in ("\n", "\r\n"):
        run = tmp_path / "run.trec"
        run.write_bytes(f"q1 Q0 a 1 0.9 t{eol}q1 Q0 d\x0bx 2 0.8 t{eol}".encode())
        assert main(["eval", str(run), "--gold", str(tmp_path / "gold.qrels")]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        assert captured.err.strip().splitlines() == [f"ragdiff: {run}:2: rank 'x' is not a whole number >= 0 "
                                                     "(column 4)"]


def test_a_line_of_only_a_no_break_space_is_a_line_with_one_column(tmp_path, capsys):
    """To trec_eval U+00A0 is not white space: the line is not blank but malformed."""
    (tmp_path / "gold.qrels").write_text("q1 0 d 1\n")
    run = tmp_path / "run.trec"
    run.write_bytes("q1 Q0 a 1 0.9 t\n\u00a0\nq1 Q0 d 2 0.8 t\n".encode())
    assert main(["eval", str(run), "--gold", str(tmp_path / "gold.qrels")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"ragdiff: {run}:2: expected 6 columns (qid Q0 chunk rank score tag), "
                                        "found 1"]


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_qrels_read_ids_by_the_same_rule_and_a_mark_keeps_them(tmp_path, eol):
    from ragdiff.core.labels import LabelFile, Mark

    text = (f"q1 0 doc\u200bone 1{eol}q1\x0b0\x0cb\u200bc 0{eol}q\u200b2\t0 e 2{eol}").encode()
    path = tmp_path / "gold.qrels"
    path.write_bytes(text)
    bare = tmp_path / "gold_without_extension"
    bare.write_bytes(text)
    assert formats.sniff(bare) == "qrels"
    for given in (path, bare):
        judged = load_gold(given).judgments
        assert list(zip(judged["query_id"], judged["chunk_id"], judged["grade"])) == [
            ("q1", "doc\u200bone", 1), ("q1", "b\u200bc", 0), ("q\u200b2", "e", 2)]
    labels = LabelFile(path)
    labels.apply(Mark("q1", "b\u200bc", "gold", 3))
    labels.apply(Mark("q1", "new\u200bchunk", "gold", 1))
    # the grade alone changed; the new line, after the query's last, copies that line's separators
    assert path.read_bytes() == (f"q1 0 doc\u200bone 1{eol}q1\x0b0\x0cb\u200bc 3{eol}q1\x0b0\x0cnew\u200bchunk 1{eol}"
                                 f"q\u200b2\t0 e 2{eol}").encode()
    judged = load_gold(path).judgments
    assert ("q1", "new\u200bchunk", 1) in list(zip(judged["query_id"], judged["chunk_id"], judged["grade"]))


@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_qrels_refuse_an_id_with_unicode_white_space_on_reading_and_before_a_write(tmp_path, odd, capsys):
    """A qrels id holding a no-break space was written, and read back as two columns by Python's tools."""
    from ragdiff.core.labels import LabelFile, LabelFormatError, Mark

    path = tmp_path / "gold.qrels"
    path.write_text("q1 0 a 1\n")
    with pytest.raises(LabelFormatError, match=f"U\\+{ord(odd):04X}"):
        LabelFile(path).apply(Mark("q1", f"new{odd}chunk", "gold", 1))
    assert path.read_text() == "q1 0 a 1\n"
    path.write_text(f"q1 0 a 1\nq1 0 b{odd}c 1\n")
    with pytest.raises(InputError, match=f"U\\+{ord(odd):04X}") as refused:
        load_gold(path)
    assert refused.value.line == 2


def test_a_qrels_line_that_looks_like_five_columns_by_unicode_splits_is_four_by_trec_eval(tmp_path):
    path = tmp_path / "gold"
    path.write_bytes("q1 0 a\u00a0b 1\n".encode())  # str.split() sees five columns: sniffed as YAML before
    assert formats.sniff(path) == "qrels"


_ID = st.text(alphabet=st.sampled_from(list("abcXYZ0189-_.") + IN_AN_ID), min_size=1, max_size=6).map(
    lambda s: "i" + s)
_TAG = st.text(alphabet=st.sampled_from(list("abc") + NOT_SPACE), min_size=1, max_size=4)  # never read


@st.composite
def hostile_runs(draw):
    rows = []
    for _ in range(draw(st.integers(1, 12))):
        rows.append((draw(_ID), draw(st.sampled_from(["Q0", "0", "x\u00a0"])), draw(_ID),
                     str(draw(st.integers(0, 99))), repr(draw(st.sampled_from([0.5, 0.25, 1.0, -2.0]))),
                     draw(_TAG)))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=3))
    lead = draw(st.sampled_from(["", " ", "\t", "\x0c"]))
    eol = draw(st.sampled_from(["\n", "\r\n", " \n", "\x0b\r\n"]))
    return _run_text([(lead + row[0], *row[1:]) for row in rows], seps, eol)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=hostile_runs())
def test_every_path_reads_hostile_white_space_as_trec_eval_splits_it(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("ws")
    expected = _expected(text)
    pairs = [(q, c) for q, c, _s in expected]
    if len(set(pairs)) < len(pairs):
        return  # a repeated chunk is another test's subject
    _check_every_path(folder, text)


@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_export_refuses_an_id_with_unicode_white_space(tmp_path, odd, capsys):
    """`export qrels` and `export run` write TREC files: an id holding any str.split() white space (\\x1c-\\x1f
    too, which the regex \\s leaves out) is refused before anything is written."""
    import json

    gold = tmp_path / "gold.yaml"
    gold.write_text(f'queries:\n  - id: q1\n    gold: ["a\\u{ord(odd):04X}b", c]\n')  # YAML's escape
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"query_id": "q1", "results": ["c", f"a{odd}b"]}) + "\n")
    for args, target in ((["export", "qrels", str(gold)], tmp_path / "out.qrels"),
                         (["export", "run", str(run)], tmp_path / "out.trec")):
        assert main([*args, "-o", str(target)]) == 2
        err = capsys.readouterr().err
        assert "cannot be written" in err and not target.exists(), err
