"""The team's own retriever as a command: the gold queries go to its stdin as JSONL (`{"query_id", "query"}`,
one a line), a JSONL run comes back on its stdout, as ragdiff reads runs (`{"query_id", "results": [...]}` or
an agent's `{"query_id", "searches": [...]}`).

`ask` returns the output only when all of it is good: the command ran, exited 0 within the timeout, and every
line is a JSON object answering a query that was sent. Anything else is a `RetrieverError` whose message names
the query and the output line, so the caller can refuse to save or log anything.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from dataclasses import dataclass


class RetrieverError(Exception):
    """The retriever failed, hung or printed something that is not a run line; the message says which."""


@dataclass
class Query:
    query_id: str
    text: str


@dataclass
class Answer:
    output: bytes  # the retriever's stdout as printed, every non-blank line checked
    lines: int  # non-blank lines
    answered: list[str]  # query ids answered, in output order
    unanswered: list[str]  # sent but never answered (they score 0)


def _name(q: Query) -> str:
    return q.query_id if not q.text or q.text == q.query_id else f"{q.query_id} ({q.text!r})"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def ask(command: list[str], queries: list[Query], timeout: float | None) -> Answer:
    """Run the retriever once over every query; raise RetrieverError unless all of its output is usable."""
    where = shlex.join(command)
    payload = "".join(json.dumps({"query_id": q.query_id, "query": q.text}, ensure_ascii=False) + "\n"
                      for q in queries).encode("utf-8")
    try:
        # a session of its own, so a hang is stopped with everything it started (a shell's children too)
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    except OSError as err:
        raise RetrieverError(f"cannot start the retriever `{where}`: {err.strerror or err}") from None
    try:
        out, _ = process.communicate(payload, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        out, _ = process.communicate()
        done = _lines(out)
        waiting = _next_query(done, queries)
        raise RetrieverError(f"the retriever `{where}` did not finish within {timeout:g} s and was stopped; it "
                             f"printed {len(done)} of {len(queries)} answers" +
                             (f"; the next query was {waiting}" if waiting else "")) from None
    except KeyboardInterrupt:
        _stop(process)
        process.wait()
        raise
    lines = _lines(out)
    if process.returncode != 0:
        waiting = _next_query(lines, queries)
        status = (f"was killed by signal {-process.returncode}" if process.returncode < 0
                  else f"exited with status {process.returncode}")
        raise RetrieverError(f"the retriever `{where}` {status} after printing {len(lines)} of {len(queries)} "
                             "answers" +
                             (f"; the query after them was {waiting}" if waiting else ""))
    sent = {q.query_id: q for q in queries}
    answered: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in lines:
        position = len(answered)
        guess = f"; the {_ordinal(position + 1)} query sent was {_name(queries[position])}" \
            if position < len(queries) else ""
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise RetrieverError(f"the retriever's stdout line {number} is not JSON ({err}): "
                                 f"{_clip(raw.decode('utf-8', 'replace'))!r}; expected "
                                 f'{{"query_id", "results"}}{guess}') from None
        if not isinstance(record, dict) or not isinstance(record.get("query_id"), (str, int)) or isinstance(
                record.get("query_id"), bool):
            raise RetrieverError(f"the retriever's stdout line {number} is not a run line: "
                                 f"{_clip(raw.decode('utf-8', 'replace'))!r}; expected "
                                 f'{{"query_id", "results"}}{guess}')
        qid = str(record["query_id"])
        if qid not in sent:
            raise RetrieverError(f"the retriever's stdout line {number} answers query_id {qid!r}, which was not "
                                 "sent; expected one of the gold set's query ids")
        if qid in seen:
            raise RetrieverError(f"the retriever's stdout lines {seen[qid]} and {number} both answer query "
                                 f"{_name(sent[qid])}; expected one line per query")
        if not isinstance(record.get("results"), list) and not isinstance(record.get("searches"), list):
            raise RetrieverError(f"the retriever's stdout line {number} (query {_name(sent[qid])}) has no "
                                 '"results" list; expected {"query_id", "results": [chunk ids or {"id", "score"}]}')
        seen[qid] = number
        answered.append(qid)
    if not answered:
        raise RetrieverError(f"the retriever `{where}` exited 0 but printed no answer for any of the "
                             f"{len(queries)} queries; expected one JSONL line per query on its stdout")
    unanswered = [q.query_id for q in queries if q.query_id not in seen]
    # kept byte for byte, so a line number in the saved run is the line number on the retriever's stdout
    return Answer(output=out if out.endswith(b"\n") else out + b"\n", lines=len(lines), answered=answered,
                  unanswered=unanswered)


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def _lines(out: bytes) -> list[tuple[int, bytes]]:
    """(line number, bytes) of each non-blank stdout line."""
    return [(i, line.rstrip(b"\r")) for i, line in enumerate(out.split(b"\n"), start=1) if line.strip()]


def _next_query(lines: list[tuple[int, bytes]], queries: list[Query]) -> str | None:
    """The first query sent that no complete output line answered (the one it was most likely working on)."""
    answered = set()
    for _, raw in lines:
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(record, dict) and "query_id" in record:
            answered.add(str(record["query_id"]))
    for q in queries:
        if q.query_id not in answered:
            return _name(q)
    return None


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
