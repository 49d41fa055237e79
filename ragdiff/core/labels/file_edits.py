"""File-level edits beyond a chunk's judgment (a query added, the corpus snapshot, `reviewed:`, drafts, drafted
queries kept or dropped), each written like a mark: under the lock, planned by the document class, re-read and
checked, journaled before the rename (`_edit`).

Mixed into `ragdiff.core.labels.session.LabelFile`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ragdiff.core import vocab
from ragdiff.core.labels.journal import Op, utc_now
from ragdiff.core.labels.atomic import atomic_write, file_lock, line_patch
from ragdiff.core.labels.document import LabelDoc
from ragdiff.core.labels.edits import sha
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, LabelWriteError
from ragdiff.core.labels.marks import Mark
from ragdiff.core.labels.snapshot import Snapshot
from ragdiff.core.labels.yaml_edits import PROPOSED

# keeping or dropping a drafted query: decisions of the judging queue, which `u` takes back like a mark
QUERY_DECISIONS = ("keep_query", "drop_query")

NO_MARK = Mark("", "", "none")  # what a file-level edit passes where the journal helpers take a mark


@dataclass(frozen=True)
class Edit:
    """What a file-level edit did (a query added, the corpus snapshot recorded, or one taken back)."""

    kind: str  # "add_query" | "corpus" | "drafts" | "reviewed" | "add_drafted" | "keep_query" | "drop_query"
    query_id: str | None
    message: str
    saved: bool

    def __str__(self) -> str:
        return self.message


class FileEdits:
    def add_query(self, text: str, query_id: str | None = None, regression: bool = False,
                  tags: list[str] | tuple[str, ...] = (), extra: list[tuple[str, object]] = ()) -> Edit:
        """Append one query (`labels add`): atomic, journaled, undone by `undo(edits=True)`. Without an id
        the text is the query's id, as the label file reads it. `extra`: keys of the file's own written after
        the text (a query from a log: count, source, variants, context; yaml_doc.entry_fields)."""
        qid = query_id if query_id is not None else text
        if not isinstance(text, str) or not text.strip():
            raise LabelFormatError("a query needs its text; nothing was written")
        if not qid.strip():
            raise LabelFormatError("a query id must be a non-empty string; nothing was written")
        tags = list(dict.fromkeys(tags))
        if any(not t.strip() for t in tags):
            raise LabelFormatError("a tag must be a non-empty word; nothing was written")

        def plan(doc: LabelDoc) -> str:
            if qid in doc.judg:
                raise LabelFormatError(f"{self.name} already has query {qid!r}; nothing was written")
            same = [q for q in doc.order if doc.texts.get(q) in (text, qid) or q == text]
            if same:
                raise LabelFormatError(f"{self.name} already has a query with this text ({same[0]!r}); nothing was "
                                       "written")
            return doc.plan_add_query(query_id, text, regression, tags, extra)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            expected[qid] = {}
            return (new.state() == expected and new.order == [*old.order, qid] and new.texts.get(qid) == text
                    and new.regression.get(qid, False) == regression and new.tags.get(qid, []) == tags
                    and new.corpus == old.corpus)

        sentence = f"added query {qid!r}" + (f" ({text})" if query_id is not None else "")
        return self._edit({"edit": "add_query", "query": qid, "text": text, "regression": regression,
                           "tags": tags}, plan, check, sentence)

    def set_corpus(self, path: str, sha256: str) -> Edit:
        """Record the corpus snapshot (`labels snapshot`): `corpus: {path, sha256}`, nothing else changed."""
        def plan(doc: LabelDoc) -> str:
            if doc.corpus == (path, sha256):
                return doc.text
            return doc.plan_corpus(path, sha256)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and new.corpus == (path, sha256))

        prev = self._snap.doc.corpus
        return self._edit({"edit": "corpus", "query": None, "corpus": {"path": path, "sha256": sha256},
                           "prev_corpus": {"path": prev[0], "sha256": prev[1]}}, plan, check,
                          f"corpus snapshot {path} sha256 {sha256[:12]}… recorded")

    @property
    def records_reviewed(self) -> bool:
        """Can this file say `reviewed:` (the ragdiff label file, YAML or JSON)?"""
        return self._snap.doc.records_reviewed

    def set_reviewed(self, query_id: str, day: str) -> Edit:
        """`reviewed: DAY` for one query (a person has read its labels: `ragdiff judge` when the query's pool
        is all judged): atomic, journaled, taken back by `undo(edits=True)`; only that entry's line changes.
        LabelFormatError when the file has no place for it (see `records_reviewed`)."""
        from datetime import date

        date.fromisoformat(day)  # ValueError: not a date (a caller's mistake, not the file's)

        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            if doc.reviewed.get(query_id) == day:
                return doc.text
            return doc.plan_reviewed(query_id, day)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = dict(old.reviewed)
            expected[query_id] = day
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and new.reviewed == expected and new.corpus == old.corpus)

        prev = self._snap.doc.reviewed.get(query_id)
        return self._edit({"edit": "reviewed", "query": query_id, "reviewed": day, "prev_reviewed": prev},
                          plan, check, f"{query_id} reviewed {day}", reparse=query_id)

    def add_drafts(self, drafts: list[tuple[str, str, int]], source: str | None = None) -> Edit:
        """Many drafts (query, chunk, grade) as ONE journaled, atomic edit (`labels import`): one write, one
        `labels undo` takes the whole import back. A chunk a person has judged must not be among them (the
        caller leaves those out); each draft is planned by the document class like a mark."""
        drafts = [(q, c, g) for q, c, g in drafts]
        for q, c, g in drafts:
            self._check(Mark(q, c, "drafted", g))

        def plan(doc: LabelDoc) -> str:
            for q, c, g in drafts:
                self._require_query(doc, q)
                if doc.current(q, c)[0] in vocab.MARKABLE:
                    raise LabelConflictError(f"{c} is judged for {q} in {self.name} now; a draft never replaces a "
                                             "person's judgment (nothing was written)")
                text, _notes = doc.plan(q, c, "drafted", g)
                doc = (doc.reparse(text, q) if hasattr(doc, "reparse") else None) or self._parse(text)
            return doc.text

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            for q, c, g in drafts:
                expected[q][c] = ("drafted", g)
            return new.state() == expected and new.order == old.order and new.corpus == old.corpus

        prev = [[q, c, *self._snap.doc.current(q, c)] for q, c, _g in drafts]  # what each chunk was
        n = len(drafts)
        return self._edit({"edit": "drafts", "query": None, "source": source, "count": n,
                           "drafts": [[q, c, g] for q, c, g in drafts], "prev": prev}, plan, check,
                          f"{n} draft{'s' if n != 1 else ''} written" + (f" from {source}" if source else ""))

    def add_drafted_queries(self, queries: list[tuple[str, str, dict[str, int]]], source: str | None = None) -> Edit:
        """Queries a model drafted (`labels add --from DRAFTED.jsonl`), each (id, text, {chunk: grade}), as ONE
        journaled, atomic edit after the last query: each entry says `proposed: true` (the query itself waits for
        a person to keep or drop it) and holds its chunks under `drafted:` (never scored as gold). One `labels
        undo` takes them all back."""
        queries = [(q, t, dict(d)) for q, t, d in queries]
        ids = [q for q, _t, _d in queries]
        if len(set(ids)) != len(ids):
            raise LabelFormatError("two drafted queries would share an id; nothing was written")
        for q, t, drafts in queries:
            if not t.strip() or not q.strip():
                raise LabelFormatError("a drafted query needs its text and id; nothing was written")
            for c, g in drafts.items():
                self._check(Mark(q, c, vocab.DRAFTED, g))

        def plan(doc: LabelDoc) -> str:
            for q, t, _d in queries:
                same = [o for o in doc.order if o == q or doc.texts.get(o) == t]
                if same:
                    raise LabelFormatError(f"{self.name} already has query {same[0]!r}; nothing was written")
            return doc.plan_add_queries([(q, t, False, [], [(PROPOSED, True), (vocab.DRAFTED, d)]
                                          + ([("source", source)] if source else [])) for q, t, d in queries])

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            for q, _t, d in queries:
                expected[q] = {c: (vocab.DRAFTED, g) for c, g in d.items()}
            return (new.state() == expected and new.order == [*old.order, *ids] and new.corpus == old.corpus
                    and all(new.texts.get(q) == t and new.proposed.get(q) is True for q, t, _d in queries))

        n = len(queries)
        return self._edit({"edit": "add_drafted", "query": None, "source": source, "count": n,
                           "queries": [[q, t, d] for q, t, d in queries]}, plan, check,
                          f"{n} drafted quer{'y' if n == 1 else 'ies'} added" + (f" from {source}" if source else ""))

    def keep_query(self, query_id: str) -> Edit:
        """A person kept a drafted query: its `proposed: true` goes (nothing else changes; `u` brings it back)."""
        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            return doc.plan_keep_query(query_id) if doc.proposed.get(query_id) else doc.text

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = dict(old.proposed)
            expected.pop(query_id, None)
            now = {q: v for q, v in new.proposed.items() if v or q != query_id}
            return (new.state() == old.state() and new.order == old.order and new.texts == old.texts
                    and now == expected and new.corpus == old.corpus)

        return self._edit({"edit": "keep_query", "query": query_id, "text": self._snap.doc.texts.get(query_id)},
                          plan, check, f"kept the drafted query {query_id!r}", reparse=query_id)

    def drop_query(self, query_id: str) -> Edit:
        """A person dropped a drafted query: its entry leaves the label file, its drafts with it. Only a query
        still `proposed:` and with no person's judgment (LabelConflictError otherwise); `u` brings it back byte
        for byte."""
        def plan(doc: LabelDoc) -> str:
            self._require_query(doc, query_id)
            if not doc.proposed.get(query_id):
                raise LabelConflictError(f"{query_id!r} is not a drafted query waiting in {self.name} (kept, or "
                                         "never drafted); only those are dropped (nothing was written)")
            if doc.judg.get(query_id):
                raise LabelConflictError(f"{query_id!r} has judged chunks in {self.name}; take those back before "
                                         "dropping it (nothing was written)")
            return doc.plan_drop_query(query_id)

        def check(old: LabelDoc, new: LabelDoc) -> bool:
            expected = old.state()
            expected.pop(query_id, None)
            return (new.state() == expected and new.order == [q for q in old.order if q != query_id]
                    and new.corpus == old.corpus)

        doc = self._snap.doc
        state = {c: g for c, (g, _line) in doc.drafts.get(query_id, {}).items()}
        return self._edit({"edit": "drop_query", "query": query_id, "text": doc.texts.get(query_id),
                           "drafts": state},
                          plan, check, f"dropped the drafted query {query_id!r}")

    def _edit(self, what: dict, plan, check, sentence: str, undoes: Op | None = None,
              reparse: str | None = None) -> Edit:
        """One change beyond a chunk's judgment, written like a mark: under the lock, re-read, planned by the
        document class, re-read and checked, journaled before the rename, confirmed after it. `reparse`: the
        one query whose entry the edit changes (only that entry is read again when the rest is the same)."""
        self.flush()
        with file_lock(self.path):
            for _attempt in range(3):
                snap = self._refresh(NO_MARK, check=False)
                new_text = plan(snap.doc)
                if new_text == snap.text:
                    return Edit(what["edit"], what.get("query"), f"{sentence}: already so, nothing to save", False)
                try:
                    new_doc = (snap.doc.reparse(new_text, reparse) if reparse is not None
                               and hasattr(snap.doc, "reparse") else None) or self._parse(new_text)
                    ok = check(snap.doc, new_doc)
                except LabelFormatError:
                    ok = False
                if not ok:
                    raise LabelFormatError(f"cannot write this into {self.name} cleanly (the edited file would "
                                           "not say exactly that); nothing was written")
                new_raw = self._encode(new_text, snap.bom)
                rec = {"type": "undo" if undoes is not None else "edit", **what, "id": uuid.uuid4().hex,
                       "file": self.name, "who": self.reviewer, "when": utc_now(), "before_sha256": snap.sha,
                       "after_sha256": sha(new_raw), "patch": line_patch(snap.text, new_text)}
                if undoes is not None:
                    rec["undoes"] = undoes.id
                try:
                    self._journal(rec, NO_MARK, None)
                finally:  # an edit is not a mark to retry(): a failed one is simply not made
                    self._pending = [(m, i) for m, i in self._pending if m is not NO_MARK]
                try:
                    done = atomic_write(self.path, new_raw, snap.stat)
                except LabelWriteError:
                    self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(), "error": "write failed"})
                    self._replay.ops[rec["id"]].status = "failed"
                    raise
                if not done:
                    self._journal_quiet({"type": "failed", "id": rec["id"], "when": utc_now(),
                                         "error": "changed on disk; re-applied"})
                    self._replay.ops[rec["id"]].status = "failed"
                    self._replay.ops[rec["id"]].retried_by = "-"
                    continue
                self._snap = Snapshot(new_raw, sha(new_raw), done, snap.bom, new_text, new_doc)
                self._journal_quiet({"type": "saved", "id": rec["id"], "when": utc_now()})
                self._replay.ops[rec["id"]].status = "saved"
                if undoes is not None:
                    undoes.undone_by = rec["id"]
                return Edit(what["edit"], what.get("query"), f"{sentence}, saved to {self.name}", True)
        raise LabelConflictError(f"{self.name} keeps changing on disk; nothing was written")
