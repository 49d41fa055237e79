"""`ragdiff eval` of TREC runs bigger than memory: scored a slice of queries at a time.

The TREC reader splits the run into parts of whole queries on disk (core/io/trec_run.TrecRun.in_parts); each
part is then ordered and prepared exactly as `load_run` + `metrics.prepare` do a whole run, and only what
scoring needs is kept of it: the judged rows with their ranks and the count of rows per query. Scoring the kept
rows of every part together is then the same computation, on the same rows in the same order within each query,
as scoring the whole run in memory — so the numbers are the same (tests/test_partitioned.py). Peak memory grows
with the rows of one part (fixed, `ROWS_PER_PART`), the gold set and the judged rows, not with the run's length
(bench/RESULTS.md).
"""

from __future__ import annotations

import resource
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError
from ragdiff.core.io.formats import RUN_READERS
from ragdiff.core.io.runs import RUN_SCHEMA, Run, ordered_frame, sniff_run_format
from ragdiff.core.io.trec_run import ROWS_PER_PART
from ragdiff.core.labels.gold import Gold
from ragdiff.core.metrics.evaluate import RunEval, score
from ragdiff.core.metrics.prepared import PreparedRun, prepare
from ragdiff.core.metrics.specs import EvalSettings, Metric

IN_MEMORY_BYTES_PER_FILE_BYTE = 2.5  # `eval` of a TREC file in memory peaks near this many bytes per file byte


def memory_limit() -> int | None:
    """The smallest of the address-space limit (ulimit -v), the cgroup's memory limit and the memory available
    now, in bytes; None when none is known."""
    limits = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        limits.append(soft)
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            limits.append(int(text))
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return min(limits) if limits else None


def too_big_for_memory(paths: list[Path], fmt: str | None = None) -> bool:
    """True when the runs are TREC files whose in-memory evaluation would not fit in the memory limit."""
    limit = memory_limit()
    if limit is None:
        return False
    try:
        if any((fmt or sniff_run_format(p)) != "trec" for p in paths):
            return False
        largest = max(p.stat().st_size for p in paths)
    except (InputError, OSError):
        return False  # the ordinary path reports the problem with its own words
    # runs are read one after another, but the first one's frame stays while the second loads
    need = IN_MEMORY_BYTES_PER_FILE_BYTE * largest * 2 + 300 * 2**20
    return need > 0.7 * limit


def evaluate_partitioned(path: str | Path, gold: Gold, settings: EvalSettings, metrics: list[Metric],
                         keep_first: bool = False, name: str | None = None, rows_per_part: int = ROWS_PER_PART,
                         folder: Path | None = None, bounds: bool = False) -> RunEval:
    """`evaluate(load_run(path), gold, settings, metrics, bounds)` for a TREC file, a part at a time (the
    reader's in-parts mode says how the file is split, and names a line polars refuses as the in-memory reader
    names it)."""
    path = Path(path)
    run = Run(name=name or path.stem, path=path, format="trec", frame=pl.DataFrame(schema=RUN_SCHEMA))
    returned, judged, unjudged, run_queries = [], [], [], []
    prepared = None
    with RUN_READERS["trec"].in_parts(path, gold.aliases(), rows_per_part, folder) as parts:
        for read in parts:
            frame = read()
            piece = Run(name=run.name, path=path, format="trec", frame=ordered_frame(path, frame, True, keep_first))
            del frame
            prepared = prepare(piece, gold, settings)
            returned.append(prepared.returned)
            judged.append(prepared.judged)
            unjudged.append(prepared.unjudged)  # the top max(k, depth) only: small, for the upper bound
            run_queries.append(piece.frame.get_column("query_id").unique())
            del piece
    if prepared is None:
        raise InputError(path, "the run has no results; expected at least one ranked chunk")
    run_ids = pl.concat(run_queries)
    run.queries = run_ids.to_list()
    # which queries are missing, unknown or left out, by prepare's own rules: a stand-in run with one row per
    # query the run has
    stand_in = Run(name=run.name, path=path, format="trec", frame=pl.DataFrame(
        {"query_id": run_ids, "chunk_id": [""] * len(run_ids), "score": None, "rank": 1, "line": 1},
        schema=RUN_SCHEMA))
    queries = prepare(stand_in, gold, settings).queries
    whole = PreparedRun(run=run, queries=queries, scored=prepared.scored, returned=pl.concat(returned),
                        judged=pl.concat(judged), qrels=prepared.qrels, unjudged=pl.concat(unjudged),
                        unjudged_depth=prepared.unjudged_depth)
    return score(whole, settings, metrics, bounds)
