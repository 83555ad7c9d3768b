"""Reading a file to check: never more than the size limit, never waiting on a FIFO, its text
by PEP 263, and the finding that says why a file was not read or decoded."""

from __future__ import annotations

import codecs
import io
import os
import tokenize
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISDIR, S_ISFIFO, S_ISREG, S_ISSOCK

from aliaslint.diagnostics import FILE_NOT_CHECKED, Diagnostic, Position


def file_error(filename: str, message: str, row: int = 1, column: int = 1,
               code: str = FILE_NOT_CHECKED) -> Diagnostic:
    """A finding about the file itself (AL902 unless ``code`` says otherwise)."""
    position = Position(row, column)
    return Diagnostic(code, message, filename, position, position)


def internal(where: str, error: Exception) -> str:
    """The message of an AL903 finding: an exception inside aliaslint."""
    return (f"internal error in {where}: {type(error).__name__}: {error} "
            "(please report this with the file that caused it)")


def read_file(path: Path, filename: str, limit: int, *, streams: bool = True
              ) -> tuple[bytes, os.stat_result] | Diagnostic:
    """The bytes of the file at ``path`` and its stat, or the AL902 finding that says why
    they were not read.  Never more than ``limit`` + 1 bytes are read, and a regular file is
    opened without waiting (a FIFO put in its place since the stat is refused, not waited
    on).  With ``streams``, a FIFO or device named on the command line (process
    substitution) is read once as a stream; without it, only regular files are read."""
    try:
        stat = os.stat(path)
        regular = S_ISREG(stat.st_mode)
        if S_ISDIR(stat.st_mode) or not regular and not streams:
            return file_error(filename, f"not a regular file ({_kind(stat.st_mode)}): "
                               "only regular files are read")
        if regular and stat.st_size > limit:
            return _too_large(filename, f"{stat.st_size:,} bytes", limit)
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
        if regular:
            flags |= getattr(os, "O_NONBLOCK", 0)
        with open(os.open(path, flags), "rb") as stream:
            opened = os.fstat(stream.fileno())
            if regular and not S_ISREG(opened.st_mode):
                return file_error(filename, f"not a regular file ({_kind(opened.st_mode)}) "
                                   "when opened: only regular files are read")
            data = stream.read(limit + 1)
    except OSError as error:
        return file_error(filename, f"cannot read file: {error.strerror or error}")
    if len(data) > limit:  # a stream, or a file that grew since the stat
        return _too_large(filename, f"more than {limit:,} bytes" if regular else "a stream",
                          limit)
    return data, stat


def _too_large(filename: str, size: str, limit: int) -> Diagnostic:
    return file_error(filename, f"file is {size}, over the {limit:,}-byte limit (raise "
                       "`max-file-size` to check it)")


def _kind(mode: int) -> str:
    for test, name in ((S_ISDIR, "a directory"), (S_ISFIFO, "a FIFO"),
                       (S_ISCHR, "a character device"), (S_ISBLK, "a block device"),
                       (S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


# Byte-order marks of encodings Python source cannot be in (UTF-32 first: its LE mark begins
# with UTF-16's).
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def decode(data: bytes, filename: str) -> str | Diagnostic:
    """Source text from bytes by PEP 263, or the AL902 finding that explains why not."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            # Python reads only ASCII-compatible encodings; say which one this is.
            return file_error(filename, f"not UTF-8 Python source ({name} with BOM): "
                              "re-save it as UTF-8")
    if b"\0" in data:
        row = data.count(b"\n", 0, data.index(b"\0")) + 1
        return file_error(filename, "file contains NUL bytes (binary?) and cannot be checked",
                          row)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        return file_error(filename, f"bad encoding declaration: {error.msg}",
                          getattr(error, "lineno", None) or 1)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        row = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return file_error(
            filename,
            f"file is not valid {encoding}: byte 0x{data[error.start]:02x} cannot be decoded "
            "(declare the encoding with a `# -*- coding: ... -*-` line)",
            row, column,
        )
