"""Counted words, so a message never says "1 queries": `queries(1)` is "1 query", `queries(2)` "2 queries"."""

from __future__ import annotations


def count(n: int, one: str, many: str | None = None) -> str:
    """'1 query', '2 queries', '0 queries' (many defaults to one + 's')."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def queries(n: int) -> str:
    return count(n, "query", "queries")


# --judged-only, said wherever the settings are (eval, diff, the reports)
JUDGED_ONLY_WORDS = "judged only: unjudged chunks dropped, ranks closed up (trec_eval -J)"
