"""Findings cached per file, so an unchanged tree is not parsed again.

An entry is found by a key over everything that decides a file's findings:
its content (a hash), how it is read (Python or notebook), the settings that
apply to it (enabled rules, confidence, unused-suppression reporting) and
the checker itself (the version and a hash of the package's code, op tables
and rule specs, so an edited rule or table never serves stale results).
An index remembers each path's size and modification time with its content
hash, so a warm run reads no source at all.

An entry is not trusted for sitting under its key.  It carries those four
facts itself and is used only when each is the one of the file at hand, so an
entry moved, renamed or copied from another file, version or configuration is
a miss.  Its findings are then read field by field: exact types, known codes,
rows and columns inside the file's lines, a cell only in a notebook's code
cell, edits inside the file; and a checksum over them catches damage that
still looks like a finding.  The file's extent (its rows, its longest line,
its cells) is measured when its content is hashed and kept in the index with
the hash, so this costs a warm run no read either.  An entry that fails any of
this is a miss: the file is checked again and the entry overwritten.  These
checks are against damage, stale data and other versions; whoever can write
the cache directory can also write an entry that passes them.

The directory is aliaslint's alone (see ``verify_directory``): a configured
directory that holds anything else, or that is the project root, the working
directory, a checked path, the home directory or one of their ancestors, is
refused before anything is read or written.  ``CACHEDIR.TAG`` and a
``.gitignore`` are written only into a directory this module creates, and the
tag records that it did.  Every entry's key is appended to ``entries.list``
before the entry is written, and ``clean`` removes only what that list names
(and the index and list themselves); it removes the directory only when
nothing else is left in it and the tag says aliaslint made it.

Everything is written to a temporary file first and moved into place, so
concurrent runs never see half an entry.  The cache is a convenience: any
error reading or writing an entry only costs time.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Any, Callable, Sequence

from aliaslint import __version__
from aliaslint.config import ConfigError
from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position, Related, Witness

DEFAULT_CACHE_DIR = ".aliaslint_cache"
# 3: entries carry what they were computed from; entries.list names every entry written.
_FORMAT = 3
# A file modified this recently may change again within the clock's resolution
# without its size or mtime changing: its content is hashed on every run.
_RACY_NS = 2_000_000_000
TAG_NAME = "CACHEDIR.TAG"
_TAG_HEAD = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by aliaslint.\n"
)
_TAG = _TAG_HEAD + "# For information about cache directory tags see https://bford.info/cachedir/\n"
# The record that aliaslint made the directory, so `clean` may remove it once it is empty.
_MADE = ("# aliaslint made this directory; `aliaslint clean` removes it once it holds "
         "nothing else.\n")
_GITIGNORE = "# Automatically created by aliaslint.\n*\n"
ENTRIES_LIST = "entries.list"
INDEX = "index.json"
# Far above what a real entry or index holds; bounds what a damaged one costs.
_MAX_ENTRY_BYTES = 64 << 20
_MAX_INDEX_BYTES = 512 << 20
_KEY = re.compile(r"[0-9a-f]{40}\Z")
_BUCKET = re.compile(r"[0-9a-f]{2}\Z")
_VERSION = re.compile(r"\d[\w.+-]*\Z")
# `<name>.<random>.tmp` (this version's temporary files) and `.tmp-<random>` (older ones').
_TEMPORARY = re.compile(r"(?P<name>[^/]+)\.\w+\.tmp\Z|\.tmp-\w+\Z")
# Everything some definition of a line counts as a line break (CPython's, str.splitlines'),
# so the count is an upper bound of the rows any part of the checker reports.
_BREAK = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85]|\xe2\x80[\xa8\xa9]")


@cache
def tool_fingerprint() -> str:
    """A hash of the checker: version, code, op tables and rule specs."""
    from aliaslint.catalog import rules_dir

    import hashlib

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
    return _blake2b(data, 16)


def _blake2b(data: bytes, size: int) -> str:
    # Imported here: a run without the cache that reads no other file hashes nothing, and
    # OpenSSL's module, which hashlib loads, is a noticeable part of a one-file start.
    import hashlib

    return hashlib.blake2b(data, digest_size=size).hexdigest()


def with_dependencies(digest: str, dependencies: dict[tuple[str, str], str]) -> str:
    """The digest of a file's content together with those of the other files its result
    depends on ((kind, path) → digest; "" for one that could not be read)."""
    if not dependencies:
        return digest
    text = "\0".join([digest, *(f"{k}\0{p}\0{d}"
                                 for (k, p), d in sorted(dependencies.items()))])
    return content_hash(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Binding:
    """What a file's findings are computed from, besides the checker itself."""

    digest: str  # of the file's content
    kind: str  # "python" or "notebook"
    settings: str  # the settings that apply to the file, as one string


@dataclass(frozen=True)
class Extent:
    """Upper bounds of the positions a finding in a file may have.

    ``rows`` counts every line break any definition of a line has; ``width`` is the
    longest line in bytes (no column, in characters, is larger); ``cells`` holds
    (number, rows, width) of each code cell of a notebook, and is None for a plain file.
    """

    rows: int
    width: int
    cells: tuple[tuple[int, int, int], ...] | None = None

    def to_json(self) -> list:
        cells = None if self.cells is None else [list(cell) for cell in self.cells]
        return [self.rows, self.width, cells]

    @classmethod
    def from_json(cls, data: Any) -> Extent | None:
        if not (isinstance(data, list) and len(data) == 3 and _count(data[0])
                and _count(data[1])):
            return None
        if data[2] is None:
            return cls(data[0], data[1])
        if not isinstance(data[2], list) or not all(
                isinstance(c, list) and len(c) == 3 and all(_count(v) for v in c)
                for c in data[2]):
            return None
        return cls(data[0], data[1], tuple((c[0], c[1], c[2]) for c in data[2]))


def extent_of(data: bytes, notebook: bool) -> Extent:
    """The extent of a file's content (a notebook's code cells as its reader finds them)."""
    rows, width = _lines(data)
    if not notebook:
        return Extent(rows, width)
    from aliaslint.notebooks import NotebookError, load_notebook

    try:
        cells = load_notebook(data.decode("utf-8-sig", "replace")).cells
    except (NotebookError, RecursionError):
        cells = ()
    return Extent(rows, width, tuple((cell.number, *_lines(cell.source.encode("utf-8", "replace")))
                                     for cell in cells))


def _lines(data: bytes) -> tuple[int, int]:
    return (len(_BREAK.findall(data)) + 1,
            max(map(len, data.splitlines()), default=0))


def _unchanged(record: list, stat: os.stat_result) -> bool:
    return record[0] == stat.st_size and record[1] == stat.st_mtime_ns


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


class Cache:
    """One cache directory; picklable, so worker processes share it."""

    def __init__(self, directory: Path, fingerprint: str | None = None):
        self.directory = Path(directory)
        self.fingerprint = fingerprint or tool_fingerprint()
        self.root = self.directory / __version__
        self._index: dict[str, Any] | None = None
        self._records: dict[str, tuple[list, list | None, str | None] | None] = {}  # read
        self._updates: dict[str, list] = {}
        self._ready = False

    @classmethod
    def open(cls, directory: Path, setting: str, keep: Sequence[tuple[Path, str]] = ()) -> Cache:
        """The cache in ``directory`` once ``verify_directory`` accepts it."""
        return cls(verify_directory(directory, setting, keep))

    def __getstate__(self) -> dict[str, object]:
        return {"directory": self.directory, "fingerprint": self.fingerprint}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A worker gets the directory and fingerprint only, and reads the index itself.
        Cache.__init__(self, state["directory"], state["fingerprint"])

    # -- entries ---------------------------------------------------------------------------

    def key(self, binding: Binding) -> str:
        text = f"{self.fingerprint}\0{binding.kind}\0{binding.settings}\0{binding.digest}"
        return _blake2b(text.encode(), 20)

    def _entry_path(self, key: str) -> Path:
        return self.root / "entries" / key[:2] / key

    def load(self, binding: Binding, filename: str, extent: Extent) -> list[Diagnostic] | None:
        """The findings stored for ``binding``, with ``filename`` as their path, if the entry
        was computed from exactly that and every finding fits ``extent``; else None."""
        key = self.key(binding)
        data = _read_regular(self._entry_path(key), _MAX_ENTRY_BYTES)
        if data is None:
            return None
        try:
            entry = json.loads(data)
            if not (isinstance(entry, dict) and entry.get("format") == _FORMAT
                    and entry.get("key") == key and entry.get("fingerprint") == self.fingerprint
                    and entry.get("kind") == binding.kind
                    and entry.get("settings") == binding.settings
                    and entry.get("digest") == binding.digest
                    and isinstance(entry.get("diagnostics"), list)
                    and entry.get("check") == _checksum(key, entry["diagnostics"])):
                return None
            found = [_decode(item) for item in entry["diagnostics"]]
        except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError):
            return None  # not what this version writes: a miss, recomputed
        if not all(_fits(d, extent) for d in found):
            return None
        return [d.with_filename(filename) for d in found]

    def store(self, binding: Binding, diagnostics: list[Diagnostic], extent: Extent) -> None:
        """Remember the findings of the file ``binding`` describes.  Findings ``load`` would
        refuse are not stored (the file is simply checked each time)."""
        if not all(_fits(d.with_filename(""), extent) for d in diagnostics):
            return
        key = self.key(binding)
        encoded = [_encode(d.with_filename("")) for d in diagnostics]
        entry = {"format": _FORMAT, "key": key, "fingerprint": self.fingerprint,
                 "kind": binding.kind, "settings": binding.settings, "digest": binding.digest,
                 "check": _checksum(key, encoded), "diagnostics": encoded}
        # Listed before it exists, so `clean` knows every entry a run may have left.
        if self._list(key):
            self._write(self._entry_path(key), json.dumps(entry, separators=(",", ":")))

    def _list(self, key: str) -> bool:
        try:
            self._prepare()
            self.root.mkdir(exist_ok=True)
            handle = os.open(self.root / ENTRIES_LIST, os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                             0o644)
            try:
                os.write(handle, f"{key}\n".encode())  # one short append: never interleaved
            finally:
                os.close(handle)
        except OSError:
            return False
        return True

    # -- the stat index --------------------------------------------------------------------
    #
    # A record: [size, mtime in ns (-1: not to be trusted), content hash, extent], then the
    # files the result depends on where it depends on any (a list of [kind, path, content
    # hash of what was read, its digest of that kind]; older records: [kind, path]), then
    # the key of its entry where that entry holds no finding (a string).

    def _record(self, path: str) -> tuple[list, list | None, str | None] | None:
        """The record of ``path`` as (its first four fields, its dependencies, the key of its
        entry if it holds no finding), if it is one this version writes."""
        if path in self._records:
            return self._records[path]
        if self._index is None:
            self._index = self._load_index()
        parsed = self._records[path] = self._parse_record(self._index.get(path))
        return parsed

    @staticmethod
    def _parse_record(record: Any) -> tuple[list, list | None, str | None] | None:
        if not (isinstance(record, list) and 4 <= len(record) <= 6
                and type(record[0]) is int and type(record[1]) is int
                and isinstance(record[2], str)):
            return None
        rest = record[4:]
        empty = rest.pop() if rest and isinstance(rest[-1], str) else None
        if empty is not None and not _KEY.match(empty):
            return None
        dependencies = rest.pop() if rest else None
        if rest or dependencies is not None and not (
                isinstance(dependencies, list) and dependencies and all(
                    isinstance(d, list) and len(d) in (2, 4) and d[0] in ("code", "content")
                    and all(isinstance(part, str) for part in d) for d in dependencies)):
            return None
        return record[:4], dependencies, empty

    def known(self, path: str, stat: os.stat_result) -> tuple[str, Extent] | None:
        """The content hash and extent recorded for ``path`` if its size and mtime are
        unchanged, and its result depends on no other file (see ``dependencies``)."""
        record = self._record(path)
        if record is not None and record[1] is None and _unchanged(record[0], stat):
            extent = Extent.from_json(record[0][3])
            if extent is not None:
                return record[0][2], extent
        return None

    def without_findings(self, path: str) -> str | None:
        """The key of the entry last stored for ``path`` if it holds no finding: a binding
        with that key needs no entry read."""
        record = self._record(path)
        return record[2] if record is not None else None

    def note_without_findings(self, path: str, key: str) -> None:
        """The entry with ``key``, just read for ``path`` as its record says, holds no
        finding: the record says so from now on (an index written before it could)."""
        record = self._record(path)
        if record is not None and record[2] is None:
            self._updates[path] = [*record[0], *([record[1]] if record[1] else []), key]

    def dependencies(self, path: str) -> list[tuple[str, str]]:
        """The other files the last result of ``path`` was computed with (a helper it calls,
        in another checked file), as (kind, path): its entry is keyed by their digests of
        that kind too."""
        record = self._record(path)
        return [(kind, other) for kind, other, *_ in record[1] or ()] if record else []

    def known_with_dependencies(self, path: str, stat: os.stat_result,
                                stat_of: Callable[[str], os.stat_result | None]
                                ) -> tuple[str, Extent, dict[tuple[str, str], str]] | None:
        """For a file whose result depends on other checked files: its content hash and
        extent, and the digest of each file it depends on, if its size and mtime are
        unchanged and so are those of each of them, whose content is then the one its result
        was computed from (the index knows their content hashes by the same rule as its
        own); else None, and they are read and hashed."""
        record = self._record(path)
        if record is None or record[1] is None or not _unchanged(record[0], stat):
            return None
        extent = Extent.from_json(record[0][3])
        if extent is None:
            return None
        used = {}
        for dependency in record[1]:
            if len(dependency) != 4:
                return None
            kind, other, content, digest = dependency
            other_stat = stat_of(other)
            known = self._record(other) if other_stat is not None else None
            if known is None or other_stat is None or not _unchanged(known[0], other_stat) \
                    or known[0][2] != content:
                return None
            used[(kind, other)] = digest
        return record[0][2], extent, used

    def remember(self, path: str, stat: os.stat_result, digest: str, extent: Extent,
                 dependencies: Sequence[tuple[str, str, str, str]] = (),
                 without_findings: str | None = None) -> None:
        """Record ``path``'s size, mtime, content hash and extent, the files its result
        depends on as (kind, path, the content hash of what was read, its digest of that
        kind), and the key of its entry where it holds no finding."""
        racy = time.time_ns() - stat.st_mtime_ns <= _RACY_NS
        if racy and not dependencies:
            return
        # A file modified just now may change again within the clock's resolution: its
        # size and mtime are not kept (-1 never matches), so it is never a stat hit; the
        # files its result depends on are kept all the same, to find its entry by.
        record: list = [stat.st_size, -1 if racy else stat.st_mtime_ns, digest,
                        extent.to_json()]
        if dependencies:
            # A stat hit only when each of them is one too (`known_with_dependencies`).
            record.append([list(d) for d in sorted(dependencies)])
        if without_findings is not None:
            record.append(without_findings)
        self._updates[path] = record

    def save_index(self) -> None:
        """Write the remembered hashes, merged with what other runs wrote meanwhile."""
        if not self._updates:
            return
        index = self._load_index()
        index.update(self._updates)
        self._write(self.root / INDEX, json.dumps(index, separators=(",", ":")))
        self._updates.clear()

    def _load_index(self) -> dict:
        data = _read_regular(self.root / INDEX, _MAX_INDEX_BYTES)
        try:
            index = json.loads(data) if data is not None else {}
        except (ValueError, RecursionError):
            return {}
        return index if isinstance(index, dict) else {}

    # -- files -----------------------------------------------------------------------------

    def _write(self, path: Path, text: str) -> None:
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            _replace(path, text)
        except OSError:
            pass  # a read-only or full disk only costs the next run time

    def _prepare(self) -> None:
        """Make the directory (with its tag and .gitignore) unless it is there already;
        ``verify_directory`` has accepted what is there."""
        if not self._ready:
            if not self.directory.is_dir():
                _make_directory(self.directory)
            self._ready = True


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and move it into place."""
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The content of a regular file of at most ``limit`` bytes; None for anything else (a
    FIFO is never waited on, a symlink never followed)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        stat = os.fstat(handle)
        if not S_ISREG(stat.st_mode) or stat.st_size > limit:
            return None
        with os.fdopen(os.dup(handle), "rb") as stream:
            data = stream.read(limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(handle)


# -- the directory -------------------------------------------------------------------------


def verify_directory(directory: Path, setting: str,
                     keep: Sequence[tuple[Path, str]] = ()) -> Path:
    """The directory ``directory`` resolves to (symlinks followed), if it may be the cache.

    ``setting`` says where the directory was chosen (a config key and its file); ``keep``
    holds (path, what it is) of the directories a cache must never be or contain (the
    project root, the working directory, the checked paths).  A ConfigError of one line
    when the directory is one of those, an ancestor of one, the home directory or the
    file system root, is not a directory, or already holds anything but an aliaslint cache.
    An older aliaslint's cache (its tag without the record) that holds nothing else is
    taken over: its tag gains the record and its entries are listed, so ``clean`` can
    remove them.
    """
    resolved = Path(os.path.realpath(directory))

    def refuse(reason: str) -> ConfigError:
        message = (f"{setting}: {reason}; the cache needs a directory of its own "
                   f"(such as {DEFAULT_CACHE_DIR!r})")
        # One line whatever the names hold: control characters escaped, as Python writes them.
        return ConfigError("".join(c if c.isprintable() else ascii(c)[1:-1] for c in message))

    if resolved == Path(resolved.anchor):
        raise refuse(f"{resolved} is the file system root")
    try:
        home = Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError, OSError):
        home = None
    for protected, what in [*([(home, "the home directory")] if home else []),
                            *((Path(os.path.realpath(p)), w) for p, w in keep)]:
        if resolved == protected:
            raise refuse(f"{resolved} is {what}")
        if resolved in protected.parents:
            raise refuse(f"{resolved} contains {what}")
    try:
        stat = os.stat(resolved)
    except FileNotFoundError:
        return resolved  # made on the first write
    except OSError as error:
        raise refuse(f"{resolved} cannot be read ({error.strerror or error})") from None
    if not S_ISDIR(stat.st_mode):
        raise refuse(f"{resolved} is not a directory")
    if _made_here(resolved):
        return resolved
    stray, entries = _survey(resolved)
    if stray:
        shown = ", ".join(stray[:3]) + (", ..." if len(stray) > 3 else "")
        raise refuse(f"{resolved} holds files aliaslint did not write ({shown})")
    if (resolved / TAG_NAME).exists():
        _take_over(resolved, entries)
    return resolved


def _made_here(directory: Path) -> bool:
    tag = _read_regular(directory / TAG_NAME, 4096)
    text = tag.decode("utf-8", "replace") if tag is not None else ""
    return text.startswith(_TAG_HEAD) and _MADE in text


def _survey(directory: Path) -> tuple[list[str], dict[Path, list[str]]]:
    """What in ``directory`` is not the layout of an aliaslint cache (paths relative to it),
    and the entry files found in each version's directory."""
    stray: list[str] = []

    def expect(item: os.DirEntry, allowed: object) -> bool:
        if not allowed:
            stray.append(os.path.relpath(item.path, directory) + ("/" if item.is_dir() else ""))
        return bool(allowed)

    entries: dict[Path, list[str]] = {}
    for item in _scan(directory):
        if item.name in (TAG_NAME, ".gitignore"):
            expect(item, _own_file(item))
        elif expect(item, item.is_dir(follow_symlinks=False) and _VERSION.match(item.name)):
            entries[Path(item.path)] = _survey_version(Path(item.path), expect)
    return stray, entries


def _survey_version(root: Path, expect: Callable[[os.DirEntry, object], bool]) -> list[str]:
    """The entry files of one version's directory; ``expect`` is told what else is there."""
    keys = []
    for item in _scan(root):
        if item.name != "entries" or not item.is_dir(follow_symlinks=False):
            expect(item, item.is_file(follow_symlinks=False)
                   and (item.name in (INDEX, ENTRIES_LIST) or _TEMPORARY.match(item.name)))
            continue
        for bucket in _scan(Path(item.path)):
            if expect(bucket, bucket.is_dir(follow_symlinks=False) and _BUCKET.match(bucket.name)):
                for entry in _scan(Path(bucket.path)):
                    if expect(entry, entry.is_file(follow_symlinks=False) and (
                            _KEY.match(entry.name) or _TEMPORARY.match(entry.name))) \
                            and _KEY.match(entry.name):
                        keys.append(entry.name)
    return keys


def _scan(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as items:
            return sorted(items, key=lambda item: item.name)
    except OSError:
        return []


def _read_text(path: str) -> str:
    data = _read_regular(Path(path), 4096)
    return data.decode("utf-8", "replace") if data is not None else ""


def _take_over(directory: Path, entries: dict[Path, list[str]]) -> None:
    try:
        for root, keys in entries.items():
            if keys:
                with open(root / ENTRIES_LIST, "a", encoding="utf-8") as listed:
                    listed.write("".join(f"{key}\n" for key in keys))
        _replace(directory / TAG_NAME, _TAG + _MADE)
    except OSError:
        pass  # still an older cache: used, and `clean` says what it leaves


def _make_directory(directory: Path) -> None:
    """Make the cache directory with its tag and .gitignore in place from the start: they
    are written into a temporary directory beside it, which is then renamed.  When another
    run made it first, theirs stays."""
    import tempfile

    directory.parent.mkdir(parents=True, exist_ok=True)
    made = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.",
                                 suffix=".tmp"))
    try:
        (made / TAG_NAME).write_text(_TAG + _MADE, encoding="utf-8")
        (made / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
        if not directory.exists():  # a rename replaces an empty directory: never a user's
            os.rename(made, directory)
    except OSError:
        if not directory.is_dir():
            raise
    finally:
        for name in (TAG_NAME, ".gitignore"):
            try:
                os.unlink(made / name)
            except OSError:
                pass
        try:
            os.rmdir(made)
        except OSError:
            pass


@dataclass(frozen=True)
class Cleaned:
    """What ``clean`` did: entries removed, whether the directory went, what stayed (when
    nothing did, aliaslint did not make the directory)."""

    entries: int
    removed: bool
    left: tuple[str, ...] = ()


def clean(directory: Path, setting: str, keep: Sequence[tuple[Path, str]] = ()) -> Cleaned | None:
    """Remove the entries the cache lists, its index and lists, then the directory if it
    is empty apart from its tag and .gitignore and aliaslint made it; None when there is no
    cache.  A directory ``verify_directory`` refuses is refused (ConfigError) here too."""
    resolved = verify_directory(directory, setting, keep)
    if not resolved.is_dir() or not (resolved / TAG_NAME).exists() and not any(
            _VERSION.match(item.name) for item in _scan(resolved)):
        return None
    removed = 0
    for version in _scan(resolved):
        if not (_VERSION.match(version.name) and version.is_dir(follow_symlinks=False)):
            continue
        root = Path(version.path)
        listed = _listed(root)
        # Never through a symlink: only what lies inside the cache directory is removed.
        for bucket in [] if (root / "entries").is_symlink() else _scan(root / "entries"):
            if not bucket.is_dir(follow_symlinks=False):
                continue
            for entry in _scan(Path(bucket.path)):
                temporary = _TEMPORARY.match(entry.name)
                name = temporary.group("name") if temporary else entry.name
                if name in listed and entry.is_file(follow_symlinks=False):
                    removed += _unlink(Path(entry.path))
            _rmdir(Path(bucket.path))
        _rmdir(root / "entries")
        for item in _scan(root):
            temporary = _TEMPORARY.match(item.name)
            name = temporary.group("name") if temporary else item.name
            if name in (INDEX, ENTRIES_LIST) and item.is_file(follow_symlinks=False):
                _unlink(Path(item.path))
        _rmdir(root)
    left = _left(resolved)
    if _made_here(resolved) and not left:
        for name in (TAG_NAME, ".gitignore"):
            _unlink(resolved / name)
        if _rmdir(resolved):
            return Cleaned(removed, True)
    return Cleaned(removed, False, tuple(left))


def _listed(root: Path) -> set[str]:
    data = _read_regular(root / ENTRIES_LIST, _MAX_INDEX_BYTES)
    if data is None:
        return set()
    return {line for line in data.decode("ascii", "replace").splitlines() if _KEY.match(line)}


def _left(directory: Path) -> list[str]:
    """The files (or empty directories) below the cache directory, besides its own tag and
    .gitignore, as paths relative to it; the first few."""
    found: list[str] = []

    def visit(folder: Path) -> bool:
        items = _scan(folder)
        for item in items:
            if len(found) > 3:
                break
            if folder == directory and _own_file(item):
                continue
            if not item.is_dir(follow_symlinks=False) or not visit(Path(item.path)):
                found.append(os.path.relpath(item.path, directory))
        return bool(items)

    visit(directory)
    return found


def _own_file(item: os.DirEntry) -> bool:
    """Is this the cache directory's tag or .gitignore, as aliaslint writes them?"""
    if item.name == TAG_NAME:
        return _read_text(item.path).startswith(_TAG_HEAD)
    return item.name == ".gitignore" and _read_text(item.path) == _GITIGNORE


def _unlink(path: Path) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


def _rmdir(path: Path) -> bool:
    try:
        os.rmdir(path)  # only ever an empty directory
    except OSError:
        return False
    return True


# -- entries as JSON -----------------------------------------------------------------------


def _checksum(key: str, encoded: list) -> str:
    """A hash of an entry's findings as written, so a flipped byte inside a message or a
    position that still fits the file is caught too."""
    text = json.dumps([key, encoded], separators=(",", ":"))
    return _blake2b(text.encode(), 16)


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


def _decode(item: Any) -> Diagnostic:
    """A finding exactly as ``_encode`` writes it; TypeError for anything else."""
    code, message, filename, location, end, related, fix, confidence, status, cell, witness = \
        _list(item, 11)
    from aliaslint import registry  # the rules import the engine; the cache does not need it

    if _str(code) not in registry.briefs() or confidence not in ("high", "low") \
            or status is not None or _str(filename) != "":
        raise TypeError("not a finding this version writes")
    if fix is not None:
        fix_message, applicability, edits = _list(fix, 3)
        if applicability not in ("safe", "unsafe", "display-only"):
            raise TypeError("unknown applicability")
        fix = Fix(_str(fix_message), applicability, tuple(
            Edit(_str(content), _position(start), _position(stop))
            for content, start, stop in (_list(e, 3) for e in _list(edits))))
    return Diagnostic(
        code, _str(message), "", _position(location), _position(end),
        tuple(Related(_str(m), _str(f), _position(s), _position(e), _cell(c))
              for m, f, s, e, c in (_list(r, 5) for r in _list(related))),
        fix, confidence, None, _cell(cell),
        Witness.from_json(_witness(witness)) if witness is not None else None,
    )


def _list(value: Any, length: int | None = None) -> list:
    if type(value) is not list or length is not None and len(value) != length:
        raise TypeError("expected a list")
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("expected an integer")
    return value


def _cell(value: Any) -> int | None:
    return None if value is None else _int(value)


def _position(value: Any) -> Position:
    row, column = _list(value, 2)
    return Position(_int(row), _int(column))


def _witness(value: Any) -> list:
    predicate, rows, operands, comparison, target = _list(value, 5)
    _str(predicate), _str(comparison)
    for row in _list(rows):
        _int(row)
    for operand in _list(operands):
        text, root, derived = _list(operand, 3)
        _str(text), _str(derived)
        for part in _list(root) if root is not None else ():
            _str(part)
    for part in _list(target) if target is not None else ():
        _str(part)
    return value


def _fits(d: Diagnostic, extent: Extent) -> bool:
    """Do the finding's positions (primary, related, edits, witness rows) lie inside the
    file, each in the cell it names: a plain file has no cells, a notebook only code cells?"""
    def bounds(cell: int | None) -> tuple[int, int] | None:
        if cell is None:
            return extent.rows, extent.width
        for number, rows, width in extent.cells or ():
            if number == cell:
                return rows, width
        return None

    def inside(cell: int | None, start: Position, end: Position) -> bool:
        limit = bounds(cell)
        return limit is not None and start <= end and all(
            0 <= p.row <= limit[0] + 1 and 0 <= p.column <= limit[1] + 1 for p in (start, end))

    module_rows = extent.rows if extent.cells is None else \
        sum(rows for _, rows, _ in extent.cells) + len(extent.cells)
    return (inside(d.cell, d.location, d.end_location)
            and all(r.filename == "" and inside(r.cell, r.location, r.end_location)
                    for r in d.related)
            and (d.fix is None or all(inside(d.cell, e.location, e.end_location)
                                      for e in d.fix.edits))
            and (d.witness is None or all(0 <= row <= module_rows + 1
                                          for row in d.witness.rows)))
