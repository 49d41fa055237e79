"""Which format a file is, runs and gold sets alike, from its name or else its content.

Runs: each format has one reader class (RUN_READERS), which recognises its content; the extensions that say a
format are core/io/choices.py's RUN_EXTENSIONS, which `--format` lists too. Content, in this order: Parquet's
magic bytes, a JSON object line that parses alone (JSONL; else the start of a JSON document, as is `[`), a
header naming `query_id` (TSV, then CSV), six columns (TREC); four columns is qrels, said as such.

Gold sets: where a BEIR folder's qrels are, and each file's format, one place for the gold loader and the
label writer alike (so `.tsv` means the same to both).

- A folder is a BEIR folder: `queries.jsonl`, `corpus.jsonl`, `qrels/<split>.tsv`. The split read (and
  written) is `test.tsv`, else `dev.tsv`, else the only one; several others (say `train.tsv` and
  `extra.tsv`) is an error listing them. `--gold FOLDER/qrels/train.tsv` names a split outright.
- `.yaml`/`.yml`: YAML (a label file or the short form); `.json`: JSON (the same two shapes); `.qrels`:
  TREC qrels.
- `.tsv`: inside a `qrels/` folder, BEIR qrels (its folder's `queries.jsonl` gives the texts); elsewhere
  by its first line: three tab-separated columns or a `query-id` header is BEIR qrels, four columns TREC
  qrels.
- Anything else, by content: `{` JSON, a `query-id` header BEIR, four columns TREC qrels, six a run (an
  error), otherwise YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.io.choices import GOLD_FORMATS, RUN_EXTENSIONS, RUN_FORMATS
from ragdiff.core.io.json_runs import JsonlRun, JsonRun
from ragdiff.core.io.run_reader import RunReader
from ragdiff.core.io.table_runs import CsvRun, ParquetRun, TsvRun
from ragdiff.core.io.textio import BOM_CHAR, SPACE, check_file, fields
from ragdiff.core.io.trec_run import TrecRun

__all__ = ["BEIR_SPLITS", "GOLD_FORMATS", "RUN_READERS", "GoldPath", "beir_qrels_file", "locate",
           "run_format_from_extension", "sniff", "sniff_run_format"]

# the run readers, one per format, in the order a file's content is tried on them (the module docstring says why)
RUN_READERS: dict[str, RunReader] = {r.name: r for r in (ParquetRun(), JsonlRun(), JsonRun(), TsvRun(), CsvRun(),
                                                           TrecRun())}
if set(RUN_READERS) != set(RUN_FORMATS):  # pragma: no cover - a reader without a name in choices, or the reverse
    raise ImportError(f"run readers {sorted(RUN_READERS)} are not the formats {sorted(RUN_FORMATS)}")
_RUN_EXTENSIONS = {ext: name for name, exts in RUN_EXTENSIONS.items() for ext in exts}


def run_format_from_extension(path: Path) -> str | None:
    """The run format a file's name says (`.trec`, `.jsonl`, `.parquet`, ...), None when it says none: how a
    run is read, and how a run a command writes (`-o`) is written."""
    return _RUN_EXTENSIONS.get(Path(path).suffix.lower())


def sniff_run_format(path: Path) -> str:
    """The run format of a file: its extension's, else the first reader that recognises its content."""
    fmt = run_format_from_extension(path)
    if fmt:
        return fmt
    check_file(path)
    with path.open("rb") as handle:
        head = handle.read(65536)
    text = head.decode("utf-8", errors="replace").lstrip(BOM_CHAR)
    lines = [ln for ln in text.split("\n") if ln.strip(SPACE) and not ln.lstrip(SPACE).startswith("#")]
    first = lines[0].strip(SPACE) if lines else None
    for name, reader in RUN_READERS.items():
        if reader.sniff(head, first):
            return name
    if first is None:
        raise InputError(path, "cannot tell the run's format: the file has no data lines; say it with --format")
    if len(fields(first)) == 4:
        raise InputError(path, "looks like qrels (4 columns), not a run; a run has 6 (qid Q0 chunk rank score tag)", 1)
    raise InputError(
        path,
        f"cannot tell the run's format from the extension {path.suffix or '(none)'!r} or the content; "
        f"say it with --format {'|'.join(RUN_FORMATS)}",
    )


BEIR_SPLITS = ("test.tsv", "dev.tsv")  # the split evaluated by default, in order of preference


@dataclass(frozen=True)
class GoldPath:
    given: Path  # what the user named (a BEIR folder, or a file)
    file: Path  # the file read and written
    fmt: str  # one of GOLD_FORMATS
    folder: Path | None = None  # the BEIR folder, when there is one (queries.jsonl beside qrels/)


def beir_qrels_file(folder: Path) -> Path:
    qrels = folder / "qrels"
    files = sorted(p for p in qrels.glob("*.tsv") if p.is_file()) if qrels.is_dir() else []
    if not files:
        raise InputError(folder, "BEIR folder without qrels/*.tsv; expected qrels/test.tsv")
    for preferred in BEIR_SPLITS:
        if qrels / preferred in files:
            return qrels / preferred
    if len(files) > 1:
        raise InputError(folder, f"several qrels files ({', '.join(f.name for f in files)}) and no test.tsv "
                                 "or dev.tsv; give the one to use as --gold FOLDER/qrels/NAME.tsv")
    return files[0]


def _first_line(path: Path) -> str | None:
    """The first line that is neither blank nor a `#` comment, read from the start of the file only."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror}") from None
    text = head.decode("utf-8", errors="replace").lstrip(BOM_CHAR)
    for line in text.split("\n"):
        stripped = line.strip(SPACE)
        if stripped and not stripped.startswith("#"):
            return line.rstrip("\r")
    return None


def _tsv_is_beir(line: str | None) -> bool:
    return line is not None and (line.lower().startswith("query-id") or len(line.split("\t")) == 3)


def _beir_folder(file: Path) -> Path | None:
    return file.parent.parent if file.parent.name == "qrels" else None


def sniff(path: Path) -> str:
    """The format of a gold file (not a folder) from its name, else its content."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    if suffix == ".qrels":
        return "qrels"
    line = _first_line(path)
    if suffix == ".tsv":
        return "beir" if _beir_folder(path) is not None or _tsv_is_beir(line) else "qrels"
    if line is None:
        raise InputError(path, "the file is empty")
    stripped = line.strip(SPACE)
    if stripped.startswith("{"):
        return "json"
    if stripped.lower().startswith("query-id"):
        return "beir"
    columns = len(fields(stripped))
    if columns == 4:
        return "qrels"
    if columns == 6:
        raise InputError(path, "looks like a run (6 columns), not a gold set; qrels have 4 (qid 0 chunk grade)")
    return "yaml"


def locate(path: str | Path, fmt: str | None = None) -> GoldPath:
    """Where a gold set named on the command line is, and in which format. InputError when it is not."""
    path = Path(path)
    if fmt is not None and fmt not in GOLD_FORMATS:
        raise InputError(path, f"unknown gold format {fmt!r}; expected one of {', '.join(GOLD_FORMATS)}")
    if not path.exists():
        raise InputError(path, "no such file or folder")
    if path.is_dir():
        if fmt not in (None, "beir"):
            raise InputError(path, f"is a folder; a {fmt} gold set is a file (a BEIR folder needs --gold-format beir)")
        return GoldPath(path, beir_qrels_file(path), "beir", path)
    if fmt == "beir":
        return GoldPath(path, path, "beir", _beir_folder(path))
    fmt = fmt or sniff(path)
    return GoldPath(path, path, fmt, _beir_folder(path) if fmt == "beir" else None)
