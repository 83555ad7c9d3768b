"""`aliaslint server` under hostile input: special files, huge files, malformed requests and
requests after `shutdown` each get an answer, and the server keeps serving (or exits)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import attrs
import pytest

pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402

from test_server import SOURCE, capabilities, open_text, published, session  # noqa: E402

INVALID_REQUEST, INVALID_PARAMS = -32600, -32602
# Long enough for a slow, shared machine; a server that blocks never answers at all.
ANSWER = 30


def special_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Files the server must not read, and what its AL902 finding says about each."""
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.py"
    folder.mkdir()
    huge = tmp_path / "huge.py"
    huge.write_text("import torch\n" + "x = torch.ones(3)\n" * 500)  # 9,013 bytes
    return {
        "fifo": (fifo, "not a regular file (a FIFO): only regular files are read"),
        "device": (Path("/dev/zero"), "not a regular file (a character device)"),
        "directory": (folder, "not a regular file (a directory)"),
        "huge": (huge, "file is 9,013 bytes, over the 4,096-byte limit (raise `max-file-size`"),
    }


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")
@pytest.mark.asyncio
async def test_special_files_are_reported_never_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.aliaslint]\nmax-file-size = 4096\n")
    files = special_files(tmp_path)
    everywhere = types.Range(types.Position(0, 0), types.Position(0, 0))
    async with session(tmp_path, capabilities(pull=True)) as client:
        for name, (path, message) in files.items():
            uri = path.as_uri()
            document = types.TextDocumentIdentifier(uri)
            # A save of a document that is not open: nothing to answer, but it must not block.
            client.text_document_did_save(types.DidSaveTextDocumentParams(document))
            report = await asyncio.wait_for(client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(document)), ANSWER)
            (item,) = report.items
            assert (item.code, item.range.start) == ("AL902", types.Position(0, 0)), name
            assert item.message.startswith(message), (name, item.message)
            actions = await asyncio.wait_for(client.text_document_code_action_async(
                types.CodeActionParams(document, everywhere,
                                       types.CodeActionContext(diagnostics=[item]))), ANSWER)
            assert [a.title for a in actions] == ["Suppress AL902 with `# noqa: AL902`"], name

        # The server still serves: an open document is checked as before.
        uri = (tmp_path / "train.py").as_uri()
        open_text(client, uri, SOURCE)
        report = await asyncio.wait_for(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), ANSWER)
        assert [d.code for d in report.items] == ["AL401", "AL102"]


@pytest.mark.asyncio
async def test_a_file_on_disk_that_is_not_open_is_checked_once_read(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    async with session(tmp_path) as client:
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier(path.as_uri())))
        found = await published(client, path.as_uri(), ["AL401", "AL102"])
        assert found[0].range.start == types.Position(4, 18)


def code_action(uri: str, start: tuple[int, int], end: tuple[int, int]
                ) -> types.CodeActionParams:
    """Parameters as given, unchecked: the client's types would refuse a negative line."""
    with attrs.validators.disabled():
        return types.CodeActionParams(
            types.TextDocumentIdentifier(uri),
            types.Range(types.Position(*start), types.Position(*end)),
            types.CodeActionContext(diagnostics=[]))


async def error_code(request) -> int:
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(request, ANSWER)
    return raised.value.code


@pytest.mark.asyncio
async def test_malformed_requests_are_answered_invalid_params(tmp_path):
    uri = (tmp_path / "train.py").as_uri()
    async with session(tmp_path) as client:
        open_text(client, uri, SOURCE)  # 8 lines: 0 to 7, the last one empty
        await published(client, uri, ["AL401", "AL102"])
        send = client.text_document_code_action_async
        for start, end in [((-1, 0), (0, 0)),   # does not validate: a line is unsigned
                           ((0, 0), (8, 0)),    # past the end
                           ((99, 0), (99, 5)),
                           ((4, 5), (4, 0))]:   # ends before it starts
            assert await error_code(send(code_action(uri, start, end))) == INVALID_PARAMS
        assert await error_code(client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(8, 0)))) == INVALID_PARAMS

        # A character past the end of a line means its end (the protocol says so); the
        # requests above changed nothing.
        actions = await asyncio.wait_for(send(code_action(uri, (4, 0), (7, 999))), ANSWER)
        assert "Suppress AL401 with `# noqa: AL401`" in [a.title for a in actions]


@pytest.mark.asyncio
async def test_requests_after_shutdown_are_invalid_and_exit_still_ends_it(tmp_path):
    uri = (tmp_path / "train.py").as_uri()
    async with session(tmp_path) as client:
        open_text(client, uri, SOURCE)
        await published(client, uri, ["AL401", "AL102"])
        assert await asyncio.wait_for(client.shutdown_async(None), ANSWER) is None
        assert await error_code(client.shutdown_async(None)) == INVALID_REQUEST
        assert await error_code(client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(4, 20)))) == INVALID_REQUEST
        assert await error_code(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))) \
            == INVALID_REQUEST
        client.exit(None)
        server = client._server
        assert await asyncio.wait_for(server.wait(), ANSWER) == 0


@pytest.mark.asyncio
async def test_a_document_over_the_limits_is_stopped_and_the_server_goes_on(tmp_path):
    # About ten seconds of parsing and analysis: over the budget, and with the budget
    # raised, over the file timeout (its worker process is ended and replaced).  The write
    # at the end makes it a file a rule may fire in (one that cannot is not parsed at all).
    slow = "import torch\n" + "x = torch.ones(3)\ny = x.sigmoid()\n" * 15_000 + "x.add_(1)\n"
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "pyproject.toml").write_text(
        "[tool.aliaslint]\nfile-timeout = 2\nparse-budget = 100_000_000\n")
    async with session(tmp_path, capabilities(pull=True)) as client:
        for name, message in [
                ("gen.py", "too costly to parse within the `parse-budget` per file: the file "
                           "is too large"),
                ("big/gen.py", "not checked within the `file-timeout` of 2 s per file (raise "
                               "it to check this file)")]:
            uri = (tmp_path / name).as_uri()
            open_text(client, uri, slow)
            report = await asyncio.wait_for(client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), ANSWER)
            (item,) = report.items
            assert item.code == "AL902" and item.message.startswith(message), item.message
        uri = (tmp_path / "train.py").as_uri()
        open_text(client, uri, SOURCE)
        report = await asyncio.wait_for(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), ANSWER)
        assert [d.code for d in report.items] == ["AL401", "AL102"]
