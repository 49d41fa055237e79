"""A mark in a TREC/BEIR qrels file re-reads only the lines it changed (QrelsDoc.reparse); the document it
gives must be, row for row and line for line, what a whole parse of the new text gives, and it must give up
(None: the writer then parses the whole file) whenever it cannot show that."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiff.core.labels import LabelFile, Mark
from ragdiff.core.labels.qrels_doc import BeirDoc, QrelsDoc

TREC = {
    "lf": "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 d 1\nq3 0 e 3\n",
    "crlf": "q1 0 a 1\r\nq1 0 b 0\r\nq2 0 c 2\r\nq3 0 d 1\r\n",
    "no final newline": "q1 0 a 1\nq2 0 c 2\nq1 0 b 0\nq3 0 d 1",
    "comments and blanks": "# judged by ann\nq1 0 a 1\n\nq2\t0\tc\t2\n  # q2 done\nq1  0  b  0  \nq3 0 d 1\n\n",
    # trec_eval's white space (\v \f \r between columns, a \f-only line blank); zero-width characters inside ids
    # (Unicode white space there is refused: tests/test_whitespace_rule.py)
    "ascii white space, zero-width in ids": "q1\x0b0\x0ca\u200bx 1\nq1 0 b\u200by 0\r\nq2\t0 c\r2\n\x0c\nq3 0 d 1 \x0b\n",
}
BEIR = {
    "header": "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t0\nq2\tc\t2\nq3\td\t1\n",
    "crlf, no header": "q1\ta\t1\r\nq2\tc\t2\r\nq1\tb\t0\r\nq3\td\t1\r\n",
    "no final newline": "query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tc\t2\nq3\td\t1",
}
CASES = [(QrelsDoc, name, text) for name, text in TREC.items()] + [(BeirDoc, name, text) for name, text in BEIR.items()]


def same_as_whole_parse(fast, cls, path: Path, text: str, old: str) -> None:
    whole = cls(path, text)
    if cls is BeirDoc and text.partition("\n")[:2] != old.partition("\n")[:2]:
        assert fast is None  # a BEIR file's first line may be its header: read whole
        return
    assert fast is not None
    assert fast.text == text
    assert fast.frame.equals(whole.frame)
    assert fast.order == whole.order
    assert fast.line_starts().tolist() == whole.line_starts().tolist()
    assert {q: dict(fast.judg[q]) for q in fast.order} == {q: dict(whole.judg[q]) for q in whole.order}


def edits(doc):
    """Every mark a reviewer could make on one chunk: a new grade, a removal, a new chunk appended."""
    for q in list(doc.order):
        for c, (_lv, g, _line) in list(doc.judg[q].items()):
            yield q, c, "gold", (g % 3) + 1
            yield q, c, "not_relevant", None
            yield q, c, "none", None
        yield q, "fresh", "gold", 2
        yield q, "fresh", "not_relevant", None


@pytest.mark.parametrize(("cls", "name", "text"), CASES, ids=[f"{c.__name__} {n}" for c, n, _ in CASES])
def test_each_mark_is_read_back_as_a_whole_parse_would(cls, name, text, tmp_path):
    path = tmp_path / "qrels.txt"
    doc = cls(path, text)
    doc.line_starts()  # the writer works them out before its first edit
    for q, c, label, grade in edits(doc):
        new_text, _notes = doc.plan(q, c, label, grade)
        if new_text == text:
            continue
        same_as_whole_parse(doc.reparse(new_text, q), cls, path, new_text, text)


@pytest.mark.parametrize(("cls", "name", "text"), CASES, ids=[f"{c.__name__} {n}" for c, n, _ in CASES])
def test_a_chain_of_marks_keeps_agreeing(cls, name, text, tmp_path):
    """Each reparse builds on the last one's frame and line starts, as the writer's snapshots do."""
    path = tmp_path / "qrels.txt"
    doc = cls(path, text)
    doc.line_starts()
    for q, c, label, grade in list(edits(doc)):
        if q not in doc.order:
            continue
        new_text, _notes = doc.plan(q, c, label, grade)
        if new_text == doc.text:
            continue
        fast = doc.reparse(new_text, q)
        same_as_whole_parse(fast, cls, path, new_text, doc.text)
        if not new_text.strip():
            break
        doc = fast or cls(path, new_text)
        doc.line_starts()


def test_it_gives_up_when_another_querys_line_changed_too(tmp_path):
    doc = QrelsDoc(tmp_path / "q.txt", TREC["lf"])
    assert doc.reparse(TREC["lf"].replace("q1 0 b 0\nq2 0 c 2", "q1 0 b 1\nq2 0 c 1"), "q1") is None
    assert doc.reparse(TREC["lf"].replace("q2 0 c 2", "q2 0 c 1"), "q1") is None  # not the query marked


def test_it_gives_up_on_a_chunk_judged_twice(tmp_path):
    doc = QrelsDoc(tmp_path / "q.txt", TREC["lf"])
    assert doc.reparse(TREC["lf"].replace("q2 0 c 2\n", "q2 0 c 2\nq1 0 a 3\n"), "q1") is None


def test_it_gives_up_on_a_line_the_reader_refuses(tmp_path):
    doc = QrelsDoc(tmp_path / "q.txt", TREC["lf"])
    assert doc.reparse(TREC["lf"].replace("q1 0 b 0", "q1 0 b 0 extra"), "q1") is None
    assert doc.reparse(TREC["lf"].replace("q1 0 b 0", "q1 0 b zero"), "q1") is None


def test_a_beir_files_first_line_is_read_whole(tmp_path):
    doc = BeirDoc(tmp_path / "test.tsv", BEIR["crlf, no header"])
    assert doc.reparse(BEIR["crlf, no header"].replace("q1\ta\t1", "q1\ta\t2", 1), "q1") is None
    doc = BeirDoc(tmp_path / "test.tsv", BEIR["header"])
    assert doc.reparse(BEIR["header"].replace("q1\tb\t0\n", "query-id\tb\t0\n"), "q1") is None


def test_marks_on_a_qrels_file_never_parse_it_whole(tmp_path, monkeypatch):
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"q{q} 0 d{q}-{i} {i % 3}\n" for q in range(1, 40) for i in range(6)))
    lf = LabelFile(path, reviewer="ann")
    whole = []
    real = LabelFile._parse
    monkeypatch.setattr(LabelFile, "_parse", lambda self, text: whole.append(1) or real(self, text))
    for mark in (Mark("q3", "d3-1", "gold", 3), Mark("q5", "new", "gold", 2), Mark("q7", "d7-0", "none"),
                 Mark("q39", "d39-5", "not_relevant")):
        assert lf.apply(mark).saved
    assert lf.undo().saved
    assert whole == []
    fresh = lf._parse(path.read_text())
    assert lf._snap.doc.frame.equals(fresh.frame) and lf._snap.doc.order == fresh.order


def test_when_the_shortcut_gives_up_the_whole_parse_decides(tmp_path, monkeypatch):
    path = tmp_path / "qrels.txt"
    path.write_text(TREC["comments and blanks"])
    monkeypatch.setattr(QrelsDoc, "reparse", lambda self, new_text, qid: None)
    lf = LabelFile(path, reviewer="ann")
    assert lf.apply(Mark("q1", "b", "gold", 2)).saved
    assert lf.apply(Mark("q2", "c", "none")).saved
    assert lf.current_label("q1", "b") == ("gold", 2) and lf.current_label("q2", "c") == ("none", None)
    assert "q2" not in lf.queries


@pytest.mark.parametrize("chunk, reason", [("#c1", "starts with #"), ("c 1", "white space"), ("", "empty")])
def test_an_id_a_qrels_line_cannot_hold_is_refused_with_its_own_reason(tmp_path, chunk, reason):
    from ragdiff.core.labels import LabelFormatError

    path = tmp_path / "gold.qrels"
    path.write_text("q1 0 c0 1\n")
    with pytest.raises(LabelFormatError) as err:
        LabelFile(path, reviewer="t").apply(Mark("q1", chunk, "gold"))
    assert reason in str(err.value) and path.read_text() == "q1 0 c0 1\n"
