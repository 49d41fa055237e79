"""`ragdiff judge ... --against B`: a queue of the disagreements between the label file and another reviewer's
(core/judge/agreement.py, the pairs `labels agree` lists), to settle them one key each.

Every chunk in it is judged already in the label file; here a disagreement is done once it is *settled*: decided
in this queue, whatever the decision (keeping your own judgment settles it too). The decisions are written to the
label file like any other, so `labels agree` afterwards shows what is left; starting again lists the pairs that
still disagree. An undo unsettles the chunk it takes back (`unsettle`).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.io.runs import Run
from ragdiff.core.judge.agreement import Disagreement
from ragdiff.core.judge.pool import Entry, JudgeQueue
from ragdiff.core.labels.gold import Gold
from ragdiff.core.labels.store import Changed, Judgments
from ragdiff.core.metrics.prepared import aligned_frame


class SettleQueue(JudgeQueue):
    """The disagreements, query by query in the label file's order, best rank across the runs first (chunks no run
    returned last, by id). `is_judged` means settled here; the store still holds the file's judgments."""

    finishes_queries = False  # settling a query's disagreements is not reading all its labels
    to_do = "disagreements to settle"

    def __init__(self, *args, disagreements: Iterable[Disagreement] = (), other_name: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.other = {(d.query_id, d.chunk_id): d for d in disagreements}
        self.other_name = other_name
        self._settled: set[tuple[str, str]] = set()

    @classmethod
    def of(cls, runs: list[Run], gold: Gold, disagreements: list[Disagreement], other_name: str,
           flagged: Iterable[tuple[str, str]] = ()) -> SettleQueue:
        pairs = pl.DataFrame({"query_id": [d.query_id for d in disagreements],
                              "chunk_id": [d.chunk_id for d in disagreements]},
                             schema={"query_id": pl.String, "chunk_id": pl.String})
        ranks = []
        for run in runs:  # each disagreement's best rank in each run, at any depth
            frame = aligned_frame(run, gold).join(pairs, on=["query_id", "chunk_id"], how="semi")
            best = frame.group_by("query_id", "chunk_id").agg(pl.col("rank").min())
            ranks.append({(q, c): r for q, c, r in best.iter_rows()})
        order = gold.queries.sort("position")
        texts = {q: t or "" for q, t in order.select("query_id", "text").iter_rows()}
        entries: dict[str, list[Entry]] = {}
        for d in disagreements:
            entry = Entry(d.chunk_id, tuple(r.get((d.query_id, d.chunk_id)) for r in ranks))
            entries.setdefault(d.query_id, []).append(entry)
        for listed in entries.values():
            listed.sort(key=lambda e: (min((r for r in e.ranks if r is not None), default=10**9), e.chunk_id))
        queries = [q for q in order.get_column("query_id").to_list() if q in entries]
        return cls(queries, texts, entries, Judgments.of_gold(gold), [run.name for run in runs], 0, flagged,
                   disagreements=disagreements, other_name=other_name)

    def is_judged(self, query_id: str, chunk_id: str) -> bool:
        return (query_id, chunk_id) in self._settled

    def note(self, query_id: str, chunk_id: str) -> str | None:
        """Both judgments of a disagreement, yours as the label file has it now: "yours gold ★2 · B's not relevant"."""
        d = self.other.get((query_id, chunk_id))
        if d is None:
            return None
        kind, grade = self.store.label_of(query_id, chunk_id)
        return f"yours {vocab.word(kind, grade)} · {self.other_name}'s {d.b}"

    def changed(self, changes: list[Changed]) -> None:
        """A decision on a disagreement came back durable: settled (an undo unsettles it: `unsettle`)."""
        _, done = self._counts()
        for change in changes:
            key = (change.query_id, change.chunk_id)
            if key not in self.other:
                continue
            was_done, was_settled = key in self._in_flight or key in self._settled, key in self._settled
            self._in_flight.discard(key)
            if vocab.kind_of(change.after.kind, change.after.grade).judged:
                self._settled.add(key)
            else:
                self._settled.discard(key)
            now = key in self._settled
            done[change.query_id] += now - was_done
            self._judged += now - was_done
            self._durable += now - was_settled

    def taken_back(self, query_id: str, chunk_id: str) -> None:
        """A decision here taken back (`u`): the disagreement waits again."""
        with self._counting(query_id, chunk_id):
            self._settled.discard((query_id, chunk_id))
