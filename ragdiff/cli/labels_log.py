"""`ragdiff labels log`: the journal beside the label file as a readable history, and the drafts' overturn
report (reading lives in core/judge/provenance.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ragdiff.cli.common import add_label_file
from ragdiff.core.errors import InputError

if TYPE_CHECKING:
    from ragdiff.core.judge.provenance import DraftTally, Entry, QueryTally


def add_parsers(commands) -> None:
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
