"""Reading input files as text, with every failure turned into an InputError that names the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError, line_of_offset

# What separates the columns of a TREC run or qrels line: trec_eval's rule, C's isspace() in the "C" locale
# (trec_eval never calls setlocale; get_trec_results.c and get_qrels.c split on it) — space, tab, \n, \v,
# \f and \r, ASCII only. Anything else (a no-break space, U+2003, U+0085, \x1c) is no column break, as
# trec_eval reads it (an id holding one is refused: ODD_SPACE); lines end at \n alone (a \r before it is
# trailing white space). Python's str.split() and str.strip() and the regex \s take Unicode white space, so
# every reader and sniffer of these formats splits, strips and tests with what is here instead (`bytes.split()`
# is the same rule).
SPACE = " \t\n\r\x0b\x0c"
_ESCAPED = "".join(f"\\x{ord(c):02X}" for c in SPACE)  # written for a regex: Python's re and polars' alike
SPACE_CLASS, FIELD_CLASS = f"[{_ESCAPED}]", f"[^{_ESCAPED}]"  # one white-space character; one of an id
_FIELD = re.compile(FIELD_CLASS + "+")
# The white space trec_eval does not split on and Python's str.split() does (a no-break space, U+2028, \x1c, …):
# one column to trec_eval, two to a tool that reads these files with str.split(). An id holding one is refused in
# a TREC run or qrels file, on reading and before a write, as an id holding an ASCII space cannot be written
# (tests/test_whitespace_rule.py holds the list to str.isspace()).
ODD_SPACE = ("\x1c\x1d\x1e\x1f\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
             + "\u2028\u2029\u202f\u205f\u3000")
ODD_SPACE_CLASS = "[" + "".join(f"\\u{{{ord(c):04X}}}" for c in ODD_SPACE) + "]"  # polars' (Rust) regex
_ODD_SPACE = re.compile("[" + re.escape(ODD_SPACE) + "]")
# the same in UTF-8: its first bytes (one-byte searches in C), and the whole sequences once one is there
_ODD_LEADS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f", b"\xc2", b"\xe1", b"\xe2", b"\xe3")
_ODD_BYTES = re.compile(b"|".join(re.escape(c.encode()) for c in ODD_SPACE))
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark: dropped at the start of a file
BOM_CHAR = BOM.decode("utf-8")  # the same mark in decoded text (U+FEFF)


def fields(line: str) -> list[str]:
    """The columns of a line by trec_eval's rule (SPACE): what str.split() would be with ASCII white space."""
    return _FIELD.findall(line)


def odd_space(value: str) -> str | None:
    """The first ODD_SPACE character of `value`, named (`no-break space (U+00A0)`); None when it has none."""
    import unicodedata

    found = _ODD_SPACE.search(value)
    if found is None:
        return None
    char = found.group()
    return f"{unicodedata.name(char, 'separator').lower()} (U+{ord(char):04X})"


def odd_space_error(path: Path, what: str, value: str, line: int | None) -> InputError:
    return InputError(path, f"{what} {value!r} holds a {odd_space(value)}: white space that Python's str.split() "
                            "and the tools built on it read as a column break; expected ids without white space",
                      line)


def check_file(path: Path) -> None:
    if not path.exists():
        raise InputError(path, "no such file")
    if path.is_dir():
        raise InputError(path, "is a folder; expected a file")


def read_text(path: str | Path) -> str:
    """The whole file as text: UTF-8 (a BOM is dropped), CRLF left for the parsers to strip.

    Binary data and invalid UTF-8 are errors with the line where they start.
    """
    path = Path(path)
    check_file(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror}") from None
    data = data.removeprefix(BOM)
    if is_blank(data):
        raise empty_file(path)
    return decode(path, data)


def is_blank(data: bytes) -> bool:
    """Nothing but white space (SPACE: bytes.strip()'s set), or nothing at all: a file that says nothing."""
    return not data.strip()


def empty_file(path: Path) -> InputError:
    return InputError(path, "the file is empty")


def decode(path: Path, data: bytes) -> str:
    """`data`, whole lines of `path` from its first line (or from line 1 of a block: the caller adds the lines
    before), as text. A NUL byte (binary data) or invalid UTF-8 is an InputError with the line where it is."""
    _no_nul(path, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(path, data, err) from None


def check_text(path: Path, data: bytes) -> None:
    """`decode`'s refusals without making the text: ASCII (most runs) is checked without decoding (a million-line
    run: ~1 ms, decoding it ~15)."""
    _no_nul(path, data)
    if not data.isascii():
        decode(path, data)


def _no_nul(path: Path, data: bytes) -> None:
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(path, "binary data (a NUL byte); expected a text file", data.count(b"\n", 0, nul) + 1)


def _not_utf8(path: Path, data: bytes, err: UnicodeDecodeError) -> InputError:
    return InputError(path, f"invalid UTF-8 (byte 0x{data[err.start]:02x}); expected UTF-8 text",
                      data.count(b"\n", 0, err.start) + 1)


# What polars' CSV reader, splitting on one space, reads otherwise than trec_eval (SPACE) — the fast readers of
# TREC files take a block of lines only when none of it is there (core/io/trec_run.py, whole or in parts):
# each separator but the space and the line end, which it would keep inside a field, and NUL (binary data,
# refused above)
NOT_PLAIN = (b"\x00", *(c.encode() for c in SPACE if c not in " \n"))
TO_SPACE = bytes.maketrans(b"".join(NOT_PLAIN[1:]), b" " * len(NOT_PLAIN[1:]))  # those separators as spaces
# and where it reads an empty field or a line that trec_eval skips: a space after a space or a line end (a
# doubled or leading space), a blank line. A space before a line end is not here: the empty field it makes is
# past the sixth on a line of six (the in-parts reader drops it as trec_eval drops text past column 6), and
# a line of five is refused either way.
_EMPTY_FIELD = r"[ \n] |\n\n"


def plain_block(data: bytes | bytearray, size: int | None = None, previous: int = ord("\n")) -> bool:
    """No byte of NOT_PLAIN in `data[:size]`, and no comment line (a `#` after a line end; `previous` is the
    byte before the block, a line end at the file's start). Each check is a one-byte search in C; the slower
    two-byte search for a comment line runs only when the block has a `#` at all (chunk ids such as
    `json.dumps#0` do)."""
    size = len(data) if size is None else size
    if any(data.find(byte, 0, size) >= 0 for byte in NOT_PLAIN):
        return False
    if odd_space_bytes(data, size):  # the general reader refuses an id holding one, naming its line
        return False
    return data.find(b"#", 0, size) < 0 or not (
        (previous == ord("\n") and data[0] == ord("#")) or data.find(b"\n#", 0, size) >= 0)


def odd_space_bytes(data: bytes | bytearray, size: int | None = None) -> bool:
    """Whether `data[:size]` holds an ODD_SPACE character: one-byte searches for their first bytes, the whole
    search only when one is there (U+2000-U+206F share a first byte with — and …)."""
    size = len(data) if size is None else size
    return any(data.find(lead, 0, size) >= 0 for lead in _ODD_LEADS) and _ODD_BYTES.search(data, 0, size) is not None


def tidy_lines(data: bytes) -> bool:
    """`plain_block` of whole lines of UTF-8 text with no empty field or blank line: a reader that splits on one
    space reads every line's fields as trec_eval does (core/io/trec_run.py, in parts). One regex over the block
    in polars, which checks the UTF-8 as it takes it (a million-line run: ~12 ms; Python's decode ~15 and its
    three two-byte searches ~85)."""
    if not plain_block(data) or data[:1] in (b" ", b"\n"):
        return False
    try:
        text = pl.Series([data], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:  # not UTF-8: `decode` says where
        return False
    return not text.str.contains(_EMPTY_FIELD).item()


def json_error(path: Path, text: str, err) -> InputError:
    """An InputError from a json.JSONDecodeError, keeping its line."""
    return InputError(path, f"invalid JSON ({err.msg}, column {err.colno})", err.lineno)


def json_objects(path: Path, text: str, expected: str):
    """(line, object) of every non-blank line of a JSON-lines text; a line that is not JSON, or not an object,
    is an InputError naming the line and `expected` (what each line should hold)."""
    # lines end at \n alone: U+2028, U+2029 and U+0085 may stand raw inside a JSON string (splitlines breaks there)
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(path, f"invalid JSON ({err.msg}); expected {expected}", number) from None
        if not isinstance(record, dict):
            raise InputError(path, f"a JSON {type(record).__name__}, not an object; expected {expected}", number)
        yield number, record


def line_of(text: str, needle: str, start: int = 0) -> int | None:
    at = text.find(needle, start)
    return None if at < 0 else line_of_offset(text, at)


def lines_frame(text: str, first_line: int = 1) -> pl.DataFrame:
    """One row per physical line (`raw`) with its `line`, counted from `first_line` (a block of a file: the line
    it starts on); blank lines and `#` comments dropped (blank and leading white space by trec_eval's rule,
    SPACE)."""
    return (
        pl.Series("raw", [text]).str.split("\n").explode().to_frame()
        .with_row_index("line", offset=first_line)
        .with_columns(pl.col("raw").str.strip_suffix("\r"))
        .filter(pl.col("raw").str.strip_chars(SPACE) != "")
        .filter(~pl.col("raw").str.strip_chars_start(SPACE).str.starts_with("#"))
    )


def whitespace_columns(path: Path, text: str, names: list[str | None], expected: str,
                       ignore_extra: bool = False, first_line: int = 1) -> pl.DataFrame:
    """Split each data line on runs of white space (trec_eval's, SPACE) into the named columns (None: a column
    not kept). `first_line`: the line `text` starts on (`lines_frame`).

    A line with another number of columns is an InputError naming its line and `expected` (the first such line).
    """
    space, field = SPACE_CLASS, FIELD_CLASS
    pattern = (f"^{space}*" + f"{space}+".join([f"({field}+)"] * len(names))
               + (f"(?:{space}.*)?$" if ignore_extra else f"{space}*$"))
    parts = lines_frame(text, first_line).with_columns(parts=pl.col("raw").str.extract_groups(pattern))
    named = [pl.col("parts").struct.field(str(i + 1)).alias(name) for i, name in enumerate(names) if name]
    parsed = parts.with_columns(named)
    bad = parsed.filter(pl.col(next(n for n in names if n)).is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(path, f"expected {len(names)} columns ({expected}), found {len(fields(row['raw']))}",
                         row["line"])
    ids = [n for n in ("query_id", "chunk_id") if n in names]
    odd = parsed.filter(pl.any_horizontal(pl.col(n).str.contains(ODD_SPACE_CLASS) for n in ids)) if ids else None
    if odd is not None and odd.height:
        row = odd.row(0, named=True)
        name = next(n for n in ids if odd_space(row[n]))
        raise odd_space_error(path, name.replace("_", " "), row[name], row["line"])
    return parsed.select("line", *[n for n in names if n])


def _repair(value):
    """Join UTF-16 surrogate pairs that JSON or YAML escapes (\\ud83c\\udf89) left as two characters."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16")
    if isinstance(value, (list, tuple)):
        return type(value)(_repair(v) for v in value)
    return value


def text_frame(path: Path, data, schema, orient: str | None = None) -> pl.DataFrame:
    """pl.DataFrame(data) for text parsed from a file, where an escaped lone surrogate is an input error.

    The happy path costs nothing extra: repair is tried only when polars refuses the strings.
    """
    try:
        return pl.DataFrame(data, schema=schema, orient=orient)
    except UnicodeEncodeError:
        pass
    try:
        if isinstance(data, dict):
            data = {k: _repair(v) for k, v in data.items()}
        else:
            data = [_repair(row) for row in data]
    except UnicodeDecodeError:
        raise InputError(path, "a lone UTF-16 surrogate escape (such as \\ud800) in an id or text; "
                               "expected valid Unicode") from None
    return pl.DataFrame(data, schema=schema, orient=orient)


def check_not_input(path: Path, inputs) -> None:
    """InputError when `path` is one of the files a command reads (or inside an input folder): an output
    written there would destroy it (`report ... -o gold.yaml`)."""
    import os

    target = Path(os.path.realpath(path))
    for given in inputs:
        if given is None or not Path(given).exists():
            continue
        source = Path(os.path.realpath(given))
        if source == target or (source.is_dir() and target.is_relative_to(source)):
            raise InputError(path, f"is one of this command's inputs ({given}); expected another file to write, "
                                   "nothing was written")


def write_file(path: Path, data: bytes, inputs=(), replace: bool = True) -> None:
    """A file a command was asked to write (`-o`): write_atomic, and every way it cannot be written (a folder,
    a folder that is missing or is a file, no permission, one of the command's `inputs` or inside an input
    folder; with replace=False, a file already there) bad input naming the path (exit 2)."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(path, "is a folder; expected the path of a file to write")
    check_not_input(path, inputs)
    if not directory.is_dir():
        what = "is a file" if directory.exists() else "does not exist"
        raise InputError(path, f"the folder {directory} {what}; expected an existing folder to write into")
    try:
        write_atomic(path, data, replace)
    except FileExistsError:
        raise InputError(path, "already exists; nothing was written") from None
    except OSError as err:
        raise InputError(path, f"cannot write: {err.strerror or err}") from None


def write_atomic(path: Path, data: bytes, replace: bool = True) -> None:
    """Write a whole file or nothing: a temporary file beside it, fsync, rename over the target — or with
    replace=False hard-link it to the name, which fails (FileExistsError) if the name is taken, even by a file
    that appeared after any check."""
    import os
    import stat
    import tempfile

    directory = path.parent if str(path.parent) else Path(".")
    try:  # mkstemp makes the file 0600: give it the mode the file has, or the one a plain open() would give
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
            os.unlink(tmp)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux), else set and put back."""
    import os

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
