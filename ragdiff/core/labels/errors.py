"""What can go wrong with a mark: each error says it in words the status line shows as they are."""

from __future__ import annotations


class LabelFormatError(Exception):
    """The mark cannot be said in this file's format, or this file cannot take it cleanly; nothing written."""


class UnknownQueryError(LabelFormatError, KeyError):
    """The label file has no such query; ragdiff does not create queries silently."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class LabelConflictError(Exception):
    """The file changed on disk in a way the mark cannot be re-applied to; nothing written."""


class LabelWriteError(Exception):
    """The write failed (read-only, disk full, folder gone). The file is untouched; the mark can be retried."""
