"""Fuzzing: valid files of every format, generated and then mutated; each parser loads or raises InputError.

RAGDIFF_FUZZ_EXAMPLES sets the examples per format (tests/counts.py: 60 for `make test`, 250 in CI, 3,000 a
run, about 25 s); RAGDIFF_FUZZ_EXAMPLES=1000 gives the 12,000-example run reported on issue 8.
"""

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.io.corpus import Corpus
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import load_gold
from ragdiff.core.io.runs import load_run
from counts import count

EXAMPLES = count("RAGDIFF_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ids = st.text(alphabet="abcq0179-_.#:éx[]/\\\"' 🎉", min_size=1, max_size=8)
scores = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5))


def trec(rows):
    return "".join(f"{q} Q0 {c} {r} {s} tag\n" for q, c, r, s in rows)


def qrels(rows):
    return "".join(f"{q} 0 {c} {g}\n" for q, c, _, g in rows)


def jsonl(rows):
    by_q = {}
    for q, c, _, s in rows:
        by_q.setdefault(q, []).append({"id": c, "score": s} if isinstance(s, int) else c)
    return "".join(json.dumps({"query_id": q, "results": r}) + "\n" for q, r in by_q.items())


def agent(rows):
    by_q = {}
    for q, c, _, _ in rows:
        by_q.setdefault(q, []).append(c)
    return "".join(json.dumps({"query_id": q, "searches": [{"query": q, "results": r}, {"query": "again",
                                                                                      "results": r[::-1]}]}) + "\n"
                   for q, r in by_q.items())


def json_map(rows):
    out = {}
    for q, c, _, s in rows:
        out.setdefault(q, {})[c] = s if isinstance(s, int) else 0.5
    return json.dumps(out, indent=1)


def table(sep):
    def make(rows):
        return "query_id" + sep + "chunk_id" + sep + "rank\n" + "".join(f"{q}{sep}{c}{sep}{r}\n" for q, c, r, _ in rows)
    return make


def label_yaml(rows):
    lines = ["# labels", "corpus: {path: corpus.jsonl}", "queries:"]
    for q, c, r, g in rows:
        lines += [f"  - id: {q}", f"    text: {c} {q}", f"    gold: {{{c}: {r % 4}}}" if r % 2 else
                  f"    gold: [{c}]", f"    not_relevant: [x{c}]"]
    return "\n".join(lines) + "\n"


def short_yaml(rows):
    return "".join(f"{q}: [{c}]\n" for q, c, _, _ in rows)


def corpus(rows):
    return "".join(json.dumps({"id": c, "text": f"text of {c}", "title": q}) + "\n" for q, c, _, _ in rows)


rows = st.lists(st.tuples(ids, ids, st.integers(-2, 60), scores), min_size=0, max_size=8)


@st.composite
def mutated(draw, render):
    text = render(draw(rows)).encode("utf-8")
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "dup_line", "none"]))
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        if kind == "flip" and text:
            text = text[:at] + bytes([draw(st.integers(0, 255))]) + text[at + 1:]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from([b"\t", b" ", b"\r\n", b"\n", b"{", b"]", b"\x00", b"\xff",
                                                     b"&a ", b"*a", b"- ", b": ", b"#", b"\"", b"\xef\xbb\xbf", b"\\ud800", b"\\udf89"])) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + 1:]
        elif kind == "truncate":
            text = text[:at]
        elif kind == "dup_line" and b"\n" in text:
            line = text.split(b"\n")[draw(st.integers(0, text.count(b"\n")))]
            text = text + line + b"\n"
    return text


def loads_or_input_error(tmp_path, name, data, loader):
    path = tmp_path / name
    path.write_bytes(data)
    try:
        loader(path)
    except InputError as err:
        assert str(err).startswith(str(path)), str(err)


def make_test(render, name, loader):
    @FUZZ
    @given(data=mutated(render))
    def test(tmp_path_factory, data):
        loads_or_input_error(tmp_path_factory.mktemp("fuzz"), name, data, loader)
    return test


def read_corpus(path):
    c = Corpus(path)
    for chunk_id in list(c.index())[:3]:
        c.get(chunk_id)


test_fuzz_trec_run = make_test(trec, "run.trec", load_run)
test_fuzz_jsonl_run = make_test(jsonl, "run.jsonl", load_run)
test_fuzz_agent_run = make_test(agent, "agent.jsonl", load_run)
test_fuzz_json_map_run = make_test(json_map, "run.json", load_run)
test_fuzz_csv_run = make_test(table(","), "run.csv", load_run)
test_fuzz_tsv_run = make_test(table("\t"), "run.tsv", load_run)
test_fuzz_sniffed_run = make_test(trec, "run.unknown", load_run)
test_fuzz_qrels = make_test(qrels, "gold.qrels", load_gold)
test_fuzz_label_yaml = make_test(label_yaml, "gold.yaml", load_gold)
test_fuzz_short_yaml = make_test(short_yaml, "gold.yml", load_gold)
test_fuzz_json_gold = make_test(json_map, "gold.json", load_gold)
test_fuzz_corpus = make_test(corpus, "corpus.jsonl", read_corpus)


# ---- the JSON span scanner: every node's span is the text of exactly its value -------------------------------

json_values = st.recursive(
    st.one_of(st.text(alphabet="ab\"\\/é\n\t\u2028\x85🎉\ud83d", max_size=6), st.integers(-10**6, 10**6),
              st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(alphabet="abé\"\\ 🎉", max_size=4), inner, max_size=4)),
    max_leaves=25)


def _value_of(text, node):
    """What the node tree says, as Python values, each scalar read from its own span of the text."""
    from ragdiff.core.labels.spans import MappingNode, ScalarNode

    span = text[node.start_mark.index:node.end_mark.index]
    if node.__class__ is ScalarNode:
        assert node.value == (json.loads(span) if node.style == '"' else span)
        return json.loads(span)
    if node.__class__ is MappingNode:
        assert span[0] == "{" and span[-1] == "}"
        return {_value_of(text, k): _value_of(text, v) for k, v in node.value}
    assert span[0] == "[" and span[-1] == "]"
    return [_value_of(text, item) for item in node.value]


@FUZZ
@given(value=json_values, indent=st.sampled_from([None, 0, 2, "\t"]), ascii_only=st.booleans())
def test_json_span_scanner_spans_read_back_as_the_values(value, indent, ascii_only):
    from ragdiff.core.labels.spans import compose_json

    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    try:
        expected = json.loads(text)
    except ValueError:  # a lone surrogate that json.dumps wrote unescaped cannot be read back
        return
    try:
        root = compose_json(text)
    except Exception as err:  # a lone surrogate escape is refused by name
        assert "surrogate" in str(err)
        return
    assert _value_of(text, root) == expected
