"""`ragdiff run GOLD [--corpus C] [--log HISTORY.csv] [--timeout S] -- COMMAND ...`: the lesson's "wire the
retrieval eval to one command and run it on every change".

The gold queries go to COMMAND's stdin as JSONL, its stdout is the run; the run is saved under a name with its
time, evaluated, appended to the history, and diffed against the last run the history logged. A retriever that
fails, hangs past --timeout or prints a malformed line is reported by query and line, and nothing is saved or
logged.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from ragdiff.cli.common import add_input_options, metric_list, positive_int, stdout_console, table_console, warn
from ragdiff.core import words

DEFAULT_TIMEOUT = 600.0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run your retriever on the gold queries, then eval, log and diff against the last run",
        usage="ragdiff run GOLD [options] -- COMMAND [ARG ...]",
        description="Send every gold query to COMMAND as JSONL on its stdin ({\"query_id\", \"query\"} a line) "
                    "and read a JSONL run from its stdout ({\"query_id\", \"results\": [...]} a line). The run is "
                    "saved under a name with its time, evaluated, logged (--log) and diffed against the last "
                    "logged run. Nothing is saved or logged when the retriever fails, hangs or prints a "
                    "malformed line.")
    add_input_options(parser, gold_positional=True)
    parser.add_argument("--log", type=Path, metavar="HISTORY.csv",
                        help="append the run's row here, and diff against the last run it logged")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"stop the retriever after S seconds (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--name", help="the run's name (default: the command's file name)")
    parser.add_argument("--out-dir", type=Path, metavar="DIR",
                        help="where to save the run as NAME-YYYYMMDDTHHMMSSZ.jsonl (default: runs/ beside the history "
                             "file, else ./runs)")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE.jsonl", help="save the run exactly here instead")
    parser.add_argument("--metrics", type=metric_list, help="comma-separated metrics (default as eval)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="print one JSON document: {\"saved\", \"eval\", \"against\", \"diff\"}")
    output.add_argument("--markdown", action="store_true",
                        help="print the diff against the last logged run as Markdown for a pull-request comment "
                             "(what was saved and logged goes to stderr)")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when the diff against the last logged run finds a regression (as diff does)")
    parser.add_argument("--show", type=positive_int, default=20, metavar="N", help="flips listed per group")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ragdiff.cli.common import corpus_warning, settings_from
    from ragdiff.core.errors import UsageError
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.report.history import load_history
    from ragdiff.core.report.as_json import diff_json, dumps, eval_json
    from ragdiff.core.report.eval_doc import eval_report
    from ragdiff.core.report.markdown import markdown, md_text
    from ragdiff.core.retrieval.retriever import Query, RetrieverError, ask
    from ragdiff.core.io.textio import write_atomic, write_file

    command = getattr(args, "retriever", None) or []
    if not command:
        raise UsageError("no retriever command: give it after --, e.g. ragdiff run gold.yaml -- python retrieve.py")
    settings = settings_from(args)
    gold = load_gold(args.gold, args.gold_format)
    warning = corpus_warning(gold, args.corpus, strict=args.strict_corpus)
    previous = previous_file = None
    if args.log is not None and args.log.exists() and args.log.stat().st_size > 0:
        history = load_history(args.log)  # a broken history stops the run before the retriever is asked
        previous = history.rows[-1] if history.rows else None
        previous_file = history.run_file(previous) if previous is not None else None

    queries = [Query(q, t if t is not None else q) for q, t in gold.queries.select("query_id", "text").iter_rows()]
    stamp = datetime.now(timezone.utc)
    name = args.name or _default_name(command)
    if args.output is not None:
        target = args.output
    else:
        folder = args.out_dir or ((args.log.parent if str(args.log.parent) else Path(".")) / "runs" if args.log
                                  else Path("runs"))
        target = folder / f"{name}-{stamp.strftime('%Y%m%dT%H%M%SZ')}.jsonl"
        n = 2
        while target.exists():  # two runs in one second keep both files
            target = folder / f"{name}-{stamp.strftime('%Y%m%dT%H%M%SZ')}-{n}.jsonl"
            n += 1
    _check_target(target, inputs=[args.gold, args.corpus, args.log])  # before the retriever is asked: a run that cannot be saved is not worth its wait
    try:
        answer = ask(command, queries, args.timeout)
    except RetrieverError as err:
        print(f"ragdiff run: {err}; nothing was saved or logged", file=sys.stderr)
        return 2

    # the output is good line by line: save it whole, then read it back as any run is read
    _check_target(target, inputs=[args.gold, args.corpus, args.log], make=True)
    # what `-o` named may already hold a run: a refused run puts it back ("nothing was saved")
    before = target.read_bytes() if target.is_file() else None
    # `-o latest.jsonl` each time: the last logged run is this very file; read it before it is replaced
    held = _last_run(args, previous_file) if before is not None and _same(previous_file, target) else None
    write_file(target, answer.output)
    try:
        try:
            ev, diff_report, against, failures = _score_and_log(args, target, answer, gold, settings, warning,
                                                             previous, previous_file, name, stamp, len(queries),
                                                             held)
        except BaseException:
            # anything that stops us before the row is logged takes the saved run with it, so a run under
            # runs/ is always one the history logged
            if before is None:
                target.unlink(missing_ok=True)
            else:
                write_atomic(target, before)
            raise
    except RetrieverError as err:
        print(f"ragdiff run: {err}; nothing was saved or logged", file=sys.stderr)
        return 2

    status = (f"ragdiff run: `{shlex.join(command)}` answered {len(answer.answered)} of {words.queries(len(queries))}; "
              f"saved {target}" + (f", logged in {args.log}" if args.log else ""))
    first = f"the first run logged in {args.log}: nothing to diff against yet"
    if args.json:
        doc = {"saved": str(target), "command": command, "answered": len(answer.answered),
               "unanswered": answer.unanswered, "logged": str(args.log) if args.log else None,
               "eval": eval_json(eval_report([ev], False)), "against": against,
               "diff": None if diff_report is None else diff_json(diff_report)}
        if args.fail_on_regression:
            doc["fail_on_regression"] = {"failed": bool(failures), "reasons": failures}
        print(dumps(doc))
    elif args.markdown:
        warn(status)
        if diff_report is not None:
            print(markdown(diff_report, failures, args.show), end="")
        else:
            print(f"{md_text(status)}\n\n({md_text(first if args.log else 'no --log: nothing to diff against')})")
    else:
        from ragdiff.core.report.text_diff import print_report
        from ragdiff.core.report.text_eval import print_tables

        console = stdout_console()
        console.print(status, markup=False, highlight=False, soft_wrap=True)
        print_tables(eval_report([ev], False), console, table_console())
        if diff_report is not None:
            console.print()
            print_report(diff_report, args.show, console)
        elif args.log is not None:
            console.print(f"({first})", markup=False, highlight=False, soft_wrap=True)
    if failures:
        for reason in failures:
            warn(f"regression: {reason}")
        return 1
    return 0


def _check_target(target: Path, inputs, make: bool = False) -> None:
    """The run's file can be written: not a folder, nor under a file, nor one of the inputs (the gold set, the
    corpus, the history). make=True makes its folder when missing (once the retriever has answered, so a
    failed run leaves no empty folder). InputError when it cannot."""
    from ragdiff.core.errors import InputError
    from ragdiff.core.io.textio import check_not_input

    if target.is_dir():
        raise InputError(target, "is a folder; expected the path of the run file to write")
    check_not_input(target, inputs)
    above = target.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if above.exists() and not above.is_dir():
        raise InputError(target, f"{above} is a file; expected a folder to write the run into")
    if make:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(target, f"cannot make its folder {target.parent}: {err.strerror or err}") from None


def _query_at(answer, line: int) -> str:
    """The query id a stdout line answered, from the checked output."""
    for number, raw in enumerate(answer.output.split(b"\n"), start=1):
        if number == line:
            try:
                return repr(str(json.loads(raw)["query_id"]))
            except (ValueError, KeyError, TypeError):
                break
    return "?"


def _default_name(command: list[str]) -> str:
    """The script's name (`python retrieve.py` -> retrieve), else the program's."""
    for part in command[1:]:
        if not part.startswith("-") and Path(part).is_file():
            return Path(part).stem
    return Path(command[0]).stem or "run"


def _same(old: Path | None, target: Path) -> bool:
    """Is the last logged run (its file, History.run_file) the file this run is saved to?"""
    import os

    return old is not None and old.is_file() and target.is_file() and os.path.samefile(old, target)


def _last_run(args, old_path: Path):
    """The last logged run (its file, History.run_file), read now (as _score_and_log reads it)."""
    from ragdiff.core.io.runs import load_run

    return load_run(old_path, keep_first=args.keep_first, name=old_path.stem)


def _score_and_log(args, target: Path, answer, gold, settings, warning, previous, previous_file, name: str, stamp,
                   n_queries: int, held=None):
    """Read the saved run back, score it, diff it against the last logged run (`held`: read before the new
    run replaced its file), then log it."""
    from ragdiff.cli.common import check_run_matches_corpus
    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.metrics.diff import compare
    from ragdiff.core.errors import InputError
    from ragdiff.core.report.history import append_runs
    from ragdiff.core.metrics.evaluate import evaluate
    from ragdiff.core.metrics.specs import default_metrics
    from ragdiff.core.report.diff_doc import report
    from ragdiff.core.report.notes import drafts_note
    from ragdiff.core.io.runs import load_run

    try:
        new = load_run(target, "jsonl", keep_first=args.keep_first, name=name)
    except InputError as err:
        from ragdiff.core.retrieval.retriever import RetrieverError

        # said as `ask` says a malformed line (it is one: the run reader refused it), not as "<input>: ..."
        where = f"stdout line {err.line} (the answer to query {_query_at(answer, err.line)})" if err.line else "output"
        raise RetrieverError(f"the retriever's {where}: {err.message}") from None
    metrics = args.metrics or default_metrics(settings.k, settings.depth)
    ev = evaluate(new, gold, settings, metrics)
    warnings = [warning]
    if args.corpus:
        warnings.append(check_run_matches_corpus(new, Corpus(args.corpus)))
    if answer.unanswered:
        few = ", ".join(answer.unanswered[:5]) + (" …" if len(answer.unanswered) > 5 else "")
        warnings.append(f"warning: the retriever answered {len(answer.answered)} of {words.queries(n_queries)}; "
                        f"the other {len(answer.unanswered)} score 0 ({few})")
    for w in filter(None, warnings):
        warn(w)

    # the diff against the last logged run, before this one is logged
    found = None
    failures: list[str] = []
    against = None
    if previous is not None:
        old_path = previous_file if previous_file is not None else Path(previous.get("run_path"))
        if held is None and not old_path.is_file():
            warn(f"warning: the last logged run {previous.run} ({old_path}, {args.log} line {previous.line}) is "
                 "not there any more: no diff")
        else:
            old = held if held is not None else _last_run(args, old_path)
            if old.name == target.stem:
                old.name = f"{old.name} (before)"
            new_named = load_run(target, "jsonl", keep_first=args.keep_first, name=target.stem)
            against = str(old_path)
            dm = args.metrics or default_metrics(settings.k, settings.depth, "diff")
            d = compare(evaluate(old, gold, settings, dm), evaluate(new_named, gold, settings, dm), gold=gold)
            found = report([d], str(old_path), [str(target)], str(args.gold), [drafts_note(gold)])
            failures = d.failures() if args.fail_on_regression else []
    if args.log is not None:
        append_runs(args.log, [ev], gold, corpus=args.corpus, when=stamp)
    return ev, found, against, failures
