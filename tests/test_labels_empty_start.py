"""Any empty start works (issue 31): `labels add` into an empty file, a file of comments, `queries:` alone or a
block file's `queries: []` writes the first query as a block list, which the loader reads back; undo gives the
file back byte for byte."""

from __future__ import annotations

import pytest

from ragdiff.cli.main import main
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import load_gold

BLOCK = "  - text: hello\n  - id: w2\n    text: \"world: two\"\n    tags: [t]\n"

STARTS = {
    "empty file": ("", "queries:\n" + BLOCK),
    "comments only": ("# my labels\n\n", "# my labels\n\nqueries:\n" + BLOCK),
    "queries alone": ("queries:\n", "queries:\n" + BLOCK),
    "queries alone, a comment after": ("queries:   # to fill\n", "queries:   # to fill\n" + BLOCK),
    "empty flow list": ("# head\nqueries: []\n# tail\n", "# head\nqueries:\n" + BLOCK + "# tail\n"),
    "empty flow list, a comment after": ("queries: [] # none yet\n", "queries: # none yet\n" + BLOCK),
    "empty flow list, no final newline": ("corpus: c.jsonl\nqueries: []", "corpus: c.jsonl\nqueries:\n" + BLOCK[:-1]),
    "empty flow list, CRLF": ("queries: []\r\n", "queries:\r\n" + BLOCK.replace("\n", "\r\n")),
}


@pytest.mark.parametrize("start", STARTS, ids=list(STARTS))
def test_the_first_query_starts_a_block_list(tmp_path, capsys, start):
    before, after = STARTS[start]
    path = tmp_path / "gold.yaml"
    path.write_bytes(before.encode())
    assert main(["labels", "add", str(path), "hello", "--reviewer", "ann"]) == 0
    assert main(["labels", "add", str(path), "world: two", "--id", "w2", "--tag", "t", "--reviewer", "ann"]) == 0
    assert path.read_bytes().decode() == after
    gold = load_gold(path)
    assert gold.queries.select("query_id", "text").rows() == [("hello", "hello"), ("w2", "world: two")]
    assert main(["labels", "undo", str(path), "--reviewer", "ann"]) == 0
    assert main(["labels", "undo", str(path), "--reviewer", "ann"]) == 0
    assert path.read_bytes().decode() == before
    assert "Traceback" not in capsys.readouterr().err


def test_a_flow_list_that_holds_queries_stays_flow(tmp_path, capsys):
    path = tmp_path / "gold.yaml"
    path.write_text("{queries: []}\n")
    assert main(["labels", "add", str(path), "hello"]) == 0
    assert main(["labels", "add", str(path), "two"]) == 0
    assert path.read_text() == "{queries: [{text: hello}, {text: two}]}\n"


def test_queries_alone_loads_as_no_query_and_an_empty_file_is_still_empty_to_the_loader(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n")
    assert load_gold(path).queries.height == 0
    path.write_text("# nothing yet\n")
    with pytest.raises(InputError, match="the file is empty"):
        load_gold(path)


def test_a_snapshot_of_an_empty_file_is_refused_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "gold.yaml"
    path.write_text("")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "x"}\n')
    assert main(["labels", "snapshot", str(path), "--corpus", str(corpus)]) == 2
    assert ": the file is empty" in capsys.readouterr().err  # nothing to fingerprint, no place to say it
    assert path.read_text() == ""
