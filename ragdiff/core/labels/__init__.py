"""Writing one reviewer's mark into a label file, losing nothing (DESIGN.md, "Writing labels back").

The public API: `LabelFile` (open a label file for marking), `Mark` (what the reviewer asked for),
`Judgment` and `Change` (what a mark did: the judgment store applies the Change alone), and the
errors. How the package is laid out:

    session.py      LabelFile: read -> plan -> verify -> journal -> write, put together from one part per concern:
      planning.py     a mark checked, planned by the document class, verified, said in a sentence
      journaling.py   the journal lines before and after each write
      group_commit.py a batch durable with one append and one fsync; the file rewritten once for many
      recovery.py     on opening: the journal's unconfirmed ops resolved, durable decisions written
      undo.py         undo (a mark or a file-level edit), retry, giving up
      file_edits.py   queries added, kept or dropped; the corpus snapshot; reviewed:; drafts
    snapshot.py     the file as read (bytes, sha256, stat, text, document), shared by those parts
    group.py        a batch of marks planned as one edit of the file (rounds, one read-back each)
    store.py        the judgments in memory: the one copy the views read, `apply` telling its listeners
    atomic.py       the lock; temp file + fsync + rename; the line patches undo uses
    spans.py        node positions from PyYAML's composer (libyaml when installed); the JSON span scanner
    edits.py        the span editor; id quoting
    document.py     the interface every format implements; the shared reading rules
    yaml_doc.py     the ragdiff YAML label file read   yaml_edits.py  its edits (json_doc.py: the JSON file)
    short_doc.py    {query: [ids]} in YAML or JSON     qrels_doc.py   TREC qrels and BEIR qrels
    reader.py       text + format -> its document (gold.py reads through it too)
    gold.py         a label file read as a gold set: the frames the metrics read (`load_gold`)
    journal.py      the append-only journal beside the label file: who marked what, replayed on opening
"""

# the names below load on first use (PEP 562): reading a gold set (`gold.py`, every scoring command) imports this
# package, and the writer's modules (the session, PyYAML's span editor) were ~25 ms of a `diff`'s start
_EXPORTS = {
    "TEMP_SUFFIX": "atomic", "yaml_id": "edits",
    "LabelConflictError": "errors", "LabelFormatError": "errors", "LabelWriteError": "errors",
    "UnknownQueryError": "errors",
    "LABELS": "marks", "UNJUDGED": "marks", "Change": "marks", "Judgment": "marks", "Mark": "marks",
    "judgment": "marks",
    "FORMATS": "session", "Edit": "session", "LabelFile": "session",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
