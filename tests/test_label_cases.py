"""Issue 15's hostile cases, each with the outcome DESIGN.md promises ("Writing labels back")."""

from __future__ import annotations

from pathlib import Path

from ragdiff.app.session import error_text as _error_text  # the status words moved with the writer (#11)
from ragdiff.core.labels import LabelConflictError


def test_error_line_keeps_the_dots_of_a_bare_file_name():
    """`--gold gold.yaml` (no folder): the status line said `goldyaml changed on disk`."""
    err = LabelConflictError("gold.yaml changed on disk: someone else set c.1 for q.1; the mark was not written")
    text = _error_text(err, Path("gold.yaml"))
    assert "gold.yaml changed on disk" in text and "c.1 for q.1" in text
    nested = _error_text(LabelConflictError("/data/x/gold.yaml changed on disk"), Path("/data/x/gold.yaml"))
    assert "gold.yaml changed on disk" in nested and "/data" not in nested
