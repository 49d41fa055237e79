"""The history file: one CSV row per evaluated run, kept in the repo ("when someone says the answers feel worse,
you open the file").

Columns: the fixed ones below, then one column per metric (recall@5, mrr, …). A new metric on an existing file
widens it: the file is rewritten atomically with the union of the metric columns, old rows left blank there.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ragdiff.core.errors import InputError
from ragdiff.core.labels.gold import Gold, file_sha256
from ragdiff.core.metrics.evaluate import RunEval
from ragdiff.core.metrics.specs import parse_metric

FIXED_COLUMNS = ("when", "run", "run_path", "run_sha256", "gold", "gold_sha256", "corpus_sha256",
                 "corpus_file_sha256", "queries_scored", "unanswerable", "k", "depth", "threshold", "level", "gain")
_INT_COLUMNS = ("queries_scored", "unanswerable", "k", "depth", "threshold")
_SCORED_BY = ("k", "depth", "threshold", "level", "gain")  # the settings two rows must share to be compared


@dataclass
class HistoryRow:
    line: int
    when: datetime
    run: str
    fields: dict[str, str]  # every fixed column as written
    metrics: dict[str, float | None]  # metric name -> value (None: not measured in this row)
    cells: dict[str, str] | None = None  # metric name -> its cell as written (kept when the file is widened)

    def get(self, column: str) -> str:
        return self.fields.get(column, "")


@dataclass
class History:
    path: Path
    metric_names: list[str]
    rows: list[HistoryRow]

    def run_names(self) -> list[str]:
        return list(dict.fromkeys(r.run for r in self.rows))

    def run_file(self, row: HistoryRow) -> Path | None:
        """The run file a row names, wherever the command runs: run_path is written relative to the history's
        folder (stored_path); a row from before that was written relative to the folder `eval --log` ran in,
        so when the history's folder has no such file and this folder has, that one is it."""
        written = row.get("run_path")
        if not written:
            return None
        path = Path(written)
        if path.is_absolute():
            return path
        beside = self.path.parent / path
        return path if not beside.exists() and path.exists() else beside


def stored_path(path: Path, history: Path) -> str:
    """How a row writes a file's path: relative to the history's folder when the file is under it (the history
    and its runs/ move together, as in a repo), else absolute; either way it reads the same from any folder."""
    full = Path(os.path.abspath(path))
    base = Path(os.path.abspath(history)).parent
    return str(full.relative_to(base)) if full.is_relative_to(base) else str(full)


def _number(value: float | None) -> str:
    """A metric as its cell: the shortest text that reads back as exactly this float (repr), so a row holds
    the number eval computed to the last bit ("correct to the last decimal"); rows written before at 10
    significant digits read as they always did."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))


def _row_for(ev: RunEval, gold: Gold, gold_sha: str, corpus_sha: str, when: str, history: Path) -> dict[str, str]:
    s = ev.settings
    row = {
        "when": when,
        "run": ev.run.name,
        "run_path": stored_path(ev.run.path, history),
        "run_sha256": file_sha256(ev.run.path),
        "gold": stored_path(gold.path, history),
        "gold_sha256": gold_sha,
        "corpus_sha256": gold.corpus_sha256 or "",
        "corpus_file_sha256": corpus_sha,
        "queries_scored": str(len(ev.queries.scored)),
        "unanswerable": str(len(ev.queries.unanswerable)),
        "k": str(s.k),
        "depth": str(s.depth),
        "threshold": str(s.threshold),
        "level": s.level,
        "gain": s.gain,
    }
    for name, value in ev.means.items():
        row[name] = _number(value)
    return row


def append_runs(path: str | Path, evals: list[RunEval], gold: Gold, corpus: str | Path | None = None,
                when: datetime | None = None) -> None:
    """Append one row per evaluated run; write the header when the file is new.

    If the file exists with other metric columns, it is rewritten atomically with the union of them.
    A file that is not a ragdiff history is an InputError and is left untouched.
    """
    path = Path(path)
    stamp = (when or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")
    gold_sha = gold.sha256()
    corpus_sha = file_sha256(Path(corpus)) if corpus is not None and Path(corpus).is_file() else ""
    new_rows = [_row_for(ev, gold, gold_sha, corpus_sha, stamp, path) for ev in evals]
    new_metrics = list(dict.fromkeys(name for ev in evals for name in ev.means))

    try:
        _append(path, new_rows, new_metrics)
    except OSError as err:  # a folder that is a file, no permission, a full disk: bad input, not a traceback
        why = (f"{err.filename} is a file; expected a folder to keep the history in"
               if isinstance(err, (FileExistsError, NotADirectoryError)) and err.filename else err.strerror or err)
        raise InputError(path, f"cannot write the history: {why}; nothing was logged") from None


def _append(path: Path, new_rows: list[dict[str, str]], new_metrics: list[str]) -> None:
    exists = path.exists() and path.stat().st_size > 0
    if not exists:
        header = list(FIXED_COLUMNS) + new_metrics
        _write_atomic(path, header, new_rows)
        return
    history = load_history(path)
    missing = [m for m in new_metrics if m not in history.metric_names]
    if not missing:
        header = list(FIXED_COLUMNS) + history.metric_names
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", extrasaction="ignore", restval="")
        writer.writerows(new_rows)
        with path.open("rb+") as handle:  # make sure the last row ends in a newline before appending
            handle.seek(0, os.SEEK_END)
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    handle.write(b"\n")
            handle.write(buffer.getvalue().encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        return
    header = list(FIXED_COLUMNS) + history.metric_names + missing
    # the rows already there keep their cells as written: widening adds columns, it does not re-format numbers
    old_rows = [{**r.fields, **(r.cells if r.cells is not None else {m: _number(v) for m, v in r.metrics.items()})}
                for r in history.rows]
    _write_atomic(path, header, old_rows + new_rows)


def _write_atomic(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    from ragdiff.core.io.textio import write_atomic

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", extrasaction="ignore", restval="")
    writer.writeheader()
    writer.writerows(rows)
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(path, buffer.getvalue().encode("utf-8"))


def load_history(path: str | Path) -> History:
    """Read a history CSV; anything malformed is an InputError naming the file and line."""
    from ragdiff.core.io.textio import read_text

    path = Path(path)
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as err:
        raise InputError(path, f"cannot read the header ({err})", 1) from None
    header = [h.strip() for h in header]
    if tuple(header[:len(FIXED_COLUMNS)]) != FIXED_COLUMNS:
        raise InputError(path, "not a ragdiff history file: the header should start with "
                         + ",".join(FIXED_COLUMNS) + " then one column per metric", 1)
    metric_names = header[len(FIXED_COLUMNS):]
    for name in metric_names:
        try:
            parse_metric(name)
        except ValueError:
            raise InputError(path, f"column {name!r} is not a metric (expected e.g. recall@5, mrr, ndcg@10)", 1) \
                from None
    if len(set(header)) != len(header):
        raise InputError(path, "a column appears twice in the header", 1)
    rows: list[HistoryRow] = []
    line = 1
    try:
        for record in reader:
            line = reader.line_num
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(header):
                raise InputError(path, f"expected {len(header)} columns as in the header, found {len(record)}", line)
            fields = dict(zip(header[:len(FIXED_COLUMNS)], record[:len(FIXED_COLUMNS)]))
            try:
                when = datetime.fromisoformat(fields["when"].strip())
            except ValueError:
                raise InputError(path, f"'when' is {fields['when']!r}; expected an ISO date and time", line) from None
            if not fields["run"].strip():
                raise InputError(path, "the run name is empty", line)
            for column in _INT_COLUMNS:
                value = fields[column].strip()
                if not value.lstrip("-").isdigit():
                    raise InputError(path, f"{column} is {value!r}; expected a whole number", line)
            metrics: dict[str, float | None] = {}
            cells = dict(zip(metric_names, record[len(FIXED_COLUMNS):]))
            for name, cell in cells.items():
                cell = cell.strip()
                if not cell:
                    metrics[name] = None
                    continue
                try:
                    value = float(cell)
                except ValueError:
                    raise InputError(path, f"{name} is {cell!r}; expected a number", line) from None
                if not math.isfinite(value):
                    raise InputError(path, f"{name} is {cell!r}; expected a finite number", line)
                metrics[name] = value
            rows.append(HistoryRow(line=line, when=when, run=fields["run"], fields=fields, metrics=metrics,
                                   cells=cells))
    except csv.Error as err:
        raise InputError(path, f"malformed CSV ({err})", reader.line_num or line) from None
    return History(path=path, metric_names=metric_names, rows=rows)


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float | None], lo: float | None = None, hi: float | None = None) -> str:
    """One block character per value, scaled between lo and hi (default: the values' own range); gaps as ' '."""
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    lo = min(present) if lo is None else lo
    hi = max(present) if hi is None else hi
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif hi - lo <= 1e-12:
            out.append(SPARK[len(SPARK) // 2])
        else:
            out.append(SPARK[min(len(SPARK) - 1, max(0, int(round((v - lo) / (hi - lo) * (len(SPARK) - 1)))))])
    return "".join(out)


@dataclass
class Drop:
    row: HistoryRow
    previous: HistoryRow
    metric: str
    before: float
    after: float
    gold_changed: bool


def drops(history: History, tolerance: float = 1e-9) -> list[Drop]:
    """Each metric that fell from the previous row of the same run scored the same way (k, depth, threshold,
    level and gain: another threshold or level is another rule, and its lower numbers are no drop)."""
    last: dict[tuple[str, ...], HistoryRow] = {}
    out: list[Drop] = []
    for row in history.rows:
        key = (row.run, *(row.get(c).strip() for c in _SCORED_BY))
        prev = last.get(key)
        if prev is not None:
            for name in history.metric_names:
                before, after = prev.metrics.get(name), row.metrics.get(name)
                if before is not None and after is not None and after < before - tolerance:
                    out.append(Drop(row, prev, name, before, after,
                                    gold_changed=prev.get("gold_sha256") != row.get("gold_sha256")))
        last[key] = row
    return out
