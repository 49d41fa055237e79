"""Issue 15's hostile cases, each with the outcome DESIGN.md promises ("Writing labels back")."""

from __future__ import annotations

from pathlib import Path

from ragdiff.app.session import error_text as _error_text  # the status words moved with the writer (#11)
from ragdiff.core.labels import LabelConflictError


def test_error_line_keeps_the_dots_of_a_bare_file_name():
    """`--gold gold.yaml` (no folder): the status line said `goldyaml changed on disk`."""
    err = LabelConflictError("gold.yaml changed on disk: someone else set c.1 for q.1; the mark was not written")
    text = _error_text(err, Path("gold.yaml"))
    assert "gold.yaml changed on disk" in text and "c.1 for q.1" in text
    nested = _error_text(LabelConflictError("/data/x/gold.yaml changed on disk"), Path("/data/x/gold.yaml"))
    assert "gold.yaml changed on disk" in nested and "/data" not in nested


# ---------------------------------------------------------------------------------------------- helpers

import json  # noqa: E402
import os  # noqa: E402

import pytest  # noqa: E402

from ragdiff.cli.main import main  # noqa: E402
from ragdiff.core.labels.gold import load_gold  # noqa: E402
from ragdiff.core.labels.journal import journal_path  # noqa: E402
from ragdiff.core.labels import LabelFile, LabelFormatError, LabelWriteError, Mark  # noqa: E402


def judged(path, fmt=None) -> dict:
    """{(query, chunk): (level, grade)} as load_gold reads the file."""
    gold = load_gold(path, fmt)
    return {(q, c): (lv, g) for q, c, g, lv in gold.judgments.select("query_id", "chunk_id", "grade", "level").iter_rows()}


def run_file(tmp_path, qids=("q1",), chunks=("a",)) -> Path:
    p = tmp_path / "run.jsonl"
    p.write_text("".join(json.dumps({"query_id": q, "results": list(chunks)}) + "\n" for q in qids))
    return p


def eval_exit(tmp_path, gold: Path, capsys) -> tuple[int, str]:
    code = main(["eval", str(run_file(tmp_path)), "--gold", str(gold)])
    return code, capsys.readouterr().err


# ------------------------------------------------------------------- the writer and the reader agree


def test_json_label_file_can_be_marked(tmp_path):
    """It loaded and scored, but every mark failed with "has no query 'q1'"."""
    path = tmp_path / "gold.json"
    path.write_text('{"queries": [{"id": "q1", "text": "refunds", "gold": ["a"]}]}\n')
    lf = LabelFile(path)
    assert lf.fmt == "json" and lf.queries == ["q1"]
    lf.apply(Mark("q1", "b", "gold", grade=3))
    lf.apply(Mark("q1", "c", "evidence"))
    lf.apply(Mark("q1", "a", "not_relevant"))
    assert path.read_text() == ('{"queries": [{"id": "q1", "text": "refunds", "gold": {"b": 3}, '
                                '"evidence": ["c"], "not_relevant": ["a"]}]}\n')
    json.loads(path.read_text())
    assert judged(path) == {("q1", "b"): ("gold", 3), ("q1", "c"): ("evidence", 1), ("q1", "a"): ("not_relevant", 0)}


@pytest.mark.parametrize("split", ["dev.tsv", "train.tsv"])
def test_beir_folder_with_only_a_dev_or_train_split_opens_for_marking(tmp_path, split):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n')
    (beir / "qrels" / split).write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    assert load_gold(beir).format == "beir"
    lf = LabelFile(beir)
    assert lf.path.name == split
    lf.apply(Mark("q1", "b", "gold", grade=2))
    assert (beir / "qrels" / split).read_text() == "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t2\n"
    assert judged(beir) == {("q1", "a"): ("gold", 1), ("q1", "b"): ("gold", 2)}


def test_beir_test_split_wins_over_dev_and_train(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    for split, chunk in (("train.tsv", "t"), ("dev.tsv", "d"), ("test.tsv", "x")):
        (beir / "qrels" / split).write_text(f"q1\t{chunk}\t1\n")
    assert judged(beir) == {("q1", "x"): ("gold", 1)}
    assert LabelFile(beir).path.name == "test.tsv"
    (beir / "qrels" / "test.tsv").unlink()
    assert judged(beir) == {("q1", "d"): ("gold", 1)} and LabelFile(beir).path.name == "dev.tsv"


@pytest.mark.parametrize("body,fmt", [("q1\ta\t1\n", "beir"), ("q1 0 a 1\n", "qrels")])
def test_tsv_means_the_same_to_loader_and_writer(tmp_path, body, fmt):
    """`.tsv` was qrels to the loader and BEIR to the writer."""
    path = tmp_path / "judgments.tsv"
    path.write_text(body)
    assert load_gold(path).format == fmt and LabelFile(path).fmt == fmt
    LabelFile(path).apply(Mark("q1", "b", "gold"))
    assert judged(path) == {("q1", "a"): ("gold", 1), ("q1", "b"): ("gold", 1)}


def test_beir_score_with_trailing_white_space_loads_and_can_be_marked(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    tsv = beir / "qrels" / "test.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\nq1\ta\t1 \nq1\tb\t2\t\n".replace("\t\n", " \n"))
    assert judged(beir) == {("q1", "a"): ("gold", 1), ("q1", "b"): ("gold", 2)}
    LabelFile(beir).apply(Mark("q1", "a", "gold", grade=3))  # was refused: "grade '1 ' is not a whole number"
    assert tsv.read_text() == "query-id\tcorpus-id\tscore\nq1\ta\t3 \nq1\tb\t2 \n"
    assert judged(beir)[("q1", "a")] == ("gold", 3)


# ----------------------------------------------------------------- never saved unreadable


@pytest.mark.parametrize("chunk", ["null", "~", "NULL", "Null", "", " ", "true", "007", "1e3", "on", "no",
                                   "2001-12-14", "a\u2028b", "\u2029", "x\x85y", "!tag", "&a", "*b", "#c",
                                   "- d", "e: f", "[g]", "'h'", '"i"', "tab\tj"])
@pytest.mark.parametrize("shape", ["list", "map", "short-map"])
def test_ids_yaml_would_read_as_something_else_are_quoted_or_refused(tmp_path, chunk, shape):
    """A mark either writes an id that reads back as exactly that string, or is refused; never a saved
    file that the next `ragdiff review` refuses."""
    path = tmp_path / "gold.yaml"
    path.write_text({
        "list": "queries:\n  - id: q1\n    gold: [a]\n",
        "map": "queries:\n  - id: q1\n    gold: {a: 2}\n",
        "short-map": "q1: {a: 2}\n",
    }[shape])
    before = path.read_bytes()
    try:
        LabelFile(path).apply(Mark("q1", chunk, "gold", grade=2 if shape != "list" else None))
    except LabelFormatError as err:
        assert path.read_bytes() == before
        assert not chunk.strip(), f"{chunk!r} refused: {err}"  # only empty ids have no way to be written
        return
    got = judged(path)
    assert got[("q1", chunk)][0] == "gold" and ("q1", "a") in got and len(got) == 2


@pytest.mark.parametrize("chunk", ["a b", "", "a\tb", "a\x0bb", "a\x0cb", "a\rb", "a\u2028b", "a\u00a0b", "x\x85y",
                                   "a\u3000b"])
def test_qrels_refuse_ids_they_cannot_hold(tmp_path, chunk):
    """trec_eval's white space (textio.SPACE) splits a qrels line, and Python's str.split() splits on Unicode
    white space too (textio.ODD_SPACE): an id holding either cannot be written."""
    path = tmp_path / "gold.qrels"
    path.write_text("q1 0 a 1\n")
    with pytest.raises(LabelFormatError):
        LabelFile(path).apply(Mark("q1", chunk, "gold"))
    assert path.read_text() == "q1 0 a 1\n"
    assert not journal_path(path).exists()


@pytest.mark.parametrize("text", [
    "queries:\n  - id: q1\n    gold: [!!int 007, b]\n",
    "queries:\n  - id: !!str q1\n    gold: !!seq [007, b]\n",
    "queries:\n  - !!map\n    id: q1\n    gold: {!!int 007: !!int 1, b: 1}\n",
])
def test_tags_are_read_as_written_by_both_sides(tmp_path, text, capsys):
    """`!!int 007` is the id 007 to the loader and to the writer alike (it was 7 to one of them)."""
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    assert judged(path) == {("q1", "007"): ("gold", 1), ("q1", "b"): ("gold", 1)}
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 0 and "Traceback" not in err
    lf = LabelFile(path)
    assert lf.current_label("q1", "007") == ("gold", 1)
    lf.apply(Mark("q1", "007", "not_relevant"))
    assert judged(path)[("q1", "007")] == ("not_relevant", 0)


@pytest.mark.parametrize("text, line, tag", [
    ("queries:\n  - id: !!str q1\n    gold: !custom [007, b]\n", 3, "!custom"),
    ("queries: !!python/object:os.system\n  - id: q1\n    gold: [007, b]\n", 1, "!!python/object:os.system"),
    ("queries:\n  - !!python/name:builtins.dict\n    id: q1\n    gold: {b: 1}\n", 2, "!!python/name:builtins.dict"),
    ("queries:\n  - id: q1\n    gold: [b, !!python/tuple [x, y]]\n", 3, "!!python/tuple"),
    ("queries:\n  - id: q1\n    text: !custom 'ebooks'\n    gold: [b]\n", 3, "!custom"),
    ("queries:\n  - id: q1\n    gold: !!set {b: null}\n", 3, "!!set"),
])
def test_other_tags_are_refused_with_their_line_on_load_and_before_a_write(tmp_path, text, line, tag, capsys):
    """A custom or python tag on the gold list or a query was read with the tag silently ignored, where PyYAML's
    safe loader refuses it: now both the loader and the writer refuse it, with its line, and nothing is written."""
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{path}:{line}:" in err and f"YAML tag {tag} found" in err, err
    with pytest.raises(LabelFormatError, match="YAML tag"):
        LabelFile(path).apply(Mark("q1", "b", "not_relevant"))
    assert path.read_text() == text
    assert not journal_path(path).exists()


def test_huge_grade_is_refused_by_the_loader_with_its_line(tmp_path, capsys):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: {a: 1,\n      b: 99999999999999999999999}\n")
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{path}:4:" in err and "out of range" in err


def test_huge_grade_is_refused_before_saving(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: {a: 2}\n")
    with pytest.raises(LabelFormatError, match="out of range"):
        LabelFile(path).apply(Mark("q1", "b", "gold", grade=99999999999999999999999))
    assert path.read_text() == "queries:\n  - id: q1\n    gold: {a: 2}\n"
    assert not journal_path(path).exists()  # refused before the journal too


@pytest.mark.parametrize("text,line", [
    ("queries:\n  - id: q1\n    gold: [a, {b: [1]}]\n", 3),
    ("queries:\n  - id: q1\n    gold: [a, b]\n    evidence: [b]\n", 4),
    ("queries:\n  - id: q1\n    gold: [a, null]\n", 3),
    ("queries:\n  - id: q1\n    gold: {a: 1, a: 2}\n", 3),
    ("q1: [a]\nq1: [b]\n", 2),
    ('{"queries": [{"id": "q1", "gold": {"a": 1e400}}]}', 1),
    # read differently from what was written, silently, until they were refused
    ("queries:\n  - id: q1\n    not_relevant: {c: 3}\n", 3),  # the 3 was dropped (grade 0)
    ("queries:\n  - id: q1\n    not_relevant: [a, {c: 1}]\n", 3),
    ("queries:\n  - id: q1\n    gold: [a]\n    evidence: {c: 0}\n", 4),  # scored as evidence 1
    ("corpus: [a]\nqueries:\n  - id: q1\n    gold: [a]\n", 1),  # no corpus at all
    ("corpus: {path: c.jsonl, sha: 3f9a}\nqueries:\n  - id: q1\n    gold: [a]\n", 1),  # sha256 misspelt
    ("corpus: {path: [c.jsonl]}\nqueries:\n  - id: q1\n    gold: [a]\n", 1),
    ("corpus: {sha256: 3f9a}\nqueries:\n  - id: q1\n    gold: [a]\n", 1),
    ("queries:\n  - id: q1\n    gold: [a]\n    not-relevant: [b]\n", 4),  # a section misspelt: b unjudged
    ("queries:\n  - id: q1\n    golds: [a]\n", 3),  # q1 read as unanswerable
    ("corpus: c.jsonl\nqueries:\n  - id: q1\n    gold: [a]\nquery:\n  - id: q2\n    gold: [b]\n", 5),
    ('{"queries": [{"id": "q1", "gold": ["a"], "not_relevant": {"c": 2}}]}', 1),
    ('{"corpus": ["c.jsonl"], "queries": [{"id": "q1", "gold": ["a"]}]}', 1),
])
def test_bad_label_files_exit_2_with_file_and_line_and_the_writer_refuses_them_too(tmp_path, text, line, capsys):
    path = tmp_path / ("gold.json" if text.startswith("{") else "gold.yaml")
    path.write_text(text)
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 2 and "Traceback" not in err and f"{path}:{line}:" in err, err
    with pytest.raises(LabelFormatError):
        LabelFile(path)


# ------------------------------------------------------------------------------------- data lost


def test_undo_takes_back_only_this_reviewers_marks_across_restarts(tmp_path):
    """alice marks, bob marks, alice reopens and undoes: bob's mark stays."""
    path = tmp_path / "gold.yaml"
    original = "queries:\n  - id: q1\n    gold: [a]\n"
    path.write_text(original)
    LabelFile(path, reviewer="alice").apply(Mark("q1", "b", "gold"))
    LabelFile(path, reviewer="bob").apply(Mark("q1", "c", "not_relevant"))
    alice = LabelFile(path, reviewer="alice")
    change = alice.undo()
    assert (change.chunk_id, change.after.kind) == ("b", "unjudged")
    assert judged(path) == {("q1", "a"): ("gold", 1), ("q1", "c"): ("not_relevant", 0)}
    assert alice.undo() is None  # alice has nothing left to undo: bob's mark is not hers
    assert LabelFile(path, reviewer="alice").undo() is None
    bob = LabelFile(path, reviewer="bob")
    assert bob.undo().chunk_id == "c"
    assert path.read_text() == original


def test_undo_refuses_when_another_reviewer_changed_the_same_chunk(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: [a]\n")
    LabelFile(path, reviewer="alice").apply(Mark("q1", "b", "gold"))
    LabelFile(path, reviewer="bob").apply(Mark("q1", "b", "not_relevant"))
    from ragdiff.core.labels import LabelConflictError as Conflict

    with pytest.raises(Conflict, match="changed since"):
        LabelFile(path, reviewer="alice").undo()
    assert judged(path)[("q1", "b")] == ("not_relevant", 0)


def test_removing_the_last_item_of_a_multi_line_flow_list_keeps_the_comment_before_it(tmp_path):
    path = tmp_path / "gold.yaml"
    text = ("queries:\n  - id: q1\n    gold: [\n      a,   # the answer, per legal\n"
            "      b    # a guess\n    ]\n")
    path.write_text(text)
    LabelFile(path).apply(Mark("q1", "b", "none"))
    assert path.read_text() == ("queries:\n  - id: q1\n    gold: [\n      a   # the answer, per legal\n    ]\n")
    LabelFile(path).apply(Mark("q1", "c", "gold"))
    assert judged(path) == {("q1", "a"): ("gold", 1), ("q1", "c"): ("gold", 1)}
    assert "# the answer, per legal" in path.read_text()


def test_a_label_file_reached_through_a_symlink_is_written_through_it(tmp_path):
    real = tmp_path / "data" / "real-gold.yaml"
    real.parent.mkdir()
    real.write_text("queries:\n  - id: q1\n    gold: [a]\n")
    link = tmp_path / "gold.yaml"
    link.symlink_to(os.path.relpath(real, tmp_path))
    change = LabelFile(link).apply(Mark("q1", "b", "gold"))
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(real, tmp_path)
    assert real.read_text() == "queries:\n  - id: q1\n    gold: [a, b]\n"
    assert "saved to gold.yaml" in change.message  # the name the reviewer gave
    assert LabelFile(link).undo().saved and real.read_text() == "queries:\n  - id: q1\n    gold: [a]\n"


# --------------------------------------------------------------------------------- wrong messages


def test_a_refused_mark_leaves_no_journal_behind(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("q1: [a]\n")
    with pytest.raises(LabelFormatError, match="no place for evidence"):
        LabelFile(path).apply(Mark("q1", "b", "evidence"))
    with pytest.raises(LabelFormatError):
        LabelFile(path).apply(Mark("q9", "b", "gold"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.yaml"]


def test_a_journal_path_that_is_a_folder_is_said_plainly(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("q1: [a]\n")
    journal_path(path).mkdir()
    with pytest.raises(LabelWriteError, match="is a folder"):
        LabelFile(path)
    assert path.read_text() == "q1: [a]\n"


def test_file_level_edits_after_marks_in_the_same_session_land_where_they_belong(tmp_path):
    """A mark re-reads only its entry; `labels add` and `labels snapshot` after it still see true positions."""
    path = tmp_path / "gold.yaml"
    path.write_text("# labels\nqueries:\n  - id: q1\n    gold: [a]\n  - id: q2\n    gold: [b]\n")
    lf = LabelFile(path, reviewer="ann")
    lf.apply(Mark("q1", "a-much-longer-chunk-id-than-before", "gold"))
    lf.apply(Mark("q2", "c", "not_relevant"))
    lf.add_query("a new one", query_id="q3")
    lf.set_corpus("corpus.jsonl", "abc")
    assert path.read_text() == (
        "# labels\ncorpus: {path: corpus.jsonl, sha256: abc}\nqueries:\n"
        "  - id: q1\n    gold: [a, a-much-longer-chunk-id-than-before]\n"
        "  - id: q2\n    gold: [b]\n    not_relevant: [c]\n"
        "  - id: q3\n    text: a new one\n")
    lf.apply(Mark("q3", "d", "gold"))
    assert judged(path)[("q3", "d")] == ("gold", 1)


def test_a_misspelt_key_is_named_with_what_it_reads_like_and_a_key_of_ones_own_is_kept(tmp_path, capsys):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    gold: [a]\n    not-relevant: [b]\n")
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 2 and "'not-relevant'" in err and "is it not_relevant misspelt?" in err
    path.write_text("queries:\n  - id: q1\n    gold: [a]\n    notes: ask ana\n    owner: ana\n")
    assert judged(path) == {("q1", "a"): ("gold", 1)}
    path.write_text("corpus: {path: c.jsonl, sha: 3f9a}\nqueries:\n  - id: q1\n    gold: [a]\n")
    code, err = eval_exit(tmp_path, path, capsys)
    assert code == 2 and "'sha'" in err and "expected one of path, sha256" in err
