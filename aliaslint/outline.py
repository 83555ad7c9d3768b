"""What other files' CPython trees tell their importers, kept instead of the trees.

An analysis reads other checked files without running them in two places: the names a
`from m import *` binds (aliaslint/analysis/imports.py) and the quiet proof, which asks
whether a file and those it reaches through imports spell any write (aliaslint/quiet.py).
Both read a few facts of each such file; a package whose `__init__` star-imports every
model makes them ask of hundreds of files, whose trees kept whole would take hundreds of
megabytes.  So each file's facts are taken once from its tree, and the tree let go.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from aliaslint.quiet import Imported, imported, writes_nothing


@dataclass(frozen=True)
class Outline:
    """What a module's tree tells without running it."""

    writes_nothing: bool  # spells no write and no `view` call (quiet.writes_nothing)
    # Each import of the module (quiet.imported), where it writes nothing: the quiet proof
    # follows no import of a module that writes.
    imports: tuple[Imported, ...]
    # The names its top-level statements bind; for a name an absolute import binds, what
    # it imports (`from torch import nn` → "torch.nn").
    bound: dict[str, str | None]
    listed: tuple[str, ...] | None  # a module-level `__all__` of string literals


def outline(tree: ast.Module) -> Outline:
    quiet = writes_nothing(tree)
    return Outline(quiet, tuple(imported(tree)) if quiet else (), _bound_names(tree.body),
                   _literal_all(tree))


def _literal_all(module: ast.Module) -> tuple[str, ...] | None:
    """The names of a module-level `__all__ = [...]` of string literals, if there is one."""
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "__all__" and \
                isinstance(stmt.value, (ast.List, ast.Tuple)):
            names = [element.value for element in stmt.value.elts
                     if isinstance(element, ast.Constant) and isinstance(element.value, str)]
            if len(names) == len(stmt.value.elts):
                return tuple(names)
    return None


def _bound_names(body: list[ast.stmt]) -> dict[str, str | None]:
    """The names a module's top-level statements bind: definitions, classes, imports and
    plain assignments (also inside top-level `if`/`try` blocks); for a name an absolute
    import binds, what it imports.  (Read from CPython's tree: listing them needs no
    libcst parse of the file.)"""
    names: dict[str, str | None] = {}
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[stmt.name] = None
        elif isinstance(stmt, ast.Assign):
            names.update((t.id, None) for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and \
                isinstance(stmt.target, ast.Name):
            names[stmt.target.id] = None
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                short = alias.asname or alias.name.split(".")[0]
                names[short] = alias.name if alias.asname is not None else short
        elif isinstance(stmt, ast.ImportFrom) and stmt.names[0].name != "*":
            origin = None if stmt.level or stmt.module is None else stmt.module
            for alias in stmt.names:
                names[alias.asname or alias.name] = None if origin is None else \
                    f"{origin}.{alias.name}"
        elif isinstance(stmt, (ast.If, ast.Try)):
            names.update(_bound_names(stmt.body))
            for handler in getattr(stmt, "handlers", ()):
                names.update(_bound_names(handler.body))
            names.update(_bound_names(stmt.orelse))
    return names
