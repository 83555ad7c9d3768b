"""`aliaslint server` checks each open file with the other files of its workspace folder, read
from the editor's buffers where they are open: a helper in `utils.py` edited to write its
argument in place makes the finding appear at the write, and the edit that undoes it (or a
caller that stops calling it) makes it disappear, without a save."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from aliaslint.config import Resolver
from aliaslint.engine import decode, source_roots
from aliaslint.project import Link, Loader, Program, digest_of
from aliaslint.server.workspace import Workspace
from test_program import HELPER, STEP, WRITE_ROW

# The helper before the edit that makes it write in place: it returns a new tensor.
OUT_OF_PLACE = HELPER.replace("t.mul_(2)", "return t.mul(2)")
TRAIN = STEP.format(imports="from utils import rescale", call="rescale")
# The training step once it no longer calls the helper.
TRAIN_WITHOUT = TRAIN.replace("    rescale(y)\n", "    y = y * 2\n")


def _project(root: Path) -> tuple[Path, Path]:
    utils, train = root / "utils.py", root / "train.py"
    utils.write_text(OUT_OF_PLACE)
    train.write_text(TRAIN)
    return utils, train


def _decoded(data: bytes) -> str | None:
    text = decode(data, "")
    return text if isinstance(text, str) else None


def test_the_loader_reads_an_open_buffer_instead_of_the_file(tmp_path):
    utils, train = _project(tmp_path)
    resolver = Resolver(cwd=tmp_path)
    program = Program.of([train, utils], source_roots(resolver))
    assert program is not None
    loader = Loader(program, 10**9, _decoded)
    on_disk = loader.tree(str(utils))
    assert on_disk[1] == OUT_OF_PLACE
    loader.overlay = {str(utils): HELPER}
    module, text, digest = loader.tree(str(utils))
    # The buffer's text, keyed by its own digest: the tree of the file is not reused.
    assert module is not None and text == HELPER and module.code == HELPER
    assert digest == hashlib.blake2b(HELPER.encode(), digest_size=16).hexdigest() != on_disk[2]
    link = Link(program, loader, str(train))
    link.tree(str(utils))
    assert link.used == {str(utils): digest}
    # What the result depends on is the buffer's code, not the file's.
    assert link.dependencies() == {("code", str(utils)): digest_of(str(utils), "code",
                                                                   HELPER.encode())}
    assert digest_of(str(utils), "code", HELPER.encode()) != digest_of(str(utils), "code")
    loader.overlay = {}
    assert loader.tree(str(utils))[1:] == on_disk[1:]


def test_a_dependent_is_checked_with_the_unsaved_buffer(tmp_path):
    utils, train = _project(tmp_path)
    buffers: dict[str, str] = {}
    workspace = Workspace([tmp_path], buffers=lambda: buffers)
    try:
        def found() -> list[tuple[str, str, int]]:
            checked = workspace.checked(TRAIN, train, True, "train")
            assert checked.used == {str(utils)}
            return [(d.code, Path(d.filename).name, d.location.row)
                    for d in checked.diagnostics]

        assert found() == []
        buffers[str(utils)] = HELPER  # edited in the editor, not saved
        assert found() == [("AL101", "utils.py", WRITE_ROW)]
        assert utils.read_text() == OUT_OF_PLACE
        # `check` gives the checked file's own findings only.
        assert workspace.check(TRAIN, train, True, "train") == []
        buffers.clear()  # closed without saving: the file on disk again
        assert found() == []
    finally:
        workspace.close()


def test_a_file_created_after_the_program_was_built_joins_it(tmp_path):
    utils, train = _project(tmp_path)
    utils.write_text(HELPER)
    workspace = Workspace([tmp_path])
    try:
        assert workspace.program_for(train) is not None
        other = tmp_path / "eval.py"
        other.write_text(TRAIN)
        # Not in the program built before it existed: built again when it is checked.
        checked = workspace.checked(TRAIN, other, True)
        assert [(d.code, Path(d.filename).name) for d in checked.diagnostics] == [
            ("AL101", "utils.py")]
        # A file outside every folder has no program.
        assert workspace.program_for(tmp_path.parent / "elsewhere.py") is None
    finally:
        workspace.close()


pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402

from test_server import capabilities, open_text, published, session  # noqa: E402


def _replace(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.asyncio
async def test_editing_a_helper_shows_and_hides_the_finding_its_caller_makes(tmp_path):
    utils, train = _project(tmp_path)
    helper, step = utils.as_uri(), train.as_uri()
    async with session(tmp_path) as client:
        open_text(client, helper, OUT_OF_PLACE)
        open_text(client, step, TRAIN)
        await published(client, helper, [])
        await published(client, step, [])

        # The helper now scales in place what the step saved for backward: the write, in
        # utils.py, is reported by the check of train.py.
        _replace(client, helper, 2, HELPER)
        (al101,) = await published(client, helper, ["AL101"])
        assert al101.range.start == types.Position(WRITE_ROW - 1, 4)
        assert "sigmoid" in al101.message
        # Where the step saves it, calls the helper and runs backward: in train.py.
        assert [(r.location.uri, r.location.range.start.line)
                for r in al101.related_information or []] == [(step, 7), (step, 9), (step, 8)]
        assert list(client.diagnostics[step]) == []
        # Its actions belong to the check of the file that calls it: none here.
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(helper), al101.range,
            types.CodeActionContext(diagnostics=[al101])))
        assert not actions

        _replace(client, helper, 3, OUT_OF_PLACE)  # undone
        await published(client, helper, [])

        _replace(client, helper, 4, HELPER)
        await published(client, helper, ["AL101"])
        _replace(client, step, 2, TRAIN_WITHOUT)  # the step no longer calls it
        await published(client, helper, [])

        _replace(client, step, 3, TRAIN)
        await published(client, helper, ["AL101"])
        # Closing the caller drops what its check found elsewhere.
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(step)))
        await published(client, helper, [])


@pytest.mark.asyncio
async def test_pulled_diagnostics_hold_what_other_documents_found(tmp_path):
    utils, train = _project(tmp_path)
    helper, step = utils.as_uri(), train.as_uri()

    async def pull(uri: str) -> list[str]:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        return [(d.code, d.range.start.line) for d in report.items]

    async with session(tmp_path, capabilities(pull=True)) as client:
        open_text(client, helper, OUT_OF_PLACE)
        open_text(client, step, TRAIN)
        assert await pull(step) == []
        assert await pull(helper) == []
        _replace(client, helper, 2, HELPER)
        assert await pull(helper) == [("AL101", WRITE_ROW - 1)]
        _replace(client, helper, 3, OUT_OF_PLACE)
        assert await pull(helper) == []
        assert client.diagnostics == {}


@pytest.mark.asyncio
async def test_a_helper_created_after_its_caller_was_opened_is_followed(tmp_path):
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    step = train.as_uri()
    async with session(tmp_path) as client:
        open_text(client, step, TRAIN)
        await published(client, step, [])
        # Written by another program (the client watches no files): the folder is walked
        # again when it is opened, and the caller checked with it.
        utils = tmp_path / "utils.py"
        utils.write_text(HELPER)
        open_text(client, utils.as_uri(), HELPER)
        (al101,) = await published(client, utils.as_uri(), ["AL101"])
        assert al101.range.start.line == WRITE_ROW - 1


@pytest.mark.asyncio
async def test_watched_files_created_and_deleted_change_the_program(tmp_path):
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    utils = tmp_path / "utils.py"
    step, helper = train.as_uri(), utils.as_uri()

    def changed(kind: types.FileChangeType) -> None:
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            [types.FileEvent(uri=helper, type=kind)]))

    async with session(tmp_path, capabilities(watch=True)) as client:
        open_text(client, step, TRAIN)
        await published(client, step, [])
        utils.write_text(HELPER)
        changed(types.FileChangeType.Created)
        open_text(client, helper, HELPER)
        await published(client, helper, ["AL101"])
        # Deleted on disk (the buffer stays open): no longer a module `train.py` imports.
        utils.unlink()
        changed(types.FileChangeType.Deleted)
        await published(client, helper, [])
