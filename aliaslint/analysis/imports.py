"""Names imported from other checked files: what they are, from those files' own code.

With a program around the file (aliaslint/project.py), `from .utils import normalize` binds
`normalize` to the function `utils.py` defines, not to an unknown reference: calls then run
its summary as they do for a function of this file, and a write it makes is reported where
it is, in `utils.py`.  Another file's module body runs once per analysis, silently (its own
findings are its own check's), and its function bodies only when something calls them.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.syntax import dotted
from aliaslint.analysis.values import RefValue, Value


class Imports(Part):
    """Resolves references into the other checked files of the program."""

    statements: api.Statements

    def __init__(self, state: State) -> None:
        super().__init__(state)
        self._foreign: dict[str, Env | None] = {}

    def absolute_import(self, small: cst.ImportFrom) -> str | None:
        """The absolute module of a relative import, when the program places this file."""
        if self.state.link is None:
            return None
        level = len(small.relative)
        module = dotted(small.module) if small.module is not None else None
        return self.state.link.program.absolute(self.state.path, level, module)

    def linked(self, value: Value, depth: int = 0) -> Value:
        """What a reference names in another checked file, or ``value`` itself.  Asked only
        where what the name is matters (a call, a class's base, an annotation), so a file
        is loaded only when something of it is used."""
        if self.state.link is None or not isinstance(value, RefValue) or depth > 8:
            return value
        found = self.state.link.program.module_of(value.qualname,
                                                  value.importer or self.state.path)
        if found is None:
            return value
        path, rest = found
        if not rest:
            return value  # the module itself: its attributes resolve as references
        env = self._module_env(path)
        bound = env.names.get(rest[0]) if env is not None else None
        if bound is None:
            return value
        if isinstance(bound, RefValue):
            # A re-export (`from .blocks import Sharpen` in a package's `__init__`).
            return self.linked(RefValue(qualname=".".join((bound.qualname, *rest[1:])),
                                        origin=value.origin, importer=bound.importer),
                               depth + 1)
        return bound if len(rest) == 1 else value

    def _module_env(self, path: str) -> Env | None:
        """The environment another checked file's module body leaves; this file's own
        top-level scope for a circular import of itself.  An analysis loads a bounded
        amount of other files' code (``Link.allows``): past it, their names stay unknown."""
        assert self.state.link is not None
        if path == self.state.link.path:
            return self.state.top
        if path in self._foreign:
            return self._foreign[path]
        self._foreign[path] = None
        tree = self.state.link.tree(path) if self.state.link.allows(path) else None
        if tree is None:
            return None
        env: Env | None = Env()
        assert env is not None
        saved = self._enter_foreign(env, path)
        try:
            self.statements.block(tree.body, env)
        except RecursionError:
            env = None
        finally:
            self._leave_foreign(saved, env)
        self._foreign[path] = env
        return env

    def _enter_foreign(self, env: Env, path: str) -> tuple[Any, ...]:
        state = self.state
        saved = (state.top, state.stmt, state.deferred, state.pending_calls, state.pending_inits,
                 state.bindings, state.type_checking, state.raised_in, state.loading, state.path)
        self.state.silent += 1
        self.state.top = env
        self.state.deferred = []  # another file's bodies run only when called
        self.state.pending_calls = type(self.state.pending_calls)()
        self.state.pending_inits = type(self.state.pending_inits)()
        self.state.bindings = {}
        self.state.type_checking = False
        self.state.raised_in = None
        self.state.loading = env
        self.state.path = path
        return saved

    def _leave_foreign(self, saved: tuple[Any, ...], env: Env | None) -> None:
        if env is not None:
            self.state.foreign_bindings[id(env)] = self.state.bindings
        (self.state.top, self.state.stmt, self.state.deferred, self.state.pending_calls,
         self.state.pending_inits,
         self.state.bindings, self.state.type_checking, self.state.raised_in, self.state.loading,
         self.state.path) = saved
        self.state.silent -= 1

    def star_names(self, small: cst.ImportFrom, base: str | None) -> dict[str, Value]:
        """What `from m import *` binds when ``m`` is a checked file: the names its literal
        `__all__` lists, or else the public names its module body binds, each a reference
        resolved when used (the module is not run for it)."""
        if self.state.link is None or base is None:
            return {}
        found = self.state.link.program.module_of(base, self.state.path)
        if found is None or found[1] or not self.state.link.allows(found[0]):
            return {}
        outline = self.state.link.outline(found[0])
        if outline is None:
            return {}
        bound = outline.bound
        listed = outline.listed
        names = listed if listed is not None else [n for n in bound if not n.startswith("_")]
        # A name the module imports is the object it imported (`torch` is torch); one it
        # defines is looked up in it when used.
        return {name: RefValue(qualname=bound.get(name) or f"{base}.{name}",
                               importer=found[0] if bound.get(name) else self.state.path)
                for name in names}

    def home(self, function: cst.FunctionDef) -> Env:
        """The module environment ``function``'s body sees."""
        return self.state.homes.get(id(function), self.state.top)
