"""Which gold format a path is, and where a BEIR folder's qrels are: one place, for the gold loader and
the label writer alike (so `.tsv` means the same to both).

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

from ragdiff.core.io.choices import GOLD_FORMATS
from ragdiff.core.errors import InputError
from ragdiff.core.io.textio import BOM_CHAR, SPACE, fields

__all__ = ["BEIR_SPLITS", "GOLD_FORMATS", "GoldPath", "beir_qrels_file", "locate", "sniff"]
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
