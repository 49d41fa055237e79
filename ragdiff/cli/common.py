"""Options and loading shared by the commands, so every command reads inputs the same way."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

# polars, numpy and rich load inside the functions that use them: building the parser (and so `ragdiff
# --help`, `ragdiff eval --help`) needs none of them (tests/test_startup.py, bench/RESULTS.md)
from ragdiff.core.io.choices import DEFAULT_POOL_ORDER, GOLD_FORMATS, POOL_ORDERS, RUN_FORMATS
from ragdiff.core.errors import InputError, UsageError
from ragdiff.core.vocab import SCORING_LEVELS

if TYPE_CHECKING:
    from rich.console import Console

    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.labels.gold import Gold
    from ragdiff.core.metrics.specs import EvalSettings, Metric
    from ragdiff.core.io.runs import PendingRun, Run


def whole_number(minimum: int):
    """An argparse type: a whole number >= minimum, with a message that says so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {value}")
        return value

    return parse


positive_int = whole_number(1)


def metric_list(text: str) -> list[Metric]:
    from ragdiff.core.metrics.specs import parse_metric

    try:
        return [parse_metric(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_gold_format(parser: argparse.ArgumentParser, what: str = "gold set") -> None:
    parser.add_argument("--gold-format", choices=GOLD_FORMATS, help=f"say the {what}'s format outright")


def add_reviewer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reviewer", help="your name for the label journal (default: your login name)")


def add_order(parser: argparse.ArgumentParser, after: str = "") -> None:
    """`--order`: the judging queue's order (core/judge/pool_order.py), for `judge` and for the review's `J`;
    `after` ends the help with what is particular to the command."""
    parser.add_argument("--order", choices=POOL_ORDERS, default=DEFAULT_POOL_ORDER, metavar="ORDER",
                        help=f"the order the judging queue offers chunks in: {', '.join(POOL_ORDERS)} (default "
                             f"{DEFAULT_POOL_ORDER}: move-to-front, a run keeps offering while its chunks are gold; "
                             "global: the chunk anywhere most likely gold; rank: query by query, best rank first); "
                             "it adapts to each decision" + after)


def add_label_file(parser: argparse.ArgumentParser, help: str = "the label file") -> None:
    """The label file a `labels` command reads or edits: GOLD and --gold-format."""
    parser.add_argument("gold", type=Path, metavar="GOLD", help=help)
    add_gold_format(parser, "label file")


def add_input_options(parser: argparse.ArgumentParser, gold_positional: bool = False) -> None:
    """The options every scoring command takes; `gold_positional` makes the gold set the first argument
    (`ragdiff run GOLD`) instead of --gold."""
    gold_help = "gold set: label YAML, short form, qrels or BEIR folder"
    if gold_positional:
        parser.add_argument("gold", type=Path, metavar="GOLD", help=gold_help)
    else:
        parser.add_argument("--gold", required=True, type=Path, help=gold_help)
    add_gold_format(parser)
    parser.add_argument("--format", dest="run_format", choices=RUN_FORMATS, help="say the runs' format outright")
    parser.add_argument("-k", type=positive_int, default=5, help="chunks pasted into the prompt (default 5)")
    parser.add_argument("--depth", type=positive_int, default=50, help="what the first stage returns (default 50)")
    parser.add_argument("--threshold", type=positive_int, default=1, help="lowest grade that counts as relevant (default 1)")
    parser.add_argument("--level", choices=SCORING_LEVELS, default="gold", help="score against gold or evidence labels")
    parser.add_argument("--gain", choices=("linear", "exp"), default="linear", help="nDCG gain: grade or 2^grade-1")
    parser.add_argument("--keep-first", action="store_true", help="keep the first of duplicate chunks in a query")
    parser.add_argument("--unanswerable-as-zero", action="store_true",
                        help="score queries with no relevant chunk as 0 in the means, as trec_eval does")
    parser.add_argument("--corpus", type=Path, help="corpus JSONL (id, text): checked against the gold's snapshot")
    parser.add_argument("--strict-corpus", action="store_true",
                        help="a corpus that is not the label file's recorded snapshot is an error (exit 2), not a warning")


def add_slice_options(parser: argparse.ArgumentParser) -> None:
    """Options of the commands that report means (eval, diff): drafts and tags."""
    parser.add_argument("--drafted", choices=("waiting", "as-labels"), default="waiting",
                        help="as-labels: also score as if every drafted label were accepted, beside the real numbers")
    parser.add_argument("--by-tag", action="store_true", help="every metric per tag (the query's tags: [...])")
    parser.add_argument("--judged-only", action="store_true",
                        help="drop unjudged chunks before scoring and close up the ranks (condensed lists, "
                             "trec_eval -J)")


def check_settings(settings: EvalSettings) -> EvalSettings:
    """The one settings check every command makes before it reads a file, so `eval`, `diff`, `review`, `demo`
    (and any new command) refuse the same nonsense with the same words. Returns the settings unchanged."""
    for name, value in (("-k", settings.k), ("--depth", settings.depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} {value!r}: expected a whole number >= 1")
    if settings.k > settings.depth:
        raise UsageError(f"-k {settings.k} is above --depth {settings.depth}; expected k <= depth (k is what is "
                         "pasted into the prompt, depth what the first stage returns)")
    if isinstance(settings.threshold, bool) or not isinstance(settings.threshold, int) or settings.threshold < 1:
        raise UsageError(f"--threshold {settings.threshold!r}: expected a whole number >= 1 (the lowest grade "
                         "that counts as relevant; grade 0 is not relevant)")
    return settings


def settings_from(args: argparse.Namespace) -> EvalSettings:
    """The command line's settings, checked (check_settings): call it before loading anything."""
    from ragdiff.core.metrics.specs import EvalSettings

    return check_settings(EvalSettings(k=args.k, depth=args.depth, threshold=args.threshold, level=args.level,
                                       gain=args.gain, unanswerable_as_zero=args.unanswerable_as_zero,
                                       judged_only=getattr(args, "judged_only", False)))


def start_loading(args: argparse.Namespace, run_paths: list[Path]) -> list[PendingRun]:
    """Check the settings (check_settings reads them off the command line as well) and begin reading the first
    two runs in polars' threads, one after the other, so that what the command imports next (numpy, the core's
    modules), the gold set and the ordering of the first run (numpy, one core) run meanwhile: pass the result
    to load_inputs. Imports polars and core/runs only (not numpy: diff_cmd.one_blas_thread must load it). Two
    runs, not all, and one read at a time: reads at once stack their buffers, and every run read ahead is held
    unordered until its turn."""
    check_settings(args)
    from ragdiff.core.io.runs import start_run

    started: list[PendingRun] = []
    for path in run_paths[:2]:
        earlier = next((p for p in reversed(started) if p.started), None)
        started.append(start_run(path, args.run_format, keep_first=args.keep_first, after=earlier))
    return started


def load_inputs(args: argparse.Namespace, run_paths: list[Path], started: list[PendingRun] | None = None,
                each: Callable[[Gold, Run], None] | None = None) -> tuple[Gold, list[Run]]:
    """The gold set, then the runs, each error in that order; `started`: start_loading's, for run_paths.
    `each` is called with the gold set and every run as soon as that run is read, before the next is: to
    begin work on it in another thread (the checks below still come first for the caller's results)."""
    from ragdiff.core.labels.gold import load_gold
    from ragdiff.core.io.runs import load_run

    started = list(started or [])
    assert [p.path for p in started] == [Path(p) for p in run_paths[:len(started)]]
    try:
        gold = load_gold(args.gold, args.gold_format)
        runs = []
        for i, p in enumerate(run_paths):
            runs.append(started[i].result() if i < len(started)
                        else load_run(p, args.run_format, keep_first=args.keep_first))
            if each is not None:
                each(gold, runs[-1])
    finally:
        for pending in started:
            pending.cancel()
    names = [r.name for r in runs]
    for run in runs:
        if names.count(run.name) > 1:
            run.name = str(run.path)
        check_run_matches_gold(run, gold)
    return gold, runs


def check_run_matches_gold(run: Run, gold: Gold) -> None:
    """A run that shares no query with the gold set is almost surely the wrong file: stop and say so."""
    known = set(gold.queries["query_id"].to_list()) | set(gold.aliases())
    run_ids = run.query_ids
    if not known.intersection(run_ids):
        sample = ", ".join(repr(q) for q in run_ids[:3])
        raise InputError(run.path, f"none of the run's {len(run_ids)} query ids ({sample}{' …' if len(run_ids) > 3 else ''}) "
                                   f"is in the gold set {gold.path}; expected the same query ids or texts — is this "
                                   "the right file?")


def check_run_matches_corpus(run: Run, corpus: Corpus) -> str | None:
    """Chunk ids the corpus does not know: none known is an error (another corpus), some is a warning."""
    import polars as pl

    ids = run.frame.get_column("chunk_id").unique()
    index = corpus.index()
    missing = ids.filter(~ids.is_in(pl.Series(list(index.keys()), dtype=pl.String).implode()))
    if missing.len() == 0:
        return None
    if missing.len() == ids.len():
        raise InputError(run.path, f"none of its {ids.len()} chunk ids is in the corpus {corpus.path}; "
                                   "expected a run over that corpus — a run from another corpus?")
    return (f"warning: {missing.len()} of {ids.len()} chunk ids in {run.path} are not in {corpus.path} "
            f"(e.g. {missing.sort()[0]!r}): a run from another corpus snapshot?")


def corpus_warning(gold: Gold, corpus: Path | None, strict: bool = False) -> str | None:
    """Plain words when the corpus given is not the snapshot the labels were made against.

    strict (`--strict-corpus`): a mismatch is bad input (exit 2) naming both hashes, and so is a label file
    that records no snapshot; without --corpus the corpus the label file names (beside it) is checked."""
    from ragdiff.core.labels.gold import file_sha256

    if strict and gold.corpus_sha256 is None:
        raise InputError(gold.path, "--strict-corpus: the label file records no corpus snapshot; expected "
                                    "`corpus: {path, sha256}` (ragdiff labels snapshot GOLD --corpus C writes it)")
    if strict and corpus is None and gold.corpus_path:
        corpus = gold.recorded_corpus()
    if corpus is None or gold.corpus_sha256 is None:
        return None
    if corpus.is_dir():
        raise InputError(corpus, "is a folder; expected the corpus JSONL file (one {\"id\", \"text\"} a line)")
    if not corpus.is_file():
        raise InputError(corpus, "no such corpus file")
    actual = file_sha256(corpus)
    if actual != gold.corpus_sha256:
        from ragdiff.core.judge.stale import chunk_check

        check = chunk_check(gold, corpus)
        if check is not None:  # chunk by chunk: only a judged chunk that changed or vanished matters
            return _chunks_warning(gold, check, corpus, strict)
        if strict:
            raise InputError(corpus, f"--strict-corpus: sha256 {actual} is not the snapshot {gold.path} was labelled "
                                     f"against (sha256 {gold.corpus_sha256}); expected that corpus")
        return (f"warning: {corpus} is not the corpus {gold.path} was labelled against (sha256 {actual[:12]}… ≠ "
                f"{gold.corpus_sha256[:12]}…): a score change may be the data's, not the retriever's.")
    return None


def _chunks_warning(gold: Gold, check, corpus: Path, strict: bool) -> str | None:
    """New chunks alone are not a reason to re-judge: say something only when a judged chunk changed or went."""
    if not check.flagged:
        return None
    queries = sorted(check.per_query)
    said = (f"since {gold.path}'s snapshot {len(check.changed)} judged chunk{'s' if len(check.changed) != 1 else ''} "
            f"changed text and {len(check.vanished)} vanished from {corpus}, in {len(queries)} "
            f"quer{'y' if len(queries) == 1 else 'ies'} ({', '.join(queries[:5])}{', …' if len(queries) > 5 else ''})")
    if strict:
        raise InputError(corpus, f"--strict-corpus: {said}; expected the labels' chunks as they were judged "
                                 "(ragdiff labels stale lists them)")
    return f"warning: {said}: their scores may be the data's, not the retriever's (ragdiff labels stale lists them)."


def stdout_console(width: int | None = None) -> Console:
    """rich's Console for stdout. A reader gone (`ragdiff eval ... | head`) is a BrokenPipeError, which the
    command's handler (cli/main.py) takes as it takes one from print(): nothing said, exit 0. rich's own
    on_broken_pipe does the rest (the console quiet, stdout onto /dev/null so the flush at exit does not fail
    again) and then raises SystemExit(1), which becomes that BrokenPipeError."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            try:
                super().on_broken_pipe()
            except SystemExit:
                pass
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _Console(highlight=False, soft_wrap=False, width=width)


def table_console() -> Console:
    """For tables: a terminal gets what fits, a pipe or a file the whole table (no cell cut, no wrap)."""
    return stdout_console(None if is_tty() else 400)


def warn(message: str) -> None:
    # plain print: one unwrapped line that scripts can grep
    print(message, file=sys.stderr)


def is_tty() -> bool:
    return sys.stdout.isatty()


def run_app(app) -> int:
    """Run a Textual screen (review or judge) to its end: a failure it recorded is one message and exit 2."""
    app.run()
    if app.failure:
        print(f"ragdiff: {app.failure}", file=sys.stderr)
        return 2
    code = app.return_code
    return 0 if code is None else int(code)
