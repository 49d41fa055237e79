"""The corpus snapshot a label file records (`corpus: {path, sha256}`) and `--strict-corpus` (DESIGN.md,
"Drafted labels, provenance, growing the set")."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from ragdiff.cli.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


@pytest.fixture
def copy(tmp_path) -> Path:
    for name in ("gold.yaml", "corpus.jsonl", "bm25.jsonl"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    return tmp_path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_strict_corpus_turns_a_changed_corpus_into_exit_2_naming_both_hashes(copy, capsys):
    recorded = _sha(copy / "corpus.jsonl")
    assert recorded in (copy / "gold.yaml").read_text()
    args = ["eval", str(copy / "bm25.jsonl"), "--gold", str(copy / "gold.yaml")]
    assert main([*args, "--strict-corpus"]) == 0  # the recorded corpus, found beside the label file
    assert main([*args, "--corpus", str(copy / "corpus.jsonl"), "--strict-corpus"]) == 0
    capsys.readouterr()

    with (copy / "corpus.jsonl").open("a") as fh:
        fh.write('{"id": "new#0", "text": "a chunk added since the labels were made"}\n')
    changed = _sha(copy / "corpus.jsonl")
    assert main([*args, "--corpus", str(copy / "corpus.jsonl")]) == 0  # a warning only
    assert "is not the corpus" in capsys.readouterr().err
    for extra in ([], ["--corpus", str(copy / "corpus.jsonl")]):
        assert main([*args, *extra, "--strict-corpus"]) == 2
        err = capsys.readouterr().err
        assert changed in err and recorded in err and "Traceback" not in err
    for command in ("diff", "review", "report"):
        extra = ["-o", str(copy / "r.html")] if command == "report" else []
        assert main([command, str(copy / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--gold", str(copy / "gold.yaml"),
                     "--strict-corpus", *extra]) == 2, command
        assert changed in capsys.readouterr().err
    assert not (copy / "r.html").exists()


def test_strict_corpus_without_a_recorded_snapshot_says_how_to_record_one(tmp_path, capsys):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries:\n  - id: q01\n    text: json\n    gold: [json#0]\n")
    assert main(["eval", str(SAMPLE / "bm25.jsonl"), "--gold", str(gold), "--strict-corpus"]) == 2
    err = capsys.readouterr().err
    assert str(gold) in err and "records no corpus snapshot" in err and "labels snapshot" in err


def test_a_label_file_reached_through_a_link_finds_the_corpus_beside_the_file_it_points_to(copy, tmp_path, capsys):
    """`labels snapshot` writes the corpus path relative to the real file (where the writer writes and the journal
    lives); every reader resolves it there too — it was read beside the link ("no such corpus file")."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "gold.yaml").symlink_to(copy / "gold.yaml")
    link = other / "gold.yaml"
    assert main(["labels", "snapshot", str(link), "--corpus", str(copy / "corpus.jsonl")]) == 0
    assert "path: corpus.jsonl" in (copy / "gold.yaml").read_text()
    capsys.readouterr()
    assert main(["eval", str(copy / "bm25.jsonl"), "--gold", str(link), "--strict-corpus"]) == 0
    assert (copy / "gold.yaml.ragdiff-snapshot.json").is_file()  # the fingerprints beside the real file
    (copy / "gold.yaml.ragdiff-snapshot.json").unlink()  # the whole corpus's sha alone, as before them
    with (copy / "corpus.jsonl").open("a") as fh:
        fh.write('{"id": "new#0", "text": "a chunk added since the labels were made"}\n')
    capsys.readouterr()
    assert main(["eval", str(copy / "bm25.jsonl"), "--gold", str(link), "--strict-corpus"]) == 2
    assert _sha(copy / "corpus.jsonl") in capsys.readouterr().err  # the corpus beside the real file, changed
    assert main(["labels", "stale", str(link), "--json"]) == 0
    assert '"snapshot_changed"' in capsys.readouterr().out


def test_a_folder_given_as_the_corpus_is_called_a_folder(copy, capsys):
    assert main(["eval", str(copy / "bm25.jsonl"), "--gold", str(copy / "gold.yaml"), "--corpus", str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"{copy}: is a folder; expected the corpus JSONL file" in err and "Traceback" not in err
