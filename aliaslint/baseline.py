"""A baseline: the findings a project has accepted, so that a run reports only new ones.

A recorded finding is its rule, its file and a fingerprint of what it is rather than where
(:func:`fingerprints`, which the GitLab report uses too): the rule, the message with the
rows it names left out, and the code of its primary span without whitespace.  Lines added
or removed elsewhere, and other code reformatted, leave it matched; a change to the code
the finding is about makes it new.

Findings alike in one file are told apart by their order.  A finding is matched first to
an entry of its own file; a file that has moved (``git mv``) is no longer where its entries
say, so a finding left unmatched takes an entry of the same rule and fingerprint whose file
is gone.  Files are recorded relative to the baseline file's directory, so a baseline is
read the same from any working directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from aliaslint.config import ConfigError
from aliaslint.diagnostics import FILE_NOT_CHECKED, INTERNAL_ERROR, Diagnostic
from aliaslint.writes import replace_content

SourceLines = Callable[..., "list[str] | None"]

FORMAT = 1

# "line 19", "lines 3-5", "cell 2": where a message says something is, which moves with
# unrelated edits.
_ROWS = re.compile(r"\b(lines?|cells?|rows?) \d+(?:\s*(?:-|–|to|and)\s*\d+)?")


def fingerprints(diagnostics: Sequence[Diagnostic], source_lines: SourceLines) -> list[str]:
    """Each finding's fingerprint, the same wherever its file and its line move."""
    seen: Counter[tuple[str, str]] = Counter()
    result = []
    for d in diagnostics:
        key = "\0".join((d.code, _ROWS.sub(r"\1 N", d.message), _span_code(d, source_lines)))
        seen[d.filename, key] += 1
        # (A lone surrogate, from bytes no encoding decodes, is hashed as it is.)
        hashed = f"{key}\0{seen[d.filename, key]}".encode("utf-8", "surrogatepass")
        result.append(hashlib.sha256(hashed).hexdigest()[:32])
    return result


def _span_code(d: Diagnostic, source_lines: SourceLines) -> str:
    """The code of the finding's primary span with its whitespace left out (so that
    reformatting it changes nothing); empty when the source cannot be read."""
    if d.location.row < 1:
        return ""
    try:
        lines = source_lines(d.filename) if d.cell is None else source_lines(d.filename, d.cell)
    except OSError:
        lines = None
    if not isinstance(lines, list) or d.location.row > len(lines):
        return ""
    end = max(d.end_location, d.location)
    rows = lines[d.location.row - 1:end.row]
    if len(rows) == 1:
        rows[0] = rows[0][d.location.column - 1:end.column - 1]
    else:
        rows[0] = rows[0][d.location.column - 1:]
        rows[-1] = rows[-1][:end.column - 1]
    return "".join("".join(rows).split())


def recordable(d: Diagnostic) -> bool:
    """A file that could not be checked is an error to fix, never a finding to accept."""
    return d.code not in (FILE_NOT_CHECKED, INTERNAL_ERROR)


@dataclass(frozen=True)
class Entry:
    code: str
    file: str  # relative to the baseline's directory, with "/"
    fingerprint: str


def _file_key(directory: Path, filename: str, cwd: Path) -> str:
    absolute = os.path.normpath(os.path.join(cwd, filename))
    return PurePath(os.path.relpath(absolute, directory)).as_posix()


def write_baseline(path: Path, diagnostics: Sequence[Diagnostic], cwd: Path,
                   source_lines: SourceLines) -> int:
    """Record the findings in ``path`` (replaced whole, or made anew); how many."""
    directory = (cwd / path).parent.resolve()
    kept = [d for d in diagnostics if recordable(d)]
    records = [
        {"code": d.code, "file": _file_key(directory, d.filename, cwd), "fingerprint": print_,
         # For the reader: where it was and what it said when recorded.
         "line": d.location.row, **({"cell": d.cell} if d.cell is not None else {}),
         "message": d.message.split("\n", 1)[0]}
        for d, print_ in zip(kept, fingerprints(kept, source_lines))]
    records.sort(key=lambda r: (r["file"], r.get("cell", 0), r["line"], r["code"]))
    document = {"aliaslint-baseline": FORMAT, "findings": records}
    try:
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
    except UnicodeEncodeError:
        # A file name of bytes its file system's encoding does not decode (a lone
        # surrogate): JSON's escapes write it, and read it back the same.
        data = (json.dumps(document, indent=2) + "\n").encode()
    _write(cwd / path, data)
    return len(records)


def _write(path: Path, data: bytes) -> None:
    try:
        old = path.read_bytes() if path.exists() else None
    except OSError as error:
        raise ConfigError(f"baseline {path}: cannot read it: {error.strerror}") from None
    if old is not None:
        failure = replace_content(path, old, data)
        if failure is not None:
            raise ConfigError(f"baseline {path}: not written: {failure.reason}")
        return
    # A new file: written aside and linked into place, so it appears whole or not at all
    # (and a file made meanwhile under that name is never overwritten).
    try:
        handle, temporary = tempfile.mkstemp(prefix=".aliaslint-baseline.", dir=path.parent)
    except OSError as error:
        raise ConfigError(f"baseline {path}: cannot write it: {error.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.link(temporary, path)
    except OSError as error:
        raise ConfigError(f"baseline {path}: cannot write it: {error.strerror}") from None
    finally:
        os.unlink(temporary)


class Baseline:
    """The entries of a baseline file, and which findings they account for."""

    def __init__(self, path: Path, entries: Sequence[Entry]):
        self.path = path
        self.directory = path.parent
        self.entries = list(entries)

    @classmethod
    def load(cls, path: Path, cwd: Path) -> Baseline:
        absolute = (cwd / path).resolve()
        try:
            data = json.loads(absolute.read_bytes())
        except FileNotFoundError:
            raise ConfigError(f"baseline {path}: no such file (make it with "
                              "`aliaslint check --write-baseline FILE`)") from None
        except OSError as error:
            raise ConfigError(f"baseline {path}: cannot read it: {error.strerror}") from None
        except (ValueError, RecursionError):
            raise ConfigError(f"baseline {path}: not a baseline file (not JSON)") from None
        if not isinstance(data, dict) or data.get("aliaslint-baseline") != FORMAT:
            raise ConfigError(f"baseline {path}: not an aliaslint baseline of format {FORMAT}")
        records = data.get("findings")
        entries = []
        for record in records if isinstance(records, list) else [None]:
            if not isinstance(record, dict) or not all(
                    isinstance(record.get(key), str) for key in ("code", "file", "fingerprint")):
                raise ConfigError(f"baseline {path}: each finding needs a code, a file and "
                                  "a fingerprint")
            entries.append(Entry(record["code"], record["file"], record["fingerprint"]))
        return cls(absolute, entries)

    def new(self, diagnostics: Sequence[Diagnostic], cwd: Path,
            source_lines: SourceLines) -> list[Diagnostic]:
        """The findings no entry accounts for, in their order."""
        left: dict[tuple[str, str, str], int] = Counter(
            (e.file, e.code, e.fingerprint) for e in self.entries)
        keys = [(_file_key(self.directory, d.filename, cwd), d.code, print_)
                for d, print_ in zip(diagnostics, fingerprints(diagnostics, source_lines))]
        unmatched = []
        for index, (d, key) in enumerate(zip(diagnostics, keys)):
            if recordable(d) and left.get(key):
                left[key] -= 1
            else:
                unmatched.append(index)
        # Entries of files that are gone: a file moved, and its findings with it.
        moved: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
        for key, count in left.items():
            if count and not (self.directory / key[0]).exists():
                moved[key[1], key[2]].extend([key] * count)
        new = []
        for index in unmatched:
            d, (_, code, print_) = diagnostics[index], keys[index]
            if recordable(d) and moved.get((code, print_)):
                moved[code, print_].pop()
            else:
                new.append(d)
        return new
