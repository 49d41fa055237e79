"""Showing text from files literally: no markup, no escape sequences, control characters made visible.

Everything a file gives us (chunk text, ids, query text, run names) goes through `clean()` and into a rich
`Text` built from the plain string, never through markup. `[bold]` stays the seven characters `[bold]`,
and ESC shows as ␛ instead of switching the terminal's colour.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text

from ragdiff.core.folding import find_spans
from ragdiff.core.visible import visible as clean  # one rule for the CLI and the screen

__all__ = ["clean", "literal", "query_words", "mark_words", "fit", "IdCuts", "MIN_ID"]

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


# A column for an id is never narrower than this: a cut id keeps 12 of its characters and one or two …
# (tests/test_id_cuts.py holds every list to it)
MIN_ID = 14
_SEPARATORS = re.compile(r"[./:\\]")
_TAIL_MIN = 4


def _head(value: str, cells: int) -> str:
    """The longest start of `value` that fits in `cells` cells."""
    return set_cell_size(value, cells).rstrip(" ") if not value.isascii() else value[:cells]


def _tail(value: str, cells: int) -> str:
    """The longest end of `value` that fits in `cells` cells."""
    if value.isascii():
        return value[len(value) - cells:] if cells > 0 else ""
    out, used = [], 0
    for char in reversed(value):
        used += cell_len(char)
        if used > cells:
            break
        out.append(char)
    return "".join(reversed(out))


def _cut(value: str, width: int, tail: int) -> tuple[str, str]:
    """(start, end) of `value` shown in `width` cells as start…end, the end `tail` cells."""
    return _head(value, width - 1 - tail), _tail(value, tail)


def _preferred_tail(value: str, width: int) -> int:
    """The distinguishing end of an id: its last part after a . / : or \\ (`Popen#1` of `subprocess.Popen#1`),
    at least 4 cells, at most half the room: most ids of one source share their start and differ at the end."""
    parts = _SEPARATORS.split(value)
    return max(1, min(max(cell_len(parts[-1]), _TAIL_MIN), (width - 1) // 2))


class _Cutter:
    """The ids too wide for one width, sorted: which of them a cut (start…end) could be read as."""

    def __init__(self, values: list[str], width: int) -> None:
        self.values = sorted(values)
        self.width = width

    def cut_all(self) -> dict[str, str]:
        """id -> its cut, every one different: the ids that can be cut to read as themselves alone first."""
        taken: set[str] = set()
        out: dict[str, str] = {}
        plain = {v for v in self.values if self.readers(*_cut(v, self.width, _preferred_tail(v, self.width))) == 1}
        for value in sorted(self.values, key=lambda v: v not in plain):
            out[value] = self.cut(value, taken)
            taken.add(out[value])
        return out

    def readers(self, head: str, end: str, middle: str = "") -> int:
        """How many of the ids a cut could be read as: those that start with `head`, end with `end` and hold
        `middle` between the two."""
        at = bisect_left(self.values, head)
        count = 0
        while at < len(self.values) and self.values[at].startswith(head):
            value = self.values[at]
            inner = len(value) - len(head) - len(end)
            if inner >= len(middle) and value.endswith(end) and middle in value[len(head):len(head) + inner]:
                count += 1
            at += 1
        return count

    def _forms(self, value: str):
        """(start, middle, end) forms of `value` in the order they are preferred: the start and the preferred
        end (`_preferred_tail`), then the nearest other end lengths (longer first; at the last the end alone),
        then start … a part from the middle … end."""
        width = self.width
        first = _preferred_tail(value, width)
        for tail in (first, *range(first + 1, width - 1), *range(first - 1, 0, -1), width - 1):
            head, end = _cut(value, width, tail)
            yield head, "", end
        for side in range(max(1, (width - 2) // 4), 0, -1):
            head, end = _head(value, side), _tail(value, side)
            for start in range(len(head) + 1, len(value) - len(end)):  # something left out on either side
                middle = _head(value[start:], width - 2 - 2 * side)
                if start + len(middle) < len(value) - len(end):
                    yield head, middle, end

    def cut(self, value: str, taken: set[str]) -> str:
        """`value` cut in the middle: the first form that can be read as no other id of the set, else (an id
        that is the start and the end of a longer one: `a.B#0` of `a.B.B#0`) the first form not `taken` by
        another id — told apart from the ids it could be read as, which have forms of their own."""
        spare = None
        for head, middle, end in self._forms(value):
            look = head + "…" + (middle + "…" if middle else "") + end
            if look in taken:
                continue
            if self.readers(head, end, middle) == 1:
                return look
            spare = spare or look
        return spare or fit(value, self.width)


class IdCuts:
    """The ids shown together (one query's two ranked lists, one query's pool, the query list) and how each
    shows in a column of `width` cells: whole when it fits, else its start, …, and its distinguishing end, cut
    so that no two different ids of the set look the same. The one rule every list cuts ids by.

    Worked out once per width, only for the ids too wide for it; a set is compared by its ids (`same`), so a
    list keeps one instance, and its drawn lines, while the ids it shows stay the same."""

    def __init__(self, ids) -> None:
        self.ids = tuple(dict.fromkeys(ids))
        self._widest: int | None = None
        self._by_width: dict[int, dict[str, str]] = {}

    def same(self, ids) -> bool:
        return self.ids == tuple(dict.fromkeys(ids))

    @property
    def widest(self) -> int:
        if self._widest is None:
            self._widest = max((cell_len(clean(i)) for i in self.ids), default=0)
        return self._widest

    def show(self, chunk_id: str, width: int, pad: bool = False) -> str:
        """The id as the column of `width` cells shows it (an id not in the set: cut on its own)."""
        value = clean(chunk_id)
        cells = cell_len(value)
        if cells > width:
            if width < 3:
                return fit(value, width, pad)
            cuts = self._by_width.get(width)
            if cuts is None:
                long = [v for v in dict.fromkeys(clean(i) for i in self.ids) if cell_len(v) > width]
                cuts = self._by_width[width] = _Cutter(long, width).cut_all()
            value = cuts.get(value) or _Cutter([value], width).cut(value, set())
            cells = cell_len(value)
        return value + " " * (width - cells) if pad and cells < width else value


def cut_text_middle(text: Text, width: int) -> Text:
    """`text` in `width` cells on one line: whole when it fits, else its start, …, and its end — a status
    message ends with what matters most (the file written, the count), so the middle is what gives way."""
    if width <= 0:
        return Text("", end="")
    plain = text.plain
    if cell_len(plain) <= width:
        return text
    keep = width - 1
    head_cells = keep * 2 // 5
    head = len(set_cell_size(plain, head_cells).rstrip(" ")) if not plain.isascii() else head_cells
    tail_cells, start = 0, len(plain)
    while start > head and tail_cells + cell_len(plain[start - 1]) <= keep - cell_len(plain[:head]):
        start -= 1
        tail_cells += cell_len(plain[start])
    return Text.assemble(text[:head], "…", text[start:], no_wrap=True, end="")
