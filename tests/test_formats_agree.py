"""The gold loader and the label writer see the same file (issue 15, must-show 1).

For every gold fixture of every format in tests/ (the label files, short forms, qrels, BEIR folders with
test, dev and train splits, the JSON label file, the conformance qrels, the sample runs' gold, and every
hostile file in tests/bad_inputs): either both refuse it, or `load_gold` and `LabelFile` list the same
queries in the same order with the same judgment for every chunk — and after one mark through the writer,
`load_gold` sees exactly the old judgments plus that mark.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, LabelFormatError, LabelWriteError, Mark, UnknownQueryError

TESTS = Path(__file__).parent
ROOT = TESTS.parent
GOLD_SUFFIXES = {".yaml", ".yml", ".json", ".qrels", ".tsv", ".txt", ".test", ".rel_level"}


def _fixtures() -> list[Path]:
    found = []
    for p in sorted(TESTS.rglob("*")):
        if "__snapshots__" in p.parts:
            continue
        if p.is_dir() and (p / "qrels").is_dir():
            found.append(p)  # a BEIR folder
        elif p.is_file() and p.suffix in GOLD_SUFFIXES and p.name != "cases.json" and p.parent.name != "qrels":
            if p.suffix in (".txt", ".test", ".rel_level") and "qrels" not in p.name:
                continue
            found.append(p)
        elif p.is_file() and p.parent.name == "qrels":
            found.append(p)  # a BEIR split named outright
    sample = ROOT / "ragdiff" / "sample_runs" / "gold.yaml"
    if sample.is_file():
        found.append(sample)
    return found


FIXTURES = _fixtures()


def test_the_fixture_list_covers_every_format():
    formats = set()
    for p in FIXTURES:
        try:
            formats.add(load_gold(p).format)
        except InputError:
            pass
    assert formats == {"yaml", "json", "qrels", "beir"}
    names = {p.name for p in FIXTURES}
    assert {"label_file.json", "beir_splits", "beir_train", "dev.tsv", "train.tsv"} <= names
    assert len(FIXTURES) >= 40


def _copy(src: Path, tmp_path: Path) -> Path:
    """A private copy (a BEIR split keeps its folder around it)."""
    if src.parent.name == "qrels":
        folder = tmp_path / src.parent.parent.name
        shutil.copytree(src.parent.parent, folder)
        return folder / "qrels" / src.name
    dst = tmp_path / src.name
    (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    return dst


def _empty_start(path: Path) -> bool:
    """A YAML file of nothing but blank lines and comments."""
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _loaded(path: Path) -> tuple[list[str], dict]:
    gold = load_gold(path)
    queries = gold.queries.get_column("query_id").to_list()
    judged = {(q, c): (lv, g) for q, c, g, lv in
              gold.judgments.select("query_id", "chunk_id", "grade", "level").iter_rows()}
    return queries, judged


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_loader_and_writer_agree(fixture, tmp_path):
    path = _copy(fixture, tmp_path)
    try:
        queries, judged = _loaded(path)
    except InputError as err:
        if _empty_start(path):  # the one file the writer opens and the loader refuses: `labels add` starts there
            assert "the file is empty" in str(err) and LabelFile(path).queries == []
            return
        with pytest.raises((LabelFormatError, LabelWriteError, FileNotFoundError)):
            LabelFile(path)
        assert str(err)  # refused by both, with words
        return
    lf = LabelFile(path, reviewer="agree")
    assert lf.queries == queries
    for (q, c), (level, grade) in judged.items():
        assert lf.current_label(q, c) == (level, grade), (q, c)
    if not queries:
        return
    # one mark through the writer: the loader sees exactly that change, nothing else
    q = queries[0]
    original = lf.path.read_bytes()
    try:
        change = lf.apply(Mark(q, "agree-new-chunk", "gold", grade=2))
    except (LabelFormatError, UnknownQueryError) as err:  # pragma: no cover - said, never half-written
        pytest.fail(f"a plain gold mark was refused on a file both read: {err}")
    assert change.saved
    after_queries, after = _loaded(path)
    assert after_queries == queries
    assert after == {**judged, (q, "agree-new-chunk"): ("gold", 2)}
    assert lf.undo().saved
    assert _loaded(path) == (queries, judged)
    assert lf.path.read_bytes() == original  # and undo gives back every byte
