"""The one vocabulary of judgments: each kind, the word people read and the glyph the lists draw.

Every consumer (the label writer, the gold loader, the review screen and its legend, the CLI) reads words
and glyphs from here, so "not relevant" is spelled in one place and `·` means the same thing everywhere.

A kind is also the name of its section in the ragdiff label file (`gold:`, `evidence:`, `not_relevant:`,
`drafted:`) and the `level` column of `Gold.judgments`; `unjudged` is the absence of any judgment.
"""

from __future__ import annotations

from dataclasses import dataclass

GOLD = "gold"
EVIDENCE = "evidence"
NOT_RELEVANT = "not_relevant"
DRAFTED = "drafted"
UNJUDGED = "unjudged"


@dataclass(frozen=True)
class Kind:
    name: str  # the key in a label file and the `level` in Gold.judgments
    word: str  # what a person reads: "not relevant"
    glyph: str  # the mark in a ranked list (gold adds its grade: ★3)
    judged: bool  # a person's judgment (drafted is a model's proposal; unjudged is none at all)
    graded: bool  # its grade is shown (gold ★3, drafted ☆2)
    meaning: str  # one line for the legend


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(GOLD, "gold", "★", True, True, "gold: answers the query (★n: with grade n)"),
    Kind(EVIDENCE, "evidence", "◆", True, False, "evidence: supports a step of the answer"),
    Kind(NOT_RELEVANT, "not relevant", "·", True, False, "judged not relevant (grade 0)"),
    Kind(DRAFTED, "drafted", "☆", False, True, "drafted by a model, not yet read by a person (☆n: grade n)"),
    Kind(UNJUDGED, "unjudged", "?", False, False, "unjudged: nobody has labelled it (counts as not relevant)"),
)}

# the sections a label file can hold, in the order ragdiff writes new ones
SECTIONS = (GOLD, EVIDENCE, NOT_RELEVANT, DRAFTED)
# the kinds a person's mark can set (plus UNJUDGED, which removes a judgment)
MARKABLE = (GOLD, EVIDENCE, NOT_RELEVANT)
# the label levels a gold set can be scored at (`--level`)
SCORING_LEVELS = (GOLD, EVIDENCE)


# The one "judged" rule, in its two forms (one judgment here, a frame's rows in `judged_rows`; a test holds them
# equal on every level and grade): a person's judgment — a judged kind (gold, evidence, not relevant; never a
# draft) whose grade is not negative (a qrels line's -1 is unjudged, as in trec_eval; no grade is not negative)
JUDGED_LEVELS = tuple(name for name, kind in KINDS.items() if kind.judged)


def kind_of(level: str | None, grade: int | None = None) -> Kind:
    """The kind of one judgment, its `level` and grade: None (or the writer's old "none") is unjudged, and so is
    a negative grade whatever its level (a qrels line's -1: unjudged in trec_eval). The one rule for a single
    judgment — every list, page and queue that draws or counts one asks here (`.judged`); `judged_rows` is the
    same rule over a frame."""
    if level is None or level == "none" or (grade is not None and grade < 0):
        return KINDS[UNJUDGED]
    return KINDS[level]


def judged_rows(level: str | None = "level", grade: str = "grade"):
    """`kind_of(level, grade).judged` as a polars expression over a frame's columns (True or False, never null):
    what the judging queue's order and counts (core/judge/pool.py) and metrics.judged_pairs filter with. `level=None`:
    a frame whose every row is a person's judgment (Gold.qrels, whose levels are folded into the grade), the
    grade alone decides. Polars is imported here, not with the vocabulary (the label writer reads only words)."""
    import polars as pl

    rule = ~(pl.col(grade) < 0).fill_null(False)  # a null grade is no negative grade (kind_of's None)
    if level is not None:
        rule = rule & pl.col(level).is_in(JUDGED_LEVELS).fill_null(False)
    return rule


def word(level: str | None, grade: int | None = None) -> str:
    """"gold ★3", "gold", "evidence", "not relevant", "drafted ☆2", "unjudged"; a negative grade is unjudged
    (grade -1), as its glyph says and trec_eval scores it."""
    if grade is not None and grade < 0:
        return f"{KINDS[UNJUDGED].word} (grade {grade})"
    kind = kind_of(level)
    if kind.graded and grade is not None:
        return f"{kind.word} {kind.glyph}{grade}"
    return kind.word


def glyph(level: str | None, grade: int | None = None) -> str:
    """The list mark: ★3 (a one-digit grade), ★ (any other), ◆, ·, ☆2, ?; a negative grade is unjudged
    (trec_eval's convention for qrels)."""
    kind = kind_of(level, grade)
    if kind.graded and grade is not None and 0 <= grade <= 9:
        return f"{kind.glyph}{grade}"
    return kind.glyph


def legend() -> list[tuple[str, str]]:
    """(glyph, meaning) for every kind, in order: the `?` screen and docs/keys.md list these."""
    return [(k.glyph + ("n" if k.graded else ""), k.meaning) for k in KINDS.values()]
