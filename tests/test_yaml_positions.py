"""libyaml (CSafeLoader) and the pure-Python loader must give the same node positions, in Python str
indices: the span editor cuts the text at them. Characters outside the BMP, CJK, CRLF, tabs, line
separators inside quotes and escapes all count as one position each; a BOM is never passed in (libyaml
does not count it, the Python loader does: `compose_yaml` refuses it and the readers drop it first)."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiff.core.labels import spans

pytestmark = pytest.mark.skipif(not spans.LIBYAML, reason="libyaml is not installed")


def positions(text: str, loader) -> list[tuple]:
    out, stack = [], [yaml.compose(text, Loader=loader)]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        out.append((type(n).__name__, n.start_mark.index, n.end_mark.index,
                    n.value if isinstance(n, yaml.ScalarNode) else None, n.style or None if isinstance(n, yaml.ScalarNode) else None))
        if isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack += [k, v]
    return out


CASES = [
    "queries:\n  - id: q🙂1\n    gold: [\"🙂\", 𝔘𝔫𝔦, c]\n",
    "queries:\r\n  - id: 質問\r\n    gold: {答え: 3, \"x\\u2028y\": 1}\r\n",
    "a: \"line\\u2028sep \U0001F389\"\nb: 'it''s'\nc: [1, 2]  # a comment\n",
    "k:\n  - |\n    block 🙂\n    text\n  - >\n    folded\n  - end\n",
    "q: {a: 1,\n  b: 2,   # c 🙂\n  c: 3}\n",
]


@pytest.mark.parametrize("text", CASES)
def test_libyaml_and_python_loader_agree_on_positions(text):
    c = positions(text, spans._LOADERS[0])
    p = positions(text, spans._LOADERS[-1])
    assert c == p
    for _kind, start, end, value, style in c:
        if value is not None and style is None and value:
            assert text[start:end] == value  # a plain scalar's span is exactly its text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=5), min_size=1, max_size=5))
def test_positions_agree_for_any_quoted_ids(ids):
    import json

    text = "k: [" + ", ".join(json.dumps(i, ensure_ascii=False) for i in ids) + "]\nz: end\n"
    try:
        c = positions(text, spans._LOADERS[0])
    except yaml.YAMLError:
        return  # libyaml refuses some characters the YAML spec does not allow unescaped; not our text
    assert c == positions(text, spans._LOADERS[-1])


def test_a_bom_is_dropped_before_composing():
    assert positions("\ufeffa: b\n", spans._LOADERS[0]) != positions("\ufeffa: b\n", spans._LOADERS[-1])
    with pytest.raises(ValueError):
        spans.compose_yaml("\ufeffa: b\n")


def test_where_the_loaders_differ_the_python_one_refuses_rather_than_misreads():
    """libyaml takes a tab as separation (`c: 1<TAB># x`); PyYAML's Python loader refuses it. ragdiff reads
    with libyaml when it is installed (PyYAML's wheels carry it); on the fallback such a file is an error
    with its line (exit 2), never read differently."""
    text = "c: [1,\t2]\nd: 1\t# x\n"
    assert positions(text, spans._LOADERS[0])
    with pytest.raises(yaml.YAMLError):
        positions(text, spans._LOADERS[-1])
