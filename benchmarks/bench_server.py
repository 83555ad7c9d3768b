"""The language server's re-check after an edit, and `check` on one small file as a fresh process.

    python benchmarks/bench_server.py [--lines 500] [--edits 30] [--no-stdio] [--fresh-only]

Three figures, each the median over the edits (CPU seconds unless marked wall):

* in-process: what the server does when a buffer changed: check the text with the
  document's settings and turn the findings into LSP diagnostics (``check_buffer`` with the
  document's ``StatementCache``, as the server's worker process runs it, and ``Converter.entries``), timed with ``time.process_time`` after a warm-up; the ratio to
  ``libcst.parse_module`` of the same text is the figure to compare across machines;
* over stdio: ``aliaslint server`` in a child process driven by pygls' client: one
  ``didChange`` at a time, waiting for its ``publishDiagnostics``; the server's own CPU time
  per re-check (from /proc, Linux only) and the wall time minus the debounce delay;
* fresh process: ``aliaslint check --no-cache`` on a 5-line file, as pre-commit runs it
  (wall time and the child's CPU time), the median of ``--runs`` runs (21), each paired
  with ``python -c "import libcst"`` and the median difference of the pairs.

The buffer is a synthetic training script: blocks of ~25 lines, each with an AL102, an
AL401 and an AL201 finding, repeated to the requested length; each edit changes a literal
in one block, so every re-check sees new text.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK = '''\
def step_{i}(model, batch, optimizer):
    inputs = batch["inputs"]
    targets = batch["targets"]
    hidden = model(inputs)
    scores = hidden.softmax(dim=-1)
    loss = torch.nn.functional.cross_entropy(scores, targets)
    scale = torch.ones(3, requires_grad=True)
    scale.mul_({value})
    a = torch.zeros(4, 4)
    b = a.t()
    if id(a) == id(b):
        print("same tensor")
    row = a[0]
    row.add_(1)
    total = a.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history = []
    for epoch in range(3):
        history.append(loss.item())
    stats = {{"loss": loss.item(), "total": total.item()}}
    print(stats, history)
    return loss


'''

SMALL = "import torch\n\nx = torch.ones(3)\ny = x.t()\nsame = id(x) == id(y)\n"


def buffer(lines: int, edit: int = 0) -> str:
    blocks = max(1, lines // BLOCK.count("\n"))
    return "import torch\n\n\n" + "".join(
        BLOCK.format(i=i, value=2 + (edit if i == edit % blocks else 0)) for i in range(blocks))


def in_process(lines: int, edits: int) -> dict:
    import libcst

    from aliaslint.engine import check_buffer
    from aliaslint.incremental import StatementCache
    from aliaslint.server.convert import Converter, Text
    from aliaslint.server.workspace import Workspace

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.py"
        workspace, converter = Workspace([Path(folder)]), Converter()
        statements = StatementCache()  # as the server keeps one per open document

        def recheck(text: str) -> int:  # what the server's worker process does
            settings = workspace.settings_for(path, True)
            findings = check_buffer(text, path, str(path), settings, statements=statements)
            return len(converter.entries(findings, Text.of(path.as_uri(), text)))

        found = recheck(buffer(lines))  # warm-up: imports, the rule registry, op tables
        checks, parses = [], []
        for edit in range(1, edits + 1):
            text = buffer(lines, edit)
            start = time.process_time()
            recheck(text)
            checks.append(time.process_time() - start)
            start = time.process_time()
            libcst.parse_module(text)
            parses.append(time.process_time() - start)
    check, parse = statistics.median(checks), statistics.median(parses)
    return {"findings": found, "check": check, "parse": parse, "p90": _p90(checks)}


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, from /proc (None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def over_stdio(lines: int, edits: int) -> dict:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    from aliaslint.server.lsp import DEBOUNCE

    client = LanguageClient("bench", "1")
    published: asyncio.Queue = asyncio.Queue()
    client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(
        lambda params: published.put_nowait(params))
    await client.start_io(sys.executable, "-m", "aliaslint", "server")
    server = client._server
    assert server is not None
    with tempfile.TemporaryDirectory() as folder:
        uri = (Path(folder) / "train.py").as_uri()
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=Path(folder).as_uri()))
        client.initialized(types.InitializedParams())
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id="python", version=0, text=buffer(lines))))
        await published.get()
        walls, cpus = [], []
        for edit in range(1, edits + 1):
            cpu = _cpu_seconds(server.pid)
            start = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=edit),
                [types.TextDocumentContentChangeWholeDocument(text=buffer(lines, edit))]))
            await published.get()
            walls.append(time.perf_counter() - start - DEBOUNCE)
            after = _cpu_seconds(server.pid)
            if cpu is not None and after is not None:
                cpus.append(after - cpu)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return {"wall": statistics.median(walls),
            "cpu": statistics.median(cpus) if cpus else None}


def fresh_process(runs: int = 21) -> dict:
    """The check of one small file as a fresh process, each run paired with a fresh
    ``python -c "import libcst"`` (the target is that import plus 0.15 s): medians of the
    check's wall and CPU time and of the difference of each pair's."""
    walls, cpus, reference, over = [], [], [], []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "small.py"
        path.write_text(SMALL, encoding="utf-8")

        def run(*command: str) -> tuple[float, float]:
            before = os.times()
            start = time.perf_counter()
            subprocess.run([sys.executable, *command], cwd=folder, capture_output=True,
                           check=False)
            wall = time.perf_counter() - start
            after = os.times()
            return wall, (after.children_user + after.children_system
                          - before.children_user - before.children_system)

        for _ in range(runs):
            wall, cpu = run("-m", "aliaslint", "check", "--no-cache", str(path))
            walls.append(wall)
            cpus.append(cpu)
            reference.append(run("-c", "import libcst")[0])
            over.append(wall - reference[-1])
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus),
            "libcst": statistics.median(reference), "over": statistics.median(over)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--runs", type=int, default=21,
                        help="fresh processes for the one-small-file figure")
    parser.add_argument("--no-stdio", action="store_true",
                        help="skip the measurement over stdio (it needs the server extra)")
    parser.add_argument("--fresh-only", action="store_true",
                        help="only the one-small-file figure")
    args = parser.parse_args()
    if args.fresh_only:
        _print_fresh(fresh_process(args.runs), args.runs)
        return
    text = buffer(args.lines)
    print(f"buffer: {text.count(chr(10))} lines, {args.edits} edits")
    result = in_process(args.lines, args.edits)
    print(f"in-process re-check: {result['check'] * 1e3:.1f} ms CPU median "
          f"(p90 {result['p90'] * 1e3:.1f} ms), {result['findings']} findings; "
          f"libcst.parse_module alone {result['parse'] * 1e3:.1f} ms "
          f"(re-check = {result['check'] / result['parse']:.2f}x parse)")
    if not args.no_stdio:
        stdio = asyncio.run(over_stdio(args.lines, args.edits))
        cpu = f"{stdio['cpu'] * 1e3:.0f} ms server CPU" if stdio["cpu"] is not None else "n/a"
        print(f"over stdio: {cpu} median per re-check; {stdio['wall'] * 1e3:.0f} ms wall "
              "from didChange to publishDiagnostics, less the debounce delay")
    _print_fresh(fresh_process(args.runs), args.runs)


def _print_fresh(fresh: dict, runs: int) -> None:
    print(f"fresh process, `aliaslint check --no-cache` on a 5-line file: "
          f"{fresh['wall']:.3f} s wall, {fresh['cpu']:.3f} s CPU (median of {runs}); "
          f"`python -c 'import libcst'` {fresh['libcst']:.3f} s wall; the check takes "
          f"{fresh['over']:.3f} s more (median of the pairs)")


if __name__ == "__main__":
    main()
