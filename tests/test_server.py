"""`aliaslint server` end to end: a real LSP client (pytest-lsp) drives the server over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402

from aliaslint.registry import rule_url  # noqa: E402

SOURCE = """\
import torch

a = torch.ones(3)
b = a.t()
s = "😀é"; same = id(a) == id(b)
w = torch.ones(3, requires_grad=True)
w.add_(1)
"""
# The AL401 finding on row 5 starts after "😀é": 17 code points, 18 UTF-16 units, 21 bytes.
AL401_START = {"utf-32": 17, "utf-16": 18, "utf-8": 21}


def capabilities(*, pull: bool = False, encodings: list[str] | None = None,
                 configuration: bool = False, watch: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings)
        if encodings else None,
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, code_description_support=True),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    types.ClientCodeActionKindOptions(value_set=["quickfix", "source"]))),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()),
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True) if watch else None,
            workspace_folders=True,
        ),
    )


@contextlib.asynccontextmanager
async def session(root: Path, caps: types.ClientCapabilities | None = None,
                  options: object = None, configuration: dict | None = None,
                  folders: list[Path] | None = None):
    config = pytest_lsp.ClientServerConfig(
        server_command=[sys.executable, "-m", "aliaslint", "server", "--log-level", "info"])
    client = await config.start()
    # The server asks to watch the configuration files.
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
    if configuration is not None:
        client.set_configuration(configuration, section="aliaslint")
    try:
        result = await client.initialize_session(types.InitializeParams(
            capabilities=caps or capabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(folder.as_uri(), folder.name)
                               for folder in folders or [root]],
            initialization_options=options,
        ))
        client.server_result = result  # type: ignore[attr-defined]
        yield client
    finally:
        # shutdown + exit even when the test failed: a server left running blocks stop().
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 20)
        await asyncio.wait_for(client.stop(), 20)


async def published(client, uri: str, codes: list[str],
                    timeout: float = 20) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once the server has published these codes (in order):
    tests wait for a state, not for the next message, which may be an earlier one's."""
    async with asyncio.timeout(timeout):
        while uri not in client.diagnostics or [
                d.code for d in client.diagnostics[uri]] != codes:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def open_text(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


@pytest.mark.asyncio
async def test_push_diagnostics_actions_hover_and_edits(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()
    async with session(tmp_path) as client:
        capabilities_ = client.server_result.capabilities
        assert capabilities_.position_encoding == types.PositionEncodingKind.Utf16
        assert "source.fixAll.aliaslint" in capabilities_.code_action_provider.code_action_kinds

        open_text(client, uri, SOURCE)
        found = await published(client, uri, ["AL401", "AL102"])
        assert [d.code for d in found] == ["AL401", "AL102"]
        al401, al102 = found
        assert al401.range.start == types.Position(4, AL401_START["utf-16"])
        assert al401.severity == types.DiagnosticSeverity.Error
        assert al401.source == "aliaslint"
        assert al401.code_description.href == rule_url("AL401")
        related = al102.related_information
        assert [r.location.range.start.line for r in related] == [5]
        assert related[0].location.uri == uri and related[0].message

        # A suppression for the finding under the cursor, and fix-all (no fixes yet: no edits).
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), al401.range,
            types.CodeActionContext(diagnostics=[al401])))
        titles = [a.title for a in actions]
        assert "Suppress AL401 with `# noqa: AL401`" in titles
        assert not any("AL102" in title for title in titles)
        noqa = next(a for a in actions if a.title.startswith("Suppress"))
        (edit,) = noqa.edit.changes[uri]
        assert edit.new_text == "  # noqa: AL401"
        assert edit.range.start == types.Position(4, len('s = "😀é"; same = id(a) == id(b)'
                                                         .encode("utf-16-le")) // 2)
        # No safe fix in the file: no fix-all action that would edit nothing.
        assert not any(a.kind == "source.fixAll.aliaslint" for a in actions)

        hover = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(6, 2)))
        assert hover.contents.value.startswith("# AL102 inplace-on-leaf")
        assert await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(0, 0))) is None

        # The unsaved buffer is checked: apply the suppression, then fix the leaf write.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))
        await published(client, uri, ["AL102"])

        client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        await published(client, uri, [])


@pytest.mark.asyncio
async def test_fix_all_is_offered_only_where_it_edits(tmp_path):
    uri = (tmp_path / "ptr.py").as_uri()
    source = SOURCE + "p = a.storage().data_ptr()\n"
    async with session(tmp_path) as client:
        open_text(client, uri, source)
        found = await published(client, uri, ["AL401", "AL102", "AL404"])
        everywhere = types.Range(types.Position(0, 0), types.Position(8, 0))
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), everywhere,
            types.CodeActionContext(diagnostics=found,
                                    only=[types.CodeActionKind.SourceFixAll])))
        # AL404's fix is safe (AL401's is not): the one edit fix-all applies.
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.aliaslint"
        (edit,) = fix_all.edit.changes[uri]
        assert (edit.range, edit.new_text) == (
            types.Range(types.Position(7, 6), types.Position(7, 13)), "untyped_storage")


@pytest.mark.asyncio
@pytest.mark.parametrize("encoding", ["utf-8", "utf-32"])
async def test_position_encoding_is_negotiated(tmp_path, encoding):
    uri = (tmp_path / "enc.py").as_uri()
    async with session(tmp_path, capabilities(encodings=[encoding, "utf-16"])) as client:
        assert client.server_result.capabilities.position_encoding == encoding
        open_text(client, uri, SOURCE)
        al401 = (await published(client, uri, ["AL401", "AL102"]))[0]
        assert al401.range.start == types.Position(4, AL401_START[encoding])


@pytest.mark.asyncio
async def test_rows_break_where_python_breaks_them_through_edits(tmp_path):
    """A lone CR ends a row, a form feed in a comment does not: the finding, its quick fix
    and the buffer the server keeps after the edit all agree with the editor's rows."""
    uri = (tmp_path / "page.py").as_uri()
    text = ("import torch\r# the step \f (a page break)\rw = torch.randn(3, requires_grad=True)\r"
            "y = w.sigmoid()\r\fy.mul_(2)\ry.sum().backward()\r")
    async with session(tmp_path) as client:
        open_text(client, uri, text)
        (al101,) = await published(client, uri, ["AL101"])
        assert al101.range == types.Range(types.Position(4, 1), types.Position(4, 10))
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), al101.range,
            types.CodeActionContext(diagnostics=[al101])))
        fix = next(a for a in actions if "AL101, unsafe" in a.title)
        (edit,) = fix.edit.changes[uri]
        assert (edit.range, edit.new_text) == (al101.range, "y = y.mul(2)")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))
        await published(client, uri, [])
        # The buffer is the editor's: the edit landed on row 4, nowhere else.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(4, 1), types.Position(4, 13)),
                text="y.mul_(2)")]))
        await published(client, uri, ["AL101"])


@pytest.mark.asyncio
async def test_pull_diagnostics_untitled_and_a_crash_free_bad_buffer(tmp_path):
    async with session(tmp_path, capabilities(pull=True)) as client:
        assert client.server_result.capabilities.diagnostic_provider is not None
        uri = "untitled:Untitled-1"
        open_text(client, uri, SOURCE)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        assert [d.code for d in report.items] == ["AL401", "AL102"]
        assert client.diagnostics == {}  # a pulling client is never pushed the same findings

        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text="import torch\nx = (\n")]))
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        assert [d.code for d in report.items] == ["AL902"]  # a syntax error, not a crash

        # The server is still there and still right.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangeWholeDocument(text=SOURCE)]))
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        assert len(report.items) == 2


@pytest.mark.asyncio
async def test_pull_result_ids_and_workspace_diagnostics(tmp_path):
    async with session(tmp_path, capabilities(pull=True)) as client:
        assert client.server_result.capabilities.diagnostic_provider.workspace_diagnostics
        uri = (tmp_path / "m.py").as_uri()
        open_text(client, uri, SOURCE)
        first = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        assert first.kind == "full" and first.result_id
        again = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            types.TextDocumentIdentifier(uri), previous_result_id=first.result_id))
        assert again.kind == "unchanged" and again.result_id == first.result_id

        # An edit that changes no finding keeps the id; one that does, changes it.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=SOURCE + "\n# note\n")]))
        same = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            types.TextDocumentIdentifier(uri), previous_result_id=first.result_id))
        assert same.kind == "unchanged"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangeWholeDocument(text="import torch\n")]))
        changed = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            types.TextDocumentIdentifier(uri), previous_result_id=first.result_id))
        assert changed.kind == "full" and not changed.items
        assert changed.result_id != first.result_id

        other = "untitled:Untitled-2"
        open_text(client, other, SOURCE)
        report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
            previous_result_ids=[types.PreviousResultId(uri, changed.result_id)]))
        kinds = {item.uri: (item.kind, len(getattr(item, "items", []))) for item in report.items}
        assert kinds == {uri: ("unchanged", 0), other: ("full", 2)}


@pytest.mark.asyncio
async def test_each_workspace_folder_has_its_client_settings(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
    caps = capabilities(configuration=True)
    async with session(tmp_path, caps, configuration={"ignore": ["AL102"]},
                       folders=[one, two]) as client:
        client.set_configuration({"ignore": ["AL401"]}, section="aliaslint",
                                 scope_uri=two.as_uri())
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(None))
        open_text(client, (one / "m.py").as_uri(), SOURCE)
        open_text(client, (two / "m.py").as_uri(), SOURCE)
        assert [d.code for d in await published(client, (one / "m.py").as_uri(),
                                                ["AL401"])] == ["AL401"]
        assert [d.code for d in await published(client, (two / "m.py").as_uri(),
                                                ["AL102"])] == ["AL102"]


@pytest.mark.asyncio
async def test_project_config_client_settings_and_reload(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.aliaslint]\nignore = ["AL102"]\n', encoding="utf-8")
    path = tmp_path / "pkg" / "mod.py"
    path.parent.mkdir()
    uri = path.as_uri()
    async with session(tmp_path, capabilities(configuration=True, watch=True),
                       options={"settings": {"ignore": "AL2,AL3", "fixOnSave": True}},
                       configuration={"confidence": "high"}) as client:
        open_text(client, uri, SOURCE)
        await published(client, uri, ["AL401"])  # the config file ignores AL102

        # The config changes on disk: the watched-files notification reloads it.
        config.write_text('[tool.aliaslint]\nignore = ["AL401"]\n', encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            [types.FileEvent(config.as_uri(), types.FileChangeType.Changed)]))
        await published(client, uri, ["AL102"])

        # Client settings apply on top of every config file, like command-line options.
        client.set_configuration({"ignore": ["AL1"]}, section="aliaslint")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(None))
        await published(client, uri, [])

        # A bad setting is a message to the user, not a dead server.
        client.set_configuration({"ignore": ["AL1"], "confidence": "sometimes"},
                                 section="aliaslint")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(None))
        async with asyncio.timeout(20):
            while not any("confidence" in m.message for m in client.messages):
                await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        client.diagnostics.pop(uri)
        await published(client, uri, [])  # still serving, with the good settings kept


def notebook_cells(*sources: tuple[str, str]) -> tuple[list, list]:
    cells, documents = [], []
    for number, (kind, text) in enumerate(sources, start=1):
        uri = f"vscode-notebook-cell:/nb.ipynb#cell{number}"
        code = kind == "code"
        cells.append(types.NotebookCell(
            kind=types.NotebookCellKind.Code if code else types.NotebookCellKind.Markup,
            document=uri))
        documents.append(types.TextDocumentItem(
            uri=uri, language_id="python" if code else "markdown", version=1, text=text))
    return cells, documents


@pytest.mark.asyncio
async def test_notebook_cells_are_one_module(tmp_path):
    path = tmp_path / "explore.ipynb"
    cells, documents = notebook_cells(
        ("code", "import torch\nw = torch.ones(3, requires_grad=True)"),
        ("markdown", "# then write it"),
        ("code", "%time x = 1\nw.add_(1)\n"),
    )
    async with session(tmp_path) as client:
        client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            types.NotebookDocument(uri=path.as_uri(), notebook_type="jupyter-notebook",
                                   version=1, cells=cells),
            documents))
        (al102,) = await published(client, documents[2].uri, ["AL102"])
        assert al102.code == "AL102" and al102.range.start == types.Position(1, 0)
        (related,) = al102.related_information
        assert related.location.uri == documents[0].uri  # the leaf was made in cell 1
        assert related.location.range.start.line == 1
        assert list(client.diagnostics[documents[0].uri]) == []

        hover = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(documents[2].uri), types.Position(1, 1)))
        assert "AL102" in hover.contents.value

        # Cell 1 now builds w without grad: the finding in cell 3 goes.
        client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            types.VersionedNotebookDocumentIdentifier(version=2, uri=path.as_uri()),
            types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                text_content=[types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=documents[0].uri, version=2),
                    changes=[types.TextDocumentContentChangeWholeDocument(
                        "import torch\nw = torch.ones(3)\n")])]))))
        await published(client, documents[2].uri, [])


def test_missing_dependencies_are_explained(monkeypatch, capsys):
    from aliaslint import cli

    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.setitem(sys.modules, "aliaslint.server.lsp", None)
    assert cli.main(["server"]) == 2
    assert "pip install 'aliaslint[server]'" in capsys.readouterr().err


def test_check_does_not_import_the_server(tmp_path):
    import subprocess

    code = ("import sys; from aliaslint import cli; cli.main(['check', '--no-cache', "
            f"{json.dumps(str(tmp_path))}]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pygls', 'lsprotocol', 'cattrs') or m.startswith('aliaslint.server')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    assert result.stdout.strip().splitlines()[-1] == "[]"
