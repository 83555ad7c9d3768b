"""The protocol handlers: documents in, diagnostics, code actions and hovers out.

Diagnostics are pushed (``textDocument/publishDiagnostics``) on open, on save and, a moment
after the last keystroke, on change, and cleared on close; a client that pulls
(``textDocument/diagnostic``) gets them when it asks instead, so it never sees them twice.
A notebook is checked as one module and its diagnostics go to each cell's document.  One
process serves the whole session: every handler turns a failure into a log line, never into
the end of the server.

A Python file on disk is checked with the other files of its workspace folder (read from
their buffers where they are open), so its check may find a write in a helper of another
file.  A document's diagnostics are its own check's and those the checks of the other open
documents placed in it; an edit of a document is published first, then each open document
whose last check read it is checked again, and every document whose diagnostics changed
with it is published again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from dataclasses import replace
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path, uri_scheme

from aliaslint import __version__
from aliaslint.diagnostics import Diagnostic
from aliaslint.engine import NOTEBOOK_SUFFIX
from aliaslint.fixes import Document, verify
from aliaslint.server.convert import (
    CODE_ACTION_KINDS,
    FIX_ALL,
    Converter,
    Entry,
    Text,
    hover,
    touches,
    use_python_lines,
)
from aliaslint.server.workspace import (
    CONFIG_NAMES,
    NotebookCell,
    Workspace,
    client_settings,
    notebook_json,
)

logger = logging.getLogger(__name__)

# Seconds without a change before a changed buffer is checked again: typing stays smooth
# and a burst of keystrokes costs one check.
DEBOUNCE = 0.2
SECTION = "aliaslint"
# With ALIASLINT_SERVER_TIMING set, each re-check logs (at info level, to standard error)
# how long after it began (the end of the debounce, or the open or save) the document's
# diagnostics were sent, and how long re-checking its dependents took after that: the
# latency an editor shows, measured where it starts (benchmarks/bench_server_latency.py).
TIMING = bool(os.environ.get("ALIASLINT_SERVER_TIMING"))
timing = logging.getLogger("aliaslint.server.timing")


class _Malformed:
    """A request whose parameters could not be read: answered with the error, not dropped."""

    def __init__(self, msg_id: Any, error: JsonRpcException):
        self.id = msg_id
        self.error = error


class Protocol(LanguageServerProtocol):
    """pygls' protocol, made to answer every request.  pygls logs and drops a request whose
    parameters do not validate (a line of -1) and every request after ``shutdown``, which
    leaves the client waiting for ever; here the first is answered ``InvalidParams`` and the
    others ``InvalidRequest``, as the protocol specifies."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" in data and "method" in data:
                return _Malformed(data["id"], error)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Malformed):
            self._send_response(message.id, error=message.error.to_response_error())
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) \
                and getattr(message, "id", None) is not None:
            self._send_response(message.id, error=JsonRpcInvalidRequest(
                f"{method}: the server is shutting down").to_response_error())
            return
        super().handle_message(message)


class AliaslintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "aliaslint", __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                # "*": every notebook type (the spec's wildcard; some clients cannot read
                # a selector without one), its Python cells.
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    notebook="*", cells=[types.NotebookCellLanguage(language="python")])],
                save=True,
            ),
            protocol_cls=Protocol,
        )
        self.project = Workspace(warn=self.warn, buffers=self.buffers)
        self.converter = Converter()
        self.pull = False  # the client asks for diagnostics (textDocument/diagnostic)
        # The latest findings of each document (a notebook cell's under the cell's URI),
        # and the documents (a notebook's URI for its cells) changed since.
        self.entries: dict[str, list[Entry]] = {}
        self.stale: set[str] = set()
        self.cells_of: dict[str, list[str]] = {}
        # The lines of each document as last checked: where a request's positions may be.
        self.texts: dict[str, Text] = {}
        # Each document's entries as last judged for fixing (see `fixable`), by the entry
        # list they were judged from.
        self._judged: dict[str, tuple[list[Entry], list[Entry]]] = {}
        self.fix_all_clashes: set[str] = set()  # whose safe fixes clash when made together
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._pull_timer: asyncio.TimerHandle | None = None  # asks a pulling client to pull
        # For each text document, what its last check read of the other files of its
        # program (their paths), and the findings it made in them, by path.
        self.used: dict[str, frozenset[str]] = {}
        self.placed: dict[str, dict[str, list[Diagnostic]]] = {}
        self.shown: dict[str, list[types.Diagnostic]] = {}  # as last published

    def warn(self, message: str) -> None:
        logger.warning("%s", message)
        try:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning,
                                                             f"aliaslint: {message}"))
        except Exception:  # not connected yet (the settings came with initialize)
            logger.debug("could not show the message to the client", exc_info=True)

    # --- documents ----------------------------------------------------------------------------

    def notebook_of(self, uri: str) -> types.NotebookDocument | None:
        return (self.workspace.get_notebook_document(notebook_uri=uri)
                or self.workspace.get_notebook_document(cell_uri=uri))

    def key(self, uri: str) -> str:
        """The document a check is about: the notebook for one of its cells."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def path_of(self, uri: str, notebook: bool = False) -> tuple[Path, bool]:
        """The file a document is, and whether it is one on disk (not an untitled buffer)."""
        if uri_scheme(uri) == "file":
            path = to_fs_path(uri)
            if path is not None:
                return Path(os.path.normpath(path)), True
        return self.project.untitled_path(uri.split(":", 1)[-1], notebook), False

    def file_of(self, uri: str) -> str | None:
        """The path of a Python file on disk a text document is (a module of its folder's
        program); None for anything else."""
        if uri_scheme(uri) != "file" or self.workspace.get_notebook_document(cell_uri=uri):
            return None
        path, _ = self.path_of(uri)
        return str(path) if path.suffix == ".py" else None

    def open_files(self) -> dict[str, str]:
        """The open Python files on disk: path -> URI."""
        found = {}
        for uri in list(self.workspace.text_documents):
            path = self.file_of(uri)
            if path is not None:
                found[path] = uri
        return found

    def buffers(self) -> dict[str, str]:
        """The texts of the open Python files on disk, unsaved edits included, by path: the
        program's files are read from them."""
        return {path: self.workspace.text_documents[uri].source
                for path, uri in self.open_files().items()}

    def text_of_file(self, filename: str) -> Text:
        """A file of the program a related location points into: its open document's text,
        else the file's."""
        uri = self.open_files().get(filename)
        if uri is not None:
            return Text.of(uri, self.workspace.text_documents[uri].source)
        path = Path(filename)
        text = self.project.read(path)
        return Text.of(path.as_uri(), text if isinstance(text, str) else "")

    def check(self, key: str) -> dict[str, list[Entry]]:
        """Check a text document or a notebook: the entries of each document it is made of.
        What the check read of other files, and found in them, is kept in ``used`` and
        ``placed``."""
        self.stale.discard(key)
        self.used.pop(key, None)
        self.placed.pop(key, None)
        try:
            notebook = self.workspace.get_notebook_document(notebook_uri=key)
            if notebook is not None:
                return self._check_notebook(notebook)
            path, on_disk = self.path_of(key)
            if path.suffix == NOTEBOOK_SUFFIX:  # notebook JSON opened as text: rows differ
                return {key: []}
            source = self.source_of(key, path, on_disk)
            if isinstance(source, Diagnostic):
                self.texts[key] = Text.of(key, "")
                return {key: self.converter.entries([source], self.texts[key])}
            text = self.texts[key] = Text.of(key, source)
            checked = self.project.checked(source, path, on_disk, key)
            own: list[Diagnostic] = []
            placed: dict[str, list[Diagnostic]] = {}
            for finding in checked.diagnostics:
                if finding.filename == str(path):
                    own.append(finding)
                else:  # a write in a helper of another file, made by this file's call
                    placed.setdefault(finding.filename, []).append(finding)
            if checked.used:
                self.used[key] = checked.used
                self.placed[key] = placed
            return {key: self.converter.entries(own, text, text_of_file=self.text_of_file)}
        except Exception:  # a bug: say so in the log, keep serving
            logger.exception("checking %s failed", key)
            return {key: []}

    def dependents(self, path: str, but: str | None = None) -> list[str]:
        """The open documents (except ``but``) whose last check read the file ``path``."""
        return [key for key, used in self.used.items() if key != but and path in used]

    def diagnostics_of(self, uri: str, fresh: bool = True) -> list[Entry]:
        """A document's findings: its own check's, and those the checks of the other open
        documents placed in it (each once, as `check` reports a write two callers reach).
        ``fresh``: check again first what changed since (else: as last checked)."""
        own = self.entries_for(uri) if fresh else self.entries.get(uri, [])
        path = self.file_of(uri)
        if path is None:
            return own
        foreign: list[Diagnostic] = []
        for key in self.dependents(path, but=uri):
            if fresh and key in self.stale:
                self.entries.update(self.check(key))
            foreign += self.placed.get(key, {}).get(path, [])
        if not foreign:
            return own
        seen = {_identity(entry.finding) for entry in own}
        kept = []
        for finding in sorted(foreign, key=lambda d: d.sort_key):
            if _identity(finding) not in seen:
                seen.add(_identity(finding))
                kept.append(finding)
        text = self.texts.get(uri) or self.text_of_file(path)
        # The fix of a finding belongs to the check of the document that made it: another
        # document's check offers none here.
        found = own + self.converter.entries(kept, text, text_of_file=self.text_of_file)
        return sorted(found, key=lambda entry: entry.finding.sort_key)

    def source_of(self, uri: str, path: Path, on_disk: bool) -> str | Diagnostic:
        """An open document's text; for one the client has not opened (a request about a
        file on disk), the file's text, read as ``check`` reads files but only if regular."""
        document = self.workspace.text_documents.get(unquote(uri))
        if document is not None:
            return document.source
        if not on_disk:
            return ""
        return self.project.read(path)

    def lines_of(self, uri: str) -> int:
        """How many lines the document has, as last checked (the text ends after the last)."""
        self.entries_for(uri)
        text = self.texts.get(uri)
        return len(text.lines) if text is not None else 1

    def _check_notebook(self, notebook: types.NotebookDocument) -> dict[str, list[Entry]]:
        cells = []
        for cell in notebook.cells:
            document = self.workspace.text_documents.get(unquote(cell.document))
            if document is None:  # a cell the client did not send: nothing to read
                continue
            python = document.language_id in (None, "python")
            cells.append(NotebookCell(cell.document, document.source,
                                      cell.kind == types.NotebookCellKind.Code and python))
        self.cells_of[notebook.uri] = [cell.uri for cell in cells]
        texts = [Text.of(cell.uri, cell.text) for cell in cells]
        self.texts.update((text.uri, text) for text in texts)
        first_code = next((text for text, cell in zip(texts, cells) if cell.code), None)

        def text_of_cell(number: int | None) -> Text:
            if number is not None and 1 <= number <= len(texts):
                return texts[number - 1]
            return first_code or texts[0]  # a finding about the whole notebook

        path, on_disk = self.path_of(notebook.uri, notebook=True)
        findings = self.project.check(notebook_json(cells, notebook.metadata), path, on_disk)
        by_cell: dict[str, list[Entry]] = {cell.uri: [] for cell in cells}
        for finding in findings:
            text = text_of_cell(finding.cell)
            by_cell[text.uri] += self.converter.entries([finding], text, text_of_cell)
        return by_cell

    def refresh(self, key: str) -> None:
        """Check a document now and push its diagnostics (unless the client pulls); then
        check again the documents whose last check read it, and push what changed."""
        started = time.perf_counter() if TIMING else 0.0
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        placed = self.placed.get(key, {})
        builds = self.project.builds
        text = self.texts.get(key)
        results = self.check(key)
        checked = time.perf_counter() if TIMING else 0.0
        self.entries.update(results)
        if self.pull:
            if self.project.builds != builds:
                self.refresh_all()
            return
        for uri in results:
            self.publish_diagnostics(uri, always=True)
        published = time.perf_counter() if TIMING else 0.0
        changed = self._placed_in(placed, self.placed.get(key, {}))
        path = self.file_of(key)
        if self.project.builds != builds:
            # The program was walked again (this file was not in it): every open file is
            # checked with the files it may now read.
            for other in self.open_files().values():
                if other != key:
                    changed |= self._check_again(other)
        elif path is not None and self.texts.get(key) != text:
            # Not after a save that changed nothing: the others read this text already.
            changed |= self._check_dependents(path, but=key)
        # Each document published again only where what it shows changed (this one's
        # too: the checks that read it may have placed findings in it).
        self._publish_changed(changed)
        if TIMING:
            done = time.perf_counter()
            timing.info("timing %s: published %.1f ms after the check began (check %.1f ms), "
                        "dependents %.1f ms more", key, (published - started) * 1e3,
                        (checked - started) * 1e3, (done - published) * 1e3)

    def _check_dependents(self, path: str, but: str | None = None) -> set[str]:
        """Check again the open documents whose last check read ``path`` (its text
        changed); the documents whose diagnostics may have changed with them."""
        changed: set[str] = set()
        for key in self.dependents(path, but):
            logger.debug("checking %s again: its last check read %s", key, path)
            changed |= self._check_again(key)
        return changed

    def _check_again(self, key: str) -> set[str]:
        """Check a document again; the documents whose diagnostics may have changed."""
        placed = self.placed.get(key, {})
        results = self.check(key)
        self.entries.update(results)
        return set(results) | self._placed_in(placed, self.placed.get(key, {}))

    def _placed_in(self, before: dict[str, list[Diagnostic]],
                   after: dict[str, list[Diagnostic]]) -> set[str]:
        """The open documents whose findings from another check changed from ``before``
        to ``after`` (by path)."""
        files = self.open_files()
        return {files[path] for path in before.keys() | after.keys()
                if path in files and before.get(path) != after.get(path)}

    def _publish_changed(self, uris: Iterable[str]) -> None:
        for uri in sorted(uris):
            if uri in self.workspace.text_documents:
                self.publish_diagnostics(uri)

    def publish_diagnostics(self, uri: str, always: bool = False) -> None:
        """Push a document's diagnostics as they are now; ``always``: even if unchanged since
        they were last pushed."""
        items = [entry.diagnostic for entry in self.diagnostics_of(uri, fresh=False)]
        if always or self.shown.get(uri) != items:
            self.shown[uri] = items
            self.publish(uri, items)

    def refresh_later(self, key: str) -> None:
        self.stale.add(key)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if not self.pull:
            self._timers[key] = asyncio.get_running_loop().call_later(
                DEBOUNCE, self.refresh, key)
            return
        # The client pulls each document it shows: those whose check read this one are
        # checked again when it asks for them.
        path = self.file_of(key)
        dependents = self.dependents(path, but=key) if path is not None else []
        self.stale.update(dependents)
        if dependents:
            if self._pull_timer is not None:
                self._pull_timer.cancel()
            self._pull_timer = asyncio.get_running_loop().call_later(DEBOUNCE, self.ask_to_pull)

    def ask_to_pull(self) -> None:
        """Ask a pulling client to pull every document again (if it can be asked)."""
        if _capability(self.client_capabilities, "workspace", "diagnostics",
                       "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def refresh_all(self) -> None:
        """Settings changed: check every open document again."""
        self.entries.clear()
        open_cells = {uri for uris in self.cells_of.values() for uri in uris}
        keys = [*self.cells_of,
                *(uri for uri in self.workspace.text_documents if uri not in open_cells)]
        if self.pull:
            self.stale.update(keys)
            self.ask_to_pull()
            return
        # Each document is checked once, then each is published with what the others
        # placed in it.
        for key in keys:
            timer = self._timers.pop(key, None)
            if timer is not None:
                timer.cancel()
            self.entries.update(self.check(key))
        for uri in list(self.entries):
            self.publish_diagnostics(uri, always=True)

    def forget(self, uris: Iterable[str]) -> None:
        """Documents closed: their diagnostics are cleared, and those their checks placed
        in other documents dropped; the documents whose checks read them read the files on
        disk from now on, and are checked again."""
        uris = list(uris)
        changed: set[str] = set()
        closed: list[str] = []
        for uri in uris:
            timer = self._timers.pop(uri, None)
            if timer is not None:
                timer.cancel()
            self.stale.discard(uri)
            self.entries.pop(uri, None)
            self.texts.pop(uri, None)
            self.shown.pop(uri, None)
            self.used.pop(uri, None)
            changed |= self._placed_in(self.placed.pop(uri, {}), {})
            path = self.file_of(uri)
            if path is not None:
                closed.append(path)
            if not self.pull:
                self.publish(uri, [])
        for path in closed:
            if self.pull:
                self.stale.update(self.dependents(path))
            else:
                changed |= self._check_dependents(path)
        if self.pull:
            if changed or any(self.dependents(path) for path in closed):
                self.ask_to_pull()
            return
        self._publish_changed(changed - set(uris))

    def files_changed(self, changes: Sequence[types.FileEvent]) -> None:
        """Python files created, deleted or changed on disk (not through the editor)."""
        python = [change for change in changes if change.uri.endswith(".py")]
        if any(change.type != types.FileChangeType.Changed for change in python):
            # A file more or less in a folder: the programs are walked again, and every
            # open document checked with them.
            self.project.files_changed()
            self.refresh_all()
            return
        files = self.open_files()
        changed: set[str] = set()
        for change in python:
            path = self.file_of(change.uri)
            if path is None or path in files:
                continue  # an open document is read from its buffer, not from the file
            if self.pull:
                self.stale.update(self.dependents(path))
            else:
                changed |= self._check_dependents(path)
        if self.pull:
            self.ask_to_pull()
        else:
            self._publish_changed(changed)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def report(self, uri: str) -> tuple[list[types.Diagnostic], str]:
        """A document's diagnostics as they are now, and an id that changes when they do
        (a pulling client sends it back, and is told "unchanged" while it holds)."""
        items = [entry.diagnostic for entry in self.diagnostics_of(uri)]
        digest = hashlib.sha256(repr(items).encode()).hexdigest()[:16]
        return items, digest

    def open_documents(self) -> list[str]:
        """The text documents and notebook cells the client has open."""
        return list(self.workspace.text_documents)

    def fixable(self, uri: str) -> list[Entry]:
        """A document's entries as `--fix` would treat them: a fix that `fixes.verify`
        refuses (the fixed text would not compile, would have a new finding on the rows it
        wrote, or would read a name bound to something else) is display-only, so no code
        action offers it.  Judged once per check of the document, when a code action or a
        save first asks.  A notebook cell's fixes are judged with its notebook by `--fix`;
        the server offers them as the check made them."""
        entries = self.entries_for(uri)
        judged = self._judged.get(uri)
        if judged is not None and judged[0] is entries:
            return judged[1]
        result = entries
        self.fix_all_clashes.discard(uri)
        if self.key(uri) == uri and any(_offered(entry) for entry in entries):
            path, on_disk = self.path_of(uri)
            source = self.source_of(uri, path, on_disk)
            if isinstance(source, str):
                result = self._judge(uri, entries, source, path, on_disk)
        self._judged[uri] = (entries, result)
        return result

    def _judge(self, uri: str, entries: list[Entry], source: str, path: Path, on_disk: bool
               ) -> list[Entry]:
        document = Document(str(path))
        found = [entry.finding for entry in entries]

        def check(text: str) -> list[Diagnostic]:
            return self.project.check(text, path, on_disk)

        judged = []
        for entry in entries:
            fix = entry.finding.fix
            if fix is not None and _offered(entry):
                after = document.apply(source, [entry.finding])
                if verify(source, after, [entry.finding], found, check, document).problem:
                    shown = replace(fix, applicability="display-only")
                    entry = replace(entry, finding=replace(entry.finding, fix=shown))
            judged.append(entry)
        # Fixes that pass one by one may still clash together: fix-all (and fix on save)
        # offers them only if the text they make together passes too.
        chosen = self.converter.fix_all_findings(judged)
        if len(chosen) > 1 and verify(source, document.apply(source, chosen), chosen, found,
                                      check, document).problem:
            self.fix_all_clashes.add(uri)
        return judged

    def entries_for(self, uri: str) -> list[Entry]:
        """The findings of a document as it is now (checked again if it changed since)."""
        key = self.key(uri)
        if key in self.stale or uri not in self.entries:
            self.entries.update(self.check(key))
        return self.entries.get(uri, [])

    # --- settings -----------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if not uris and self.workspace.root_uri:
            uris = [self.workspace.root_uri]
        paths = [to_fs_path(uri) for uri in uris if uri_scheme(uri) == "file"]
        return [Path(path) for path in paths if path]

    async def pull_settings(self) -> None:
        """The client's ``aliaslint`` section, when it offers ``workspace/configuration``."""
        if not _capability(self.client_capabilities, "workspace", "configuration"):
            return
        folders = self.project.folders
        try:
            # The workspace's section, then each folder's (a multi-root workspace may set
            # them apart; a client without scopes answers the same for each).
            answer = await self.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(section=SECTION),
                       *(types.ConfigurationItem(scope_uri=folder.as_uri(), section=SECTION)
                         for folder in folders)]))
        except Exception:
            logger.warning("workspace/configuration failed; keeping the settings", exc_info=True)
            return
        if not answer:
            return
        settings = self.project.client
        if answer[0] is not None:
            settings = client_settings(answer[0], settings, self.warn)
        by_folder = {
            folder: client_settings(raw, settings, self.warn)
            for folder, raw in zip(folders, answer[1:])
            if raw is not None and raw != answer[0]
        }
        self.project.configure(settings=settings, by_folder=by_folder)


def _capability(capabilities: Any, *path: str) -> Any:
    for name in path:
        capabilities = getattr(capabilities, name, None)
        if capabilities is None:
            return None
    return capabilities


def build_server() -> AliaslintServer:
    server = AliaslintServer()
    _register(server)
    return server


def _register(server: AliaslintServer) -> None:
    feature: Callable[..., Callable[[Callable], Callable]] = server.feature

    @feature(types.INITIALIZE)
    def initialize(ls: AliaslintServer, params: types.InitializeParams) -> None:
        ls.pull = _capability(params.capabilities, "text_document", "diagnostic") is not None
        ls.converter = Converter(ls.workspace.position_encoding)
        use_python_lines(ls.workspace)
        ls.project.configure(ls.folders(),
                             client_settings(params.initialization_options, warn=ls.warn))

    @feature(types.INITIALIZED)
    async def initialized(ls: AliaslintServer, params: types.InitializedParams) -> None:
        if _capability(ls.client_capabilities, "workspace", "did_change_watched_files",
                       "dynamic_registration"):
            # The configuration files, and the Python files: one created or deleted
            # changes a folder's program, one changed on disk the documents that read it.
            watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}")
                        for name in (*CONFIG_NAMES, "*.py")]
            try:
                await ls.client_register_capability_async(types.RegistrationParams([
                    types.Registration(
                        id="aliaslint-config-files",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers)),
                ]))
            except Exception:
                logger.warning("could not watch the configuration files", exc_info=True)
        await ls.pull_settings()
        ls.refresh_all()

    @feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AliaslintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: AliaslintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.refresh_later(params.text_document.uri)

    @feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AliaslintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AliaslintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget([params.text_document.uri])

    @feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: AliaslintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.refresh(params.notebook_document.uri)

    @feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_change(ls: AliaslintServer,
                              params: types.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        notebook = ls.notebook_of(uri)
        current = {cell.document for cell in notebook.cells} if notebook else set()
        ls.forget([cell for cell in ls.cells_of.get(uri, []) if cell not in current])
        ls.refresh_later(uri)

    @feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: AliaslintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.refresh(params.notebook_document.uri)

    @feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: AliaslintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.forget([*ls.cells_of.pop(uri, []), uri])

    @feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
             types.DiagnosticOptions(identifier=SECTION, inter_file_dependencies=True,
                                     workspace_diagnostics=True))
    def diagnostic(ls: AliaslintServer, params: types.DocumentDiagnosticParams
                   ) -> types.FullDocumentDiagnosticReport | types.UnchangedDocumentDiagnosticReport:
        uri = params.text_document.uri
        items, result_id = ls.report(uri)
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    @feature(types.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(ls: AliaslintServer, params: types.WorkspaceDiagnosticParams
                             ) -> types.WorkspaceDiagnosticReport:
        """Every open document's diagnostics (a closed file's are `check`'s to report)."""
        previous = {given.uri: given.value for given in params.previous_result_ids}
        reports: list = []
        for uri in ls.open_documents():
            items, result_id = ls.report(uri)
            version = getattr(ls.workspace.text_documents.get(uri), "version", None)
            if previous.get(uri) == result_id:
                reports.append(types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=uri, version=version, result_id=result_id))
            else:
                reports.append(types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, version=version, items=items, result_id=result_id))
        return types.WorkspaceDiagnosticReport(items=reports)

    @feature(types.TEXT_DOCUMENT_CODE_ACTION,
             types.CodeActionOptions(code_action_kinds=CODE_ACTION_KINDS))
    def code_action(ls: AliaslintServer,
                    params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        _within(ls.lines_of(uri), params.range.start, params.range.end)
        entries = ls.fixable(uri)
        only = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(only, types.CodeActionKind.QuickFix):
            for entry in entries:
                if touches(entry.diagnostic.range, params.range):
                    actions += ls.converter.quick_fixes(entry)
        if _wants(only, FIX_ALL):
            fix_all = None if uri in ls.fix_all_clashes else ls.converter.fix_all(uri, entries)
            if fix_all is not None:  # offered only where it would change something
                actions.append(fix_all)
        return _unique(actions)

    @feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: AliaslintServer, params: types.HoverParams) -> types.Hover | None:
        _within(ls.lines_of(params.text_document.uri), params.position)
        return hover(ls.diagnostics_of(params.text_document.uri), params.position)

    @feature(types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL)
    def will_save(ls: AliaslintServer,
                  params: types.WillSaveTextDocumentParams) -> list[types.TextEdit]:
        path, _ = ls.path_of(params.text_document.uri)
        if not ls.project.client_for(path).fix_on_save:
            return []
        entries = ls.fixable(params.text_document.uri)
        if params.text_document.uri in ls.fix_all_clashes:
            return []
        return ls.converter.fix_all_edits(entries)

    @feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: AliaslintServer,
                                    params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and SECTION in settings:
            ls.project.configure(settings=client_settings(settings[SECTION],
                                                          ls.project.client, ls.warn))
        else:
            await ls.pull_settings()
        ls.refresh_all()

    @feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(ls: AliaslintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.rsplit("/", 1)[-1] in CONFIG_NAMES for change in params.changes):
            logger.info("a configuration file changed: reading the settings again")
            ls.project.reload()
            ls.refresh_all()
            return
        ls.files_changed(params.changes)

    @feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: AliaslintServer,
                        params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.project.configure(folders=ls.folders())
        ls.refresh_all()


def _within(lines: int, *positions: types.Position) -> None:
    """Raise InvalidParams unless the positions are in order and within the document's lines
    (a character past a line's end means its end, as the protocol says)."""
    for position in positions:
        if position.line >= lines:
            raise JsonRpcInvalidParams(f"line {position.line} is past the end of the document "
                                       f"({lines} lines)")
    if len(positions) == 2 and positions[1] < positions[0]:
        raise JsonRpcInvalidParams("the range ends before it starts")


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """Does a request limited to the kinds ``only`` (None: all) include ``kind``?
    A kind includes its sub-kinds: ``source`` asks for ``source.fixAll.aliaslint``."""
    return only is None or any(kind == given or kind.startswith(f"{given}.") for given in only)


def _identity(finding: Diagnostic) -> tuple:
    """What makes two findings one (as `check` counts them): the same code at the same
    place."""
    return (finding.code, finding.filename, finding.cell, finding.location,
            finding.end_location)


def _unique(actions: list[types.CodeAction]) -> list[types.CodeAction]:
    """Each action once: two findings of one code on a line share their suppression."""
    seen: dict[str, types.CodeAction] = {}
    for action in actions:
        seen.setdefault(f"{action.title}\0{action.edit!r}", action)
    return list(seen.values())


def _offered(entry: Entry, safe: bool = False) -> bool:
    """Does a code action offer the entry's fix (``safe``: with fix-all)?"""
    fix = entry.finding.fix
    if fix is None or not fix.edits:
        return False
    return fix.applicability == "safe" if safe else fix.applicability != "display-only"
