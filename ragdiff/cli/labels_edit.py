"""`ragdiff labels import|add|init|snapshot|undo`: the writes to the label file, each through the label writer
(atomic, journaled, undone by labels undo); `init` starts a new file from a query log."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ragdiff.cli.common import add_label_file, add_reviewer
from ragdiff.core.errors import InputError


def add_parsers(commands) -> None:
    imp = commands.add_parser(
        "import", help="add a model's proposals as drafted labels, never touching judged chunks",
        description="Add drafts from DRAFTS.jsonl (one {\"query_id\", \"chunk_id\", \"grade\"} a line, any model's "
                    "output) to the label file's drafted: sections. A chunk a person has judged is left alone and "
                    "counted; each draft is written like a mark (atomic, journaled, undoable).")
    add_label_file(imp)
    imp.add_argument("drafts", type=Path, metavar="DRAFTS.jsonl", help="the proposals")
    add_reviewer(imp)
    imp.set_defaults(handler=run_import)

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
