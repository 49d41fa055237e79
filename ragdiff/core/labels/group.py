"""A batch of marks planned as one edit of the label file (the group commit's planner).

Marks on different chunks commute: a batch is cut into rounds, each holding at most one mark per chunk (a chunk's
marks stay in the order they were made, one round after another), and a round is planned with ONE span editor
over the text and read back once (`reparse_many`: only the edited entries are composed again). Planning each mark on the whole text after the one before cost ~30 ms a mark in a 2 MB label
file (a copy of the text, a shift of every entry, a line diff of the whole file each time).

A round the document class cannot plan together (TREC qrels have no span editor; two edits that would touch
one place; a read-back that does not say exactly the round's changes) is planned one mark after another by the
caller's `one`, which is the single mark's path, with its own checks and refusals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ragdiff.core.labels.atomic import line_patch
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.errors import LabelFormatError
from ragdiff.core.labels.marks import Mark
from ragdiff.core.labels.yaml_edits import map_grade

CONTEXT = 4  # lines kept either side of a mark's own edits when its patch is cut from the round's text


@dataclass
class Planned:
    """One mark of a batch, planned: what the chunk was, the notes for its sentence, the patch undo uses
    (None for a mark that changes nothing)."""

    mark: Mark
    prev: tuple[str, int | None]
    notes: list[str] = field(default_factory=list)
    patch: dict | None = None

    @property
    def noop(self) -> bool:
        return self.patch is None


def rounds(marks: list[tuple[int, Mark]], per: str = "chunk") -> list[list[tuple[int, Mark]]]:
    """The batch cut into rounds, keeping its order: a chunk's next mark goes to a later round than its last, and
    a query's marks never go to an earlier round than the mark before them (so the ids a query's lists gain are
    in the order they were decided, as one mark after another would write them). per="query": one mark per
    query a round. Marks on one query's different chunks can share a round: their edits of the entry usually do
    not touch one place (two ids appended to one list are two inserts), and when they do the round's read-back
    says so and it is cut per query."""
    last_chunk: dict[tuple[str, str], int] = {}
    last_query: dict[str, int] = {}
    out: list[list[tuple[int, Mark]]] = []
    for i, mark in marks:
        pair = (mark.query_id, mark.chunk_id)
        if per == "query":
            n = last_query.get(mark.query_id, -1) + 1
        else:
            n = max(last_query.get(mark.query_id, 0), last_chunk.get(pair, -1) + 1)
        last_chunk[pair], last_query[mark.query_id] = n, n
        while n >= len(out):
            out.append([])
        out[n].append((i, mark))
    return out


def expected_state(doc: LabelDoc, mark: Mark, state: dict) -> None:
    """The query's {chunk: (label, grade)} after `mark`, in `state` (one dict per query, changed in place)."""
    q = state.setdefault(mark.query_id, doc.state_of(mark.query_id))
    q.pop(mark.chunk_id, None)
    if mark.label != "none":
        q[mark.chunk_id] = (mark.label, map_grade(mark.label, mark.grade))


def _patches(text: str, edits: list[list[tuple[int, int, str]]], lines_before: int, start: int) -> list[dict]:
    """One query's marks of a round, in order: each one's line patch as one mark after another would record it
    (its text before = the round's text with the marks before it), found on a window of a few lines around
    their edits, not on the whole text. `at` counts the lines before the window in the round's text: where undo
    looks first (it finds the lines by their content when they have moved)."""
    end = _window_end(text, max(e for own in edits for _s, e, _r in own))
    done: list[tuple[int, int, str]] = []
    out = []
    before = _applied(text, start, end, done)
    for own in edits:
        done += own
        after = _applied(text, start, end, done)
        patch = line_patch(before, after)
        patch["at"] += lines_before
        out.append(patch)
        before = after
    return out


def _applied(text: str, start: int, end: int, edits: list[tuple[int, int, str]]) -> str:
    pieces, at = [], start
    for s, e, r in sorted(edits, key=lambda x: (x[0], x[1])):  # stable: one place's inserts in the marks' order
        pieces += (text[at:s], r)
        at = e
    pieces.append(text[at:end])
    return "".join(pieces)


def _window_start(text: str, pos: int) -> int:
    start = text.rfind("\n", 0, pos) + 1
    for _ in range(CONTEXT):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    return start


def _window_end(text: str, pos: int) -> int:
    end = pos
    for _ in range(CONTEXT + 1):
        if end >= len(text):
            return len(text)
        nl = text.find("\n", end)
        end = len(text) if nl < 0 else nl + 1
    return end


def plan_round(doc: LabelDoc, batch: list[tuple[int, Mark]], parse: Callable[[str], LabelDoc],
               is_noop: Callable[[LabelDoc, Mark], bool]) -> tuple[LabelDoc, dict[int, Planned | Exception]] | None:
    """One round (one mark per chunk) as one edit of `doc`, verified; None when it cannot be done together (the
    caller then cuts it per query, then plans its marks one by one)."""
    if not hasattr(doc, "_plan") or not hasattr(doc, "editor"):
        return None
    ed = doc.editor()
    out: dict[int, Planned | Exception] = {}
    owned: dict[int, tuple[int, int]] = {}  # batch index -> its slice of ed.edits
    grown: dict[str, int] = {}
    state: dict[str, dict] = {}
    for i, mark in batch:
        prev = doc.current(mark.query_id, mark.chunk_id)
        if is_noop(doc, mark):
            out[i] = Planned(mark, prev)
            continue
        if not doc.can_express(mark.label):
            return None  # the single path says why, in the format's own words
        first, notes_at = len(ed.edits), len(ed.notes)
        try:
            doc._plan(ed, mark.query_id, mark.chunk_id, mark.label, mark.grade)
        except LabelFormatError as err:
            del ed.edits[first:], ed.notes[notes_at:]
            out[i] = err
            continue
        notes = ed.notes[notes_at:]
        if mark.label == "gold" and mark.grade is None and doc.graded(mark.query_id):
            notes = [*notes, "grade 1, the default for this graded set"]
        if len(ed.edits) == first:  # nothing to change that `is_noop` did not see: the single path says what
            return None
        owned[i] = (first, len(ed.edits))
        grown[mark.query_id] = grown.get(mark.query_id, 0) + sum(len(r) - (e - s) for s, e, r in ed.edits[first:])
        expected_state(doc, mark, state)
        out[i] = Planned(mark, prev, notes)
    if not owned:
        return doc, out
    try:
        new_text = ed.result()
    except LabelFormatError:
        return None
    if not new_text.strip() or ("\x00" in new_text and "\x00" not in doc.text):
        return None
    new_doc = doc.reparse_many(new_text, grown) if hasattr(doc, "reparse_many") else None
    if new_doc is None:
        try:
            new_doc = parse(new_text)
        except Exception:  # noqa: BLE001 - the single path gives the refusal its words
            return None
        whole = doc.state()
        whole.update(state)
        if new_doc.state() != whole or list(new_doc.order) != list(doc.order):
            return None
    elif any(new_doc.state_of(q) != s for q, s in state.items()):
        return None
    text = doc.text
    by_query: dict[str, list[int]] = {}
    for i, _mark in batch:
        if i in owned:
            by_query.setdefault(out[i].mark.query_id, []).append(i)
    windows = sorted((_window_start(text, min(s for i in ids for s, _e, _r in ed.edits[slice(*owned[i])])), q)
                     for q, ids in by_query.items())
    lines, counted = 0, 0
    for start, q in windows:
        lines += text.count("\n", counted, start)
        counted = start
        ids = by_query[q]
        for i, patch in zip(ids, _patches(text, [ed.edits[slice(*owned[i])] for i in ids], lines, start)):
            out[i].patch = patch
    return new_doc, out
