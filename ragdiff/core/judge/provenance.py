"""Who judged what, when, from which run and rank, and what it was before: the journal read as a history.

The journal (core/labels/journal.py) is written by the label writer, one op line per mark or undo and a line after
it saying whether it was saved. This module only reads it: `history` turns the ops into `Entry`s in journal
order, with what became of each; `draft_decisions` counts, per proposed grade, how often a person accepted or
overturned a model's draft, and `query_decisions` how often a drafted query was kept or dropped (DESIGN.md,
"Drafted labels, provenance, growing the set").
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ragdiff.core import vocab
from ragdiff.core.errors import InputError
from ragdiff.core.labels.journal import JOURNAL_SUFFIX, Journal, first_problem, journal_path, replay

from ragdiff.core.labels import Judgment, judgment

# what became of an op, in words a person reads
SAVED, NO_CHANGE, FAILED, DROPPED, UNCONFIRMED = "saved", "no change", "failed", "dropped", "not confirmed"


@dataclass(frozen=True)
class Entry:
    id: str
    action: str  # "mark" | "undo"
    when: str  # UTC ISO 8601
    who: str | None
    query_id: str
    chunk_id: str
    before: Judgment
    after: Judgment
    run: str | None
    rank: int | None
    status: str  # SAVED | NO_CHANGE | FAILED | DROPPED | UNCONFIRMED
    undone_by: str | None = None  # the undo op that took this mark back
    undoes: str | None = None  # for an undo: the mark it took back
    file: str | None = None  # the label file's name, as the journal recorded it
    edit: str | None = None  # a change beyond one chunk: "add_query" | "corpus" (chunk_id is then "")
    summary: str | None = None  # that change in words
    corpus_sha256: str | None = None  # a snapshot edit: the sha256 it recorded, and the one before it
    prev_corpus_sha256: str | None = None

    @property
    def changed_file(self) -> bool:
        return self.status == SAVED

    def to_json(self) -> dict:
        out = asdict(self)
        out["before"] = {"kind": self.before.kind, "grade": self.before.grade, "word": self.before.word}
        out["after"] = {"kind": self.after.kind, "grade": self.after.grade, "word": self.after.word}
        return out


def journals_of(label_path: str | Path) -> list[Path]:
    """The journal(s) of a label file: beside the file a link points to (where the writer keeps it); for a
    BEIR folder, beside each of its qrels files."""
    path = Path(label_path)
    if path.is_dir():
        return sorted(p for p in path.rglob(f"*{JOURNAL_SUFFIX}") if p.is_file())
    return [journal_path(os.path.realpath(path))]


def history(label_path: str | Path, query_id: str | None = None) -> list[Entry]:
    """Every mark and undo in the journal(s), oldest first, optionally for one query."""
    entries: list[Entry] = []
    for journal in journals_of(label_path):
        state = replay(_read(journal))
        for op in state.ops.values():
            rec = op.record
            if query_id is not None and rec.get("query") != query_id:
                continue
            if rec.get("noop"):
                status = NO_CHANGE
            elif op.retried_by is not None and op.status != "saved":
                status = FAILED
            else:
                status = {"saved": SAVED, "failed": FAILED, "dropped": DROPPED}.get(op.status, UNCONFIRMED)
            edit = rec.get("edit")
            entries.append(Entry(
                id=op.id, action=op.kind, when=str(rec.get("when", "")), who=rec.get("who"),
                query_id="" if rec.get("query") is None else str(rec["query"]),
                chunk_id="" if edit else str(rec.get("chunk")),
                before=judgment(rec.get("prev_label") or "none", rec.get("prev_grade")),
                after=judgment(rec.get("label") or "none", rec.get("grade")),
                run=rec.get("run"), rank=rec.get("rank"), status=status, undone_by=op.undone_by,
                undoes=rec.get("undoes"), file=rec.get("file"), edit=edit, summary=_summary(rec) if edit else None,
                corpus_sha256=(rec.get("corpus") or {}).get("sha256"),
                prev_corpus_sha256=(rec.get("prev_corpus") or {}).get("sha256"),
            ))
    if len(journals_of(label_path)) > 1:
        entries.sort(key=lambda e: e.when)
    return entries


def _read(journal: Path) -> list[dict]:
    """The journal's records; bad input naming it when it cannot be read or holds a record ragdiff never writes."""
    try:
        numbered = Journal(journal).numbered()
    except IsADirectoryError:
        raise InputError(journal, "is a folder; expected the label file's journal (JSON lines)") from None
    except OSError as err:
        raise InputError(journal, f"cannot read the journal: {err.strerror or err}") from None
    bad = first_problem(numbered)
    if bad is not None:
        raise InputError(journal, bad[1], bad[0])
    return [rec for _line, rec in numbered]


def _summary(rec: dict) -> str:
    """A file-level edit in words: "query added: text (regression, tags: typo)", "corpus snapshot: …"."""
    if rec["edit"] == "add_query":
        extras = (["regression"] if rec.get("regression") else []) + \
                 ([f"tags: {', '.join(rec['tags'])}"] if rec.get("tags") else [])
        return f"query added: {rec.get('text')}" + (f" ({'; '.join(extras)})" if extras else "")
    if rec["edit"] == "drafts":
        return f"{rec.get('count')} drafts written" + (f" from {rec['source']}" if rec.get("source") else "")
    if rec["edit"] == "add_drafted":
        return f"{rec.get('count')} drafted queries added" + (f" from {rec['source']}" if rec.get("source") else "")
    if rec["edit"] in ("keep_query", "drop_query"):
        return f"drafted query {'kept' if rec['edit'] == 'keep_query' else 'dropped'}: {rec.get('text')}"
    if rec["edit"] == "reviewed":
        return f"reviewed: {rec.get('reviewed')}" + (f" (was {rec['prev_reviewed']})" if rec.get("prev_reviewed") else "")
    corpus = rec.get("corpus") or {}
    return f"corpus snapshot: {corpus.get('path')} sha256 {str(corpus.get('sha256'))[:12]}…"


# how a person's decision on a draft is named in the overturn report
ACCEPTED, REGRADED = "accepted", "regraded"
OUTCOMES = (ACCEPTED, REGRADED, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.UNJUDGED)
OUTCOME_WORDS = {ACCEPTED: "accepted", REGRADED: "regraded", vocab.EVIDENCE: vocab.KINDS[vocab.EVIDENCE].word,
                 vocab.NOT_RELEVANT: vocab.KINDS[vocab.NOT_RELEVANT].word, vocab.UNJUDGED: "removed"}


@dataclass
class DraftTally:
    proposed: int | None  # the draft's grade
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    @property
    def decided(self) -> int:
        return sum(self.counts.values())

    @property
    def overturned(self) -> int:
        return self.decided - self.counts[ACCEPTED]


def outcome(entry: Entry) -> str | None:
    """What a person's mark did to a draft: accepted (gold at the proposed grade, or not relevant for a drafted
    0), regraded (gold at another), evidence, not relevant, or unjudged (the draft removed); None when the chunk
    was not a draft."""
    if entry.before.kind != vocab.DRAFTED:
        return None
    if entry.before.grade == 0 and entry.after.kind == vocab.NOT_RELEVANT:
        return ACCEPTED  # the model proposed grade 0 and the person agreed
    if entry.after.kind == vocab.GOLD:
        return ACCEPTED if entry.after.grade == entry.before.grade else REGRADED
    return entry.after.kind


def draft_decisions(entries: list[Entry]) -> list[DraftTally]:
    """Per proposed grade (ascending), how people decided drafts: each saved mark on a drafted chunk that was
    not taken back counts once (a mark undone and made again counts as the second)."""
    tallies: dict[int | None, DraftTally] = {}
    for entry in entries:
        if entry.action != "mark" or entry.status != SAVED or entry.undone_by is not None:
            continue
        result = outcome(entry)
        if result is None:
            continue
        tally = tallies.setdefault(entry.before.grade, DraftTally(entry.before.grade))
        tally.counts[result] += 1
    return [tallies[g] for g in sorted(tallies, key=lambda g: (g is None, g or 0))]


@dataclass
class QueryTally:
    """How people decided the queries a model drafted (`proposed: true`): kept, or dropped from the file."""

    kept: int = 0
    dropped: int = 0

    @property
    def decided(self) -> int:
        return self.kept + self.dropped


def query_decisions(entries: list[Entry]) -> QueryTally:
    """Each saved keep or drop of a drafted query that was not taken back counts once."""
    tally = QueryTally()
    for entry in entries:
        if entry.action == "edit" and entry.status == SAVED and entry.undone_by is None:
            if entry.edit == "keep_query":
                tally.kept += 1
            elif entry.edit == "drop_query":
                tally.dropped += 1
    return tally
