"""Each query's labels as the review shows them, read from the judgment store (ragdiff.core.labels.store) when
the query is first shown and again after a change of it: chunk -> (level, grade, counts as relevant) and the
relevant chunks best first, what the ranked rows and the "missed gold" read. The chunk pane names a chunk's
label from the store itself (a model's drafts included).
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from ragdiff.core.labels.gold import Gold
from ragdiff.core.labels.store import Judgments

Labels = tuple[dict[str, tuple[str, int, bool]], list[tuple[str, int, str]]]


def labels_frame(gold: Gold, level: str) -> pl.DataFrame:
    """query_id, chunk_id, grade, level (as labelled) and effective (the grade scored at the level)."""
    # gold.qrels is the judgments' own rows, a grade each at the level (one expression over the frame):
    # its column is taken beside them, where a join on (query, chunk) cost ~20 ms of each load at 10,000
    # queries (tests/test_app_model.py holds the rows aligned)
    effective = gold.qrels(level).get_column("grade").alias("effective")
    return gold.judgments.select("query_id", "chunk_id", "grade", "level").with_columns(effective)


class QueryLabels:
    """Each query's labels as the review reads them, from the judgment store: made when the query is first
    shown, made again after a change of that query (`forget`)."""

    def __init__(self, store: Judgments, gold: Gold, level: str, threshold: int) -> None:
        """`store`: the judgments; `gold`: the gold set it was made from (a query's labels are scored by
        its rules, `labels_frame`)."""
        self.store = store
        self.gold = gold
        self.level = level
        self.threshold = threshold
        self._rows: dict[str, Labels] = {}

    def frame(self, query_id: str) -> tuple[Gold, pl.DataFrame]:
        """The gold set of that one query as the store has it, and its `labels_frame`."""
        judgments, drafts = self.store.frames_of([query_id])
        one = replace(self.gold, queries=self.gold.queries.filter(pl.col("query_id") == query_id),
                      judgments=judgments, drafts=drafts)
        return one, labels_frame(one, self.level)

    def of(self, query_id: str) -> Labels:
        """(chunk -> (level, grade, relevant), the relevant chunks best first as (chunk, grade, level)) of one
        query: what its ranked rows and its "missed gold" show."""
        found = self._rows.get(query_id)
        if found is None:
            judgments, _ = self.store.frames_of([query_id])
            found = self._rows[query_id] = self.read(labels_frame(replace(self.gold, judgments=judgments), self.level))
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

    def forget(self, query_id: str, labels: pl.DataFrame | None = None) -> None:
        """The query's labels changed in the store: read again (from `labels`, its `labels_frame`, when given)."""
        if labels is None:
            self._rows.pop(query_id, None)
        else:
            self._rows[query_id] = self.read(labels)
