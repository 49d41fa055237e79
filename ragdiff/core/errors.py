"""One error type for everything a user can get wrong in an input file."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input: names the file, the line where there is one, and what was expected.

    The CLI prints str(error) on stderr and exits 2; nothing else about it reaches the user.
    """

    def __init__(self, path: str | Path | None, message: str, line: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


def line_of_offset(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


class UsageError(Exception):
    """Options that do not make sense together (no file involved): the CLI prints `ragdiff COMMAND: message`
    and exits 2."""
