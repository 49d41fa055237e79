"""`ragdiff labels log|…`: the label file's own history and upkeep (DESIGN.md, "Drafted labels, provenance,
growing the set"). Reading lives in core/judge/provenance.py; every write goes through the label writer."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ragdiff.cli.common import add_gold_format, add_label_file, add_reviewer, positive_int
from ragdiff.core.io.choices import RUN_FORMATS
from ragdiff.core.errors import InputError, UsageError

if TYPE_CHECKING:
    from ragdiff.core.judge.provenance import DraftTally, Entry, QueryTally


def add_parser(subparsers) -> None:
    labels = subparsers.add_parser("labels", help="the label file's history and upkeep: log, import, add, snapshot, undo, stale, agree",
                                   description="The label file's history and upkeep.")
    commands = labels.add_subparsers(dest="labels_command", metavar="COMMAND")
    commands.required = True

    log = commands.add_parser(
        "log", help="who judged what, when, from which run and rank, and what it was before",
        description="The journal beside the label file as a readable history, oldest first: every mark and "
                    "undo, who made it and when, from which run and rank, what the chunk was before and after, "
                    "and whether it was saved or later taken back. --drafts: how often people overturned a "
                    "model's drafts, per proposed grade.")
    add_label_file(log)
    log.add_argument("--query", metavar="Q", help="only this query (its id or its text)")
    log.add_argument("--drafts", action="store_true",
                     help="the overturn report: per proposed grade, drafts accepted, regraded or overturned")
    log.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    log.set_defaults(handler=run_log)

    imp = commands.add_parser(
        "import", help="add a model's proposals as drafted labels, never touching judged chunks",
        description="Add drafts from DRAFTS.jsonl (one {\"query_id\", \"chunk_id\", \"grade\"} a line, any model's "
                    "output) to the label file's drafted: sections. A chunk a person has judged is left alone and "
                    "counted; each draft is written like a mark (atomic, journaled, undoable).")
    add_label_file(imp)
    imp.add_argument("drafts", type=Path, metavar="DRAFTS.jsonl", help="the proposals")
    add_reviewer(imp)
    imp.set_defaults(handler=run_import)
    add_edit_parsers(commands)


def add_edit_parsers(commands) -> None:
    add = commands.add_parser(
        "add", help="append one query (a production failure) to the label file",
        description="Append one query to the label file, after the last one, touching no other line: atomic, "
                    "journaled (labels log shows it) and undone by labels undo. It has no labels yet: it counts "
                    "as unanswerable until someone judges its chunks (ragdiff judge or review). A file with no "
                    "query yet (empty, comments only, `queries:` alone or `queries: []`) gets a block list.")
    add_label_file(add, "the ragdiff label file (YAML or JSON)")
    add.add_argument("text", metavar="TEXT", nargs="?", help="the query as a user typed it (or --from LOG)")
    add.add_argument("--id", dest="query_id", metavar="Q", help="its id (default: the text is the id)")
    add.add_argument("--regression", action="store_true",
                     help="mark it regression: true (a written-down failure; diff --fail-on-regression guards it)")
    add.add_argument("--tag", dest="tags", action="append", default=[], metavar="T", help="a tag (repeatable)")
    add_log_options(add, "append the log's queries that the file does not have yet (folded as labels init does; "
                         "each one journaled, so labels undo takes them back one at a time); or a model's drafted "
                         "queries, JSONL {\"query\", \"chunk_id\"[, \"grade\"]}: each added as proposed: true with "
                         "its chunk drafted, all in one write, for a person to keep or drop in ragdiff judge")
    add_reviewer(add)
    add.set_defaults(handler=run_add)

    init = commands.add_parser(
        "init", help="a new label file from a query log (CSV, TSV, JSONL or text)",
        description="Start a label file from real traffic: a query log in CSV, TSV, JSONL or plain text (one "
                    "query a line). Exact duplicates (case, white space, punctuation aside) fold into one query "
                    "with a count; near-duplicates (reworded, or one slip in a long word) are grouped under their "
                    "most frequent spelling with the others as variants; a query the log marks failed is always "
                    "kept (regression: true); with a conversation column a follow-up keeps the query before it as "
                    "context. --sample N draws N, spread evenly over frequency bands (1, 2-3, 4-7, ... lines) so "
                    "the rare tail is not lost to the frequent head. Every query is unjudged. An existing GOLD is "
                    "never overwritten (labels add GOLD --from LOG appends).")
    init.add_argument("gold", type=Path, metavar="GOLD", help="the label file to create (YAML)")
    add_log_options(init, "the query log", required=True)
    init.add_argument("--corpus", type=Path, help="record this corpus (path and sha256) in the new file")
    init.set_defaults(handler=run_init)

    snap = commands.add_parser(
        "snapshot", help="record the corpus (path, sha256, and a fingerprint of every labelled chunk)",
        description="Record `corpus: {path, sha256}` in the label file, the snapshot its labels refer to: only "
                    "that entry changes (journaled, undone by labels undo); and a fingerprint of every chunk the "
                    "labels name, with the corpus's size, in GOLD.ragdiff-snapshot.json beside it. Scoring "
                    "commands then warn, or with --strict-corpus stop, only when a judged chunk changed text or "
                    "vanished from the corpus given; new chunks are counted, not a reason to re-judge.")
    add_label_file(snap, "the ragdiff label file (YAML or JSON)")
    snap.add_argument("--corpus", type=Path, required=True, help="the corpus JSONL the labels were made against")
    add_reviewer(snap)
    snap.set_defaults(handler=run_snapshot)

    undo = commands.add_parser(
        "undo", help="take back your last change to the label file (a mark, a query added, a snapshot)",
        description="Take back this reviewer's last change to the label file, whichever it was: a mark (as u "
                    "does in review), a query added or a snapshot recorded; byte for byte where its lines are "
                    "as written. Another person's change is never taken back.")
    add_label_file(undo)
    add_reviewer(undo)
    undo.set_defaults(handler=run_undo)

    stale = commands.add_parser(
        "stale", help="queries not looked at for a while, or labelled against another corpus snapshot",
        description="The queries whose labels are due for a re-read: last looked at (the later of their "
                    "reviewed: date and their last mark in the journal) longer ago than --older-than, never "
                    "looked at, or labelled against another corpus snapshot than the one at hand (--corpus, else "
                    "the corpus the label file names) or than the one recorded since. With the chunk fingerprints "
                    "labels snapshot keeps, only the queries whose judged chunks changed text or vanished.")
    add_label_file(stale)
    stale.add_argument("--older-than", type=_age, default=90, metavar="AGE",
                       help="90d (default), 12w, 6m (30 days each) or 1y")
    stale.add_argument("--corpus", type=Path, help="the corpus now in use (default: the one the label file names)")
    stale.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    stale.set_defaults(handler=run_stale)
    add_agree_parser(commands)


def add_agree_parser(commands) -> None:
    agree = commands.add_parser(
        "agree", help="agreement between two label files: overlap, kappa, weighted kappa, the disagreements",
        description="On the (query, chunk) pairs both files judged: how many, raw agreement, Cohen's kappa on "
                    "gold / not gold, weighted kappa on the grades (linear and quadratic), the confusion table "
                    "and every disagreement. With --runs, whether diff's verdict on the two runs (direction and "
                    "significance at -k) is the same under either file. Reads only.")
    agree.add_argument("a", type=Path, metavar="A", help="one reviewer's label file")
    agree.add_argument("b", type=Path, metavar="B", help="the other's")
    add_gold_format(agree, "label files")
    agree.add_argument("--runs", type=Path, nargs=2, metavar=("RUN_A", "RUN_B"),
                       help="two runs: is diff's verdict the same under A and under B?")
    agree.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    agree.add_argument("-k", type=positive_int, default=5, help="with --runs: chunks pasted into the prompt (default 5)")
    agree.add_argument("--depth", type=positive_int, default=50, help="with --runs: what the first stage returns (default 50)")
    agree.add_argument("--threshold", type=positive_int, default=1, help="lowest grade that counts as gold (default 1)")
    agree.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    agree.set_defaults(handler=run_agree)


def run_agree(args: argparse.Namespace) -> int:
    from ragdiff.core.judge.agreement import agree
    from ragdiff.core.labels.gold import load_gold

    for path in (args.a, args.b, *(args.runs or ())):
        if not path.exists():
            raise InputError(path, "no such file")
    settings = None
    if args.runs:
        from ragdiff.cli.common import check_settings
        from ragdiff.core.metrics.specs import EvalSettings

        settings = check_settings(EvalSettings(k=args.k, depth=args.depth, threshold=args.threshold))
    gold_a, gold_b = load_gold(args.a, args.gold_format), load_gold(args.b, args.gold_format)
    result = agree(gold_a, gold_b, args.threshold)
    if result.overlap == 0:
        raise UsageError(f"{args.a} and {args.b} judged no (query, chunk) pair in common ({result.only_a} and "
                         f"{result.only_b} judged pairs, {result.queries_both} queries in both): nothing to compare")
    doc = result.document()
    if args.runs:
        from ragdiff.core.judge.agreement import verdicts
        from ragdiff.core.io.runs import load_run

        runs = [load_run(path, args.run_format) for path in args.runs]
        per_file, holds = verdicts(runs[0], runs[1], [gold_a, gold_b], settings)
        doc["verdicts"] = {"a": per_file[0], "b": per_file[1]}
        doc["verdict_holds"] = all(holds.values())
        doc["verdict_holds_by_metric"] = holds
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return 0
    print_agreement(args, doc)
    return 0


AGREE_LISTED = 50  # disagreements printed as text; --json lists every one


def print_agreement(args: argparse.Namespace, doc: dict) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core import fmt
    from ragdiff.core.visible import visible

    def number(value) -> str:
        return "n/a (one category only)" if value is None else fmt.number(value)

    console = table_console()
    say = lambda line: console.print(Text(visible(line)), soft_wrap=True)  # noqa: E731
    say(f"A {args.a} · B {args.b}: {doc['overlap']} pairs judged in both ({doc['only_a']} only in A, "
        f"{doc['only_b']} only in B; {doc['queries_both']} queries in both)")
    say(f"agreement {number(doc['agreement'])} on the grade, {number(doc['agreement_relevant'])} on gold / not gold "
        f"(grade >= {doc['threshold']})")
    weighted = doc["weighted_kappa"]
    say(f"Cohen's kappa (gold / not gold) {number(doc['kappa'])} · weighted kappa on the grades: linear "
        f"{number(weighted['linear'])}, quadratic {number(weighted['quadratic'])}")
    say("grades, rows A, columns B:")
    table = Table(box=None, pad_edge=False)
    grades = doc["confusion"]["grades"]
    table.add_column("A \\ B")
    for g in grades:
        table.add_column(str(g), justify="right")
    for g, row in zip(grades, doc["confusion"]["rows_a_columns_b"]):
        table.add_row(str(g), *(str(n) for n in row))
    console.print(table)
    listed = doc["disagreements"]
    if listed:
        say(f"{len(listed)} disagreements:")
        table = Table(box=None, pad_edge=False)
        for name in ("query", "chunk", "A", "B"):
            table.add_column(name, no_wrap=True)
        for d in listed[:AGREE_LISTED]:
            table.add_row(*(Text(visible(d[key])) for key in ("query_id", "chunk_id", "a", "b")))
        console.print(table)
        if len(listed) > AGREE_LISTED:
            say(f"… {len(listed) - AGREE_LISTED} more (--json lists every one)")
    if "verdicts" in doc:
        say(f"diff {args.runs[0]} {args.runs[1]} under each file (-k {args.k}):")
        table = Table(box=None, pad_edge=False)
        for name in ("metric", "delta under A", "verdict under A", "delta under B", "verdict under B", "holds"):
            table.add_column(name)
        for metric, holds in doc["verdict_holds_by_metric"].items():
            a, b = doc["verdicts"]["a"][metric], doc["verdicts"]["b"][metric]
            table.add_row(metric, fmt.number(a["delta"], "delta"), a["verdict"], fmt.number(b["delta"], "delta"), b["verdict"],
                          "yes" if holds else "NO")
        console.print(table)
        say("the verdict holds under either file" if doc["verdict_holds"] else
            "the verdict depends on whose labels: read the disagreements before trusting it")


def add_log_options(parser: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    parser.add_argument("--from", dest="log", type=Path, metavar="LOG", required=required, help=help)
    parser.add_argument("--column", metavar="NAME", help="the log's query column (default: the one named query, "
                        "question, search, ... or the one column of text)")
    parser.add_argument("--sample", type=_positive, metavar="N", help="draw N queries (stratified by frequency, "
                        "failed ones always kept); default: all")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="the sample's seed (default 0)")


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of queries, 1 or more, not {text!r}")
    return n


def _age(text: str) -> int:
    from ragdiff.core.judge.stale import parse_age

    try:
        return parse_age(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_stale(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from ragdiff.core.labels.gold import file_sha256, load_gold
    from ragdiff.core.judge.provenance import history
    from ragdiff.core.judge.stale import CorpusCheck, chunk_check, snapshot_changed, stale_queries
    from ragdiff.core.io.textio import check_file

    gold = load_gold(args.gold, args.gold_format)
    entries = history(args.gold)
    corpus = args.corpus or gold.recorded_corpus()
    actual = None
    if corpus is not None and (args.corpus is not None or corpus.exists()):
        check_file(corpus)
        actual = file_sha256(corpus)
    check = CorpusCheck(gold.corpus_sha256, actual, corpus, snapshot_changed(entries, gold.corpus_sha256))
    if check.differs:
        check.chunks = chunk_check(gold, corpus)
    today = datetime.now(timezone.utc).date()
    stale = stale_queries(gold, entries, today, args.older_than, check)
    total = gold.queries.height
    if args.json:
        print(json.dumps({
            "file": str(args.gold), "today": today.isoformat(), "older_than_days": args.older_than,
            "corpus": {"path": None if corpus is None else str(corpus), "recorded_sha256": gold.corpus_sha256,
                       "sha256": actual, "snapshot_changed": None if check.snapshot_changed is None
                       else check.snapshot_changed.isoformat(),
                       "chunks": None if check.chunks is None else {
                           "changed": sorted(check.chunks.changed), "vanished": sorted(check.chunks.vanished),
                           "queries": len(check.chunks.per_query), "new_chunks": check.chunks.new_chunks,
                           "size_then": check.chunks.size_then, "size_now": check.chunks.size_now,
                           "unchecked": check.chunks.unchecked}},
            "queries": total,
            "stale": [{"query_id": q.query_id, "text": q.text,
                       "reviewed": None if q.reviewed is None else q.reviewed.isoformat(),
                       "last_mark": None if q.last_mark is None else q.last_mark.isoformat(),
                       "reasons": q.reasons, "changed": q.changed, "vanished": q.vanished} for q in stale],
        }, ensure_ascii=False, indent=2))
        return 0
    print_stale(args.gold, stale, total, args.older_than)
    if check.chunks is not None:
        from ragdiff.core.visible import visible

        print(visible(f"corpus {corpus}: {check.chunks.sentence()}"))
    return 0


def print_stale(path: Path, stale: list, total: int, days: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core.visible import visible

    console = table_console()
    console.print(Text(visible(f"{path}: {len(stale)} of {total} queries due for a re-read (older than {days} days, "
                               "never looked at, or another corpus snapshot)")), soft_wrap=True)
    if not stale:
        return
    table = Table(show_edge=False, box=None, pad_edge=False)
    for name in ("query", "last looked", "why"):
        table.add_column(name, no_wrap=True)
    for q in stale:
        looked = q.last_looked.isoformat() if q.last_looked else "never"
        table.add_row(Text(visible(q.query_id)), looked, Text(visible("; ".join(q.reasons))))
    console.print(table)


def _write(args: argparse.Namespace, action) -> int:
    """Run one write on the label file; its refusals are bad input naming the file (exit 2)."""
    labels = open_labels(args)
    try:
        result = action(labels)
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, str(err)) from None
    from ragdiff.core.visible import visible

    if result is None:  # asked for and not done: said on stderr, and the exit code says it too
        print(visible(f"{args.gold}: nothing of yours to undo (reviewer {labels.reviewer})"), file=sys.stderr)
        return 2
    print(visible(result.message))  # ids and texts from the file and the command line: shown, never obeyed
    return 0


def run_add(args: argparse.Namespace) -> int:
    from ragdiff.core.errors import UsageError

    if args.log is not None:
        if args.text is not None or args.query_id is not None or args.regression or args.tags:
            raise UsageError("labels add takes either TEXT (with --id, --regression, --tag) or --from LOG, not both")
        return run_add_from(args)
    if args.text is None:
        raise UsageError("labels add needs the query's TEXT, or --from LOG")
    if args.column is not None or args.sample is not None:
        raise UsageError("--column and --sample go with --from LOG")
    return _write(args, lambda labels: labels.add_query(args.text, args.query_id, args.regression, args.tags))


def _folded(args: argparse.Namespace, taken: set[str], known: set[str] | None = None):
    """The log read and folded, then (with --sample) drawn; `known`: folded texts the file has (skipped).
    Returns (log, queries, skipped, sentences)."""
    from ragdiff.core.judge import querylog

    df, info = querylog.read_log(args.log, args.column)
    log = querylog.fold(args.log, df, info, taken)
    queries, skipped = log.queries, []
    if known:
        skipped = [q for q in queries if querylog.folded_keys(q) & known]
        queries = [q for q in queries if not querylog.folded_keys(q) & known]
    said = [querylog.summary(log)]
    if skipped:
        said.append(f"{len(skipped)} already in {args.gold} (by folded text), skipped")
    if args.sample is not None and queries:
        if args.sample >= len(queries):
            said.append(f"--sample {args.sample} is not fewer than the {len(queries)} queries there are: all taken")
        else:
            queries, bands = querylog.sample(queries, args.sample, args.seed)
            said.append(querylog.sample_sentence(args.sample, args.seed, queries, bands))
    return log, queries, skipped, said


def _print_groups(log) -> None:
    from ragdiff.core.judge import querylog
    from ragdiff.core.visible import visible

    for line in querylog.group_lines(log):
        print(visible(line))


def run_init(args: argparse.Namespace) -> int:
    from ragdiff.core.judge import querylog
    from ragdiff.core.io.textio import write_file
    from ragdiff.core.visible import visible

    gold = args.gold
    if gold.exists() or gold.is_symlink():
        raise InputError(gold, "already exists; labels init never overwrites a label file (to append the log's new "
                               f"queries: ragdiff labels add {gold} --from {args.log})")
    if gold.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(gold, "labels init writes a YAML label file; expected a name ending in .yaml or .yml")
    if not gold.parent.is_dir():
        raise InputError(gold, f"no such folder {gold.parent}")
    log, queries, _skipped, said = _folded(args, set())
    corpus = None
    if args.corpus is not None:
        from ragdiff.core.labels.gold import file_sha256
        from ragdiff.core.io.textio import check_file

        check_file(args.corpus)
        corpus = (_relative_to(gold, args.corpus), file_sha256(args.corpus))
    try:
        text = querylog.render(queries, log.path.name, "; ".join(said[:1]), corpus)
    except ValueError as err:
        raise InputError(gold, str(err)) from None
    write_file(gold, text.encode("utf-8"), inputs=(args.log,), replace=False)  # never over a file, even a new one
    print(visible(f"{gold}: {len(queries)} unjudged quer{'y' if len(queries) == 1 else 'ies'} written"))
    for sentence in said:
        print(visible(sentence))
    _print_groups(log)
    return 0


def run_add_from(args: argparse.Namespace) -> int:
    from ragdiff.core.judge import querylog
    from ragdiff.core.judge.drafts import is_drafted_queries
    from ragdiff.core.visible import visible

    if is_drafted_queries(args.log):
        return run_add_drafted(args)
    labels = open_labels(args)
    known = querylog.known_keys([t if t is not None else q for q, t in labels.texts.items()])
    log, queries, skipped, said = _folded(args, set(labels.queries), known)
    if not queries:
        raise InputError(args.log, f"nothing to add: all {log.distinct} of its queries are already in {args.gold} "
                                   "(by folded text)")
    added = 0
    try:
        for q in queries:
            extra, tags = querylog.entry_of(q, log.path.name)
            labels.add_query(q.text, q.id, q.failed, tags, extra)
            added += 1
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, f"{err} ({added} of {len(queries)} added before it; labels undo takes "
                                    "each back)") from None
    print(visible(f"{args.gold}: {added} unjudged quer{'y' if added == 1 else 'ies'} added from {args.log}"))
    for sentence in said:
        print(visible(sentence))
    _print_groups(log)
    return 0


def run_add_drafted(args: argparse.Namespace) -> int:
    """`labels add GOLD --from DRAFTED.jsonl`: the whole file checked, then every new query in one write."""
    from ragdiff.core.judge import querylog
    from ragdiff.core import vocab
    from ragdiff.core.judge.drafts import read_drafted_queries
    from ragdiff.core.errors import UsageError
    from ragdiff.core.visible import visible

    if args.column is not None or args.sample is not None:
        raise UsageError(f"--column and --sample go with a query log; {args.log} holds drafted queries "
                         "({\"query\", \"chunk_id\"} a line)")
    labels = open_labels(args)
    if not labels.can_say(vocab.DRAFTED):
        raise InputError(args.gold, f"a {labels.shape} has no place for drafted queries; expected the ragdiff label "
                                    "file (YAML or JSON with queries:)")
    drafted = read_drafted_queries(args.log, set(labels.queries))
    known = querylog.known_keys([t if t is not None else q for q, t in labels.texts.items()])
    new = [q for q in drafted if q.key not in known]
    skipped = len(drafted) - len(new)
    if not new:
        raise InputError(args.log, f"nothing to add: all {len(drafted)} of its queries are already in {args.gold} "
                                   "(by folded text; drafts for queries the file has: ragdiff labels import)")
    try:
        labels.add_drafted_queries([(q.id, q.text, q.drafts) for q in new], args.log.name)
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, str(err)) from None
    chunks = sum(len(q.drafts) for q in new)
    print(visible(f"{args.gold}: {len(new)} drafted quer{'y' if len(new) == 1 else 'ies'} added from {args.log} "
                  f"({chunks} drafted chunk{'' if chunks == 1 else 's'}), each proposed: true until a person keeps "
                  "or drops it (ragdiff judge); labels undo takes them all back"))
    if skipped:
        print(visible(f"{skipped} already in {args.gold} (by folded text), skipped"))
    return 0


def _relative_to(gold: Path, corpus: Path) -> str:
    """The corpus path as the label file should say it: relative to the label file's folder when it can be."""
    folder = Path(os.path.realpath(gold)).parent
    real = Path(os.path.realpath(corpus))
    return Path(os.path.relpath(real, folder) if real.is_relative_to(folder) else str(real)).as_posix()


def run_snapshot(args: argparse.Namespace) -> int:
    from ragdiff.core.labels.gold import file_sha256, load_gold
    from ragdiff.core.judge.stale import snapshot_path, take_snapshot
    from ragdiff.core.io.textio import check_file, write_file
    from ragdiff.core.visible import visible

    check_file(args.corpus)
    sha256 = file_sha256(args.corpus)
    path = _relative_to(args.gold, args.corpus)
    snap, missing = take_snapshot(load_gold(args.gold, args.gold_format), args.corpus, sha256)
    # the label file first: a format with no place for the snapshot is refused before anything is written; a
    # sidecar that then fails to be written leaves the whole-corpus snapshot, read as before
    code = _write(args, lambda labels: labels.set_corpus(path, sha256))
    sidecar = snapshot_path(args.gold)
    write_file(sidecar, snap.to_json().encode("utf-8"))
    print(visible(f"fingerprints of the {len(snap.chunks):,} labelled chunks ({snap.size:,} in the corpus) in "
                  f"{sidecar.name}"))
    if missing:
        print(visible(f"warning: {len(missing)} labelled chunk{'s are' if len(missing) != 1 else ' is'} not in "
                      f"{args.corpus} (e.g. {missing[0]!r}): no fingerprint"))
    return code


def run_undo(args: argparse.Namespace) -> int:
    return _write(args, lambda labels: labels.undo(edits=True))


def open_labels(args: argparse.Namespace):
    """The label file open for writing; its errors become bad input naming the file."""
    from ragdiff.core.labels import LabelFile

    try:
        return LabelFile(args.gold, args.gold_format, reviewer=args.reviewer)
    except FileNotFoundError:
        raise InputError(args.gold, "no such label file") from None
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, str(err)) from None


def LABEL_ERRORS() -> tuple[type[Exception], ...]:  # noqa: N802 - a tuple for except, imported when needed
    from ragdiff.core.labels import LabelConflictError, LabelFormatError, LabelWriteError

    return (LabelConflictError, LabelFormatError, LabelWriteError)


def run_import(args: argparse.Namespace) -> int:
    from ragdiff.core.judge.drafts import import_drafts, read_drafts

    labels = open_labels(args)
    drafts = read_drafts(args.drafts, labels.queries)  # the whole file is checked before anything is written
    try:
        result = import_drafts(labels, drafts, args.drafts.name)
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, str(err)) from None
    from ragdiff.core.visible import visible

    print(visible(result.sentence(args.gold, args.drafts)))
    return 0


def _query_id(gold, asked: str | None) -> str | None:
    """The id of the query asked for by id or by text; bad input when the label file has no such query."""
    if asked is None:
        return None
    ids = set(gold.queries.get_column("query_id").to_list())
    if asked in ids:
        return asked
    aliases = gold.aliases()
    if asked in aliases:
        return aliases[asked]
    raise InputError(gold.path, f"no query {asked!r} (by id or text); expected one of the file's {len(ids)} queries")


def run_log(args: argparse.Namespace) -> int:
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.judge.provenance import draft_decisions, history, journals_of, query_decisions

    gold = load_gold(args.gold, args.gold_format)
    query = _query_id(gold, args.query)
    entries = history(args.gold, query)
    journals = [str(p) for p in journals_of(args.gold)]
    if args.drafts:
        tallies, queries = draft_decisions(entries), query_decisions(entries)
        if args.json:
            print(json.dumps({"file": str(args.gold), "journals": journals, "query": query,
                              "drafts": drafts_document(tallies, queries)}, ensure_ascii=False, indent=2))
        else:
            print_drafts(tallies, queries)
        return 0
    if args.json:
        print(json.dumps({"file": str(args.gold), "journals": journals, "query": query,
                          "entries": [e.to_json() for e in entries]}, ensure_ascii=False, indent=2))
        return 0
    print_log(args.gold, entries, query)
    return 0


def _when(iso: str) -> str:
    """2026-12-01T08:12:33.123456+00:00 -> 2026-12-01 08:12:33 (UTC, to the second)."""
    return iso[:19].replace("T", " ")


EDIT_SOURCES = {"add_query": "labels add", "drafts": "labels import", "corpus": "labels snapshot",
                "reviewed": "judge: query finished", "add_drafted": "labels add --from", "keep_query": "judge",
                "drop_query": "judge"}


def _from(entry: Entry) -> str:
    if entry.action == "undo":
        return "undo"
    if entry.edit:  # where each kind of edit is made (the journal's "edit" names it)
        return EDIT_SOURCES.get(entry.edit, entry.edit)
    parts = [entry.run or ""]
    if entry.rank is not None:
        parts.append(f"#{entry.rank}")
    return " ".join(p for p in parts if p) or "—"


def _note(entry: Entry) -> str:
    from ragdiff.core.judge.provenance import SAVED

    if entry.undone_by is not None:
        return "taken back"
    return "" if entry.status == SAVED else entry.status


def _standing(saved: int, marks: int) -> str:
    """How many of the marks are still in the label file (not taken back, and each changed it)."""
    if not marks:
        return ""
    if not saved:
        return "; none of the marks is in the file now (taken back, or they changed nothing)"
    return f"; {saved} of the marks {'is' if saved == 1 else 'are'} in the file now"


def print_log(path: Path, entries: list[Entry], query: str | None) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core.visible import visible

    console = table_console()
    scope = f" for query {query}" if query is not None else ""
    if not entries:
        console.print(Text(visible(f"{path}: no marks{scope} in its journal (nothing has been marked with ragdiff)")))
        return
    people = sorted({e.who or "?" for e in entries})
    saved = sum(e.changed_file and e.undone_by is None and e.action == "mark" for e in entries)
    marks = sum(e.action == "mark" for e in entries)
    edits = sum(e.action == "edit" for e in entries)
    undos = len(entries) - marks - edits
    console.print(Text(visible(
        f"{path}{scope}: {marks} mark{'' if marks == 1 else 's'}, "
        + (f"{edits} edit{'' if edits == 1 else 's'}, " if edits else "")
        + f"{undos} undo{'' if undos == 1 else 's'} by {len(people)} "
        f"{'person' if len(people) == 1 else 'people'} ({', '.join(people)}), {_when(entries[0].when)} → "
        f"{_when(entries[-1].when)} UTC" + _standing(saved, marks))), soft_wrap=True)
    table = Table(show_edge=False, box=None, pad_edge=False)
    for name in ("when (UTC)", "who", "query", "chunk", "was", "now", "from", ""):
        table.add_column(name, no_wrap=True)
    for e in entries:
        if e.edit:  # a query added, a snapshot recorded (or one taken back): said in words across was → now
            was, now = ("", e.summary) if e.action == "edit" else (e.summary, "taken back")
            cells = (_when(e.when), e.who or "?", e.query_id or "—", "—", was, now, _from(e), _note(e))
        else:
            cells = (_when(e.when), e.who or "?", e.query_id, e.chunk_id, e.before.word, e.after.word, _from(e), _note(e))
        table.add_row(*(Text(visible(str(v))) for v in cells))
    console.print(table)


def drafts_document(tallies: list[DraftTally], queries: QueryTally) -> dict:
    decided = sum(t.decided for t in tallies)
    overturned = sum(t.overturned for t in tallies)
    return {
        "decided": decided, "accepted": decided - overturned, "overturned": overturned,
        "by_proposed_grade": [{"grade": t.proposed, "decided": t.decided, "overturned": t.overturned, **t.counts}
                              for t in tallies],
        # a drafted query kept is accepted, one dropped overturned
        "queries": {"decided": queries.decided, "kept": queries.kept, "dropped": queries.dropped},
    }


def print_drafts(tallies: list[DraftTally], queries: QueryTally) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core import vocab
    from ragdiff.core.judge.provenance import OUTCOME_WORDS, OUTCOMES

    console = table_console()
    doc = drafts_document(tallies, queries)
    if queries.decided:
        console.print(Text(f"drafted queries decided: {queries.decided} · kept {queries.kept} · dropped "
                           f"{queries.dropped} ({queries.dropped / queries.decided:.0%} overturned)"))
    if not doc["decided"]:
        console.print(Text("no drafts decided yet: nobody has accepted or overturned a drafted label"))
        return
    share = doc["overturned"] / doc["decided"]
    console.print(Text(f"drafts decided: {doc['decided']} · accepted {doc['accepted']} · overturned "
                       f"{doc['overturned']} ({share:.0%})"))
    table = Table(show_edge=False, box=None, pad_edge=False)
    table.add_column("proposed", no_wrap=True)
    table.add_column("decided", justify="right")
    for name in OUTCOMES:
        table.add_column(OUTCOME_WORDS[name], justify="right")
    table.add_column("overturned", justify="right")
    for t in tallies:
        table.add_row(vocab.word(vocab.DRAFTED, t.proposed), str(t.decided), *(str(t.counts[o]) for o in OUTCOMES),
                      f"{t.overturned / t.decided:.0%}")
    console.print(table)
