"""Showing text from files literally: no markup, no escape sequences, control characters made visible.

Everything a file gives us (chunk text, ids, query text, run names) goes through `clean()` and into a rich
`Text` built from the plain string, never through markup. `[bold]` stays the seven characters `[bold]`,
and ESC shows as ␛ instead of switching the terminal's colour.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text

from ragdiff.core.folding import find_spans
from ragdiff.core.visible import visible as clean  # one rule for the CLI and the screen

__all__ = ["clean", "literal", "query_words", "mark_words", "fit"]

def literal(value: object, style: str | Style = "", multiline: bool = False) -> Text:
    """A rich Text showing the value exactly (markup and escapes inert)."""
    return Text(clean(value, multiline), style=style, no_wrap=not multiline, end="")


STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its me my of on or so that the "
    "their then there this to was what when where which who why will with you your".split()
)


def query_words(query: str | None) -> list[str]:
    """The words of a query worth marking in a chunk: case-folded, two letters or more, no stopwords."""
    if not query:
        return []
    words = {w for w in re.findall(r"\w+", query.casefold()) if len(w) >= 2 and w not in STOPWORDS}
    return sorted(words, key=lambda w: (-len(w), w))


def mark_words(text: Text, words: list[str], style: str | Style) -> Text:
    """Mark whole-word (prefix) matches of the query words in the text, case-insensitively (case-folded,
    so STRASSE marks Straße; the marks are the text's own characters however folding changed lengths)."""
    if words:
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\w*")
        for start, end in find_spans(text.plain, [pattern]):
            text.stylize(style, start, end)
    return text


def fit(value: str, width: int, pad: bool = False) -> str:
    """Cut to `width` terminal cells with an ellipsis; with `pad`, fill up to exactly `width` cells. Cells, not
    characters: a wide character (CJK, most emoji) takes two, so an id of them cut by length pushed the
    columns after it (score, label, the other run's rank) past the pane's edge."""
    if width <= 0:
        return ""
    cells = cell_len(value)
    if cells <= width:
        return value + " " * (width - cells) if pad else value
    return set_cell_size(value, width - 1) + "…"
