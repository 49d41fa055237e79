"""`ragdiff judge RUN [RUN ...] --gold GOLD [--corpus C] [--pool 10] [--order O]`: the judging queue over the pooled
runs, in the order O (core/pool_order.py).

`--simulate ORACLE [--order O] [--json]` replays the queue against a finished label file and writes nothing
(core/judge/pool_replay.py).

Textual is imported only inside the handler, so `ragdiff eval` and friends never load it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragdiff.cli.common import add_gold_format, add_order, add_reviewer, positive_int, run_app
from ragdiff.core.io.choices import GOLD_FORMATS, RUN_FORMATS
from ragdiff.core.errors import InputError, UsageError


def add_parser(subparsers) -> None:
    judge = subparsers.add_parser(
        "judge", help="judge the pooled chunks of one or more runs, one key per chunk (the labelling queue)",
        description="The pool of a query is the union of every run's top --pool chunks. One key decides each "
                    "unjudged chunk (0-3, g, e, x; s skips, ! flags), and the queue moves on by itself, in the "
                    "--order it walks, learnt from the decisions so far, so a deep pool's promising chunks come "
                    "first. The header "
                    "estimates the gold still unjudged. Every decision is written to the label file at once; "
                    "starting again resumes where the order stands.",
    )
    judge.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="the runs whose results are pooled")
    judge.add_argument("--gold", required=True, type=Path, help="the label file the decisions are written to")
    judge.add_argument("--corpus", type=Path, help="corpus JSONL (id, text): the chunk text, and / to search it")
    judge.add_argument("--pool", type=positive_int, default=10, help="each run's top N chunks per query (default 10)")
    add_gold_format(judge, "label file")
    judge.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    judge.add_argument("--bm25", action="store_true",
                       help="pool a BM25 run over --corpus too (as ragdiff bm25 makes it), with no file step")
    add_reviewer(judge)
    add_order(judge)
    judge.add_argument("--against", type=Path, metavar="B",
                       help="another reviewer's label file: a queue of only the (query, chunk) pairs both files judged "
                            "differently (as labels agree lists them), to settle them; decisions go to --gold")
    judge.add_argument("--simulate", type=Path, metavar="ORACLE",
                       help="replay the queue against this fully judged label file (unjudged there: not relevant) "
                            "and report how many judgments find 50-100%% of the pool's gold; writes nothing")
    judge.add_argument("--oracle-format", choices=GOLD_FORMATS, help="say the ORACLE's format outright")
    judge.add_argument("--threshold", type=positive_int, default=1,
                       help="lowest grade that counts as gold in the replay (default 1)")
    judge.add_argument("--gold-left", action="store_true",
                       help="estimate the gold still unjudged in the pool, per query and in all, from the judgments "
                            "the label file holds (the global order's model); writes nothing")
    judge.add_argument("--json", action="store_true", help="with --simulate or --gold-left: one JSON document on stdout")
    judge.set_defaults(handler=run_judge)


def run_judge(args: argparse.Namespace) -> int:
    if args.bm25 and args.corpus is None:
        raise UsageError("--bm25 searches the corpus: give it with --corpus C")
    for what, path in [*(("RUN", p) for p in args.runs), ("--gold", args.gold), ("--corpus", args.corpus),
                       ("--simulate", args.simulate), ("--against", args.against)]:
        if path is not None and not path.exists():
            raise InputError(path, f"no such file ({what})")
    if args.simulate is not None and args.gold_left:
        raise UsageError("--gold-left and --simulate are two reports: ask for one")
    if args.against is not None and (args.simulate is not None or args.gold_left):
        raise UsageError("--against opens the queue of disagreements: not with --simulate or --gold-left")
    if args.simulate is not None:
        return run_simulate(args)
    if args.gold_left:
        return run_gold_left(args)
    if args.json:
        raise UsageError("--json goes with --simulate ORACLE or --gold-left (the queue itself is a screen)")
    if args.against is not None and not check_against(args):
        return 0
    from ragdiff.app.judge_app import JudgeApp, JudgeInputs

    app = JudgeApp(JudgeInputs(runs=list(args.runs), gold=args.gold, pool=args.pool, corpus=args.corpus,
                               run_format=args.run_format, gold_format=args.gold_format, reviewer=args.reviewer,
                               bm25=args.bm25, order=args.order,
                               against=args.against))
    return run_app(app)


def check_against(args: argparse.Namespace) -> bool:
    """--against B: False (and said) when there is nothing to settle; two files with no judged pair in common are
    a usage error, as `labels agree` says."""
    from ragdiff.core.judge.agreement import agree
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.visible import visible

    result = agree(load_gold(args.gold, args.gold_format), load_gold(args.against, args.gold_format))
    if result.overlap == 0:
        raise UsageError(f"{args.gold} and {args.against} judged no (query, chunk) pair in common ({result.only_a} "
                         f"and {result.only_b} judged pairs): no disagreement to settle")
    if not result.disagreements:
        print(visible(f"{args.gold} and {args.against} agree on all {result.overlap} pairs both judged: nothing to "
                      "settle"))
        return False
    return True


def run_simulate(args: argparse.Namespace) -> int:
    import json

    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.judge.pool_replay import simulate
    from ragdiff.core.io.runs import load_run

    order = args.order
    start = load_gold(args.gold, args.gold_format)
    oracle = load_gold(args.simulate, args.oracle_format)
    runs = [load_run(path, args.run_format) for path in args.runs]
    replay = simulate(runs, start, oracle, args.pool, order, args.threshold)
    if args.json:
        print(json.dumps(replay.document(), ensure_ascii=False))
        return 0
    rank = replay if order == "rank" else simulate(runs, start, oracle, args.pool, "rank", args.threshold)
    print_replay(replay, rank)
    return 0


def print_replay(replay, rank) -> None:
    """The table (judgments to each share of the pool's gold, beside rank's) and the two curves."""
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core.visible import visible

    console = table_console()
    to_judge = replay.pool_size - replay.judged_at_start
    console.print(Text(f"{replay.pool_size} pooled chunks ({to_judge} to judge) · {replay.gold_in_pool} gold in "
                       f"the pool (the oracle's, grade >= threshold)"))
    table = Table(box=None, pad_edge=False)
    table.add_column("gold found")
    table.add_column(visible(replay.order), justify="right")
    table.add_column("rank", justify="right")
    table.add_column("ratio", justify="right")
    for percent, n in replay.judgments_to.items():
        base = rank.judgments_to[percent]
        ratio = "-" if n is None or not base else f"{n / base:.2f}x"
        table.add_row(f"{percent}%", "-" if n is None else str(n), "-" if base is None else str(base), ratio)
    console.print(table)
    err = replay.estimate_error
    console.print(Text(f"gold-left estimate: mean error {err['mean_signed']:+.1f} (mean |error| {err['mean_abs']:.1f}) "
                       f"over {err['steps']} steps"))
    for what, left in replay.left_out.items():
        if left:
            why = "no run has them" if what == "not_in_runs" else "the label file replayed from lacks them"
            console.print(Text(f"{len(left)} oracle queries left out ({why}): {', '.join(visible(q) for q in left[:10])}"
                               + (" …" if len(left) > 10 else "")))
    console.print(curve_plot([(replay.order, replay.curve, "bold"), ("rank", rank.curve, "dim")],
                             to_judge, replay.gold_in_pool))


def curve_plot(curves, judgments: int, gold: int, width: int = 60, height: int = 12):
    """Gold found (share of the pool's) against judgments, one character cell per step of each axis."""
    from rich.text import Text

    marks = {0: "█", 1: "·"}
    grid = [[None] * width for _ in range(height)]
    for index, (_, curve, _style) in reversed(list(enumerate(curves))):
        for col in range(width):
            x = judgments * (col + 1) / width
            found = max((f for j, f in curve if j <= x), default=0)
            row = round(found / gold * (height - 1)) if gold else 0
            grid[height - 1 - row][col] = index  # drawn last to first: the first curve stays on top
    text = Text()
    for r, line in enumerate(grid):
        share = 100 * (height - 1 - r) / (height - 1)
        text.append(f"{share:4.0f}% │" if r in (0, height - 1) else "      │")
        for cell in line:
            text.append(" " if cell is None else marks[min(cell, 1)], curves[min(cell, 1)][2] if cell is not None else "")
        text.append("\n")
    text.append("      └" + "─" * width + "\n")
    text.append(f"       0{'judgments':^{width - 2 * len(str(judgments))}}{judgments}\n")
    text.append("       " + "   ".join(f"{marks[min(i, 1)]} {name}" for i, (name, _, _) in enumerate(curves)))
    return text


GOLD_LEFT_LISTED = 20  # queries printed as text; --json lists every one


def run_gold_left(args: argparse.Namespace) -> int:
    import json

    from ragdiff.core.io.runs import load_run
    from ragdiff.core.judge.stopping import gold_left
    from ragdiff.core.labels.gold import load_gold

    gold = load_gold(args.gold, args.gold_format)
    runs = [load_run(path, args.run_format) for path in args.runs]
    doc = gold_left(runs, gold, args.pool, args.threshold)
    total, rows = doc["gold_left"], doc["queries"]
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core.visible import visible

    from ragdiff.core.judge.stopping import bounds, sentence

    console = table_console()
    console.print(Text(f"{sentence(total, doc['unjudged'], bounds(runs, gold, threshold=args.threshold))} ({doc['pool_size']} pooled, "
                       f"{doc['judged']} judged, {doc['gold_found']} gold found); the gold is an estimate from the "
                       "judgments so far, which runs low while few chunks of a kind have been judged "
                       "(bench/RESULTS.md, \"Pool orders\")"), soft_wrap=True)
    table = Table(box=None, pad_edge=False)
    for name, justify in (("query", "left"), ("unjudged", "right"), ("gold found", "right"), ("gold left", "right")):
        table.add_column(name, justify=justify)
    for row in rows[:GOLD_LEFT_LISTED]:
        table.add_row(Text(visible(row["query_id"])), str(row["unjudged"]), str(row["gold_found"]),
                      f"{row['gold_left']:.1f}")
    console.print(table)
    if len(rows) > GOLD_LEFT_LISTED:
        console.print(Text(f"… {len(rows) - GOLD_LEFT_LISTED} more queries with unjudged chunks (--json lists every one)"))
    return 0
