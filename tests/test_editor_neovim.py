"""Headless Neovim 0.7 with the `init.lua` docs/editors.md prints for it, against this checkout's
`aliaslint server`: the diagnostic arrives, its quick fix edits the buffer as `check --fix`
edits the file, and the diagnostic goes away."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """\
import torch

x = torch.randn(2, 3, 4)
y = x.transpose(1, 2)
z = y.view(2, 12)
"""

# Run after init.lua and after the file on the command line is loaded (its FileType autocmd
# has started the server). Every wait has a timeout; any error ends Neovim with exit code 1.
DRIVER = r"""
local out = vim.env.ALIASLINT_E2E_OUT
local function dump(name, value)
  local file = assert(io.open(out .. "/" .. name .. ".json", "w"))
  file:write(vim.fn.json_encode(value))
  file:close()
end

local started = vim.fn.reltime()

local function run()
  local buf = vim.api.nvim_get_current_buf()
  dump("start", { filetype = vim.bo[buf].filetype })
  local arrived = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
  assert(arrived, "no diagnostics within 60 s")
  dump("arrived", { seconds = vim.fn.reltimefloat(vim.fn.reltime(started)) })
  local found = vim.diagnostic.get(buf)
  dump("diagnostics", found)

  local diagnostic = found[1]
  local client = vim.lsp.get_active_clients()[1]
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    range = {
      start = { line = diagnostic.lnum, character = diagnostic.col },
      ["end"] = { line = diagnostic.end_lnum, character = diagnostic.end_col },
    },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, diagnostic.lnum) },
  }
  local replies, err = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000)
  assert(replies, "textDocument/codeAction: " .. tostring(err))
  local reply = replies[client.id]
  assert(reply and not reply.error, "textDocument/codeAction: " .. vim.inspect(reply))
  dump("actions", reply.result)

  local fix
  for _, action in ipairs(reply.result) do
    if action.kind == "quickfix" and not action.title:match("^Suppress") then
      fix = fix or action
    end
  end
  assert(fix, "no quick fix besides the suppression")
  if fix.edit then
    vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
  end
  if fix.command then
    local command = type(fix.command) == "table" and fix.command or fix
    local done = vim.lsp.buf_request_sync(buf, "workspace/executeCommand",
      { command = command.command, arguments = command.arguments }, 10000)
    assert(done, "workspace/executeCommand timed out")
  end
  dump("lines", vim.api.nvim_buf_get_lines(buf, 0, -1, true))
  vim.cmd("write")

  -- The edit reaches the server as a didChange; the fixed text has nothing to report.
  local cleared = vim.wait(10000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
  dump("after", { cleared = cleared, diagnostics = vim.diagnostic.get(buf) })

  -- A second Python buffer joins the same server.
  vim.cmd("edit other.py")
  local other = vim.api.nvim_get_current_buf()
  dump("other", { joined = vim.lsp.buf_is_attached(other, client.id),
                  clients = #vim.lsp.get_active_clients(),
                  first = vim.lsp.buf_is_attached(buf, client.id) })
end

local ok, message = xpcall(run, debug.traceback)
if not ok then
  dump("error", message)
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
"""


def neovim_snippet() -> str:
    """The `init.lua` docs/editors.md prints for Neovim 0.7."""
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    section = text.split("\n## Neovim\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^Neovim 0\.7\b.*?```lua\n(.*?)```", section, re.DOTALL | re.MULTILINE)
    assert match is not None, "docs/editors.md has no Neovim 0.7 snippet"
    return match.group(1)


def test_the_snippet_starts_the_documented_command():
    snippet = neovim_snippet()
    assert 'cmd = { "aliaslint", "server" }' in snippet
    assert "vim.lsp.start_client" in snippet and "vim.lsp.buf_attach_client" in snippet


def _fixed_by_the_cli(tmp_path: Path) -> str:
    work = tmp_path / "cli"
    work.mkdir()
    (work / "train.py").write_text(SOURCE, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "aliaslint", "check", "--fix", "train.py"], cwd=work,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=120)
    return (work / "train.py").read_text(encoding="utf-8")


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


@pytest.mark.slow
def test_neovim_gets_the_diagnostic_and_applies_the_quick_fix(tmp_path):
    nvim = shutil.which("nvim")
    assert nvim is not None, "nvim is not installed (.ci/run installs Debian's neovim package)"
    expected = _fixed_by_the_cli(tmp_path)
    assert expected != SOURCE

    # The snippet starts plain `aliaslint`: put this checkout's, run by this interpreter, first
    # on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "aliaslint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m aliaslint "$@"\n')
    shim.chmod(0o755)
    home = tmp_path / "home"
    out = tmp_path / "out"
    out.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SOURCE, encoding="utf-8")
    (project / "other.py").write_text("import torch\n", encoding="utf-8")
    (tmp_path / "init.lua").write_text(neovim_snippet(), encoding="utf-8")
    (tmp_path / "driver.lua").write_text(DRIVER, encoding="utf-8")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "HOME": str(home), "ALIASLINT_E2E_OUT": str(out),
           **{f"XDG_{kind}_HOME": str(home / kind.lower())
              for kind in ("CONFIG", "DATA", "STATE", "CACHE")}}

    started = time.monotonic()
    try:
        result = subprocess.run(
            [nvim, "--headless", "--clean", "-u", str(tmp_path / "init.lua"),
             "--cmd", "lua vim.lsp.set_log_level('debug')",
             # 0.7's ftplugin/python.vim looks for a Python provider (2 s); nothing needs one.
             "--cmd", "let g:loaded_python3_provider = 0",
             "-c", f"luafile {tmp_path / 'driver.lua'}", "train.py"],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120)
    except subprocess.TimeoutExpired as timeout:
        result = subprocess.CompletedProcess(timeout.cmd, "timed out", _text(timeout.stdout),
                                             _text(timeout.stderr))
    elapsed = time.monotonic() - started

    def read(name):
        path = out / f"{name}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    logs = "\n".join(path.read_text(encoding="utf-8", errors="replace")[-6000:]
                     for path in home.rglob("lsp.log"))
    context = (f"exit {result.returncode} after {elapsed:.1f} s\nerror: {read('error')}\n"
               f"start: {read('start')}\ndiagnostics after: {read('arrived')}\n"
               f"stdout: {result.stdout[-3000:]}\n"
               f"stderr: {result.stderr[-3000:]}\nlsp.log:\n{logs}")
    assert result.returncode == 0 and read("error") is None, context

    diagnostics = read("diagnostics")
    assert [(d["code"], d["lnum"], d["source"]) for d in diagnostics] == \
        [("AL202", 4, "aliaslint")], context
    actions = read("actions")
    titles = [action["title"] for action in actions]
    assert "Suppress AL202 with `# noqa: AL202`" in titles, context
    assert "\n".join(read("lines")) + "\n" == expected, context
    assert (project / "train.py").read_text(encoding="utf-8") == expected, context
    after = read("after")
    assert after["cleared"], (after, context)
    assert read("other") == {"joined": True, "clients": 1, "first": True}, context
