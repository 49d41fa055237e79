"""Case-insensitive matching whose spans are the original text's characters.

`str.casefold()` can change a string's length: ß folds to "ss", İ to "i̇" (two code points), the ﬁ
ligature to "fi". A position found in the folded text is then not the same position in the text that is
shown: used as is, a snippet starts in the wrong place and a highlight lands on the wrong characters.
`fold` gives the folded text with, where the length changed, the original index of every folded
character; `find_spans` matches on the folded text and returns spans of the original.
"""

from __future__ import annotations

import re

__all__ = ["fold", "original_span", "find_spans", "merge_spans"]


def fold(text: str) -> tuple[str, list[int] | None]:
    """The text case-folded, and for each folded character the index of the character it came from
    (None when every character folded to one, so the positions are the same)."""
    folded = text.casefold()
    if len(folded) == len(text):  # no character folds to nothing: every one folded to exactly one
        return folded, None
    starts: list[int] = []
    for i, ch in enumerate(text):
        starts.extend([i] * len(ch.casefold()))
    return folded, starts


def original_span(starts: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """The smallest span of the original text whose folding covers folded[start:end] (end > start)."""
    if starts is None:
        return start, end
    return starts[start], starts[end - 1] + 1


def find_spans(text: str, patterns: list[re.Pattern[str]]) -> list[tuple[int, int]]:
    """Where any of the patterns (written for case-folded text) matches the text, as sorted, merged spans
    of the original text."""
    folded, starts = fold(text)
    spans = [original_span(starts, m.start(), m.end()) for p in patterns for m in p.finditer(folded)
             if m.end() > m.start()]
    return merge_spans(spans)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
