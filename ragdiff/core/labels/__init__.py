"""Writing one reviewer's mark into a label file, losing nothing (DESIGN.md, "Writing labels back").

The public API: `LabelFile` (open a label file for marking), `Mark` (what the reviewer asked for),
`Judgment` and `Change` (what a mark did: the app updates its model from the Change alone), and the
errors. How the package is laid out:

    session.py   read -> plan -> verify -> journal -> write; undo, retry, recovery; the group commit
    group.py     a batch of marks planned as one edit of the file (rounds, one read-back each)
    store.py     the judgments in memory: the one copy the views read, `apply` telling its listeners
    atomic.py    the lock; temp file + fsync + rename; the line patches undo uses
    spans.py     node positions from PyYAML's composer (libyaml when installed); the JSON span scanner
    edits.py     the span editor; id quoting
    document.py  the interface every format implements; the shared reading rules
    yaml_doc.py  the ragdiff YAML label file      json_doc.py  the JSON label file
    short_doc.py {query: [ids]} in YAML or JSON  qrels_doc.py TREC qrels and BEIR qrels
    reader.py    text + format -> its document (ragdiff.core.gold reads through it too)
"""

from ragdiff.core.labels.atomic import TEMP_SUFFIX
from ragdiff.core.labels.edits import yaml_id
from ragdiff.core.labels.errors import LabelConflictError, LabelFormatError, LabelWriteError, UnknownQueryError
from ragdiff.core.labels.marks import LABELS, UNJUDGED, Change, Judgment, Mark, judgment
from ragdiff.core.labels.session import FORMATS, Edit, LabelFile

__all__ = [
    "FORMATS", "LABELS", "TEMP_SUFFIX", "UNJUDGED", "Change", "Edit", "Judgment", "LabelConflictError", "LabelFile",
    "LabelFormatError", "LabelWriteError", "Mark", "UnknownQueryError", "judgment", "yaml_id",
]
