"""Text from files, made safe to show: control characters become visible placeholders, never commands.

`[bold]` is data, not markup (callers build rich Text from plain strings), and an escape sequence in a chunk
or a query must show as characters instead of recolouring or clearing the terminal. Used by the CLI and the
review screen alike.
"""

from __future__ import annotations

# C0 controls -> the Unicode "control pictures" block (␀ ␁ … ␟), DEL -> ␡, C1 controls -> \x9b style
_C0 = {code: chr(0x2400 + code) for code in range(0x20)}
_C0[0x7F] = "\u2421"
_C1 = {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
_ONE_LINE = {**_C0, **_C1}
_MULTILINE = {k: v for k, v in _ONE_LINE.items() if k != 0x0A}
_MULTILINE[0x09] = "    "
# bidi overrides and zero-width marks can reorder or hide what is shown: make them visible too
for _code in (0x061C, 0x200B, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060, 0x2066, 0x2067, 0x2068,
              0x2069, 0xFEFF):
    _ONE_LINE[_code] = _MULTILINE[_code] = f"<U+{_code:04X}>"


def visible(value: object, multiline: bool = False) -> str:
    """The string with every control character replaced by a visible placeholder (newlines kept if multiline)."""
    text = str(value)
    text = text.replace("\r\n", "\n") if multiline else text
    return text.translate(_MULTILINE if multiline else _ONE_LINE)
