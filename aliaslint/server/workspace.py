"""Which settings apply to an editor's document, and checking its unsaved text.

The project's configuration is found as ``aliaslint check`` finds it: the nearest
``aliaslint.toml`` or ``pyproject.toml`` with ``[tool.aliaslint]`` above a file on disk, and
the first workspace folder's for an untitled buffer.  The client's settings (select,
ignore, confidence) apply on top of every config file, as command-line options do.
Nothing here knows the protocol: the handlers hand in text and paths.

Each workspace folder is one program, as ``aliaslint check FOLDER`` sees it: the Python files
its walk finds (excludes and ignored files left out), built once and again when a file is
created or deleted.  A document on disk is checked with the other files of its folder, read
from the editor's buffers where they are open (unsaved edits included), so that a helper
written in place in ``utils.py`` is known where ``train.py`` calls it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from aliaslint import heap
from aliaslint.config import (
    CliOptions,
    ConfigError,
    Resolver,
    Selection,
    Settings,
    excluded_anywhere,
    settings_from_options,
    validate_selectors,
)
from aliaslint.diagnostics import Confidence, Diagnostic
from aliaslint.engine import (
    NOTEBOOK_SUFFIX,
    check_buffer,
    decode,
    end_with_parent,
    not_checked,
    source_roots,
    worker_context,
)
from aliaslint.incremental import StatementCache
from aliaslint.project import Link, Loader, Program
from aliaslint.reading import read_file
from aliaslint.walk import walk
from aliaslint.workers import Worker

logger = logging.getLogger(__name__)

# The file names whose change means a document's settings may have changed.
CONFIG_NAMES = ("pyproject.toml", "aliaslint.toml")


@dataclass(frozen=True)
class ClientSettings:
    """What the editor's settings say, in ``initializationOptions`` or
    ``workspace/configuration`` (section ``aliaslint``)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    confidence: Confidence | None = None
    fix_on_save: bool = False

    def cli_options(self) -> CliOptions:
        selection = Selection(self.select, self.extend_select, self.ignore)
        return CliOptions(selection=selection, confidence=self.confidence)


def client_settings(raw: object, base: ClientSettings = ClientSettings(),
                    warn: Callable[[str], None] = logger.warning) -> ClientSettings:
    """``raw`` (a JSON object; a ``settings`` member, as ruff's clients send it, is
    unwrapped) read over ``base``.  A value that is wrong is reported through ``warn``
    and left out, never fatal: the editor keeps its diagnostics."""
    if isinstance(raw, Mapping) and isinstance(raw.get("settings"), Mapping):
        raw = raw["settings"]
    if not isinstance(raw, Mapping):
        if raw is not None:
            warn(f"settings: expected an object, got {_show(raw)}; using the defaults")
        return base
    values: dict[str, Any] = {}
    for key, field_name in (("select", "select"), ("extendSelect", "extend_select"),
                            ("ignore", "ignore")):
        if raw.get(key) is None:
            continue
        given = raw[key]
        if isinstance(given, str):  # "AL401,AL402", as on the command line
            given = [part for part in given.split(",") if part.strip()]
        try:
            values[field_name] = validate_selectors(given, f"setting aliaslint.{key}")
        except ConfigError as error:
            warn(str(error))
    confidence = raw.get("confidence")
    if confidence in ("high", "low"):
        values["confidence"] = confidence
    elif confidence is not None:
        warn(f"setting aliaslint.confidence: expected 'high' or 'low', got {_show(confidence)}")
    fix_on_save = raw.get("fixOnSave")
    if isinstance(fix_on_save, bool):
        values["fix_on_save"] = fix_on_save
    elif fix_on_save is not None:
        warn(f"setting aliaslint.fixOnSave: expected true or false, got {_show(fix_on_save)}")
    return replace(base, **values)


def _show(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:80] + " …"


class Checked(NamedTuple):
    """A check's findings (in the checked file and in the other files of its program that
    its calls write), and the other files its analysis read."""

    diagnostics: list[Diagnostic]
    used: frozenset[str] = frozenset()


@dataclass
class _Built:
    """A folder's program, its version, and the paths checked outside it since it was
    built (each makes it be built again once: it may be a file created since)."""

    program: Program | None
    version: int
    outside: set[str]


class Workspace:
    """The settings for each document, from the folders the editor opened."""

    def __init__(self, folders: Sequence[Path] = (), settings: ClientSettings = ClientSettings(),
                 warn: Callable[[str], None] = logger.warning,
                 buffers: Callable[[], dict[str, str]] = dict):
        self.folders = list(folders)
        self.client = settings
        # A folder's own client settings (`workspace/configuration` asked with its URI),
        # where they differ from the workspace's.
        self.by_folder: dict[Path, ClientSettings] = {}
        self._warn = warn
        self._reported: set[str] = set()
        self._resolvers: dict[Path, Resolver] = {}
        self._worker: Worker | None = None
        # The open Python files' texts by path: what the program's files are read as.
        self.buffers = buffers
        self._programs: dict[Path, _Built] = {}
        self._versions = 0

    def configure(self, folders: Sequence[Path] | None = None,
                  settings: ClientSettings | None = None,
                  by_folder: Mapping[Path, ClientSettings] | None = None) -> None:
        """New folders or client settings; configuration files are read again on next use."""
        if folders is not None:
            self.folders = list(folders)
        if settings is not None:
            self.client = settings
        if by_folder is not None:
            self.by_folder = dict(by_folder)
        logger.info("folders %s, client settings %s, per folder %s",
                    [str(f) for f in self.folders], self.client, self.by_folder)
        self.reload()

    def reload(self) -> None:
        """Forget every configuration file read so far (one of them changed), and the
        programs walked with them (what they exclude may have changed)."""
        self._resolvers.clear()
        self._reported.clear()
        self._programs.clear()

    def files_changed(self) -> None:
        """A Python file was created or deleted: each folder's program is walked again."""
        self._programs.clear()

    def program_for(self, path: Path) -> tuple[int, Program] | None:
        """The program of the workspace folder ``path`` is in, and its version; None for a
        file in no folder or a folder with fewer than two Python files.  Built on first use;
        a file it does not hold makes it be built again (once), which finds a file created
        without the client saying so."""
        folder = self.folder_of(path)
        if not any(path.is_relative_to(f) for f in self.folders) or path.suffix != ".py":
            return None
        built = self._programs.get(folder)
        key = str(path)

        def holds(built: _Built) -> bool:
            return built.program is not None and key in built.program.packages

        if built is None or not holds(built) and key not in built.outside:
            outside = built.outside if built is not None else set()
            built = self._programs[folder] = _Built(self._walk(folder), self._version(), outside)
        if not holds(built):
            built.outside.add(key)
            return None
        assert built.program is not None
        return built.version, built.program

    @property
    def builds(self) -> int:
        """How many times a folder's program was built: a change says the open documents
        of the folder may now be checked with files they were not before."""
        return self._versions

    def _version(self) -> int:
        self._versions += 1
        return self._versions

    def _walk(self, folder: Path) -> Program | None:
        resolver = self._resolve(folder)
        try:
            started = time.monotonic()
            files, _ = walk([folder], resolver)
            program = Program.of([file for file, _ in files], source_roots(resolver))
            logger.info("%s: %d files to check together (%.2f s)", folder, len(files),
                        time.monotonic() - started)
            return program
        except ConfigError as error:
            self._report(f"configuration error, checking each file alone: {error}")
        except Exception:  # a bug: the files are still checked, each alone
            logger.exception("reading the files of %s failed", folder)
        return None

    def folder_of(self, path: Path) -> Path:
        """The innermost workspace folder that holds ``path``, else the home folder."""
        holding = [folder for folder in self.folders if path.is_relative_to(folder)]
        return max(holding, key=lambda folder: len(folder.parts)) if holding else self.home

    def client_for(self, path: Path) -> ClientSettings:
        """The client settings of the folder ``path`` is in."""
        return self.by_folder.get(self.folder_of(path), self.client)

    @property
    def home(self) -> Path:
        """Where an untitled buffer's settings come from: the first workspace folder."""
        return self.folders[0] if self.folders else Path.cwd()

    def _resolve(self, folder: Path) -> Resolver:
        resolver = self._resolvers.get(folder)
        if resolver is None:
            resolver = Resolver(self.client_for(folder).cli_options(), folder)
            self._resolvers[folder] = resolver
        return resolver

    def settings_for(self, path: Path, on_disk: bool) -> Settings:
        """The settings that apply to ``path`` (the workspace's for an untitled buffer), with
        the client settings of its workspace folder; a broken configuration is reported
        once and the defaults are used."""
        folder = self.folder_of(path) if on_disk else self.home
        resolver = self._resolve(folder)
        try:
            if on_disk:
                return resolver.for_file(path)
            return resolver.for_directory(self.home)
        except ConfigError as error:
            self._report(f"configuration error, using the defaults: {error}")
            return settings_from_options({}, None, folder, self.client_for(folder).cli_options())

    def _report(self, message: str) -> None:
        if message not in self._reported:  # once per file version, not at every keystroke
            self._reported.add(message)
            self._warn(message)

    def untitled_path(self, name: str, notebook: bool = False) -> Path:
        """A path for an untitled buffer, in the home folder (per-file-ignores match it)."""
        name = name.rsplit("/", 1)[-1] or "untitled"
        if notebook and not name.endswith(NOTEBOOK_SUFFIX):
            name += NOTEBOOK_SUFFIX
        return self.home / name

    def read(self, path: Path) -> str | Diagnostic:
        """The text of a file the editor has not opened, or the AL902 finding that says why
        it was not read: only a regular file within `max-file-size` is read (a FIFO would
        block the server for good, and a device would fill its memory)."""
        read = read_file(path, str(path), self.settings_for(path, True).max_file_size,
                         streams=False)
        if isinstance(read, Diagnostic):
            return read
        return decode(read[0], str(path))

    def check(self, text: str, path: Path, on_disk: bool = True,
              document: str | None = None) -> list[Diagnostic]:
        """The findings for ``text`` as if it were the file at ``path`` in that file (see
        ``checked``)."""
        return [finding for finding in self.checked(text, path, on_disk, document).diagnostics
                if finding.filename == str(path)]

    def checked(self, text: str, path: Path, on_disk: bool = True,
                document: str | None = None) -> Checked:
        """The findings for ``text`` as if it were the file at ``path`` (notebook JSON for
        ``.ipynb``); none for a file the configuration excludes.  ``document``: a name for
        the buffer, so that a re-check after an edit parses only the statements it changed.
        A Python file on disk is checked as part of its folder's program: its findings may
        lie in other files, and ``used`` says which files were read.

        The check runs in a worker process, stopped (and replaced) when it takes longer
        than the `file-timeout`: libcst's parse cannot be interrupted on a thread."""
        settings = self.settings_for(path, on_disk)
        if on_disk and excluded_anywhere(path, settings):
            return Checked([])
        if self._worker is None:
            self._worker = Worker(worker_context(), _check_in_worker, end_with_parent,
                                  (os.getpid(),), after=_settle)

        def failure(request: object, why: str, overran: bool) -> Checked:
            logger.warning("checking %s: %s", path, why)
            return Checked([not_checked(str(path), settings, why, overran)])

        found = self.program_for(path) if on_disk else None
        if found is None:
            return self._worker.call((document, text, path, settings, None),
                                     settings.file_timeout, failure)
        version, program = found
        overlay = {other: buffer for other, buffer in self.buffers().items()
                   if other != str(path) and other in program.packages}
        # The program goes to the worker once per version (a worker started since asks).
        answer = self._worker.call((document, text, path, settings, (version, None, overlay)),
                                   settings.file_timeout, failure)
        if answer == _NEED_PROGRAM:
            answer = self._worker.call(
                (document, text, path, settings, (version, program, overlay)),
                settings.file_timeout, failure)
        return answer
    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None


# In the worker process: what the checks of each recent document parsed, most recent last.
_statements: OrderedDict[str, StatementCache] = OrderedDict()
_DOCUMENTS_KEPT = 16
# The programs last sent, by version, most recent last (one per workspace folder), each with
# its loader for each parse budget: the loaders keep the trees of the files read.
_programs: OrderedDict[int, tuple[Program, dict[int, Loader]]] = OrderedDict()
_PROGRAMS_KEPT = 4
# A worker's answer when it does not hold the program version a request names.
_NEED_PROGRAM = "need-program"

# (document, text, path, settings, (program version, the program or None, buffers) or None)
Request = tuple[str | None, str, Path, Settings,
                tuple[int, Program | None, dict[str, str]] | None]


def _check_in_worker(request: Request) -> Checked | str:
    global _checks
    document, text, path, settings, linked = request
    link = None
    if linked is not None:
        version, program, overlay = linked
        if program is not None:
            _programs[version] = (program, {})
            while len(_programs) > _PROGRAMS_KEPT:
                _programs.popitem(last=False)
        elif version not in _programs:
            return _NEED_PROGRAM
        _programs.move_to_end(version)
        link = _link(version, path, settings, overlay)
    statements = None
    if document is not None:
        statements = _statements.pop(document, None) or StatementCache()
        _statements[document] = statements
        while len(_statements) > _DOCUMENTS_KEPT:
            _statements.popitem(last=False)
    _checks += 1
    # Collected once the answer is sent (`_settle`), not before: the editor's wait for
    # its diagnostics is not the collector's.
    with heap.one_check(settle=False):
        diagnostics = check_buffer(text, path, str(path), settings, statements=statements,
                                   link=link)
    used = frozenset(link.used) - {str(path)} if link is not None else frozenset()
    return Checked(diagnostics, used)


def _settle() -> None:
    """After each answer: what the check left collected, what outlives it frozen."""
    heap.settled(unfreeze=_checks % _FULL_COLLECTION_EVERY == 0)


_checks = 0
# Checks between two full collections of everything the worker keeps.
_FULL_COLLECTION_EVERY = 32


def _link(version: int, path: Path, settings: Settings, overlay: dict[str, str]
          ) -> Link | None:
    program, loaders = _programs[version]
    if str(path) not in program.packages:
        return None
    loader = loaders.get(settings.parse_budget)
    if loader is None:
        loader = loaders[settings.parse_budget] = Loader(program, settings.parse_budget,
                                                         _decoded)
    loader.overlay = overlay
    return Link(program, loader, str(path))


def _decoded(data: bytes) -> str | None:
    text = decode(data, "")
    return text if isinstance(text, str) else None


@dataclass(frozen=True)
class NotebookCell:
    """One cell as the editor has it: only code cells in Python are checked."""

    uri: str
    text: str
    code: bool


def notebook_json(cells: Sequence[NotebookCell], metadata: object = None) -> str:
    """The cells as nbformat 4 JSON, which the engine reads like a notebook file: cells are
    numbered from 1 in this order, so finding ``cell`` N belongs to ``cells[N - 1]``."""
    return json.dumps({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": metadata if isinstance(metadata, dict) else {},
        "cells": [{"cell_type": "code" if cell.code else "markdown", "source": cell.text,
                   "metadata": {}} for cell in cells],
    })
