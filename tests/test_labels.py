"""Writing one mark into a label file (issue 5, core half): golden files per format.

Every case checks, with difflib, that the mark changed exactly the intended lines and nothing else, that
the file still says exactly what is intended, and that undo gives back the original bytes.
"""

from __future__ import annotations

import difflib
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.labels.journal import journal_path
from ragdiff.core.labels.spans import compose_yaml, to_node
from ragdiff.core.labels import (
    LabelConflictError,
    LabelFile,
    LabelFormatError,
    Mark,
    UnknownQueryError,

    judgment as _judgment,
    yaml_id,
)

DATA = Path(__file__).parent / "data" / "labels"


def _compose_yaml(text: str):
    return to_node(compose_yaml(text))


def copy(tmp_path: Path, name: str) -> Path:
    src = DATA / name
    dst = tmp_path / name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)
    return dst


def changed(before: bytes, after: bytes) -> list[str]:
    """The -/+ lines of a zero-context diff (what the mark touched, nothing else)."""
    a = before.decode("utf-8-sig").splitlines(keepends=False)
    b = after.decode("utf-8-sig").splitlines(keepends=False)
    return [
        line
        for line in difflib.unified_diff(a, b, n=0, lineterm="")
        if not line.startswith(("---", "+++", "@@"))
    ]


def mark_and_check(path: Path, mark: Mark, expected_diff: list[str], *, fmt=None, file=None, says=()):
    """Apply one mark: the diff is exactly `expected_diff`; reopening agrees; undo restores every byte."""
    file = file or path
    before = file.read_bytes()
    lf = LabelFile(path, fmt=fmt, reviewer="tester")
    prior = lf.current_label(mark.query_id, mark.chunk_id)
    change = lf.apply(mark)
    status = change.message
    after = file.read_bytes()
    assert change.saved and (change.query_id, change.chunk_id) == (mark.query_id, mark.chunk_id)
    assert change.after == _judgment(mark.label, mark.grade) and change.before == _judgment(*prior)
    assert changed(before, after) == expected_diff, "\n".join(changed(before, after))
    for piece in says:
        assert piece in status, status
    want = _judgment(mark.label, mark.grade)
    got = LabelFile(path, fmt=fmt).current_label(mark.query_id, mark.chunk_id)
    assert _judgment(*got) == want
    undone = lf.undo()
    assert undone is not None and (undone.before, undone.after) == (change.after, change.before)
    assert file.read_bytes() == before
    assert lf.undo() is None
    return status


# --------------------------------------------------------------------------------- the YAML label file

YAML_CASES = {
    "flow list append": (
        Mark("q01", "policy-22", "gold", run="B", rank=1),
        [
            "-    gold: [policy-14]           # chunks that answer it; {policy-14: 3} gives grades",
            "+    gold: [policy-14, policy-22]           # chunks that answer it; {policy-14: 3} gives grades",
        ],
    ),
    "move not_relevant to gold": (
        Mark("q01", "policy-9", "gold"),
        [
            "-    gold: [policy-14]           # chunks that answer it; {policy-14: 3} gives grades",
            "+    gold: [policy-14, policy-9]           # chunks that answer it; {policy-14: 3} gives grades",
            "-    not_relevant: [policy-9]    # judged, not an answer (grade 0)",
            "+    not_relevant: []    # judged, not an answer (grade 0)",
        ],
    ),
    "move gold to evidence": (
        Mark("q01", "policy-14", "evidence"),
        [
            "-    gold: [policy-14]           # chunks that answer it; {policy-14: 3} gives grades",
            "-    evidence: [policy-2]        # optional second level",
            "+    gold: []           # chunks that answer it; {policy-14: 3} gives grades",
            "+    evidence: [policy-2, policy-14]        # optional second level",
        ],
    ),
    "empty flow list gets a quoted 007 in the file's quote style": (
        Mark("do you ship to mars", "007", "gold"),
        [
            "-    gold: []                    # unanswerable: the corpus has no answer",
            "+    gold: ['007']                    # unanswerable: the corpus has no answer",
        ],
    ),
    "block list append": (
        Mark("q03", "hr-12", "gold"),
        ["+      - hr-12"],
    ),
    "block list append of an id YAML would retype": (
        Mark("q03", "true", "gold"),
        ["+      - 'true'"],
    ),
    "block list remove (the line goes, its comment with it)": (
        Mark("q03", "007", "none"),
        ["-      - '007'      # James"],
    ),
    "block list grade > 1 becomes a block map in place": (
        Mark("q03", "on", "gold", grade=3),
        [
            "-      - '007'      # James",
            '-      - "no"',
            "-      - 'on'",
            "-      - '1e3'",
            "+      '007': 1      # James",
            '+      "no": 1',
            "+      'on': 3",
            "+      '1e3': 1",
        ],
    ),
    "block map append with the default grade": (
        Mark("0042", "hr-3", "gold"),
        ["+      hr-3: 1"],
    ),
    "block map regrade": (
        Mark("0042", "hr-2", "gold", grade=3),
        ["-      hr-2: 2   # partial answer", "+      hr-2: 3   # partial answer"],
    ),
    "absent evidence key goes after gold": (
        Mark("0042", "hr-4", "evidence"),
        ["+    evidence: [hr-4]"],
    ),
    "only block item removed leaves an empty list": (
        Mark("0042", "hr-9", "gold", grade=2),
        ["-    not_relevant:", "-      - hr-9", "+      hr-9: 2", "+    not_relevant: []"],
    ),
    "flow map append": (
        Mark("q05", "fin-3", "gold", grade=2),
        [
            "-    gold: {fin-1: 2, 'fin-2': 1}",
            "+    gold: {fin-1: 2, 'fin-2': 1, fin-3: 2}",
        ],
    ),
    "flow map to not_relevant (absent key, before `owner`)": (
        Mark("q05", "fin-1", "not_relevant"),
        [
            "-    gold: {fin-1: 2, 'fin-2': 1}",
            "+    gold: {'fin-2': 1}",
            "+    not_relevant: [fin-1]",
        ],
    ),
    "flow list grade > 1 becomes a flow map": (
        Mark("q01", "policy-14", "gold", grade=3),
        [
            "-    gold: [policy-14]           # chunks that answer it; {policy-14: 3} gives grades",
            "+    gold: {policy-14: 3}           # chunks that answer it; {policy-14: 3} gives grades",
        ],
    ),
    "flow entry": (
        Mark("q06", "x-1", "evidence"),
        [
            "-  - {id: q06, text: a flow entry, gold: [x-1]}",
            "+  - {id: q06, text: a flow entry, gold: [], evidence: [x-1]}",
        ],
    ),
    "entry without a gold key, id that needs quotes": (
        Mark("q07", "a: b #c", "gold"),
        ["+    gold: ['a: b #c']"],
    ),
    "list with graded items takes one more graded item": (
        Mark("q08", "graded-2", "gold", grade=2),
        ["-    gold: [plain-1, {graded-1: 3}]", "+    gold: [plain-1, {graded-1: 3}, {graded-2: 2}]"],
    ),
    "list with graded items: regrade in place": (
        Mark("q08", "graded-1", "gold", grade=1),
        ["-    gold: [plain-1, {graded-1: 3}]", "+    gold: [plain-1, {graded-1: 1}]"],
    ),
    "list with graded items: plain item gets a grade in place": (
        Mark("q08", "plain-1", "gold", grade=2),
        ["-    gold: [plain-1, {graded-1: 3}]", "+    gold: [{plain-1: 2}, {graded-1: 3}]"],
    ),
    "list with graded items: remove a graded item": (
        Mark("q08", "graded-1", "not_relevant"),
        ["-    gold: [plain-1, {graded-1: 3}]", "+    gold: [plain-1]", "+    not_relevant: [graded-1]"],
    ),
    "query addressed by its text": (
        Mark("do you ship to mars", "no", "not_relevant"),
        ["+    not_relevant: ['no']"],
    ),
}


@pytest.mark.parametrize("case", list(YAML_CASES))
def test_yaml_label_file_golden(tmp_path, case):
    mark, diff = YAML_CASES[case]
    mark_and_check(copy(tmp_path, "gold.yaml"), mark, diff)


def test_yaml_keeps_other_keys_and_reads_ids_as_strings(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    lf = LabelFile(path)
    assert lf.fmt == "yaml"
    assert lf.queries == ["q01", "do you ship to mars", "q03", "0042", "q05", "q06", "q08", "q07"]
    assert lf.current_label("q08", "graded-1") == ("gold", 3)
    assert lf.current_label("q08", "plain-1") == ("gold", 1)
    assert lf.current_label("q03", "007") == ("gold", 1)
    assert lf.current_label("q03", "no") == ("gold", 1)
    assert lf.current_label("q03", "1e3") == ("gold", 1)
    assert lf.current_label("0042", "hr-1") == ("gold", 3)
    assert lf.current_label("q01", "policy-2") == ("evidence", 1)
    assert lf.current_label("q01", "policy-9") == ("not_relevant", 0)
    assert lf.current_label("q01", "policy-99") == ("none", None)
    assert lf.current_label("no such query", "x") == ("none", None)


def test_status_sentences(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    lf = LabelFile(path, reviewer="r")
    assert lf.apply(Mark("q01", "policy-22", "gold")).message == "policy-22 → gold for q01, saved to gold.yaml"
    assert "was not relevant" in lf.apply(Mark("q01", "policy-9", "gold")).message
    s = lf.apply(Mark("0042", "hr-3", "gold")).message
    assert "grade 1, the default for this graded set" in s
    s = lf.apply(Mark("q03", "1e3", "gold", grade=2)).message
    assert "gold list became a graded map" in s


def test_noop_mark_says_so_and_writes_nothing(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    lf = LabelFile(path)
    assert "already gold" in lf.apply(Mark("q01", "policy-14", "gold")).message
    assert "already gold (grade 3)" in lf.apply(Mark("0042", "hr-1", "gold")).message
    assert "already gold" in lf.apply(Mark("0042", "hr-1", "gold", grade=3)).message
    assert "already gold" in lf.apply(Mark("q01", "policy-14", "gold", grade=1)).message
    assert "already not relevant" in lf.apply(Mark("q01", "policy-9", "not_relevant")).message
    assert "no label" in lf.apply(Mark("q01", "nothing", "none")).message
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    # nothing changed, so there is nothing to undo
    assert lf.undo() is None
    assert path.read_bytes() == before


def test_undo_skips_marks_that_changed_nothing(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    before = path.read_bytes()
    lf = LabelFile(path)
    assert "saved" in lf.apply(Mark("q01", "policy-77", "gold")).message
    assert "already gold" in lf.apply(Mark("q01", "policy-14", "gold")).message  # looked at, changed nothing
    assert "policy-77" in lf.undo().message  # u takes back the last change, not the look
    assert path.read_bytes() == before
    assert LabelFile(path).undo() is None  # and across a restart the journal agrees


@pytest.mark.parametrize(
    "mark, error",
    [
        (Mark("q01", "x", "gold", grade=0), "grade 0"),
        (Mark("q01", "x", "gold", grade=-1), "not gold"),
        (Mark("q01", "x", "not_relevant", grade=2), "grade 0"),
        (Mark("q01", "x", "evidence", grade=2), "takes no grade"),
        (Mark("q01", "x", "unsure"), "unknown label"),
        (Mark("q01", "x", "skip"), "unknown label"),
    ],
)
def test_marks_that_cannot_be_said(tmp_path, mark, error):
    path = copy(tmp_path, "gold.yaml")
    before = path.read_bytes()
    with pytest.raises(LabelFormatError, match=error):
        LabelFile(path).apply(mark)
    assert path.read_bytes() == before
    assert not journal_path(path).exists()


def test_unknown_query_is_not_created(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    before = path.read_bytes()
    with pytest.raises(UnknownQueryError, match="no query 'q99'") as info:
        LabelFile(path).apply(Mark("q99", "x", "gold"))
    assert isinstance(info.value, KeyError) and isinstance(info.value, LabelFormatError)
    assert path.read_bytes() == before


def test_a_mark_that_would_change_other_queries_is_refused(tmp_path):
    # q02's gold is an alias of q01's: editing the shared list would change both, so nothing is written
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q01\n    gold: &g [a]\n  - id: q02\n    gold: *g\n")
    before = path.read_bytes()
    with pytest.raises(LabelFormatError, match="alias"):  # refused on reading, by the loader's own rule
        LabelFile(path).apply(Mark("q02", "b", "gold"))
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["gold.yaml", "gold.json"])
def test_a_second_bom_is_one_message_naming_line_1(tmp_path, capsys, name):
    # found by tests/test_fuzz_parsers.py in CI: the YAML composer's own guard (ValueError) came out as a traceback
    from ragdiff.cli.main import main

    path = tmp_path / name
    body = "labels\ncorpus: {path: corpus.jsonl}\nqueries:\n" if name.endswith("yaml") else '{"queries": []}\n'
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + body.encode())
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c1 1 1.0 t\n")
    before = path.read_bytes()
    assert main(["eval", str(run), "--gold", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "second byte-order mark" in err and ":1" in err and "Traceback" not in err
    with pytest.raises(LabelFormatError, match="second byte-order mark"):
        LabelFile(path)
    assert path.read_bytes() == before


def test_crlf_bom_and_no_final_newline_are_kept(tmp_path):
    text = (DATA / "gold.yaml").read_text().rstrip("\n").replace("\n", "\r\n")
    raw = b"\xef\xbb\xbf" + text.encode()
    path = tmp_path / "gold.yaml"
    path.write_bytes(raw)
    lf = LabelFile(path)
    lf.apply(Mark("q07", "c-1", "not_relevant"))  # a new key line at the very end of the file
    lf.apply(Mark("q03", "hr-12", "gold"))  # a new block line
    lf.apply(Mark("0042", "hr-9", "evidence"))  # a removed block line, a new key line
    out = path.read_bytes()
    assert out.startswith(b"\xef\xbb\xbf")
    assert not out.endswith(b"\n")
    assert out.count(b"\n") == out.count(b"\r\n")
    assert out.endswith(b"    evidence: []\r\n    not_relevant: [c-1]")
    assert LabelFile(path).current_label("q03", "hr-12") == ("gold", 1)
    while lf.undo():
        pass
    assert path.read_bytes() == raw


def test_the_bom_is_spelled_once_in_the_package():
    """The UTF-8 byte-order mark has one home, textio.BOM (and BOM_CHAR, the same mark decoded), which the readers,
    the sniffers, the label parsers and the label writer use: no other module writes its bytes out
    (labels/session.py did, twice) nor its character (escaped as U+FEFF was, in five readers, or as itself)."""
    import re

    import ragdiff
    from ragdiff.core.io import textio

    assert textio.BOM == "\ufeff".encode("utf-8") and textio.BOM_CHAR == "\ufeff"
    spelled = re.compile(r"\\xef\\xbb\\xbf|BOM_UTF8|\\ufeff|\\N\{ZERO WIDTH NO-BREAK SPACE\}|\ufeff", re.IGNORECASE)
    root = Path(ragdiff.__file__).parent
    homes = sorted(str(f.relative_to(root)) for f in root.rglob("*.py") if spelled.search(f.read_text(encoding="utf-8")))
    assert homes == ["core/io/textio.py"]


def test_undo_works_across_restarts_and_walks_back(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    v0 = path.read_bytes()
    LabelFile(path).apply(Mark("q01", "policy-22", "gold"))
    v1 = path.read_bytes()
    LabelFile(path).apply(Mark("q01", "policy-22", "not_relevant"))
    lf = LabelFile(path)  # a new session: the undo stack comes from the journal
    assert "policy-22 → gold" in lf.undo().message
    assert path.read_bytes() == v1
    lf2 = LabelFile(path)
    assert lf2.undo().message.startswith("undid: policy-22: label removed")
    assert path.read_bytes() == v0
    assert LabelFile(path).undo() is None


def test_journal_records_who_what_when_from_which_run(tmp_path, monkeypatch):
    path = copy(tmp_path, "gold.yaml")
    monkeypatch.setattr("getpass.getuser", lambda: "login-name")
    LabelFile(path).apply(Mark("q01", "policy-22", "gold", run="dense.jsonl", rank=4))
    LabelFile(path).undo()
    recs = [json.loads(line) for line in journal_path(path).read_text().splitlines()]
    assert [r["type"] for r in recs] == ["mark", "saved", "undo", "saved"]
    mark, _saved, undo, _ = recs
    assert mark["query"] == "q01" and mark["chunk"] == "policy-22" and mark["label"] == "gold"
    assert mark["prev_label"] == "none" and mark["who"] == "login-name"
    assert mark["run"] == "dense.jsonl" and mark["rank"] == 4
    assert datetime.fromisoformat(mark["when"]).utcoffset().total_seconds() == 0
    assert undo["undoes"] == mark["id"] and undo["who"] == "login-name" and undo["label"] == "none"
    assert undo["prev_label"] == "gold"


def test_undo_after_an_external_edit_elsewhere(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    lf = LabelFile(path)
    lf.apply(Mark("q01", "policy-22", "gold"))
    text = path.read_text().replace("owner: ana", "owner: bo")
    path.write_text(text)
    lf.undo()
    assert path.read_text() == (DATA / "gold.yaml").read_text().replace("owner: ana", "owner: bo")


def test_undo_refuses_to_revert_someone_elses_later_change(tmp_path):
    path = copy(tmp_path, "gold.yaml")
    lf = LabelFile(path)
    lf.apply(Mark("q01", "policy-22", "gold"))
    path.write_text(path.read_text().replace("[policy-14, policy-22]", "[policy-14]"))
    edited = path.read_bytes()
    with pytest.raises(LabelConflictError, match="it is now unjudged in gold.yaml"):
        lf.undo()
    assert path.read_bytes() == edited


# ----------------------------------------------------------------------------- quoting ids for YAML


@pytest.mark.parametrize(
    "chunk",
    ["007", "no", "on", "off", "y", "1e3", "true", "null", "~", "", "1_000", "0x1f", "1:20", "2001-12-14",
     "a: b", "#x", "a #b", "-x", "[x", "{x", "x,y", "it's", 'say "hi"', " lead", "tab\tin", "é-1", "🙂",
     "line\nbreak", "\x7f", "*star", "&amp", "!tag", "%p", "@at", "`bt", "|", ">", "?q", "policy-14"],
)
def test_yaml_id_reads_back_as_the_same_string(chunk):
    for quote in (None, "'", '"'):
        written = yaml_id(chunk, quote)
        for doc in (f"k: [{written}]\n", f"k:\n  - {written}\n", f"k: {{{written}: 1}}\n", f"k:\n  {written}: 1\n"):
            root = _compose_yaml(doc)
            node = root.pairs[0][1]
            got = node.items[0].value if node.kind == "seq" else node.pairs[0][0].value
            assert got == chunk, (chunk, doc)
    assert yaml_id("policy-14") == "policy-14"
    assert yaml_id("007") != "007"


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=12))
def test_yaml_id_property(chunk):
    written = yaml_id(chunk)
    root = _compose_yaml(f"k: [{written}, z]\n")
    assert root.pairs[0][1].items[0].value == chunk


# ---------------------------------------------------------------- random marks keep every other line


_MARKS = st.tuples(
    st.sampled_from(["q01", "do you ship to mars", "q03", "0042", "q05", "q06", "q07", "q08"]),
    st.sampled_from(["policy-14", "policy-9", "007", "no", "hr-1", "fin-2", "x-1", "new-1", "1e3", "on", "a b",
                     "plain-1", "graded-1"]),
    st.sampled_from(["gold", "evidence", "not_relevant", "none"]),
    st.sampled_from([None, None, 1, 2, 3]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_MARKS, min_size=1, max_size=6))
def test_random_marks_then_undo_all(tmp_path_factory, marks):
    path = copy(tmp_path_factory.mktemp("r"), "gold.yaml")
    original = path.read_bytes()
    lf = LabelFile(path)
    model = {}
    for q, c, label, grade in marks:
        if label != "gold":
            grade = None
        try:
            lf.apply(Mark(q, c, label, grade))
        except LabelFormatError:
            continue
        model[(q, c)] = (label, grade)
        fresh = LabelFile(path)
        for (mq, mc), (ml, mg) in model.items():
            got = fresh.current_label(mq, mc)
            assert got[0] == ml
            if ml == "gold" and mg is not None:
                assert (got[1] or 1) == mg
        # comment lines, the corpus line and the `regression`/`notes`/`owner` keys never change
        for line in original.decode().splitlines():
            if line.lstrip().startswith("#") or line.startswith("corpus") or "regression" in line or "owner" in line:
                assert line in path.read_text().splitlines()
    while lf.undo():
        pass
    assert path.read_bytes() == original


# ------------------------------------------------------------------------------------------ short forms


@pytest.mark.parametrize(
    "mark, diff",
    [
        (
            Mark("refund window for ebooks", "007", "gold"),
            [
                "-refund window for ebooks: [policy-14, policy-2]   # two answers",
                '+refund window for ebooks: [policy-14, policy-2, "007"]   # two answers',
            ],
        ),
        (Mark("who approves expenses", "hr-5", "gold"), ["+  - hr-5"]),
        (Mark("who approves expenses", "hr-3", "none"), ["-  - hr-3"]),
        (
            Mark("graded one", "g-2", "gold", grade=2),
            ["-graded one: {g-1: 3, g-2: 0}", "+graded one: {g-1: 3, g-2: 2}"],
        ),
        (
            Mark("graded one", "g-3", "not_relevant"),
            ["-graded one: {g-1: 3, g-2: 0}", "+graded one: {g-1: 3, g-2: 0, g-3: 0}"],
        ),
        (
            Mark("do you ship to mars", "z-1", "not_relevant"),
            ["-do you ship to mars: []", "+do you ship to mars: {z-1: 0}"],
        ),
    ],
)
def test_yaml_short_form_golden(tmp_path, mark, diff):
    mark_and_check(copy(tmp_path, "short.yaml"), mark, diff)


def test_short_forms_have_no_evidence(tmp_path):
    for name in ("short.yaml", "short.json"):
        path = copy(tmp_path, name)
        before = path.read_bytes()
        with pytest.raises(LabelFormatError, match="no place for evidence"):
            LabelFile(path).apply(Mark("refund window for ebooks", "x", "evidence"))
        assert path.read_bytes() == before


@pytest.mark.parametrize(
    "mark, diff",
    [
        (Mark("refund window for ebooks", "007", "gold"), ['-    "policy-2"', '+    "policy-2",', '+    "007"']),
        (Mark("inline", "a-3", "gold"), ['-  "inline": ["a-1", "a-2"],', '+  "inline": ["a-1", "a-2", "a-3"],']),
        (Mark("inline", "a-1", "none"), ['-  "inline": ["a-1", "a-2"],', '+  "inline": ["a-2"],']),
        (Mark("do you ship to mars", "z", "gold"), ['-  "do you ship to mars": [],', '+  "do you ship to mars": ["z"],']),
        (Mark("graded", "g-3", "gold", grade=2), ['-    "g-2": 0', '+    "g-2": 0,', '+    "g-3": 2']),
        (Mark("graded", "g-2", "gold"), ['-    "g-2": 0', '+    "g-2": 1']),
        (
            Mark("refund window for ebooks", "policy-2", "gold", grade=3),
            [
                '-  "refund window for ebooks": [',
                '-    "policy-14",',
                '-    "policy-2"',
                "-  ],",
                '+  "refund window for ebooks": {',
                '+    "policy-14": 1,',
                '+    "policy-2": 3',
                "+  },",
            ],
        ),
        (Mark("inline", "é 1", "gold"), ['-  "inline": ["a-1", "a-2"],', '+  "inline": ["a-1", "a-2", "\\u00e9 1"],']),
    ],
)
def test_json_short_form_golden(tmp_path, mark, diff):
    path = copy(tmp_path, "short.json")
    mark_and_check(path, mark, diff)
    json.loads(path.read_text())


# ------------------------------------------------------------------------------------- qrels and BEIR


@pytest.mark.parametrize(
    "mark, diff",
    [
        (Mark("q1", "new", "gold"), ["+q1 0 new 1"]),
        (Mark("q2", "doc-9", "gold", grade=2), ["+q2\t0\tdoc-9\t2"]),
        (Mark("q1", "policy-9", "gold", grade=2), ["-q1 0 policy-9 0", "+q1 0 policy-9 2"]),
        (Mark("q2", "doc-7", "not_relevant"), ["-q2\t0\tdoc-7\t2", "+q2\t0\tdoc-7\t0"]),
        (Mark("q1", "policy-14", "none"), ["-q1 0 policy-14 1"]),
        (Mark("q3", "x", "none"), ["-q3 0 x 3"]),
        (Mark("q3", "y", "gold"), ["+q3 0 y 1"]),
    ],
)
def test_trec_qrels_golden(tmp_path, mark, diff):
    path = copy(tmp_path, "qrels.txt")
    assert LabelFile(path).fmt == "qrels"
    mark_and_check(path, mark, diff)


def test_qrels_no_final_newline_and_crlf(tmp_path):
    path = tmp_path / "q.qrels"
    raw = b"q1 0 a 1\r\nq1 0 b 0"
    path.write_bytes(raw)
    lf = LabelFile(path, fmt="qrels")
    lf.apply(Mark("q1", "c", "gold", grade=2))
    assert path.read_bytes() == b"q1 0 a 1\r\nq1 0 b 0\r\nq1 0 c 2"
    lf.apply(Mark("q1", "c", "none"))
    assert path.read_bytes() == raw
    lf.apply(Mark("q1", "b", "none"))
    assert path.read_bytes() == b"q1 0 a 1"
    while lf.undo():
        pass
    assert path.read_bytes() == raw


def test_qrels_cannot_say_evidence_or_new_queries(tmp_path):
    path = copy(tmp_path, "qrels.txt")
    before = path.read_bytes()
    with pytest.raises(LabelFormatError, match="evidence cannot be said"):
        LabelFile(path).apply(Mark("q1", "x", "evidence"))
    with pytest.raises(UnknownQueryError):
        LabelFile(path).apply(Mark("q9", "x", "gold"))
    assert path.read_bytes() == before


@pytest.mark.parametrize("target", ["beir", "beir/qrels/test.tsv"])
def test_beir_golden(tmp_path, target):
    copy(tmp_path, "beir")
    path = tmp_path / target
    tsv = tmp_path / "beir" / "qrels" / "test.tsv"
    lf = LabelFile(path)
    assert lf.fmt == "beir"
    mark_and_check(path, Mark("q1", "new", "gold"), ["+q1\tnew\t1"], file=tsv)
    mark_and_check(path, Mark("q2", "doc-7", "gold", grade=1), ["-q2\tdoc-7\t2", "+q2\tdoc-7\t1"], file=tsv)
    # q3 is in queries.jsonl but has no line in this split: BEIR's queries.jsonl lists every split's queries,
    # so q3 is not in this gold set (load_gold does not list it either) and a mark does not add it
    with pytest.raises(UnknownQueryError):
        lf.apply(Mark("q3", "policy-2", "not_relevant"))
    mark_and_check(path, Mark("q1", "policy-2", "none"), ["-q1\tpolicy-2\t1"], file=tsv)
    with pytest.raises(LabelFormatError, match="evidence"):
        lf.apply(Mark("q1", "x", "evidence"))
    with pytest.raises(UnknownQueryError):
        lf.apply(Mark("q9", "x", "gold"))


# ----------------------------------------------------------------------- the gold loader agrees


def test_load_gold_reads_what_was_written(tmp_path):
    gold = pytest.importorskip("ragdiff.core.labels.gold")
    if not hasattr(gold, "load_gold"):
        pytest.skip("ragdiff.core.labels.gold.load_gold is not there yet")
    path = copy(tmp_path, "gold.yaml")
    gold.load_gold(path)  # the fixture itself loads
    lf = LabelFile(path)
    lf.apply(Mark("q01", "policy-9", "gold"))
    lf.apply(Mark("q07", "007", "gold"))
    lf.apply(Mark("q08", "plain-1", "evidence"))
    lf.apply(Mark("q03", "on", "gold", grade=3))
    lf.apply(Mark("do you ship to mars", "007", "gold"))
    df = gold.load_gold(path).judgments
    rows = {(r["query_id"], r["chunk_id"]): r for r in df.iter_rows(named=True)}
    assert rows[("q01", "policy-9")]["grade"] == 1
    assert rows[("q03", "on")]["grade"] == 3
    assert rows[("q03", "007")]["grade"] == 1
    assert rows[("do you ship to mars", "007")]["grade"] == 1
    assert rows[("q07", "007")]["grade"] == 1
    assert rows[("q08", "plain-1")]["level"] == "evidence"
    assert rows[("q08", "graded-1")]["grade"] == 3
    assert ("q01", "policy-9") in rows and rows[("q01", "policy-9")]["level"] == "gold"
    for name in ("short.yaml", "short.json", "qrels.txt", "beir"):
        p = copy(tmp_path, name)
        lf = LabelFile(p)
        q = lf.queries[0]
        lf.apply(Mark(q, "added-1", "gold", grade=2))
        df = gold.load_gold(p).judgments
        hit = df.filter((df["query_id"] == q) & (df["chunk_id"] == "added-1"))
        assert hit["grade"].to_list() == [2], name


def test_hash_inside_an_id_stays_plain_and_reads_back(tmp_path):
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.labels import yaml_id

    assert yaml_id("json.dumps#0") == "json.dumps#0"
    assert yaml_id("#0") != "#0" and yaml_id("a #0") != "a #0"  # a comment would start there
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: {json.loads#0: 3}   # a comment\n    not_relevant: [x#1]\n")
    LabelFile(path).apply(Mark("q1", "json.dumps#0", "gold", 2))
    assert path.read_text().splitlines()[2] == "    gold: {json.loads#0: 3, json.dumps#0: 2}   # a comment"
    got = load_gold(path).judgments
    assert sorted(zip(got["chunk_id"], got["grade"])) == [("json.dumps#0", 2), ("json.loads#0", 3), ("x#1", 0)]
    assert not (tmp_path / "gold.yaml.lock").exists()
