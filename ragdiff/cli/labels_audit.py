"""`ragdiff labels stale|agree`: reading checks of the labels — the queries due for a re-read, and how far two
reviewers' label files agree (reading lives in core/judge/stale.py and core/judge/agreement.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragdiff.cli.common import add_gold_format, add_label_file, positive_int
from ragdiff.core.errors import InputError, UsageError
from ragdiff.core.io.choices import RUN_FORMATS


def add_parsers(commands) -> None:
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
    stale.add_argument("--runs", type=Path, nargs="+", metavar="RUN",
                       help="also estimate the gold still unjudged in these runs' pool (as judge --gold-left does) "
                            "and what stopping now leaves of recall@10's bound")
    stale.add_argument("--pool", type=positive_int, default=10, help="with --runs: each run's top N (default 10)")
    stale.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    stale.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    stale.set_defaults(handler=run_stale)

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
    left = None
    if args.runs:  # the gold still unjudged in the runs' pool, and what stopping leaves (core/judge/stopping.py)
        from ragdiff.core.io.runs import load_run
        from ragdiff.core.judge.stopping import bounds, gold_left, sentence

        for path in args.runs:
            if not path.exists():
                raise InputError(path, "no such file (--runs)")
        runs = [load_run(path, args.run_format) for path in args.runs]
        left = gold_left(runs, gold, args.pool)
        left["stopping"] = sentence(left["gold_left"], left["unjudged"], bounds(runs, gold))
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
            **({} if left is None else {"gold_left": left}),
        }, ensure_ascii=False, indent=2))
        return 0
    print_stale(args.gold, stale, total, args.older_than)
    if check.chunks is not None:
        from ragdiff.core.visible import visible

        print(visible(f"corpus {corpus}: {check.chunks.sentence()}"))
    if left is not None:
        from ragdiff.core.visible import visible

        print(visible(f"unjudged in the runs' top {args.pool}: {left['stopping']}"))
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
