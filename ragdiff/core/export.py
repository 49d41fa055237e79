"""`ragdiff export contexts`: the labelled chunks' text per query, the input for testing generation alone.

The lesson: "test the halves separately … test generation with the gold chunks as input". One JSON object a
line, in the label file's query order:

    {"id", "text", "unanswerable", "tags", "retrieval", "chunks": [{"id", "grade", "level", "text", "title"?}, ...]}

`chunks` holds the chunks that count as relevant at the level asked for (the same rule `eval` scores by:
`--level gold` the gold chunks, `--level evidence` gold and evidence, grade >= threshold), in the label
file's order; `unanswerable` is true exactly when that list is empty, as in `eval`; `retrieval` is false for a
query whose answer is not inside a chunk (`retrieval: false`), which no retrieval score counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import polars as pl

from ragdiff.core.corpus import Corpus
from ragdiff.core.errors import InputError
from ragdiff.core.gold import Gold
from ragdiff.core.metrics import EvalSettings, query_table


def contexts(gold: Gold, corpus: Corpus, level: str = "gold", threshold: int = 1) -> Iterator[dict]:
    """One record per gold query, in file order. A labelled chunk the corpus lacks is bad input (the label
    file's line is named): a generation test fed a missing context would measure nothing."""
    settings = EvalSettings(level=level, threshold=threshold)
    table = query_table(gold, settings)
    relevant = (
        gold.judgments.with_row_index("order")
        .join(gold.qrels(level).rename({"grade": "scored"}), on=["query_id", "chunk_id"], how="left")
        .filter(pl.col("scored") >= threshold)
        .sort("order")
    )
    index = corpus.index()
    missing = relevant.filter(~pl.col("chunk_id").is_in(pl.Series(list(index), dtype=pl.String).implode()))
    if missing.height:
        row = missing.row(0, named=True)
        more = f" (and {missing.height - 1} more)" if missing.height > 1 else ""
        raise InputError(gold.path, f"chunk {row['chunk_id']!r} of query {row['query_id']!r} is not in the corpus "
                                    f"{corpus.path}{more}; expected every labelled chunk in the corpus — another "
                                    "snapshot?", row["line"])
    text = corpus.get_many(relevant.get_column("chunk_id").to_list())
    by_query: dict[str, list[dict]] = {}
    for row in relevant.iter_rows(named=True):
        chunk = text[row["chunk_id"]]
        record = {"id": row["chunk_id"], "grade": row["grade"], "level": row["level"], "text": chunk.text}
        if chunk.title is not None:
            record["title"] = chunk.title
        by_query.setdefault(row["query_id"], []).append(record)
    tags = _tags(gold)
    not_retrieval = set(gold.not_retrieval())
    for row in table.iter_rows(named=True):
        qid = row["query_id"]
        yield {"id": qid, "text": row["text"], "unanswerable": row["num_rel"] == 0, "tags": tags.get(qid, []),
               "retrieval": qid not in not_retrieval, "chunks": by_query.get(qid, [])}


def _tags(gold: Gold) -> dict[str, list[str]]:
    if "tags" not in gold.queries.columns:
        return {}
    return {q: list(t) for q, t in gold.queries.select("query_id", "tags").iter_rows() if t}


def contexts_jsonl(gold: Gold, corpus: Corpus, level: str = "gold", threshold: int = 1) -> str:
    """The whole export as text, built before anything is written (bad input leaves no half-written file)."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in contexts(gold, corpus, level, threshold))
