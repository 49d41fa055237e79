"""Each query's labels as the review shows them: read from its stretch of the gold set's frames when the query
is first shown, kept until a mark changes them.

`of(query)`: chunk -> (level, grade, counts as relevant) and the relevant chunks best first, what the ranked
rows and the "missed gold" read; `shown(query)`: chunk -> (level, grade) as the chunk pane names it, a model's
drafts included where nobody judged the chunk.
"""

from __future__ import annotations

import polars as pl

from ragdiff.core import vocab
from ragdiff.core.gold import Gold

Labels = tuple[dict[str, tuple[str, int, bool]], list[tuple[str, int, str]]]


def stretches(frame: pl.DataFrame, order: list[str]) -> tuple[pl.DataFrame, dict[str, tuple[int, int]]]:
    """`frame` with each query's rows in one stretch (sorted by `order` within it), and query -> (first row,
    rows). A run's frame is one stretch per query already: its index is a run-length count, no sort."""
    column = frame.get_column("query_id")
    runs = column.rle()
    values, lengths = runs.struct.field("value").to_list(), runs.struct.field("len").to_list()
    if len(set(values)) != len(values):  # a query in two stretches (a run keyed by both a query's id and text)
        frame = frame.sort(["query_id", *order], maintain_order=True)
        runs = frame.get_column("query_id").rle()
        values, lengths = runs.struct.field("value").to_list(), runs.struct.field("len").to_list()
    index, start = {}, 0
    for value, n in zip(values, lengths):
        index[value] = (start, n)
        start += n
    return frame, index


def labels_frame(gold: Gold, level: str) -> pl.DataFrame:
    """query_id, chunk_id, grade, level (as labelled) and effective (the grade scored at the level)."""
    # gold.qrels is the judgments' own rows, a grade each at the level (one expression over the frame):
    # its column is taken beside them, where a join on (query, chunk) cost ~20 ms of each load at 10,000
    # queries (tests/test_app_model.py holds the rows aligned)
    effective = gold.qrels(level).get_column("grade").alias("effective")
    return gold.judgments.select("query_id", "chunk_id", "grade", "level").with_columns(effective)


class QueryLabels:
    def __init__(self, labels: pl.DataFrame, drafts: pl.DataFrame, threshold: int) -> None:
        """`labels`: `labels_frame` of the gold set; `drafts`: its drafts (query_id, chunk_id, grade)."""
        self.threshold = threshold
        # each query's labels, read from its stretch of this frame when the query is first shown; a query
        # marked since keeps the dicts the marks updated (they are never dropped)
        self._frame, self._index = stretches(labels, [])
        self._drafts_frame, self._drafts_index = stretches(drafts.select("query_id", "chunk_id", "grade"), [])
        self._rows: dict[str, Labels] = {}
        self._shown: dict[str, dict[str, tuple[str | None, int | None]]] = {}

    def of(self, query_id: str) -> Labels:
        """(chunk -> (level, grade, relevant), the relevant chunks best first as (chunk, grade, level)) of one
        query: what its ranked rows and its "missed gold" show."""
        found = self._rows.get(query_id)
        if found is None:
            start, n = self._index.get(query_id, (0, 0))
            found = self._rows[query_id] = self.read(self._frame.slice(start, n))
        return found

    def read(self, labels: pl.DataFrame) -> Labels:
        by_chunk, relevant = {}, []
        for chunk, grade, level, effective in labels.select("chunk_id", "grade", "level", "effective").iter_rows():
            counts = effective is not None and effective >= self.threshold
            by_chunk[chunk] = (level, grade, counts)
            if counts:
                relevant.append((-effective, chunk, grade, level))
        relevant.sort(key=lambda r: (r[0], r[1]))
        return by_chunk, [(chunk, grade, level) for _, chunk, grade, level in relevant]

    def shown(self, query_id: str) -> dict[str, tuple[str | None, int | None]]:
        """chunk -> (level, grade) as the chunk pane names it: the judgments, and a model's drafts ("drafted
        ☆2", never scored) where nobody judged the chunk."""
        shown = self._shown.get(query_id)
        if shown is None:
            by_chunk = self.of(query_id)[0]
            shown = {chunk: (level, grade) for chunk, (level, grade, _) in by_chunk.items()}
            start, n = self._drafts_index.get(query_id, (0, 0))
            for chunk, grade in self._drafts_frame.slice(start, n).select("chunk_id", "grade").iter_rows():
                shown.setdefault(chunk, (vocab.DRAFTED, grade))
            self._shown[query_id] = shown
        return shown

    def relabel(self, change, labels: pl.DataFrame) -> None:
        """A Change of one (query, chunk): `labels` (`labels_frame` of that query's gold set) are its query's now."""
        qid, chunk, after = change.query_id, change.chunk_id, change.after
        shown = self.shown(qid)  # made from the labels before this change, then changed as they are
        if after.kind in (vocab.GOLD, vocab.EVIDENCE, vocab.NOT_RELEVANT, vocab.DRAFTED):
            shown[chunk] = (after.kind, after.grade)  # a draft (an undo back to the proposal): shown, not scored
        else:  # unjudged (an undo back to nothing)
            shown.pop(chunk, None)
        self._rows[qid] = self.read(labels)


def drafts_after(drafts: pl.DataFrame, change) -> pl.DataFrame:
    """The gold set's drafts after a Change, as the label file has them: a decided draft leaves `drafted:`,
    an undo back to a draft brings it back (the judging queue built from this gold set reads them)."""
    pair = (pl.col("query_id") == change.query_id) & (pl.col("chunk_id") == change.chunk_id)
    if drafts.height:
        drafts = drafts.filter(~pair)
    if change.after.kind == vocab.DRAFTED:
        row = pl.DataFrame({"query_id": [change.query_id], "chunk_id": [change.chunk_id],
                            "grade": [change.after.grade]}).cast({c: drafts.schema[c] for c in
                                                                  ("query_id", "chunk_id", "grade")})
        drafts = pl.concat([drafts, row], how="diagonal_relaxed").select(drafts.columns)
    return drafts
