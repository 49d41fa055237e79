"""`ragdiff labels stale`: which queries' labels are due for a re-read (the lesson: "the set drifts … re-read
the labels every few months"), and which were made against another corpus snapshot.

A query was last looked at on the later of its `reviewed:` date and the day of its last mark in the journal
(a mark that changed nothing still means a person read it; a mark taken back does not count). It is stale
when that day is older than the limit, or when nobody ever looked (no date, no mark). Its labels refer to
another snapshot when the corpus now at hand is not the one the file records, or when the file's snapshot was
recorded (`labels snapshot`) after the query was last looked at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from ragdiff.core.gold import Gold
from ragdiff.core.provenance import NO_CHANGE, SAVED, Entry

_AGE = re.compile(r"\s*(\d+)\s*([dwmy]?)\s*\Z")
_UNIT_DAYS = {"": 1, "d": 1, "w": 7, "m": 30, "y": 365}


def parse_age(text: str) -> int:
    """"90d", "12w", "6m" (30 days each), "1y", or a number of days -> days. ValueError with the words."""
    m = _AGE.match(text.lower())
    if not m:
        raise ValueError(f"expected an age like 90d, 12w, 6m or 1y, got {text!r}")
    return int(m.group(1)) * _UNIT_DAYS[m.group(2)]


def _day(text: str | None) -> date | None:
    if not text:
        return None
    text = text.strip()
    if len(text) == 10:
        return date.fromisoformat(text)
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (when.astimezone(timezone.utc) if when.tzinfo else when).date()


@dataclass
class StaleQuery:
    query_id: str
    text: str | None
    reviewed: date | None
    last_mark: date | None
    reasons: list[str] = field(default_factory=list)

    @property
    def last_looked(self) -> date | None:
        known = [d for d in (self.reviewed, self.last_mark) if d is not None]
        return max(known) if known else None


@dataclass
class CorpusCheck:
    """The snapshot the file records against the corpus at hand (None: nothing to compare)."""

    recorded: str | None  # sha256 in the label file
    actual: str | None  # sha256 of the corpus given (or the one the file names)
    path: Path | None
    snapshot_changed: date | None = None  # when `labels snapshot` last recorded a different sha

    @property
    def differs(self) -> bool:
        return self.actual is not None and self.actual != self.recorded


def stale_queries(gold: Gold, entries: list[Entry], today: date, older_than_days: int,
                  corpus: CorpusCheck) -> list[StaleQuery]:
    """The stale queries in file order, each with its reasons in words."""
    last_mark: dict[str, date] = {}
    for e in entries:
        if e.action == "mark" and e.status in (SAVED, NO_CHANGE) and e.undone_by is None:
            day = _day(e.when)
            if day is not None and (e.query_id not in last_mark or day > last_mark[e.query_id]):
                last_mark[e.query_id] = day
    limit = today - timedelta(days=older_than_days)
    out = []
    reviewed = dict(gold.queries.select("query_id", "reviewed").iter_rows()) if "reviewed" in gold.queries.columns else {}
    for qid, text in gold.queries.sort("position").select("query_id", "text").iter_rows():
        q = StaleQuery(qid, text, _day(reviewed.get(qid)), last_mark.get(qid))
        looked = q.last_looked
        if looked is None:
            q.reasons.append("never reviewed (no reviewed: date, no mark in the journal)")
        elif looked < limit:
            q.reasons.append(f"last looked at {looked.isoformat()}, {(today - looked).days} days ago "
                             f"(older than {older_than_days} days)")
        if corpus.differs:
            q.reasons.append(f"labelled against corpus sha256 {str(corpus.recorded)[:12]}…, not {corpus.path}'s "
                             f"{str(corpus.actual)[:12]}…" if corpus.recorded else
                             "the label file records no corpus snapshot")
        elif corpus.snapshot_changed is not None and (looked is None or looked < corpus.snapshot_changed):
            q.reasons.append(f"labelled before the corpus snapshot changed on {corpus.snapshot_changed.isoformat()}")
        if q.reasons:
            out.append(q)
    return out


def snapshot_changed(entries: list[Entry], recorded: str | None) -> date | None:
    """The day the file's current snapshot was recorded over a different one (a standing `labels snapshot`)."""
    for e in reversed(entries):
        if e.edit == "corpus" and e.action == "edit" and e.status == SAVED and e.undone_by is None:
            changed = e.prev_corpus_sha256 not in (None, recorded) and e.corpus_sha256 == recorded
            return _day(e.when) if changed else None
    return None
