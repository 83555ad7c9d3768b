"""Findings cached per file, so an unchanged tree is not parsed again.

An entry is found by a key over everything that decides a file's findings:
its content (a hash), how it is read (Python or notebook), the settings that
apply to it (enabled rules, confidence, unused-suppression reporting) and
the checker itself (the version and a hash of the package's code, op tables
and rule specs, so an edited rule or table never serves stale results).
An index remembers each path's size and modification time with its content
hash, so a warm run reads no source at all.

Everything is written to a temporary file first and moved into place, so
concurrent runs never see half an entry; an entry that does not parse or
names another key is ignored and rebuilt, never trusted.  The cache is a
convenience: any error reading or writing it only costs time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

from aliaslint import __version__
from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position, Related, Witness

DEFAULT_CACHE_DIR = ".aliaslint_cache"
# 2: entries keep each finding's witness, so a cached finding can still be confirmed.
_FORMAT = 2
# A file modified this recently may change again within the clock's resolution
# without its size or mtime changing: its content is hashed on every run.
_RACY_NS = 2_000_000_000
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by aliaslint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


@cache
def tool_fingerprint() -> str:
    """A hash of the checker: version, code, op tables and rule specs."""
    from aliaslint.catalog import rules_dir

    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(f"{__version__}/{_FORMAT}".encode(), digest_size=16)
    files = sorted(package.rglob("*.py")) + sorted((package / "data").glob("*"))
    files += sorted(rules_dir().glob("AL*.md"))
    for path in files:
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            digest.update(path.name.encode() + b"\0unreadable\0")
    return digest.hexdigest()


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    """One cache directory; picklable, so worker processes share it."""

    def __init__(self, directory: Path, fingerprint: str | None = None):
        self.directory = Path(directory)
        self.fingerprint = fingerprint or tool_fingerprint()
        self.root = self.directory / __version__
        self._index: dict[str, list] | None = None
        self._updates: dict[str, list] = {}

    def __getstate__(self) -> dict[str, object]:
        return {"directory": self.directory, "fingerprint": self.fingerprint}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A worker gets the directory and fingerprint only, and reads the index itself.
        Cache.__init__(self, state["directory"], state["fingerprint"])

    # -- entries ---------------------------------------------------------------------------

    def key(self, digest: str, kind: str, settings: str) -> str:
        text = f"{self.fingerprint}\0{kind}\0{settings}\0{digest}"
        return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()

    def _entry_path(self, key: str) -> Path:
        return self.root / "entries" / key[:2] / key

    def load(self, key: str, filename: str) -> list[Diagnostic] | None:
        """The findings stored under ``key`` with ``filename`` as their path, or None."""
        try:
            data = json.loads(self._entry_path(key).read_bytes())
            if data["key"] != key:
                return None
            found = [_decode(item).with_filename(filename) for item in data["diagnostics"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError,
                RecursionError):
            return None  # not what this version writes: a miss, recomputed
        return found if all(_plausible(d) for d in found) else None

    def store(self, key: str, diagnostics: list[Diagnostic]) -> None:
        data = {"key": key, "diagnostics": [_encode(d.with_filename("")) for d in diagnostics]}
        self._write(self._entry_path(key), json.dumps(data, separators=(",", ":")))

    # -- the stat index --------------------------------------------------------------------

    def known_digest(self, path: str, stat: os.stat_result) -> str | None:
        """The content hash recorded for ``path`` if its size and mtime are unchanged."""
        if self._index is None:
            self._index = self._load_index()
        record = self._index.get(path)
        if (isinstance(record, list) and len(record) == 3
                and record[0] == stat.st_size and record[1] == stat.st_mtime_ns
                and isinstance(record[2], str)):
            return record[2]
        return None

    def remember(self, path: str, stat: os.stat_result, digest: str) -> None:
        if time.time_ns() - stat.st_mtime_ns > _RACY_NS:
            self._updates[path] = [stat.st_size, stat.st_mtime_ns, digest]

    def save_index(self) -> None:
        """Write the remembered hashes, merged with what other runs wrote meanwhile."""
        if not self._updates:
            return
        index = self._load_index()
        index.update(self._updates)
        self._write(self.root / "index.json", json.dumps(index, separators=(",", ":")))
        self._updates.clear()

    def _load_index(self) -> dict:
        try:
            data = json.loads((self.root / "index.json").read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}

    # -- files -----------------------------------------------------------------------------

    def _write(self, path: Path, text: str) -> None:
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a read-only or full disk only costs the next run time

    def _prepare(self) -> None:
        tag = self.directory / "CACHEDIR.TAG"
        if tag.exists():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / ".gitignore").write_text(
            "# Automatically created by aliaslint.\n*\n", encoding="utf-8")
        tag.write_text(_TAG, encoding="utf-8")


def clean(directory: Path) -> bool:
    """Remove a cache directory; False when there was none."""
    if not directory.is_dir():
        return False
    if not (directory / "CACHEDIR.TAG").is_file():
        raise OSError(f"{directory} is not an aliaslint cache (no CACHEDIR.TAG); not removing it")
    shutil.rmtree(directory)
    return True


def _position(value) -> Position:
    row, column = value
    return Position(int(row), int(column))


def _encode(d: Diagnostic) -> list:
    fix = None
    if d.fix is not None:
        fix = [d.fix.message, d.fix.applicability,
               [[e.content, _pair(e.location), _pair(e.end_location)] for e in d.fix.edits]]
    return [
        d.code, d.message, d.filename, _pair(d.location), _pair(d.end_location),
        [[r.message, r.filename, _pair(r.location), _pair(r.end_location), r.cell]
         for r in d.related],
        fix, d.confidence, d.status, d.cell,
        d.witness.to_json() if d.witness is not None else None,
    ]


def _pair(position: Position) -> list[int]:
    return [position.row, position.column]


def _plausible(diagnostic: Diagnostic) -> bool:
    """A finding this version could have written: a known code, known tiers and statuses."""
    from aliaslint import registry  # the rules import the engine; the cache does not need it

    return (diagnostic.code in registry.rules()
            and diagnostic.confidence in ("high", "low")
            and diagnostic.status in (None, "confirmed", "refuted", "not-reached",
                                  "could-not-evaluate", "runtime")
            and diagnostic.location.row >= 0 and diagnostic.end_location.row >= 0)


def _decode(item: list) -> Diagnostic:
    code, message, filename, location, end, related, fix, confidence, status, cell, witness = item
    if fix is not None:
        fix_message, applicability, edits = fix
        fix = Fix(str(fix_message), applicability, tuple(
            Edit(str(content), _position(start), _position(stop)) for content, start, stop in edits
        ))
    return Diagnostic(
        str(code), str(message), str(filename), _position(location), _position(end),
        tuple(Related(str(m), str(f), _position(s), _position(e), c) for m, f, s, e, c in related),
        fix, confidence, status, cell,
        Witness.from_json(witness) if witness is not None else None,
    )
