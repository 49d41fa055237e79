"""The judging queue's step for a query a model drafted (`proposed: true`, from `labels add --from DRAFTED.jsonl`).

Before its chunks, such a query asks one key: `a` keeps the query (its `proposed:` goes from the label file) and
`d` drops it (its entry leaves the label file, its drafts with it). Both are decisions like a mark: written by the
label writer in the order the keys came (`LabelSession.keep_query`, `drop_query`), journaled, and taken back
with `u`. The queue moves at once, whatever the writer is doing: a kept query shows its first chunk, a dropped
one leaves the walk and the pool's counts (`JudgeQueue.set_dropped`); a decision the writer refuses is put back
and said in red.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from ragdiff.app.text import clean, literal

KEEP, DROP = "keep_query", "drop_query"


@dataclass(frozen=True)
class QueryDecision:
    """What a keep or drop applies to, captured when its key was pressed (a MarkDone's `target`). `chunk_id` is
    empty: the queue's failure path, which takes a chunk out of flight, then touches nothing."""

    query_id: str
    decision: str  # KEEP | DROP
    chunk_id: str = ""


def waits(queue, query_id: str) -> bool:
    """Is this query a drafted one that nobody has kept or dropped yet?"""
    return query_id in queue.proposed and not queue.is_dropped(query_id)


def decide(queue, session, query_id: str, decision: str) -> None:
    """The decision made on screen at once, and sent to the writer."""
    if decision == KEEP:
        queue.proposed.discard(query_id)
        session.keep_query(QueryDecision(query_id, KEEP))
    else:
        queue.set_dropped(query_id, True)
        session.drop_query(QueryDecision(query_id, DROP))


def apply_outcome(queue, message) -> None:
    """A keep or drop the writer refused is put back; one taken back with `u` waits again."""
    target = message.target
    if message.error and isinstance(target, QueryDecision):
        _undecide(queue, target.query_id, target.decision)
    edit = message.query_edit
    if message.undo and edit is not None and edit.kind in (KEEP, DROP):
        _undecide(queue, edit.query_id, edit.kind)


def _undecide(queue, query_id: str, decision: str) -> None:
    if decision == KEEP:
        queue.proposed.add(query_id)
    else:
        queue.set_dropped(query_id, False)


def reminder(query_id: str) -> str:
    """What a decision key on a waiting query says instead of deciding."""
    return f"{clean(query_id)} is a drafted query: keep it (a) or drop it (d) before its chunks"


def step_title(query_id: str) -> str:
    return f"drafted query {clean(query_id)} · a keeps it · d drops it"


def step_body(queue, query_id: str, chunk_text: Text | None) -> Text:
    """What the chunk pane shows while the query waits: the question, the keys, and the chunk it was drafted
    from (the first of its pool, which the queue puts first: no run ranks it)."""
    body = Text(end="")
    body.append("A model drafted this query (labels add --from). Is it a question a user would ask?\n\n",
                style="bold")
    body.append_text(literal(queue.texts.get(query_id, ""), style="bold", multiline=True))
    body.append("\n\na  keep the query, then judge its chunks\n"
                "d  drop it: it leaves the label file (u brings it back)\n"
                "s  skip it for now\n")
    if chunk_text is not None:
        body.append("\ndrafted from:\n", style="dim")
        body.append_text(chunk_text)
    return body
