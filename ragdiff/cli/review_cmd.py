"""`ragdiff review RUN_A RUN_B --gold GOLD` and `ragdiff demo`: the terminal review screen.

Textual is imported only inside the handlers, so `ragdiff eval` and friends never load it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ragdiff.cli.common import (add_input_options, add_order, add_reviewer, check_settings, positive_int, run_app,
                                settings_from)
from ragdiff.core.errors import InputError

DEMO_FILES = ("bm25.jsonl", "dense.jsonl", "gold.yaml", "corpus.jsonl")
# The shipped labels judge every pooled chunk, which leaves the judging queue (J) nothing to show: the demo's copy
# holds back the not-relevant labels of the five hit→miss queries (85 pooled chunks), so J has work at the first
# query on screen. The scores stay the same: unjudged counts as not relevant; judged@k and unjudged@k show them.
HELD_BACK = ("q09", "q62", "q66", "q71", "q72")


# what --order means for the review's J (the judging queue over both runs' top 10, opened at the query on screen)
J_ORDER = ("; J opens the queue at the query on screen: that query's unjudged chunks come first, best rank first, "
           "then the order chooses across the pool, having learnt from them")


def add_parser(subparsers) -> None:
    review = subparsers.add_parser(
        "review", help="review two runs side by side in the terminal (flips first, mark new gold)",
        description="Two runs side by side against the gold set: flipped queries first, gold highlighted, "
                    "and keys to mark a returned chunk gold, evidence or not relevant (written to the label file).",
    )
    review.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run")
    review.add_argument("run_b", type=Path, metavar="RUN_B", help="the run to compare with it")
    add_input_options(review)
    add_reviewer(review)
    add_order(review, J_ORDER)
    review.set_defaults(handler=run_review)

    demo = subparsers.add_parser(
        "demo", help="review the bundled sample runs (on a private temporary copy)",
        description="Open the review screen on the sample runs that ship inside ragdiff (bm25.jsonl vs "
                    "dense.jsonl, 72 labelled queries). It works on a private temporary copy, named on the status "
                    "line and deleted when you quit (unless --keep), so marks never change the installed files. "
                    f"The copy holds back the not-relevant labels of {', '.join(HELD_BACK)} (the hit→miss queries): "
                    "J opens the judging queue on them.",
    )
    demo.add_argument("-k", type=positive_int, default=5, help="chunks pasted into the prompt (default 5)")
    demo.add_argument("--depth", type=positive_int, default=50, help="what the first stage returns (default 50)")
    add_order(demo, J_ORDER)
    demo.add_argument("--keep", action="store_true", help="keep the temporary copy (with your marks and their journal) after you quit")
    demo.set_defaults(handler=run_demo)


def _check_inputs(paths: list[tuple[str, Path | None]]) -> None:
    for what, path in paths:
        if path is not None and not path.exists():
            raise InputError(path, f"no such file ({what})")


def run_review(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    _check_inputs([("RUN_A", args.run_a), ("RUN_B", args.run_b), ("--gold", args.gold), ("--corpus", args.corpus)])
    if args.strict_corpus:  # a snapshot mismatch stops here, before the screen opens (exit 2, both hashes)
        from ragdiff.cli.common import corpus_warning
        from ragdiff.core.labels.gold import load_gold

        corpus_warning(load_gold(args.gold, args.gold_format), args.corpus, strict=True)
    # the corpus the label file names, and whether it is the recorded snapshot, are worked out by the app's
    # loading worker, which reads the gold set anyway
    return _run_app(args.run_a, args.run_b, args.gold, settings, corpus=args.corpus, run_format=args.run_format,
                    gold_format=args.gold_format, keep_first=args.keep_first, reviewer=args.reviewer,
                    order=args.order)


def sample_runs_dir() -> Traversable:
    """The sample runs ship inside the package (package data), so the demo works from an installed wheel."""
    return resources.files("ragdiff") / "sample_runs"


def run_demo(args: argparse.Namespace) -> int:
    from ragdiff.core.metrics.specs import EvalSettings

    settings = check_settings(EvalSettings(k=args.k, depth=args.depth))
    source = sample_runs_dir()
    missing = [name for name in DEMO_FILES if not source.joinpath(name).is_file()]
    if missing:
        raise InputError(str(source), f"the sample runs are not here: it lacks {', '.join(missing)}; expected them "
                                      "inside the installed package (reinstall ragdiff), or use "
                                      "`ragdiff review RUN_A RUN_B --gold GOLD`")
    workdir = Path(tempfile.mkdtemp(prefix="ragdiff-demo-"))
    try:
        for name in DEMO_FILES:
            data = source.joinpath(name).read_bytes()
            (workdir / name).write_bytes(hold_back(data, HELD_BACK) if name == "gold.yaml" else data)
        after = "kept after you quit (--keep)" if args.keep else "deleted when you quit; --keep keeps it"
        code = _run_app(workdir / "bm25.jsonl", workdir / "dense.jsonl", workdir / "gold.yaml", settings,
                        corpus=workdir / "corpus.jsonl", order=args.order,
                        note=f"demo: marks go to a copy in {workdir} ({after}); J judges the labels it holds back")
        if args.keep:
            print(f"ragdiff demo: the copy with your marks is in {workdir}", file=sys.stderr)
        return code
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def hold_back(gold: bytes, queries: tuple[str, ...]) -> bytes:
    """The sample label file with the `not_relevant:` line of each of `queries` made a comment (the file's own
    layout: one `  - id: q09` line a query, its lists one line each), so their pooled chunks are unjudged."""
    out, current = [], None
    for line in gold.decode("utf-8").splitlines(keepends=True):
        if line.startswith("  - id: "):
            current = line.split()[2]
        elif current in queries and line.startswith("    not_relevant: "):
            line = "    # held back in the demo, to judge with J: " + line.strip()[len("not_relevant: "):] + "\n"
        out.append(line)
    return "".join(out).encode("utf-8")


def _run_app(run_a: Path, run_b: Path, gold: Path, settings, **options) -> int:
    from ragdiff.app.app import ReviewApp, ReviewInputs

    app = ReviewApp(ReviewInputs(run_a=run_a, run_b=run_b, gold=gold, settings=settings, **options))
    return run_app(app)
