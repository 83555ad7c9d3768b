"""Which torch callables real code calls, and whether aliaslint accounts for each one.

    python benchmarks/op_coverage.py scan DIR [DIR ...] [--write [TOML]]
    python benchmarks/op_coverage.py check [DIR ...] [--toml TOML]

`scan` walks the .py files under the DIRs (the benchmark corpora), resolves import aliases
(`import torch.nn.functional as F`, `from torch import nn`, `from torch.nn import Linear`,
`from torch import cat`, ...) and counts every call of a name under `torch.` -- functions,
classes (`nn.Linear(...)`), context managers (`torch.no_grad()`) and bare decorators
(`@torch.no_grad`) -- with the files and the calls using it.  Tensor methods (`x.add_()`) are
out of reach: their receivers are not known without running the code.  Names are recorded as
the code spells them once aliases are resolved (`torch.nn.modules.linear.Linear` stays so),
because that is the name aliaslint's engine looks up.  `--write` stores the counts in the
`[used]` table of benchmarks/op_coverage.toml (or TOML) and keeps the rest of the file.

`check` holds each used name (the stored `[used]` names, or a fresh scan of the DIRs) to one
rule: it is accounted for by

* an entry of the op tables: `aliaslint.ops.lookup(name)` or `aliaslint.ops.module(name)`
  (or a probed legacy typed constructor);
* a name the engine models itself, imported from the engine's own sets (`ENGINE_SETS`), or
  listed in the toml's `[engine]` table when the engine tests it inline (the listed module
  must still spell it, or a dotted prefix of it, as a string);
* a recorded reason: `[reasons.<group>]` tables, each with `reason` + `names` (one reason
  shared by a family) and/or `each` (a reason per name).  The groups `missing` and
  `missing-<family>` hold the callables that do alias, write or save tensors and have no entry
  yet; their reasons, and only theirs, start with "missing: ".

It fails (exit 1, one line per problem) when a used name is not accounted for, when a reason
or an `[engine]` line is recorded for a name that now has a table entry or an engine set
(stale), when a name has two reasons, or when -- checking the stored list -- a reason names
something no corpus calls.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "op_coverage.toml"
sys.path.insert(0, str(ROOT))

# aliaslint's query side never imports torch; neither does this script.
from aliaslint import ops  # noqa: E402
from aliaslint.analysis import calls, opfacts, training  # noqa: E402

#: The engine's own sets of callables it models by name (see each module's comments).  Only
#: their `torch.` members matter here; `accelerate.*`, `copy.deepcopy` ... are not scanned.
ENGINE_SETS: dict[str, Iterable[str]] = {
    "aliaslint.analysis.training.INSTANCES": training.INSTANCES,
    "aliaslint.analysis.training.MODULE_WRAPPERS": training.MODULE_WRAPPERS,
    "aliaslint.analysis.training.MODULE_COPIES": training.MODULE_COPIES,
    "aliaslint.analysis.training.GRAD_TRANSFORMS": training.GRAD_TRANSFORMS,
    "aliaslint.analysis.training.CHECKPOINTS": training.CHECKPOINTS,
    "aliaslint.analysis.training.AUTOGRAD_FUNCTIONS": training.AUTOGRAD_FUNCTIONS,
    "aliaslint.analysis.training.SAVED_TENSORS_HOOKS": training.SAVED_TENSORS_HOOKS,
    "aliaslint.analysis.opfacts.MODULE_BASES": opfacts.MODULE_BASES,
    "aliaslint.analysis.opfacts.TENSOR_TYPES": opfacts.TENSOR_TYPES,
    "aliaslint.analysis.calls.VARIABLE": calls.VARIABLE,
}

MISSING = "missing"
MISSING_PREFIX = "missing: "
ENGINE_PREFIX = "modelled by the engine: "


@cache
def engine_sets() -> dict[str, str]:
    """Every `torch.` name of :data:`ENGINE_SETS`, with the set that holds it."""
    found: dict[str, str] = {}
    for where, names in ENGINE_SETS.items():
        for name in names:
            if name.startswith("torch."):
                found.setdefault(name, where)
    return found


# ------------------------------------------------------------------------------------------
# Scanning
# ------------------------------------------------------------------------------------------


@dataclass
class Usage:
    """How many files call a name, and how many calls there are in all."""

    files: int = 0
    calls: int = 0


class _Scanner(ast.NodeVisitor):
    """The torch names one module calls, by qualified name.

    Aliases live in a stack of scopes: a function or class body starts from a copy of the
    enclosing names, and a parameter, assignment, loop or `with` target, `def` or `class`
    that reuses an alias hides it there (`def f(F): F(x)` is not `torch.nn.functional`).  The
    walk follows the source order, so a name rebound later in a scope is torch's only before.
    """

    def __init__(self) -> None:
        self.scopes: list[dict[str, str]] = [{}]
        self.calls: Counter[str] = Counter()

    # -- bindings -----------------------------------------------------------------------

    @property
    def aliases(self) -> dict[str, str]:
        return self.scopes[-1]

    def _bind(self, name: str, qualname: str | None) -> None:
        if qualname is None:
            self.aliases.pop(name, None)
        else:
            self.aliases[name] = qualname

    def _unbind_target(self, target: ast.expr) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.aliases.pop(node.id, None)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            is_torch = alias.name == "torch" or alias.name.startswith("torch.")
            if alias.asname:
                self._bind(alias.asname, alias.name if is_torch else None)
            else:
                # `import torch.nn.functional` binds `torch` only.
                head = alias.name.partition(".")[0]
                self._bind(head, "torch" if is_torch else None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        is_torch = node.level == 0 and (module == "torch" or module.startswith("torch."))
        for alias in node.names:
            if alias.name == "*":
                continue  # which names a star import brings is not known without torch
            self._bind(alias.asname or alias.name, f"{module}.{alias.name}" if is_torch else None)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        value = self.resolve(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._bind(target.id, value)  # `Linear = nn.Linear`
            else:
                self.visit(target)
                if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                    self._unbind_target(target)  # `F, G = ...` hides both

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        if isinstance(node.target, ast.Name):
            if node.value is not None:
                self._bind(node.target.id, self.resolve(node.value))
        else:
            self.visit(node.target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._unbind_target(node.target)
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._unbind_target(item.optional_vars)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With

    # -- scopes -------------------------------------------------------------------------

    def _decorators(self, decorators: list[ast.expr]) -> None:
        for decorator in decorators:
            if not isinstance(decorator, ast.Call):
                # `@torch.no_grad` / `@torch.jit.script`: the decorator is called on the def.
                self._record(self.resolve(decorator))
            self.visit(decorator)

    def _arguments(self, arguments: ast.arguments) -> None:
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                    arguments.vararg, arguments.kwarg]:
            if arg is not None:
                self._bind(arg.arg, None)

    def _defaults(self, arguments: ast.arguments) -> None:
        for default in [*arguments.defaults, *arguments.kw_defaults]:
            if default is not None:
                self.visit(default)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._decorators(node.decorator_list)
        self._defaults(node.args)
        self._bind(node.name, None)
        self.scopes.append(dict(self.aliases))
        self._arguments(node.args)
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._defaults(node.args)
        self.scopes.append(dict(self.aliases))
        self._arguments(node.args)
        self.visit(node.body)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._decorators(node.decorator_list)
        for expr in [*node.bases, *(keyword.value for keyword in node.keywords)]:
            self.visit(expr)
        self._bind(node.name, None)
        self.scopes.append(dict(self.aliases))
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    # -- calls --------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        self._record(self.resolve(node.func))
        self.generic_visit(node)

    def _record(self, name: str | None) -> None:
        if name is not None and name.startswith("torch."):
            self.calls[name] += 1

    def resolve(self, node: ast.expr) -> str | None:
        """`F.relu` → `torch.nn.functional.relu` when `F` is an alias of a torch name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])


def calls_in(source: str | ast.Module) -> Counter[str]:
    """The torch names ``source`` calls, with the number of calls of each."""
    if isinstance(source, str):
        try:
            source = ast.parse(source)
        except (SyntaxError, ValueError):
            return Counter()
    scanner = _Scanner()
    scanner.visit(source)
    return scanner.calls


@dataclass
class Scan:
    used: dict[str, Usage] = field(default_factory=dict)
    files: Counter[str] = field(default_factory=Counter)  # .py files read, per directory
    unparsed: list[Path] = field(default_factory=list)


def scan(directories: Iterable[Path]) -> Scan:
    result = Scan()
    for directory in directories:
        for path in sorted(directory.rglob("*.py")):
            try:
                source = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            result.files[directory.name] += 1
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                result.unparsed.append(path)  # templates and the like: nothing to count
                continue
            for name, count in calls_in(tree).items():
                usage = result.used.setdefault(name, Usage())
                usage.files += 1
                usage.calls += count
    return result


# ------------------------------------------------------------------------------------------
# Accounting
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Account:
    """How a name is accounted for."""

    how: str  # "table" | "module table" | "engine" | "reason"
    group: str  # the reason group, or where the engine holds the name
    reason: str = ""


def is_missing(group: str) -> bool:
    """`missing` and `missing-<family>` hold what aliases, writes or saves without an entry."""
    return group == MISSING or group.startswith(MISSING + "-")


def table_entry(name: str) -> str | None:
    if ops.lookup(name) is not None:
        return "table"
    if ops.module(name) is not None:
        return "module table"
    if ops.dtype_fact(f"constructor {name}") is not None:
        return "table"  # a legacy typed constructor: the dtype it makes, probed
    return None


@dataclass
class Coverage:
    """The toml's hand-kept parts, validated as they are read."""

    engine: dict[str, str]  # [engine]: name -> "modelled by the engine: <module> ..."
    reasons: dict[str, tuple[str, str]]  # name -> (group, reason)
    used: dict[str, Usage]
    errors: list[str]

    @classmethod
    def load(cls, path: Path = DATA) -> Coverage:
        return cls.parse(tomllib.loads(path.read_text()) if path.exists() else {})

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Coverage:
        errors: list[str] = []
        reasons: dict[str, tuple[str, str]] = {}
        for group, table in data.get("reasons", {}).items():
            entries: list[tuple[str, str]] = []
            shared = table.get("reason")
            if table.get("names") and shared is None:
                errors.append(f"[reasons.{group}]: `names` without a `reason`")
            else:
                entries.extend((name, str(shared)) for name in table.get("names", []))
            entries.extend((name, str(reason)) for name, reason in table.get("each", {}).items())
            for name, reason in entries:
                if is_missing(group) != reason.startswith(MISSING_PREFIX):
                    errors.append(f"{name}: reasons start with {MISSING_PREFIX!r} in the "
                                  f"{MISSING}(-*) groups and only there ({group}: {reason!r})")
                if name in reasons:
                    errors.append(f"{name}: two reasons ({reasons[name][0]}, {group})")
                reasons[name] = (group, reason)
        engine = {str(name): str(text) for name, text in data.get("engine", {}).items()}
        for name, text in engine.items():
            error = _engine_line_error(name, text)
            if error:
                errors.append(error)
            if name in reasons:
                errors.append(f"{name}: both in [engine] and [reasons.{reasons[name][0]}]")
        used = {name: Usage(int(value["files"]), int(value["calls"]))
                for name, value in data.get("used", {}).items()}
        return cls(engine, reasons, used, errors)

    def account(self, name: str) -> Account | None:
        how = table_entry(name)
        if how is not None:
            return Account(how, "")
        held = engine_sets().get(name)
        if held is not None:
            return Account("engine", held)
        if name in self.engine:
            return Account("engine", "[engine] " + self.engine[name].removeprefix(ENGINE_PREFIX))
        if name in self.reasons:
            group, reason = self.reasons[name]
            return Account("reason", group, reason)
        return None

    def problems(self, used: Mapping[str, Usage], *, orphans: bool = True) -> Iterator[str]:
        yield from self.errors
        for name in sorted(used, key=lambda n: (-used[n].calls, n)):
            if self.account(name) is None:
                yield (f"{name}: {used[name].calls} calls in {used[name].files} files; no table "
                       f"entry, not modelled by the engine, no recorded reason")
        for name in sorted({*self.reasons, *self.engine}):
            how = table_entry(name)
            if how is not None:
                yield f"{name}: has a {how} entry now; drop its recorded reason"
            elif name in self.engine and name in engine_sets():
                yield f"{name}: the engine's {engine_sets()[name]} holds it; drop its [engine] line"
            elif orphans and name not in used:
                yield f"{name}: recorded, but no corpus calls it; drop it"


def _engine_line_error(name: str, text: str) -> str | None:
    """An `[engine]` line names the module that models the call; that module must still spell
    the name, or a dotted prefix of it (`"torch.optim."`), as a string."""
    if not text.startswith(ENGINE_PREFIX):
        return f"{name}: [engine] lines read {ENGINE_PREFIX!r} + the module, got {text!r}"
    module = text.removeprefix(ENGINE_PREFIX).split()[0]
    strings = _strings_of(module)
    if strings is None:
        return f"{name}: [engine] names {module}, which does not exist"
    parts = name.split(".")
    # A namespace the engine tests by prefix (`"torch.optim."`), never the bare `"torch."`.
    prefixes = {".".join(parts[:i]) + "." for i in range(2, len(parts))}
    if name not in strings and not prefixes & strings:
        return f"{name}: {module} no longer spells it (nor a prefix of it); is it still modelled?"
    return None


@cache
def _strings_of(module: str) -> frozenset[str] | None:
    path = ROOT / module
    if not path.is_file():
        return None
    return frozenset(node.value for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.Constant) and isinstance(node.value, str))


def summary(coverage: Coverage, used: Mapping[str, Usage]) -> list[str]:
    """Names and calls by how they are accounted for, and names by reason group."""
    names: Counter[str] = Counter()
    calls_by: Counter[str] = Counter()
    groups: Counter[str] = Counter()
    for name, usage in used.items():
        account = coverage.account(name)
        how = account.how if account else "unaccounted"
        names[how] += 1
        calls_by[how] += usage.calls
        if account and account.how == "reason":
            groups[account.group] += 1
    lines = [f"{len(used)} names, {sum(u.calls for u in used.values())} calls"]
    for how in ("table", "module table", "engine", "reason", "unaccounted"):
        if names[how]:
            lines.append(f"  {how:12s} {names[how]:5d} names {calls_by[how]:7d} calls")
    for group, count in sorted(groups.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"    reason {group}: {count}")
    return lines


# ------------------------------------------------------------------------------------------
# The toml's [used] table
# ------------------------------------------------------------------------------------------

USED_HEADER = "[used]\n"


def write_used(path: Path, result: Scan) -> None:
    """Replace the `[used]` table (kept last in the file) and leave the rest as written."""
    text = path.read_text() if path.exists() else ""
    head = "" if text.startswith(USED_HEADER) else text.partition("\n" + USED_HEADER)[0]
    # The comment block just above [used] is this function's own; drop the old one.
    kept = head.rstrip("\n").split("\n")
    while kept and kept[-1].startswith("# [used]"):
        kept.pop()
    scanned = ", ".join(f"{name} ({count} files)" for name, count in sorted(result.files.items()))
    lines = [
        "# [used] is written by `op_coverage.py scan DIR... --write`: per name, the files calling it",
        "# [used] and the calls in all.  Scanned: " + scanned + ".",
        USED_HEADER.rstrip("\n"),
    ]
    for name in sorted(result.used):
        usage = result.used[name]
        lines.append(f'"{name}" = {{ files = {usage.files}, calls = {usage.calls} }}')
    body = "\n".join(kept).rstrip("\n")
    path.write_text((body + "\n\n" if body else "") + "\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------


def _describe(account: Account | None) -> str:
    if account is None:
        return "UNACCOUNTED"
    if account.how == "reason":
        return f"[{account.group}] {account.reason}"
    return f"{account.how} {account.group}".rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    scan_command = commands.add_parser("scan", help="count the torch calls under DIRs")
    scan_command.add_argument("dirs", nargs="+", type=Path)
    scan_command.add_argument("--write", nargs="?", type=Path, const=DATA, default=None,
                              metavar="TOML", help=f"store the counts (default {DATA.name})")
    check_command = commands.add_parser("check", help="every used name accounted for")
    check_command.add_argument("dirs", nargs="*", type=Path,
                               help="rescan these instead of using the stored [used] names")
    check_command.add_argument("--toml", type=Path, default=DATA)
    args = parser.parse_args(argv)

    if args.command == "scan":
        coverage = Coverage.load(args.write or DATA)
        result = scan(args.dirs)
        for name in sorted(result.used, key=lambda n: (-result.used[n].calls, n)):
            usage = result.used[name]
            print(f"{usage.calls:6d} calls {usage.files:5d} files  {name}  "
                  f"{_describe(coverage.account(name))}")
        for path in result.unparsed:
            print(f"not parsed: {path}", file=sys.stderr)
        print("\n".join(summary(coverage, result.used)))
        if args.write is not None:
            write_used(args.write, result)
        return 0

    coverage = Coverage.load(args.toml)
    used = scan(args.dirs).used if args.dirs else coverage.used
    found = list(coverage.problems(used, orphans=not args.dirs))
    for line in found:
        print(line)
    print("\n".join(summary(coverage, used)))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
