"""Random label files of every format, random ids, random marks and undos (issue 15, must-show 2).

After every step: the file loads with `load_gold`, holds exactly the judgments a plain dict model says it
should, and every line that does not belong to the marked query is byte-identical, in order. Ids are drawn
from the ones YAML would read as something else (null, ~, bools, numbers, dates, anchors, tags, comments,
line separators) and from random text.

Examples per format: RAGDIFF_LABEL_EXAMPLES (default 10) — raise it for a long soak, e.g. 500.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels import LabelFile, LabelFormatError, Mark, UnknownQueryError
from ragdiff.core.labels.qrels_doc import QrelsDoc
from ragdiff.core.labels.reader import parse_document
from ragdiff.core.labels.short_doc import ShortDoc
from ragdiff.core.labels.spans import content_end, to_node

EXAMPLES = int(os.environ.get("RAGDIFF_LABEL_EXAMPLES", "10"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

TRICKY = ["null", "~", "NULL", "Null", "true", "False", "yes", "no", "on", "off", "y", "n", "007", "1e3", "0x1f",
          "1_000", "2001-12-14", "12:30", "-1", ".5", ".inf", ".nan", "a b", "#x", "a #b", "- x", "x: y", "[x]",
          "{x}", "'q'", '"d"', "!t", "!!int 7", "&a", "*b", "%p", "@at", "`b", "|", ">", "?q", "a\u2028b", "\u2029",
          "x\x85y", "é-1", "🙂", "tab\tx", "back\\slash", " lead", "trail ", "policy-14", "c1", "c2", "query-id"]
FORMATS = ("yaml-label", "yaml-short", "json-short", "json-label", "qrels", "beir")
KINDS = {"yaml-label": ("gold", "evidence", "not_relevant"), "json-label": ("gold", "evidence", "not_relevant")}


def valid(fmt: str, s: str) -> bool:
    if not s.strip():
        return False
    if fmt == "qrels":
        return not any(ch.isspace() for ch in s) and not s.startswith("#") and "\x00" not in s
    if fmt == "beir":
        return not any(ch in s for ch in "\t\r\n\x00") and not s.lower().startswith("query-id")
    return True


def ids(fmt: str):
    text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)
    return st.one_of(st.sampled_from(TRICKY), text).filter(lambda s: valid(fmt, s))


# --------------------------------------------------------------------------------------- file writers


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def w(s: str) -> str:
    """An id as a person would write it in YAML: plain when obviously safe, else a JSON string."""
    return s if _PLAIN.match(s) and s.lower() not in _YAML_WORDS else json.dumps(s)


def yaml_section(name: str, items: dict[str, int], style: str, graded: bool, indent: str) -> list[str]:
    if style == "flow":
        body = ", ".join(f"{w(c)}: {g}" if graded else w(c) for c, g in items.items())
        return [f"{indent}{name}: {{{body}}}" if graded else f"{indent}{name}: [{body}]"]
    if not items:
        return [f"{indent}{name}: {{}}" if graded else f"{indent}{name}: []"]
    lines = [f"{indent}{name}:"]
    for c, g in items.items():
        lines.append(f"{indent}  {w(c)}: {g}" if graded else f"{indent}  - {w(c)}  # {c[:3]!r}")
    return lines


def write_file(tmp: Path, fmt: str, model: dict, styles: list[str], nl: str) -> Path:
    order = list(model)
    if fmt == "yaml-label":
        lines = ["# a label file", "queries:"]
        for i, q in enumerate(order):
            lines.append(f"  - id: {w(q)}   # query {i}")
            lines.append(f"    text: query number {i}")
            for name in ("gold", "evidence", "not_relevant"):
                items = {c: g for c, (lv, g) in model[q].items() if lv == name}
                graded = name == "gold" and any(g != 1 for g in items.values())
                if items or styles[i % len(styles)] == "flow":
                    lines += yaml_section(name, items, styles[(i + len(name)) % len(styles)], graded, "    ")
            lines.append("    # end of entry")
        path = tmp / "gold.yaml"
        path.write_text(nl.join(lines) + nl, encoding="utf-8")
        return path
    if fmt == "yaml-short":
        lines = ["# the lesson's short form"]
        for i, q in enumerate(order):
            items = {c: (0 if lv == "not_relevant" else g) for c, (lv, g) in model[q].items()}
            graded = any(g != 1 for g in items.values())
            lines += yaml_section(w(q), items, styles[i % len(styles)], graded, "")
        path = tmp / "gold.yaml"
        path.write_text(nl.join(lines) + nl, encoding="utf-8")
        return path
    if fmt in ("json-short", "json-label"):
        indent = 2 if styles[0] == "block" else None
        if fmt == "json-short":
            data = {}
            for q in order:
                items = {c: (0 if lv == "not_relevant" else g) for c, (lv, g) in model[q].items()}
                data[q] = items if any(g != 1 for g in items.values()) else list(items)
        else:
            data = {"queries": []}
            for i, q in enumerate(order):
                entry = {"id": q, "text": f"query {i}"}
                for name in ("gold", "evidence", "not_relevant"):
                    items = {c: g for c, (lv, g) in model[q].items() if lv == name}
                    if items:
                        entry[name] = items if name == "gold" and any(g != 1 for g in items.values()) else list(items)
                data["queries"].append(entry)
        path = tmp / "gold.json"
        path.write_text(json.dumps(data, indent=indent, ensure_ascii=styles[-1] == "flow") + nl, encoding="utf-8")
        return path
    if fmt == "qrels":
        seps = [" ", "\t", "  "]
        lines = ["# qid 0 chunk grade"]
        for i, q in enumerate(order):
            for j, (c, (lv, g)) in enumerate(model[q].items()):
                sep = seps[(i + j) % 3]
                lines.append(sep.join([q, "0", c, str(g)]))
        path = tmp / "gold.qrels"
        path.write_text(nl.join(lines) + nl, encoding="utf-8")
        return path
    folder = tmp / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": "t"}) + "\n" for q in order))
    lines = ["query-id\tcorpus-id\tscore"] if styles[0] == "flow" else []
    for q in order:
        lines += [f"{q}\t{c}\t{g}" for c, (lv, g) in model[q].items()]
    (folder / "qrels" / "test.tsv").write_text(nl.join(lines) + nl, encoding="utf-8")
    return folder


@st.composite
def label_sets(draw, fmt: str):
    qids = draw(st.lists(ids(fmt), min_size=1, max_size=4, unique=True))
    kinds = KINDS.get(fmt, ("gold", "not_relevant"))
    model = {}
    for q in qids:
        chunks = draw(st.lists(ids(fmt), min_size=1 if fmt in ("qrels", "beir") else 0, max_size=4, unique=True))
        model[q] = {}
        for c in chunks:
            kind = draw(st.sampled_from(kinds))
            model[q][c] = (kind, draw(st.integers(1, 3)) if kind == "gold" else (1 if kind == "evidence" else 0))
    return model


def steps(fmt: str):
    label = st.sampled_from(["gold", "evidence", "not_relevant", "none"])
    mark = st.tuples(st.just("mark"), st.integers(0, 9), st.one_of(st.integers(0, 9), ids(fmt)), label,
                     st.sampled_from([None, None, 1, 2, 3]))
    return st.lists(st.one_of(mark, st.just(("undo",))), min_size=1, max_size=8)


# ------------------------------------------------------------------------------------------- checks


def judged(path: Path) -> tuple[list[str], dict]:
    gold = load_gold(path)
    js = {}
    for q, c, g, lv in gold.judgments.select("query_id", "chunk_id", "grade", "level").iter_rows():
        js.setdefault(q, {})[c] = (lv, g)
    return gold.queries.get_column("query_id").to_list(), js


def owned_lines(file: Path, fmt: str, folder: Path | None, q: str) -> set[int]:
    """The 1-based lines that belong to query q's entry (or qrels lines), per the file's own reader."""
    text = file.read_text(encoding="utf-8")
    doc_fmt = {"yaml-label": "yaml", "yaml-short": "yaml", "json-short": "json", "json-label": "json"}.get(fmt, fmt)
    doc = parse_document(file, doc_fmt, text, folder)
    if isinstance(doc, QrelsDoc):
        return {line for (_lv, _g, line) in doc.judg.get(q, {}).values()}
    if isinstance(doc, ShortDoc):
        if q not in doc.values:
            return set()
        k, v = (to_node(n) for n in doc.values[q])
        return set(range(doc.line_of(k.start), doc.line_of(max(content_end(text, v) - 1, k.start)) + 1))
    entry = to_node(doc.entries[q])
    return set(range(doc.line_of(entry.start), doc.line_of(content_end(text, entry) - 1) + 1))


def others(file: Path, owned: set[int]) -> list[str]:
    lines = file.read_bytes().split(b"\n")
    return [line for i, line in enumerate(lines, start=1) if i not in owned]


def _spans(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        # a block collection's end is where the next token starts (past trailing comments), which depends on
        # what follows the entry; the editor never reads it (spans.content_end ends a block at its last item)
        end = n.end if n.kind == "scalar" or n.flow else None
        out.append((n.kind, n.start, end, n.value, n.style, n.flow))
        stack.extend(n.items)
        for k, v in n.pairs:
            stack += [k, v]
    return out


def check_snapshot(lf: LabelFile, file: Path) -> None:
    """The writer's next snapshot (after a one-entry reparse, positions shifted) is what a whole parse of
    the file gives: the same judgments and, node for node, the same spans."""
    snap = lf._snap.doc
    text = file.read_bytes().decode("utf-8").removeprefix("\ufeff")
    assert snap.text == text
    fresh = lf._parse(text)
    assert snap.state() == fresh.state() and snap.order == fresh.order
    if hasattr(fresh, "entries"):
        for q in fresh.order:
            assert _spans(snap.entry(q)) == _spans(fresh.entry(q)), q
    if hasattr(fresh, "frame"):  # qrels/BEIR: the same rows on the same lines, the same line starts
        assert snap.frame.equals(fresh.frame)
        assert snap.line_starts().tolist() == fresh.line_starts().tolist()
        assert {q: dict(snap.judg[q]) for q in snap.order} == {q: dict(fresh.judg[q]) for q in fresh.order}


def check_sequence(fmt: str, model: dict, styles: list[str], nl: str, actions: list) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="ragdiff-prop-"))
    try:
        path = write_file(tmp, fmt, model, styles, nl)
        queries, state = judged(path)
        assert queries == list(model) and state == {q: d for q, d in model.items() if d}, "the generated file"
        lf = LabelFile(path, reviewer="prop")
        file, folder = lf.path, (path if fmt == "beir" else None)
        expected = {q: dict(d) for q, d in model.items()}
        undo: list[tuple[str, str, tuple | None]] = []
        for action in actions:
            before_text = file.read_bytes()
            if action[0] == "undo":
                if not undo:
                    assert lf.undo() is None
                    assert file.read_bytes() == before_text
                    continue
                q, c, back = undo.pop()
                owned_before = owned_lines(file, fmt, folder, q)
                change = lf.undo()
                assert change is not None and (change.query_id, change.chunk_id) == (q, c)
                if back is None:
                    expected.setdefault(q, {}).pop(c, None)
                else:
                    expected.setdefault(q, {})[c] = back
            else:
                _, qi, ci, label, grade = action
                present = [q for q in expected if expected[q] or fmt not in ("qrels", "beir")]
                if not present:  # qrels whose every line was removed: nothing left to mark but undo
                    continue
                q = present[qi % len(present)]
                chunk = ci if isinstance(ci, str) else (list(expected[q]) or ["fresh"])[ci % max(1, len(expected[q]))]
                if label != "gold":
                    grade = None
                cur = expected[q].get(chunk)
                owned_before = owned_lines(file, fmt, folder, q)
                kinds = KINDS.get(fmt, ("gold", "not_relevant"))
                if label not in kinds and label != "none":
                    try:
                        lf.apply(Mark(q, chunk, label, grade))
                    except LabelFormatError:
                        assert file.read_bytes() == before_text
                        continue
                    raise AssertionError(f"{fmt} took {label}")
                if label == "none":
                    target = None
                elif label == "gold" and grade is None:
                    target = cur if cur and cur[0] == "gold" else ("gold", 1)
                else:
                    target = (label, grade if label == "gold" else (1 if label == "evidence" else 0))
                left = sum(len(d) for d in expected.values()) - (1 if cur is not None else 0)
                if target is None and cur is not None and left == 0 and fmt == "beir" and styles[0] == "block":
                    try:  # the last line of a BEIR file without a header: an empty file is not a gold set
                        lf.apply(Mark(q, chunk, label, grade))
                    except LabelFormatError as err:
                        assert "empty" in str(err) and file.read_bytes() == before_text
                        continue
                    raise AssertionError("emptied a BEIR file")
                change = lf.apply(Mark(q, chunk, label, grade))
                assert change.saved == (target != cur), (cur, target, change.message)
                if change.saved:
                    undo.append((q, chunk, cur))
                    if target is None:
                        expected[q].pop(chunk, None)
                    else:
                        expected[q][chunk] = target
            # after every step: it loads, says exactly the model, and the other queries' lines are untouched
            check_snapshot(lf, file)
            queries, state = judged(path)
            assert state == {qq: d for qq, d in expected.items() if d}
            owned_after = owned_lines(file, fmt, folder, q)
            old_file = tmp / "before"
            old_file.write_bytes(before_text)
            assert others(file, owned_after) == others(old_file, owned_before), file.read_text()
    except UnknownQueryError as err:  # pragma: no cover
        raise AssertionError(str(err)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _case(fmt):
    @SETTINGS
    @given(model=label_sets(fmt), styles=st.lists(st.sampled_from(["flow", "block"]), min_size=1, max_size=3),
           nl=st.sampled_from(["\n", "\r\n"]), actions=steps(fmt))
    def test(model, styles, nl, actions):
        check_sequence(fmt, model, styles, nl, actions)

    test.__name__ = f"test_random_marks_and_undos_{fmt.replace('-', '_')}"
    return test


for _fmt in FORMATS:
    globals()[f"test_random_marks_and_undos_{_fmt.replace('-', '_')}"] = _case(_fmt)
