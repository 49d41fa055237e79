"""Loading gold sets: the ragdiff YAML label file, the lesson's short form (YAML or JSON), TREC qrels, BEIR.

Every loader ends in two frames:

    queries:    query_id: str, text: str|null, regression: bool, position: u32  (file order)
    judgments:  query_id: str, chunk_id: str, grade: i64, level: str ("gold" | "evidence" | "not_relevant"),
                line: u32|null

Ids are always strings, exactly as written: YAML is read with a resolver that makes every scalar a str, so
`007`, `no` and `1e3` stay what they are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from ragdiff.core.choices import GOLD_FORMATS
from ragdiff.core.errors import InputError
from ragdiff.core.vocab import SCORING_LEVELS
from ragdiff.core.textio import check_file, json_error, line_of, read_text, text_frame, whitespace_columns

LEVELS = SCORING_LEVELS  # --level: gold or evidence

QUERY_SCHEMA = {"query_id": pl.String, "text": pl.String, "regression": pl.Boolean, "position": pl.UInt32}
JUDGMENT_SCHEMA = {"query_id": pl.String, "chunk_id": pl.String, "grade": pl.Int64, "level": pl.String,
                   "line": pl.UInt32}


class StringResolver(VersionedResolver):
    """Every plain scalar is a string: ids keep their leading zeros and `no` stays `no`."""

    def resolve(self, kind, value, implicit):
        if kind is ScalarNode:
            return self.DEFAULT_SCALAR_TAG
        return super().resolve(kind, value, implicit)


def string_yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Resolver = StringResolver
    return yaml


@dataclass
class Gold:
    path: Path
    format: str
    queries: pl.DataFrame
    judgments: pl.DataFrame
    corpus_path: str | None = None
    corpus_sha256: str | None = None

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
        """Query text -> id, for runs keyed by the text of a query the gold file gives an id."""
        ids = set(self.queries.get_column("query_id").to_list())
        pairs = self.queries.filter(pl.col("text").is_not_null() & (pl.col("text") != pl.col("query_id")))
        return {t: q for t, q in zip(pairs["text"], pairs["query_id"]) if t not in ids}

    def sha256(self) -> str:
        return file_sha256(self.path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def sniff_gold_format(path: Path) -> str:
    if path.is_dir():
        return "beir"
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    if suffix in (".qrels", ".tsv"):
        return "qrels"
    check_file(path)
    text = read_text(path)
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{"):
            return "json"
        if len(stripped.split()) == 4:
            return "qrels"
        if len(stripped.split()) == 6:
            raise InputError(path, "looks like a run (6 columns), not a gold set; qrels have 4 (qid 0 chunk grade)")
        return "yaml"
    raise InputError(path, "the file is empty")


def load_gold(path: str | Path, fmt: str | None = None) -> Gold:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or folder")
    fmt = fmt or sniff_gold_format(path)
    if fmt not in GOLD_FORMATS:
        raise InputError(path, f"unknown gold format {fmt!r}; expected one of {', '.join(GOLD_FORMATS)}")
    if fmt == "beir":
        return _load_beir(path)
    if path.is_dir():
        raise InputError(path, f"is a folder; a {fmt} gold set is a file (a BEIR folder needs --gold-format beir)")
    if fmt == "qrels":
        return _load_qrels(path)
    text = read_text(path)
    if fmt == "json":
        try:
            data = json.loads(text, object_pairs_hook=_unique_json_keys(path, text))
        except json.JSONDecodeError as err:
            raise json_error(path, text, err) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply; expected {query: [chunk ids]}") from None
        if isinstance(data, dict) and isinstance(data.get("queries"), list):
            return _from_label_file(path, "json", data, text)
        return _from_short_form(path, "json", data, text)
    data = _parse_yaml(path, text)
    if isinstance(data, dict) and "queries" in data:
        return _from_label_file(path, "yaml", data, text)
    return _from_short_form(path, "yaml", data, text)


def _parse_yaml(path: Path, text: str):
    if "&" in text and "*" in text:
        _refuse_aliases(path, text)
    try:
        return string_yaml().load(text)
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = (err.problem or err.context or "invalid YAML").strip()
        if "duplicate key" in problem:
            problem = problem.replace("found ", "") + "; expected each key once"
        raise InputError(path, f"invalid YAML: {problem}", line) from None
    except YAMLError as err:
        raise InputError(path, f"invalid YAML: {str(err).splitlines()[0]}") from None
    except RecursionError:
        raise InputError(path, "YAML nested too deeply") from None


def _refuse_aliases(path: Path, text: str) -> None:
    """Anchors and aliases have no place in a label file, and can make a bomb: refuse them by line."""
    yaml = string_yaml()
    try:
        for event in yaml.parse(text):
            if type(event).__name__ == "AliasEvent":
                raise InputError(path, "YAML alias (*name) found; a label file spells out every id, "
                                       "expected no anchors or aliases", event.start_mark.line + 1)
    except YAMLError:
        return  # the real parse reports it with its line


def _unique_json_keys(path: Path, text: str):
    def hook(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                needle = json.dumps(key)
                second = line_of(text, needle, text.find(needle) + 1)
                raise InputError(path, f"key {key!r} appears twice; expected each key once", second)
            seen.add(key)
        return dict(pairs)

    return hook


def _line(node, key=None) -> int | None:
    """1-based line of a ruamel node (or of one key inside it); None for plain JSON data."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        return (lc.key(key)[0] if key is not None else lc.line) + 1
    except (KeyError, TypeError, AttributeError):
        return None


def _parse_grade(path: Path, value, line: int | None, what: str) -> int:
    if isinstance(value, bool):
        raise InputError(path, f"{what}: grade {value!r} is not a whole number", line)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
        try:
            number = float(value)
            if number.is_integer():
                return int(number)
        except ValueError:
            pass
    raise InputError(path, f"{what}: grade {value!r} is not a whole number", line)


def _is_empty(value) -> bool:
    return value is None or (isinstance(value, str) and value.strip() in ("", "~", "null", "Null", "NULL"))


def _chunk_entries(path: Path, value, line: int | None, what: str, default_grade: int) -> list[tuple[str, int, int | None]]:
    """(chunk, grade, line) from a list of ids or a map {id: grade}."""
    if _is_empty(value):
        return []
    if isinstance(value, dict):
        out = []
        for chunk, grade in value.items():
            at = _line(value, chunk) or line
            if isinstance(chunk, (dict, list)) or _is_empty(chunk):
                raise InputError(path, f"{what}: expected chunk ids as keys", at)
            out.append((str(chunk), _parse_grade(path, grade, at, f"{what} {chunk!r}"), at))
        return out
    if isinstance(value, list):
        out = []
        for index, chunk in enumerate(value):
            at = (value.lc.item(index)[0] + 1) if hasattr(value, "lc") else line
            if isinstance(chunk, dict) and len(chunk) == 1:
                (cid, grade), = chunk.items()
                out.append((str(cid), _parse_grade(path, grade, at, f"{what} {cid!r}"), at))
            elif isinstance(chunk, (str, int)) and not isinstance(chunk, bool) and not _is_empty(chunk):
                out.append((str(chunk), default_grade, at))
            else:
                raise InputError(path, f"{what}: expected a chunk id, found {chunk!r:.40}", at)
        return out
    raise InputError(path, f"{what}: expected a list of chunk ids or a map {{chunk: grade}}, found {value!r:.40}",
                     line)


def _frames(path: Path, fmt: str, queries: list[tuple], judgments: list[tuple], corpus=(None, None)) -> Gold:
    q = text_frame(path, queries, list(QUERY_SCHEMA.items()), orient="row")
    j = text_frame(path, judgments, list(JUDGMENT_SCHEMA.items()), orient="row")
    dup = j.filter(pl.struct("query_id", "chunk_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        lines = dup.filter((pl.col("query_id") == row["query_id"]) & (pl.col("chunk_id") == row["chunk_id"]))
        levels = lines.get_column("level").to_list()
        raise InputError(path, f"chunk {row['chunk_id']!r} is labelled twice for query {row['query_id']!r} "
                               f"({' and '.join(levels)}); expected one label per chunk", lines.item(1, "line"))
    return Gold(path=path, format=fmt, queries=q, judgments=j, corpus_path=corpus[0], corpus_sha256=corpus[1])


def _from_label_file(path: Path, fmt: str, data: dict, text: str) -> Gold:
    entries = data.get("queries")
    if not isinstance(entries, list):
        raise InputError(path, "\"queries\" must be a list of {id, text, gold}", _line(data, "queries"))
    corpus = data.get("corpus")
    corpus_ref = (None, None)
    if isinstance(corpus, dict):
        corpus_ref = (corpus.get("path"), corpus.get("sha256"))
    elif isinstance(corpus, str):
        corpus_ref = (corpus, None)
    queries: list[tuple] = []
    judgments: list[tuple] = []
    seen: dict[str, int | None] = {}
    for position, entry in enumerate(entries):
        at = (entries.lc.item(position)[0] + 1) if hasattr(entries, "lc") else None
        if not isinstance(entry, dict):
            raise InputError(path, f"query {position + 1}: expected a map with text and gold, found {entry!r:.40}", at)
        qid = entry.get("id", entry.get("text"))
        if _is_empty(qid) or isinstance(qid, (dict, list)):
            raise InputError(path, f"query {position + 1} has neither id nor text; expected at least one", at)
        qid = str(qid)
        if qid in seen:
            raise InputError(path, f"query {qid!r} appears twice (lines {seen[qid]} and {at}); expected each once", at)
        seen[qid] = at
        text_value = entry.get("text")
        regression = str(entry.get("regression", "false")).strip().lower() in ("true", "yes", "on", "1")
        queries.append((qid, None if text_value is None else str(text_value), regression, position))
        # an entry without gold has no answer labelled yet: it is counted and listed as unanswerable
        for key, level, default in (("gold", "gold", 1), ("evidence", "evidence", 1), ("not_relevant", "not_relevant", 0)):
            if key not in entry:
                continue
            for chunk, grade, line in _chunk_entries(path, entry[key], _line(entry, key) or at,
                                                     f"query {qid!r} {key}", default):
                if key == "not_relevant":
                    grade = 0
                judgments.append((qid, chunk, grade, level, line))
    return _frames(path, fmt, queries, judgments, corpus_ref)


def _from_short_form(path: Path, fmt: str, data, text: str) -> Gold:
    if not isinstance(data, dict):
        raise InputError(path, f"expected a map {{query: [chunk ids]}} or a label file with \"queries:\", "
                               f"found a {type(data).__name__}", 1)
    queries: list[tuple] = []
    judgments: list[tuple] = []
    for position, (query, value) in enumerate(data.items()):
        at = _line(data, query) or (line_of(text, json.dumps(query)) if fmt == "json" else None)
        if isinstance(query, (dict, list)):
            raise InputError(path, "expected query text or ids as keys", at)
        qid = str(query)
        queries.append((qid, qid, False, position))
        for chunk, grade, line in _chunk_entries(path, value, at, f"query {qid!r}", 1):
            judgments.append((qid, chunk, grade, "gold" if grade > 0 else "not_relevant", line))
    return _frames(path, fmt, queries, judgments)


def _load_qrels(path: Path) -> Gold:
    parts = whitespace_columns(path, read_text(path), ["query_id", None, "chunk_id", "grade_raw"], "qid 0 chunk grade")
    parts = parts.with_columns(grade=pl.col("grade_raw").cast(pl.Int64, strict=False))
    bad = parts.filter(pl.col("grade").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(path, f"grade {row['grade_raw']!r} is not a whole number (column 4)", row["line"])
    return _qrels_gold(path, "qrels", parts.select("query_id", "chunk_id", "grade", pl.col("line").cast(pl.UInt32)),
                       texts={})


def _qrels_gold(path: Path, fmt: str, frame: pl.DataFrame, texts: dict[str, str]) -> Gold:
    dup = frame.filter(pl.struct("query_id", "chunk_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        lines = dup.filter((pl.col("query_id") == row["query_id"]) & (pl.col("chunk_id") == row["chunk_id"]))["line"]
        raise InputError(path, f"chunk {row['chunk_id']!r} is judged twice for query {row['query_id']!r} "
                               f"(lines {lines[0]} and {lines[1]}); expected one judgment", lines[1])
    judgments = frame.with_columns(
        level=pl.when(pl.col("grade") > 0).then(pl.lit("gold")).otherwise(pl.lit("not_relevant"))
    ).select(list(JUDGMENT_SCHEMA))
    qids = frame.get_column("query_id").unique(maintain_order=True)
    queries = text_frame(path, {
        "query_id": qids,
        "text": [texts.get(q) for q in qids],
        "regression": [False] * len(qids),
        "position": list(range(len(qids))),
    }, QUERY_SCHEMA)
    return Gold(path=path, format=fmt, queries=queries, judgments=judgments)


def beir_qrels_file(folder: Path) -> Path:
    qrels = folder / "qrels"
    files = sorted(qrels.glob("*.tsv")) if qrels.is_dir() else []
    if not files:
        raise InputError(folder, "BEIR folder without qrels/*.tsv; expected qrels/test.tsv")
    for preferred in ("test.tsv", "dev.tsv"):
        if qrels / preferred in files:
            return qrels / preferred
    if len(files) > 1:
        raise InputError(folder, f"several qrels files ({', '.join(f.name for f in files)}) and no test.tsv; "
                                 "give the one to use as --gold FOLDER/qrels/NAME.tsv --gold-format qrels")
    return files[0]


def _load_beir(folder: Path) -> Gold:
    if not folder.is_dir():
        raise InputError(folder, "a BEIR gold set is a folder with queries.jsonl and qrels/*.tsv")
    qrels_path = beir_qrels_file(folder)
    text = read_text(qrels_path)
    rows = [ln.rstrip("\r") for ln in text.split("\n")]
    start = 1 if rows and rows[0].lower().startswith("query-id") else 0
    frame = (
        pl.Series("raw", rows).to_frame().with_row_index("line", offset=1).slice(start)
        .filter(pl.col("raw").str.strip_chars() != "")
        .with_columns(parts=pl.col("raw").str.split("\t"))
    )
    bad = frame.filter(pl.col("parts").list.len() != 3)
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(qrels_path, f"expected 3 tab-separated columns (query-id, corpus-id, score), "
                                     f"found {len(row['parts'])}", row["line"])
    frame = frame.with_columns(
        query_id=pl.col("parts").list.get(0), chunk_id=pl.col("parts").list.get(1),
        grade_raw=pl.col("parts").list.get(2),
    ).with_columns(grade=pl.col("grade_raw").str.strip_chars().cast(pl.Int64, strict=False))
    bad = frame.filter(pl.col("grade").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(qrels_path, f"score {row['grade_raw']!r} is not a whole number (column 3)", row["line"])
    texts: dict[str, str] = {}
    queries_path = folder / "queries.jsonl"
    if queries_path.exists():
        for number, raw in enumerate(read_text(queries_path).split("\n"), start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as err:
                raise InputError(queries_path, f"invalid JSON ({err.msg}); expected {{\"_id\", \"text\"}}", number) from None
            if not isinstance(record, dict) or "_id" not in record:
                raise InputError(queries_path, "expected {\"_id\", \"text\"} on each line", number)
            texts[str(record["_id"])] = str(record.get("text", ""))
    gold = _qrels_gold(qrels_path, "beir", frame.select("query_id", "chunk_id", "grade",
                                                        pl.col("line").cast(pl.UInt32)), texts)
    gold.path = folder
    return gold
