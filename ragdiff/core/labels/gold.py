"""Loading gold sets: the ragdiff YAML label file, the JSON label file, the lesson's short form (YAML or
JSON), TREC qrels, BEIR.

Every gold set is read through the same document classes the label writer uses
(`ragdiff.core.labels.reader`), and its format and path through `ragdiff.core.io.formats`, so the loader and
the writer can never disagree about a file. Every loader ends in two frames:

    queries:    query_id: str, text: str|null, regression: bool, position: u32  (file order),
                tags: list[str], retrieval: bool, reviewed: str|null (only the label file says these)
    judgments:  query_id: str, chunk_id: str, grade: i64, level: str ("gold" | "evidence" | "not_relevant"),
                line: u32|null

Ids are always strings, exactly as written: YAML is composed with every plain scalar a string, so
`007`, `no` and `1e3` stay what they are (ragdiff.core.labels.spans).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from ragdiff.core.io.formats import GOLD_FORMATS, beir_qrels_file, locate, sniff
from ragdiff.core.labels.document import DRAFT_SCHEMA, JUDGMENT_SCHEMA, QUERY_SCHEMA
from ragdiff.core.io.textio import read_text
from ragdiff.core.vocab import SCORING_LEVELS

LEVELS = SCORING_LEVELS  # --level: gold or evidence
__all__ = ["GOLD_FORMATS", "JUDGMENT_SCHEMA", "LEVELS", "QUERY_SCHEMA", "Gold", "beir_qrels_file", "file_sha256",
           "load_gold", "sniff_gold_format"]


@dataclass
class Gold:
    path: Path
    format: str
    queries: pl.DataFrame
    judgments: pl.DataFrame
    corpus_path: str | None = None
    corpus_sha256: str | None = None
    # a model's proposals (`drafted:`): query_id, chunk_id, grade, line — never scored as judgments
    drafts: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=DRAFT_SCHEMA))
    # queries a model drafted (`proposed: true`), in file order: waiting for a person to keep or drop them
    proposed: tuple[str, ...] = ()

    def recorded_corpus(self) -> Path | None:
        """The corpus the label file names (`corpus: {path}`), a relative path read from the folder of the file
        itself: a label file reached through a symbolic link is the file it points to (its journal lives there,
        and `labels snapshot` writes the path relative to it); a BEIR folder is its own folder."""
        if not self.corpus_path:
            return None
        path = Path(self.corpus_path)
        if path.is_absolute():
            return path
        real = Path(os.path.realpath(self.path))
        return (real if real.is_dir() else real.parent) / path

    def qrels(self, level: str = "gold") -> pl.DataFrame:
        """query_id, chunk_id, grade for scoring at one label level.

        At the gold level evidence chunks are judged but not answers (grade 0); at the evidence level both
        evidence and gold chunks are relevant (evidence without a grade counts 1).
        """
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}")
        j = self.judgments
        if level == "gold":
            grade = pl.when(pl.col("level") == "gold").then(pl.col("grade"))
        else:
            grade = pl.when(pl.col("level").is_in(["gold", "evidence"])).then(pl.col("grade").clip(1))
        # everything else is judged not relevant (0); a negative grade in qrels stays unjudged, as in trec_eval
        grade = grade.otherwise(pl.min_horizontal(pl.col("grade"), pl.lit(0)))
        return j.select("query_id", "chunk_id", grade.alias("grade"))

    def text_of(self, query_id: str) -> str | None:
        hit = self.queries.filter(pl.col("query_id") == query_id)
        return hit.item(0, "text") if hit.height else None

    def aliases(self) -> dict[str, str]:
        """Query text -> id, for runs keyed by the text of a query the gold file gives an id. A text two
        queries share is no alias: a run's line keyed by it could be either's (it is listed, not scored)."""
        ids = set(self.queries.get_column("query_id").to_list())
        texts = self.queries.filter(pl.col("text").is_not_null())
        shared = set(texts.filter(pl.col("text").is_duplicated()).get_column("text").to_list())
        pairs = texts.filter(pl.col("text") != pl.col("query_id"))
        return {t: q for t, q in zip(pairs["text"], pairs["query_id"]) if t not in ids and t not in shared}

    def sha256(self) -> str:
        """What history compares to tell "the gold set changed": the file read; for BEIR the qrels split read
        and the folder's queries.jsonl (the texts the queries are asked by) — not the corpus (hashed on its
        own), the label journal or the other splits. One file hashes as its bytes (as before: a history's
        older rows still compare equal); several as each one's name, size and bytes."""
        if self.format != "beir":
            return file_sha256(self.path)
        where = locate(self.path, "beir")
        files = [where.file]
        if where.folder is not None and (where.folder / "queries.jsonl").is_file():
            files.append(where.folder / "queries.jsonl")
        if len(files) == 1:
            return file_sha256(files[0])
        digest = hashlib.sha256()
        for file in files:
            data = file.read_bytes()
            digest.update(f"{file.name}\0{len(data)}\0".encode())
            digest.update(data)
        return digest.hexdigest()

    def with_drafts_as_labels(self) -> Gold:
        """The gold set as if a person had accepted every draft: a drafted grade >= 1 becomes gold at that
        grade, a drafted 0 not relevant (`--drafted as-labels`)."""
        if self.drafts.height == 0:
            return self
        accepted = self.drafts.select(
            "query_id", "chunk_id", "grade",
            level=pl.when(pl.col("grade") > 0).then(pl.lit("gold")).otherwise(pl.lit("not_relevant")),
            line="line",
        )
        return replace(self, judgments=pl.concat([self.judgments, accepted.select(list(JUDGMENT_SCHEMA))]),
                       drafts=self.drafts.clear())

    def scored_queries(self) -> Gold:
        """Without the queries marked `retrieval: false` (the answer is not inside a chunk): what every score
        is computed on; `not_retrieval()` lists the ones left out."""
        if not self.not_retrieval():
            return self
        keep = self.queries.filter(pl.col("retrieval").fill_null(True))
        if keep.height == self.queries.height:
            return self
        ids = keep.get_column("query_id").implode()
        return replace(self, queries=keep, judgments=self.judgments.filter(pl.col("query_id").is_in(ids)),
                       drafts=self.drafts.filter(pl.col("query_id").is_in(ids)))

    def not_retrieval(self) -> list[str]:
        """The queries marked `retrieval: false`, in file order."""
        if "retrieval" not in self.queries.columns:
            return []
        return self.queries.filter(~pl.col("retrieval").fill_null(True)).get_column("query_id").to_list()


def file_sha256(path: Path) -> str:
    """The sha256 of one file's bytes (a run, a corpus, a gold file)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sniff_gold_format(path: Path) -> str:
    path = Path(path)
    return "beir" if path.is_dir() else sniff(path)


def load_gold(path: str | Path, fmt: str | None = None) -> Gold:
    from ragdiff.core.labels.reader import gc_paused, parse_document

    where = locate(path, fmt)
    text = read_text(where.file)
    with gc_paused():  # the document's nodes are alive until the frames are built (reader.gc_paused)
        doc = parse_document(where.file, where.fmt, text, where.folder)
        queries, judgments = doc.frames()
        details, drafts = doc.query_details(), doc.drafts_frame()
    queries = queries.join(details, on="query_id", how="left", maintain_order="left")
    return Gold(path=where.given, format=where.fmt, queries=queries, judgments=judgments,
                corpus_path=doc.corpus[0], corpus_sha256=doc.corpus[1], drafts=drafts,
                proposed=tuple(q for q in doc.order if doc.proposed.get(q)))
