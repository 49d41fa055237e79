"""`ragdiff labels log|…`: the label file's own history and upkeep (DESIGN.md, "Drafted labels, provenance,
growing the set"). Reading lives in core/judge/provenance.py; every write goes through the label writer.

The subcommands by group: `labels_log` (log), `labels_edit` (import, add, init, snapshot, undo: the writes),
`labels_audit` (stale, agree: reading checks)."""

from __future__ import annotations

from ragdiff.cli import labels_audit, labels_edit, labels_log


def add_parser(subparsers) -> None:
    labels = subparsers.add_parser("labels", help="the label file's history and upkeep: log, import, add, snapshot, undo, stale, agree",
                                   description="The label file's history and upkeep.")
    commands = labels.add_subparsers(dest="labels_command", metavar="COMMAND")
    commands.required = True

    labels_log.add_parsers(commands)
    labels_edit.add_parsers(commands)
    labels_audit.add_parsers(commands)
