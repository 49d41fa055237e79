"""Drafted labels, tags and `retrieval: false` in scoring (DESIGN.md, "Drafted labels, provenance, growing the
set"; "File formats").

Every expectation is the same command on a second label file written by hand from the first (drafts deleted,
drafts made judgments, only one tag's queries, the retrieval: false queries removed), so the test can fail
whenever the option's numbers are not the plain numbers of that file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragdiff.cli.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
RUNS = [str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl")]
METRICS = "recall@5,recall@10,recall_frac@5,precision@5,mrr,ndcg@5,ndcg@50,judged@5"


def _entries(text: str) -> tuple[str, list[str]]:
    """The sample label file split into its head and one block of lines per query."""
    head, _, body = text.partition("queries:\n")
    blocks = re.split(r"(?m)^(?=  - )", body)
    return head + "queries:\n", [b for b in blocks if b]


SAMPLE_HEAD, SAMPLE_ENTRIES = _entries((SAMPLE / "gold.yaml").read_text(encoding="utf-8"))


def _eval(capsys, gold: Path, *extra: str) -> dict:
    assert main(["eval", *RUNS, "--gold", str(gold), "--metrics", METRICS, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _means(doc: dict, key: str | None = None) -> list[dict]:
    return [r[key]["metrics"] if key else r["metrics"] for r in doc["runs"]]


def _unjudged_returned(qid: str, n: int) -> list[str]:
    """The first n chunks bm25 returns for qid that its entry does not label."""
    entry = next(b for b in SAMPLE_ENTRIES if b.startswith(f"  - id: {qid}"))
    for line in (SAMPLE / "bm25.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["query_id"] == qid:
            ids = [r if isinstance(r, str) else r["id"] for r in record["results"]]
            return [c for c in ids if c not in entry][:n]
    raise AssertionError(qid)


def _with(entries: list[str], qid: str, line: str) -> list[str]:
    """The entries with one more line at the end of query qid's block."""
    return [b.rstrip("\n") + "\n" + line + "\n" if b.startswith(f"  - id: {qid}") else b for b in entries]


@pytest.fixture(scope="module")
def drafts() -> dict[str, dict[str, int]]:
    grades = iter([2, 0, 3, 1, 1, 2, 0, 3, 2])
    return {q: {c: next(grades) for c in _unjudged_returned(q, 3 if q in ("q02", "q05") else 1)}
            for q in ("q02", "q05", "q07", "q11", "q20")}


def _draft_line(chunks: dict[str, int]) -> str:
    return "    drafted: {" + ", ".join(f"{c}: {g}" for c, g in chunks.items()) + "}"


def test_drafts_are_not_scored_and_are_counted(tmp_path, capsys, drafts):
    entries = SAMPLE_ENTRIES
    for q, chunks in drafts.items():
        entries = _with(entries, q, _draft_line(chunks))
    with_drafts = tmp_path / "with.yaml"
    with_drafts.write_text(SAMPLE_HEAD + "".join(entries))
    plain = tmp_path / "plain.yaml"
    plain.write_text(SAMPLE_HEAD + "".join(SAMPLE_ENTRIES))

    got, want = _eval(capsys, with_drafts), _eval(capsys, plain)
    assert _means(got) == _means(want)
    assert got["queries"] == want["queries"]
    n = sum(len(c) for c in drafts.values())
    assert got["drafted"] == {"waiting": n, "queries": len(drafts)}
    assert want["drafted"] == {"waiting": 0, "queries": 0}

    assert main(["eval", *RUNS, "--gold", str(with_drafts)]) == 0
    out = capsys.readouterr().out
    assert f"{n} drafted labels in {len(drafts)} queries wait for a person" in out
    assert main(["eval", *RUNS, "--gold", str(plain)]) == 0
    assert "drafted" not in capsys.readouterr().out


def test_drafted_as_labels_equals_the_file_with_every_draft_judged(tmp_path, capsys, drafts):
    entries = SAMPLE_ENTRIES
    accepted = SAMPLE_ENTRIES
    for q, chunks in drafts.items():
        entries = _with(entries, q, _draft_line(chunks))
        # the same proposals written as a person's judgments: grade >= 1 gold at that grade, 0 not relevant
        block = next(b for b in accepted if b.startswith(f"  - id: {q}"))
        new = block
        for c, g in chunks.items():
            if g > 0:
                new = re.sub(r"(?m)^(    gold: \{)", lambda m: m.group(1) + f"{c}: {g}, ", new, count=1)
            else:
                new = re.sub(r"(?m)^(    not_relevant: \[)", lambda m: m.group(1) + f"{c}, ", new, count=1)
        assert new != block
        accepted = [new if b is block else b for b in accepted]
    with_drafts = tmp_path / "with.yaml"
    with_drafts.write_text(SAMPLE_HEAD + "".join(entries))
    judged = tmp_path / "judged.yaml"
    judged.write_text(SAMPLE_HEAD + "".join(accepted))

    got = _eval(capsys, with_drafts, "--drafted", "as-labels")
    want = _eval(capsys, judged)
    assert _means(got, "drafts_as_labels") == _means(want)
    assert _means(got) == _means(_eval(capsys, tmp_path / "with.yaml"))  # the real numbers stay beside them
    assert _means(got) != _means(want)  # the drafts move something, or this test would prove nothing

    assert main(["eval", *RUNS, "--gold", str(with_drafts), "--drafted", "as-labels"]) == 0
    head = capsys.readouterr().out.splitlines()[1]
    assert "bm25 +drafts" in head and "dense +drafts" in head


TAGS = {"typo": ["q03", "q08", "q20", "q31"], "follow-up": ["q09", "q20"], "csv": ["q02", "q40", "q41", "q45", "q71"]}


def test_by_tag_means_equal_eval_on_the_tags_queries_alone(tmp_path, capsys):
    entries = SAMPLE_ENTRIES
    for q in sorted({q for qs in TAGS.values() for q in qs}):
        entries = _with(entries, q, "    tags: [" + ", ".join(t for t, qs in TAGS.items() if q in qs) + "]")
    tagged = tmp_path / "tagged.yaml"
    tagged.write_text(SAMPLE_HEAD + "".join(entries))
    doc = _eval(capsys, tagged, "--by-tag")
    assert _means(doc) == _means(_eval(capsys, SAMPLE / "gold.yaml"))
    for tag, queries in TAGS.items():
        alone = tmp_path / f"{tag}.yaml"
        alone.write_text(SAMPLE_HEAD + "".join(b for b in SAMPLE_ENTRIES if b[len("  - id: "):].split()[0] in queries))
        want = _eval(capsys, alone)
        for run, expected in zip(doc["runs"], want["runs"]):
            assert run["by_tag"][tag]["metrics"] == pytest.approx(expected["metrics"], abs=1e-12), (tag, run["name"])
            assert run["by_tag"][tag]["queries"] == want["queries"]["scored"]
    assert list(doc["runs"][0]["by_tag"]) == ["csv", "typo", "follow-up"]  # first seen in the file

    assert main(["eval", *RUNS, "--gold", str(tagged), "--by-tag"]) == 0
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["follow-up"])
    assert row[2] == str(len(doc["runs"][0]["by_tag"]["follow-up"]["queries"]))


def test_retrieval_false_is_left_out_of_every_score_and_listed(tmp_path, capsys):
    out_of_scope = ["q04", "q30", "q66"]
    entries = SAMPLE_ENTRIES
    for q in out_of_scope:
        entries = _with(entries, q, "    retrieval: false")
    marked = tmp_path / "marked.yaml"
    marked.write_text(SAMPLE_HEAD + "".join(entries))
    without = tmp_path / "without.yaml"
    without.write_text(SAMPLE_HEAD + "".join(b for b in SAMPLE_ENTRIES if b[8:].split()[0] not in out_of_scope))
    got, want = _eval(capsys, marked), _eval(capsys, without)
    assert _means(got) == _means(want)
    assert got["queries"]["scored"] == want["queries"]["scored"]
    assert got["queries"]["not_retrieval"] == out_of_scope
    assert got["queries"]["not_in_gold"] == {"bm25": [], "dense": []}  # the runs' answers for them are not "unknown"
    assert set(want["queries"]["not_in_gold"]["bm25"]) == set(out_of_scope)

    assert main(["eval", *RUNS, "--gold", str(marked)]) == 0
    assert "3 marked retrieval: false (the answer is not inside a chunk; left out of every score): q04, q30, q66" \
        in capsys.readouterr().out


@pytest.mark.parametrize("line, expected", [
    ("    tags: typo", "tags: expected a list of tags"),
    ("    tags: [typo, [x]]", "expected each tag a word"),
    ("    retrieval: maybe", "retrieval: expected true or false"),
    ("    regression: ture", "regression: expected true or false"),  # not silently false: unguarded
    ("    reviewed: last tuesday", "reviewed: expected a date like 2026-11-30"),
    ("    drafted: {csv.reader#0: 2}", "labelled twice for query 'q02' (gold and drafted)"),
    ("    drafted: {csv#9: -1}", "grade -1; expected 0 or more"),
])
def test_bad_query_fields_name_the_line(tmp_path, capsys, line, expected):
    gold = tmp_path / "gold.yaml"
    gold.write_text(SAMPLE_HEAD + "".join(_with(SAMPLE_ENTRIES, "q02", line)))
    number = (SAMPLE_HEAD + "".join(_with(SAMPLE_ENTRIES, "q02", line))).splitlines().index(line) + 1
    assert main(["eval", RUNS[0], "--gold", str(gold)]) == 2
    err = capsys.readouterr().err
    assert f"{gold}:{number}:" in err and expected in err and "Traceback" not in err


def _drafted_and_tagged(tmp_path: Path, drafts: dict, *extra: tuple[str, str]) -> Path:
    """The sample label file with the drafts, the TAGS and the `extra` (query, line) pairs added."""
    entries = SAMPLE_ENTRIES
    for q, chunks in drafts.items():
        entries = _with(entries, q, _draft_line(chunks))
    for q in sorted({q for qs in TAGS.values() for q in qs}):
        entries = _with(entries, q, "    tags: [" + ", ".join(t for t, qs in TAGS.items() if q in qs) + "]")
    for q, line in extra:
        entries = _with(entries, q, line)
    gold = tmp_path / "gold.yaml"
    gold.write_text(SAMPLE_HEAD + "".join(entries))
    return gold


def test_diff_reports_drafts_tags_and_left_out_queries_as_eval_does(tmp_path, capsys, drafts):
    gold = _drafted_and_tagged(tmp_path, drafts, ("q66", "    retrieval: false"))
    evaluated = _eval(capsys, gold, "--by-tag", "--drafted", "as-labels")
    assert main(["diff", *RUNS, "--gold", str(gold), "--metrics", METRICS, "--json", "--by-tag",
                 "--drafted", "as-labels"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["drafted"] == evaluated["drafted"] and doc["drafted"]["waiting"] > 0
    assert doc["not_retrieval"] == ["q66"]
    for run in evaluated["runs"]:
        assert doc["by_tag"][run["name"]] == run["by_tag"]
        assert doc["drafts_as_labels"][run["name"]] == run["drafts_as_labels"]["metrics"]
    assert main(["diff", *RUNS, "--gold", str(gold), "--by-tag"]) == 0
    out = capsys.readouterr().out
    assert "wait for a person" in out and "Per tag" in out and "1 marked retrieval: false" in out


def _md_rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the Markdown table under the line that starts with `heading`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    table = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table[2:]  # past the header and the rule


def test_diff_markdown_carries_the_tags_and_the_drafts_as_the_json_does(tmp_path, capsys, drafts):
    from ragdiff.core.metrics.specs import parse_metric
    from ragdiff.core.report.cells import cell_value

    gold = _drafted_and_tagged(tmp_path, drafts)
    args = ["diff", *RUNS, "--gold", str(gold), "--metrics", METRICS, "--by-tag", "--drafted", "as-labels"]
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main([*args, "--markdown"]) == 0
    text = capsys.readouterr().out
    a, b = (Path(r).stem for r in RUNS)
    per_tag = _md_rows(text, "**Per tag**")
    expected = []
    for tag, entry in doc["by_tag"][a].items():
        for i, (metric, value) in enumerate(entry["metrics"].items()):
            other = doc["by_tag"][b][tag]["metrics"][metric]
            expected.append([tag if i == 0 else "", str(len(entry["queries"])) if i == 0 else "",
                             metric.replace("_", "\\_"), cell_value(parse_metric(metric), value),
                             cell_value(parse_metric(metric), other)])
    assert [row[:5] for row in per_tag] == expected and len(expected) == len(TAGS) * len(METRICS.split(","))
    drafted = _md_rows(text, "**As if every drafted label were accepted**")
    assert [row[:3] for row in drafted] == [
        [m.replace("_", "\\_"), cell_value(parse_metric(m), v), cell_value(parse_metric(m), doc["drafts_as_labels"][b][m])]
        for m, v in doc["drafts_as_labels"][a].items()]
