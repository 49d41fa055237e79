"""What every scoring command says about the gold set beside its numbers: the drafted labels that wait."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdiff.core.labels.gold import Gold


def drafts_note(gold: Gold) -> str | None:
    """"3 drafted labels in 2 queries wait for a person …": every scoring command says it."""
    n = gold.drafts.height
    if not n:
        return None
    queries = gold.drafts.get_column("query_id").n_unique()
    return (f"{n} drafted label{'s' if n != 1 else ''} in {queries} quer{'ies' if queries != 1 else 'y'} wait for a "
            f"person: not scored (--drafted as-labels scores them as accepted; ragdiff labels log --drafts)")


def drafts_summary(gold: Gold) -> dict:
    """The JSON field beside drafts_note."""
    return {"waiting": gold.drafts.height, "queries": gold.drafts.get_column("query_id").n_unique()}
