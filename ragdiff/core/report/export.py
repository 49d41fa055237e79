"""What leaves ragdiff for other tools: `export contexts` (the labelled chunks' text per query), `export run` and
`export qrels` (TREC files trec_eval, ir_measures and ranx read), the one run writer (`run_bytes`, also what
`ragdiff fuse` writes), `eval --trec-eval` (trec_eval's `-q` layout) and `eval --csv/--parquet` (the per-query
table).

`export contexts`: the labelled chunks' text per query, the input for testing generation alone.

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

from ragdiff.core.io import textio
from ragdiff.core.io.corpus import Corpus
from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.prepared import query_table
from ragdiff.core.metrics.specs import EvalSettings
from ragdiff.core.io.runs import RUN_SCHEMA


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


# --------------------------------------------------------------------------------------------------------------
# TREC files: runs and qrels

# white space as trec_eval splits on it and as Python's str.split() does (textio.ODD_SPACE; the regex \s leaves
# out \x1c-\x1f): an id holding any of it reads back as two columns somewhere
_SPACES = textio.SPACE_CLASS[1:-1] + textio.ODD_SPACE_CLASS[1:-1]


def _refuse_unwritable_ids(path, frame: pl.DataFrame, columns: tuple[str, ...], what: str) -> None:
    """A TREC line is whitespace-separated: an id that is empty, holds whitespace or starts with `#` (a comment
    to ragdiff's and trec_eval's readers) cannot be written so that it reads back as the same id."""
    for column in columns:
        bad = frame.filter((pl.col(column).str.len_bytes() == 0) | pl.col(column).str.contains(f"[{_SPACES}]")
                           | pl.col(column).str.starts_with("#"))
        if bad.height:
            value = bad.item(0, column)
            raise InputError(path, f"{column.replace('_', ' ')} {value!r} cannot be written as a {what}: TREC files "
                                   "separate columns by whitespace (expected ids without whitespace that do not "
                                   "start with '#'); write another format (.jsonl, .csv, .parquet)")


def trec_order_kept(frame: pl.DataFrame) -> bool:
    """Whether the run's scores give back its order under trec_eval's rule (score descending, ties by chunk id in
    descending byte order, the rank column ignored): true for a run read from TREC or a score map, not always for
    a list format, whose order is the file's whatever the scores say."""
    if frame.get_column("score").null_count():
        return False
    resorted = frame.sort(["query_id", "score", "chunk_id"], descending=[False, True, True], maintain_order=True)
    return bool(resorted.select((pl.col("rank") == pl.int_range(1, pl.len() + 1).over("query_id")).all()).item())


def _trec_scores(frame: pl.DataFrame) -> tuple[pl.DataFrame, bool]:
    """(frame, replaced): the scores a TREC file gets. Kept when they give back the run's order; else every
    query's scores become returned - rank + 1 (so trec_eval, ir_measures and ranx read ragdiff's order)."""
    if trec_order_kept(frame):
        return frame, False
    return frame.with_columns(score=(pl.len().over("query_id") - pl.col("rank").cast(pl.Int64) + 1)
                              .cast(pl.Float64)), True


def parquet_bytes(table: pl.DataFrame) -> bytes:
    """A frame as a whole Parquet file in memory (written to disk atomically by the caller)."""
    import io

    buffer = io.BytesIO()
    table.write_parquet(buffer)
    return buffer.getvalue()


def run_bytes(frame: pl.DataFrame, fmt: str, name: str, query_text: dict[str, str] | None = None,
              path=None) -> tuple[bytes, bool]:
    """A run's rows (RUN_SCHEMA, ordered by query then rank) as a file of format `fmt` that ragdiff reads back
    in the same order: (the bytes, whether the TREC scores were replaced to keep that order). The one run
    writer: `export run` and `fuse` write through it.

    trec: `qid Q0 chunk rank score tag`; jsonl: `{"query_id", "query"?, "results": [{"id", "score"}]}`;
    json: `{query: [{"id", "score"}]}` (a list: its order is the order); csv/tsv/parquet: query_id, chunk_id,
    rank, score (ragdiff orders by the rank column)."""
    frame = frame.select(list(RUN_SCHEMA))
    replaced = False
    if fmt == "trec":
        _refuse_unwritable_ids(path, frame, ("query_id", "chunk_id"), "TREC run")
        frame, replaced = _trec_scores(frame)
        tag = "".join(name.split()) or "ragdiff"
        lines = frame.select(pl.concat_str(
            [pl.col("query_id"), pl.lit("Q0"), pl.col("chunk_id"), pl.col("rank").cast(pl.String),
             pl.col("score").cast(pl.String), pl.lit(tag)], separator=" "))
        return ("\n".join(lines.to_series().to_list()) + "\n").encode("utf-8"), replaced
    if fmt in ("csv", "tsv", "parquet"):
        table = frame.select("query_id", "chunk_id", "rank", "score")
        if fmt == "parquet":
            return parquet_bytes(table), False
        return table.write_csv(separator="," if fmt == "csv" else "\t").encode("utf-8"), False
    grouped = frame.group_by("query_id", maintain_order=True).agg(
        results=pl.struct(pl.col("chunk_id").alias("id"), "score"))
    if fmt == "json":
        document = {qid: results for qid, results in grouped.iter_rows()}
        return (json.dumps(document, ensure_ascii=False) + "\n").encode("utf-8"), False
    if fmt == "jsonl":
        text = query_text or {}
        return "".join(
            json.dumps({"query_id": qid, **({"query": text[qid]} if qid in text else {}), "results": results},
                       ensure_ascii=False) + "\n"
            for qid, results in grouped.iter_rows()).encode("utf-8"), False
    raise ValueError(f"unknown run format {fmt!r}")


def qrels_text(gold: Gold, level: str = "gold") -> str:
    """The gold set as TREC qrels (`qid 0 chunk grade`), with the grades ragdiff scores at `level`
    (Gold.qrels: at the gold level evidence is judged 0, at the evidence level it is relevant at grade >= 1;
    drafts are not labels; queries marked `retrieval: false` are left out, as every score leaves them).
    trec_eval's `-l` (pytrec_eval's relevance_level) is ragdiff's --threshold."""
    qrels = gold.scored_queries().qrels(level).filter(pl.col("grade").is_not_null())
    _refuse_unwritable_ids(gold.path, qrels, ("query_id", "chunk_id"), "TREC qrels line")
    lines = qrels.select(pl.concat_str([pl.col("query_id"), pl.lit("0"), pl.col("chunk_id"),
                                        pl.col("grade").cast(pl.String)], separator=" "))
    return "".join(line + "\n" for line in lines.to_series().to_list())


# --------------------------------------------------------------------------------------------------------------
# eval's per-query table (trec_eval's -q layout is a renderer of the eval report: core/report/trec_eval.py)

def per_query_table(evals: list[RunEval], gold: Gold) -> pl.DataFrame:
    """One row per run and gold query that is scored or unanswerable (gold order, runs in turn): query, run,
    every metric (null where the query is unanswerable and not scored, or the metric has no value), tags
    (a list) and unanswerable — what `eval --csv/--parquet` writes for a notebook."""
    queries = gold.queries.sort("position")
    tags = queries.select("query_id", "tags") if "tags" in queries.columns else \
        queries.select("query_id", pl.lit([], dtype=pl.List(pl.String)).alias("tags"))
    frames = []
    for ev in evals:
        unanswerable = pl.Series(ev.queries.unanswerable, dtype=pl.String).implode()
        wanted = pl.Series(ev.queries.scored + ev.queries.unanswerable, dtype=pl.String).implode()
        names = [m.name for m in ev.metrics]
        frames.append(
            queries.select("query_id").filter(pl.col("query_id").is_in(wanted))
            .join(ev.per_query.select("query_id", *names), on="query_id", how="left", maintain_order="left")
            .join(tags, on="query_id", how="left", maintain_order="left")
            .select(pl.col("query_id").alias("query"), pl.lit(ev.run.name).alias("run"), *names,
                    pl.col("tags").fill_null([]), pl.col("query_id").is_in(unanswerable).alias("unanswerable")))
    return pl.concat(frames, how="diagonal_relaxed")


def table_bytes(table: pl.DataFrame, fmt: str) -> bytes:
    """The per-query table as CSV (tags joined by ';', a CSV cell holds no list) or Parquet (tags a list)."""
    if fmt == "parquet":
        return parquet_bytes(table)
    return table.with_columns(pl.col("tags").list.join(";")).write_csv().encode("utf-8")
