"""Which torch callables real code calls, and whether the op tables cover each one.

    python benchmarks/op_coverage.py scan DIR [DIR ...] [--write]
    python benchmarks/op_coverage.py check [DIR ...]

`scan` walks the .py files under the DIRs (the benchmark corpora), resolves import aliases
(`import torch.nn.functional as F`, `from torch import nn`, `from torch.nn import Linear`, ...)
and counts every call of a public callable under `torch.`, `torch.nn.functional.` and
`torch.nn.` (tensor methods are out of reach: their receivers are not known without running the
code).  It prints each name with the files that call it and whether it is covered; `--write`
stores the counts in benchmarks/op_coverage.toml, keeping the recorded reasons.

`check` holds the names (rescanned from DIRs, or the ones stored in the toml) to the rule: each
has an entry in aliaslint's tables (`aliaslint.ops.lookup` / `aliaslint.ops.module`), is one of
the calls the engine models itself (`aliaslint.analysis.training` and friends), or has a
recorded reason in the toml's `[reasons]` (exact names) or `[patterns]` (regular expressions,
for families such as the tensor factories).  A reason recorded for a name that now has an entry
is stale and fails too.  Exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "op_coverage.toml"
sys.path.insert(0, str(HERE.parent))

from aliaslint import ops  # noqa: E402

ANALYSIS = HERE.parent / "aliaslint" / "analysis"
# The namespaces in scope: their direct members (`torch.cat`, `torch.nn.Linear`,
# `torch.nn.functional.relu`), not deeper submodules (`torch.distributed.*`).
SCOPE = re.compile(r"torch\.(nn\.(functional\.)?)?[A-Za-z]\w*")


def engine_names() -> frozenset[str]:
    """The calls the engine models by name: every `"torch..."` string literal of
    aliaslint/analysis (training.py's documented contracts, `torch.tensor`, grad modes...)."""
    names: set[str] = set()
    for path in sorted(ANALYSIS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    re.fullmatch(r"torch(\.\w+)+", node.value):
                names.add(node.value)
    return frozenset(names)


class _Calls(ast.NodeVisitor):
    """Qualified names of the torch callables one module calls."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.found: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "torch" or alias.name.startswith("torch."):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["torch"] = "torch"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "torch" or module.startswith("torch.")):
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def visit_Call(self, node: ast.Call) -> None:
        name = self._qualname(node.func)
        if name is not None:
            name = _canonical(name)
            if SCOPE.fullmatch(name) and name not in ("torch.nn.functional", "torch.nn"):
                self.found.add(name)
        self.generic_visit(node)

    def _qualname(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])


def _canonical(name: str) -> str:
    """`torch.nn.modules.linear.Linear` is `torch.nn.Linear`."""
    match = re.match(r"torch\.nn\.modules\.\w+\.(\w+)$", name)
    return f"torch.nn.{match.group(1)}" if match else name


def calls_in(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    visitor = _Calls()
    visitor.visit(tree)
    return visitor.found


def scan(directories: Iterable[Path]) -> Counter[str]:
    """How many files call each name."""
    counts: Counter[str] = Counter()
    for directory in directories:
        for path in sorted(directory.rglob("*.py")):
            try:
                counts.update(calls_in(path.read_text(errors="replace")))
            except OSError:
                continue
    return counts


def covered(name: str, engine: frozenset[str]) -> str | None:
    """How the tables or the engine cover ``name``, or None."""
    if ops.lookup(name) is not None:
        return "table"
    if ops.module(name) is not None:
        return "module table"
    if name in engine:
        return "engine"
    return None


def reason_for(name: str, data: dict) -> str | None:
    if name in data.get("reasons", {}):
        return str(data["reasons"][name])
    for pattern, reason in data.get("patterns", {}).items():
        if re.fullmatch(pattern, name):
            return str(reason)
    return None


def problems(used: dict[str, int], data: dict) -> Iterator[str]:
    engine = engine_names()
    for name in sorted(used):
        how = covered(name, engine)
        if how is None and reason_for(name, data) is None:
            yield f"{name}: used in {used[name]} files, no table entry and no recorded reason"
    for name in sorted(data.get("reasons", {})):
        if covered(name, engine) is not None:
            yield f"{name}: has a table entry now; drop its recorded reason"


def _load() -> dict:
    return tomllib.loads(DATA.read_text()) if DATA.exists() else {}


def _write(counts: Counter[str], data: dict) -> None:
    """Rewrite the `[used]` table, keeping the hand-written reasons below it."""
    text = DATA.read_text() if DATA.exists() else ""
    head, _, rest = text.partition("[used]\n")
    _, _, tail = rest.partition("\n\n")
    used = "".join(f'"{name}" = {count}\n' for name, count in sorted(counts.items()))
    DATA.write_text(f"{head}[used]\n{used}\n{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    scan_cmd = sub.add_parser("scan")
    scan_cmd.add_argument("dirs", nargs="+", type=Path)
    scan_cmd.add_argument("--write", action="store_true")
    check_cmd = sub.add_parser("check")
    check_cmd.add_argument("dirs", nargs="*", type=Path)
    args = parser.parse_args(argv)
    data = _load()
    if args.command == "scan":
        counts = scan(args.dirs)
        engine = engine_names()
        for name, count in counts.most_common():
            how = covered(name, engine) or (
                "reason: " + reason if (reason := reason_for(name, data)) else "MISSING")
            print(f"{count:6d}  {name}  {how}")
        if args.write:
            _write(counts, data)
        return 0
    used = dict(scan(args.dirs)) if args.dirs else dict(data.get("used", {}))
    found = list(problems(used, data))
    for line in found:
        print(line)
    engine = engine_names()
    kinds = Counter(covered(name, engine) or "reason" for name in used)
    print(f"{len(used)} names: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
