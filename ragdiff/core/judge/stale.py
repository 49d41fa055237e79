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

from ragdiff.core.labels.gold import Gold
from ragdiff.core.judge.provenance import NO_CHANGE, SAVED, Entry

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
    changed: list[str] = field(default_factory=list)  # judged chunks whose text changed since the snapshot
    vanished: list[str] = field(default_factory=list)  # judged chunks gone from the corpus

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
    chunks: ChunkCheck | None = None  # chunk by chunk, when the snapshot has its sidecar

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
        hit = corpus.chunks.per_query.get(qid) if corpus.chunks is not None and corpus.differs else None
        if hit:
            q.changed, q.vanished = hit
            if q.changed:
                q.reasons.append(f"judged chunk{'s' if len(q.changed) > 1 else ''} changed text since the snapshot: "
                                 + ", ".join(q.changed))
            if q.vanished:
                q.reasons.append(f"judged chunk{'s' if len(q.vanished) > 1 else ''} gone from the corpus: "
                                 + ", ".join(q.vanished))
        elif corpus.chunks is not None and corpus.differs:
            pass  # the corpus changed, but none of this query's judged chunks did
        elif corpus.differs:
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


# ------------------------------------------------------------------------------------ the chunk-level snapshot
#
# `labels snapshot GOLD --corpus C` keeps, beside the label file's `corpus: {path, sha256}`, a fingerprint of
# every chunk the labels name, in a sidecar found from the label file's own path: GOLD.ragdiff-snapshot.json
# (where the journal is, GOLD.ragdiff-journal.jsonl). A sidecar, not the header: the sample set names 1,039
# chunks, and a thousand digests in the label file would bury the labels people read and edit, and turn every
# re-snapshot into a diff of the whole file. The sidecar says which whole-corpus sha256 it was made with; it is
# read only while the label file still records that one (a snapshot taken back by `labels undo` leaves a
# sidecar that no longer applies, and it is then left out, never trusted).

SNAPSHOT_SUFFIX = ".ragdiff-snapshot.json"
FINGERPRINT = "sha256 of the chunk's text (UTF-8), first 16 hex digits"


def snapshot_path(label_path: str | Path) -> Path:
    """The sidecar of a label file (beside the file a symbolic link points to, as the journal is)."""
    import os

    from ragdiff.core.io.formats import locate

    real = Path(os.path.realpath(locate(label_path).file))
    return real.with_name(real.name + SNAPSHOT_SUFFIX)


def fingerprint(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class ChunkSnapshot:
    sha256: str  # the whole corpus's, as the label file records it
    size: int  # chunks in the corpus then
    chunks: dict[str, str]  # chunk id -> fingerprint, for every chunk the labels named then (in the corpus)

    def to_json(self) -> str:
        import json

        head = json.dumps({"sha256": self.sha256, "chunks": self.size, "fingerprint": FINGERPRINT},
                          ensure_ascii=False)
        lines = [f"  {json.dumps(c, ensure_ascii=False)}: {json.dumps(f)}" for c, f in sorted(self.chunks.items())]
        return '{"corpus": ' + head + ',\n "chunks": {\n' + ",\n".join(lines) + "\n }}\n"  # one chunk a line: small diffs


def named_chunks(gold: Gold) -> set[str]:
    """Every chunk the labels name: judged (gold, evidence, not relevant) and drafted."""
    return set(gold.judgments.get_column("chunk_id").to_list()) | set(gold.drafts.get_column("chunk_id").to_list())


def take_snapshot(gold: Gold, corpus_path: Path, sha256: str) -> tuple[ChunkSnapshot, list[str]]:
    """The fingerprints of the named chunks in this corpus, and the named chunks it does not hold."""
    from ragdiff.core.io.corpus import Corpus

    corpus = Corpus(corpus_path)
    named = named_chunks(gold)
    found = corpus.get_many(named)
    snap = ChunkSnapshot(sha256, len(corpus), {c: fingerprint(chunk.text) for c, chunk in found.items()})
    return snap, sorted(named - set(found))


def read_snapshot(label_path: str | Path, recorded_sha256: str | None) -> ChunkSnapshot | None:
    """The sidecar, when there is one and it belongs to the snapshot the label file records; else None."""
    import json

    path = snapshot_path(label_path)
    if recorded_sha256 is None or not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        snap = ChunkSnapshot(doc["corpus"]["sha256"], int(doc["corpus"]["chunks"]), dict(doc["chunks"]))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
        from ragdiff.core.errors import InputError

        raise InputError(path, f"not a ragdiff chunk snapshot ({err.__class__.__name__}: {err}); expected the file "
                               "labels snapshot writes (run it again to make a new one)") from None
    return snap if snap.sha256 == recorded_sha256 else None


@dataclass
class ChunkCheck:
    """What changed in the corpus under the labels, chunk by chunk."""

    changed: set[str]  # judged chunks whose text changed
    vanished: set[str]  # judged chunks no longer in the corpus
    size_then: int
    size_now: int
    unchecked: int  # judged chunks with no fingerprint (judged after the snapshot)
    per_query: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # qid -> (changed, vanished)

    @property
    def new_chunks(self) -> int:
        """Chunks that arrived (net: the corpus's growth, with the judged ones that vanished added back)."""
        return max(0, self.size_now - self.size_then + len(self.vanished))

    @property
    def flagged(self) -> bool:
        return bool(self.changed or self.vanished)

    def sentence(self) -> str:
        q = len(self.per_query)
        parts = [f"since the snapshot {len(self.changed)} judged chunk{'s' if len(self.changed) != 1 else ''} changed "
                 f"text and {len(self.vanished)} vanished ({q} quer{'y' if q == 1 else 'ies'} to re-read)"]
        if self.new_chunks:
            parts.append(f"{self.new_chunks:,} new chunk{'s' if self.new_chunks != 1 else ''} arrived "
                         f"({self.size_then:,} -> {self.size_now:,}; not a reason to re-judge)")
        if self.unchecked:
            parts.append(f"{self.unchecked} judged chunk{'s' if self.unchecked != 1 else ''} judged after the "
                         "snapshot, not checked")
        return "; ".join(parts)


def check_chunks(gold: Gold, snap: ChunkSnapshot, corpus_path: Path) -> ChunkCheck:
    """Each judged chunk of the snapshot against the corpus at hand."""
    from ragdiff.core.io.corpus import Corpus

    corpus = Corpus(corpus_path)
    judged = gold.judgments.select("query_id", "chunk_id")
    ids = set(judged.get_column("chunk_id").to_list())
    known = {c: f for c, f in snap.chunks.items() if c in ids}
    index = corpus.index()
    vanished = {c for c in known if c not in index}
    now = corpus.get_many(c for c in known if c in index)
    changed = {c for c, chunk in now.items() if fingerprint(chunk.text) != known[c]}
    check = ChunkCheck(changed, vanished, snap.size, len(index), len(ids - set(known)))
    for qid, chunk in judged.iter_rows():
        if chunk in changed or chunk in vanished:
            mine = check.per_query.setdefault(qid, ([], []))
            mine[0 if chunk in changed else 1].append(chunk)
    return check


def chunk_check(gold: Gold, corpus_path: Path) -> ChunkCheck | None:
    """The chunk-by-chunk check of a corpus that is not the recorded one, when the snapshot has its sidecar
    (None: only the whole corpus's sha256 is known)."""
    snap = read_snapshot(gold.path, gold.corpus_sha256)
    return None if snap is None else check_chunks(gold, snap, corpus_path)
