"""`ragdiff labels log|…`: the label file's own history and upkeep (DESIGN.md, "Drafted labels, provenance,
growing the set"). Reading lives in core/provenance.py; every write goes through the label writer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ragdiff.core.choices import GOLD_FORMATS
from ragdiff.core.errors import InputError

if TYPE_CHECKING:
    from ragdiff.core.provenance import DraftTally, Entry


def add_parser(subparsers) -> None:
    labels = subparsers.add_parser("labels", help="the label file's history and upkeep (log, import, …)",
                                   description="The label file's history and upkeep.")
    commands = labels.add_subparsers(dest="labels_command", metavar="COMMAND")
    commands.required = True

    log = commands.add_parser(
        "log", help="who judged what, when, from which run and rank, and what it was before",
        description="The journal beside the label file as a readable history, oldest first: every mark and "
                    "undo, who made it and when, from which run and rank, what the chunk was before and after, "
                    "and whether it was saved or later taken back. --drafts: how often people overturned a "
                    "model's drafts, per proposed grade.")
    log.add_argument("gold", type=Path, metavar="GOLD", help="the label file")
    log.add_argument("--gold-format", choices=GOLD_FORMATS, help="say the label file's format outright")
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
    imp.add_argument("gold", type=Path, metavar="GOLD", help="the label file")
    imp.add_argument("drafts", type=Path, metavar="DRAFTS.jsonl", help="the proposals")
    imp.add_argument("--gold-format", choices=GOLD_FORMATS, help="say the label file's format outright")
    _reviewer(imp)
    imp.set_defaults(handler=run_import)


def _reviewer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reviewer", help="your name for the label journal (default: your login name)")


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
    from ragdiff.core.drafts import import_drafts, read_drafts

    labels = open_labels(args)
    drafts = read_drafts(args.drafts, labels.queries)  # the whole file is checked before anything is written
    try:
        result = import_drafts(labels, drafts, args.drafts.name)
    except LABEL_ERRORS() as err:
        raise InputError(args.gold, str(err)) from None
    print(result.sentence(args.gold, args.drafts))
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
    from ragdiff.core.gold import load_gold
    from ragdiff.core.provenance import draft_decisions, history, journals_of

    gold = load_gold(args.gold, args.gold_format)
    query = _query_id(gold, args.query)
    entries = history(args.gold, query)
    journals = [str(p) for p in journals_of(args.gold)]
    if args.drafts:
        tallies = draft_decisions(entries)
        if args.json:
            print(json.dumps({"file": str(args.gold), "journals": journals, "query": query,
                              "drafts": drafts_document(tallies)}, ensure_ascii=False, indent=2))
        else:
            print_drafts(tallies)
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


def _from(entry: Entry) -> str:
    if entry.action == "undo":
        return "undo"
    parts = [entry.run or ""]
    if entry.rank is not None:
        parts.append(f"#{entry.rank}")
    return " ".join(p for p in parts if p) or "—"


def _note(entry: Entry) -> str:
    from ragdiff.core.provenance import SAVED

    if entry.undone_by is not None:
        return "taken back"
    return "" if entry.status == SAVED else entry.status


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
    undos = len(entries) - marks
    console.print(Text(visible(
        f"{path}{scope}: {marks} mark{'' if marks == 1 else 's'}, {undos} undo{'' if undos == 1 else 's'} by {len(people)} "
        f"{'person' if len(people) == 1 else 'people'} ({', '.join(people)}), {_when(entries[0].when)} → "
        f"{_when(entries[-1].when)} UTC; {saved} stand")), soft_wrap=True)
    table = Table(show_edge=False, box=None, pad_edge=False)
    for name in ("when (UTC)", "who", "query", "chunk", "was", "now", "from", ""):
        table.add_column(name, no_wrap=True)
    for e in entries:
        table.add_row(*(Text(visible(str(v))) for v in (
            _when(e.when), e.who or "?", e.query_id, e.chunk_id, e.before.word, e.after.word, _from(e), _note(e))))
    console.print(table)


def drafts_document(tallies: list[DraftTally]) -> dict:
    decided = sum(t.decided for t in tallies)
    overturned = sum(t.overturned for t in tallies)
    return {
        "decided": decided, "accepted": decided - overturned, "overturned": overturned,
        "by_proposed_grade": [{"grade": t.proposed, "decided": t.decided, "overturned": t.overturned, **t.counts}
                              for t in tallies],
    }


def print_drafts(tallies: list[DraftTally]) -> None:
    from rich.table import Table
    from rich.text import Text

    from ragdiff.cli.common import table_console
    from ragdiff.core import vocab
    from ragdiff.core.provenance import OUTCOME_WORDS, OUTCOMES

    console = table_console()
    doc = drafts_document(tallies)
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
