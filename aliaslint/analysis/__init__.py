"""The abstract interpreter: what each name holds, statement by statement.

One pass over a libcst module evaluates every expression to an abstract
``Value`` and keeps, per path through the code, the facts the rules need:
which storage each tensor lives in (one token per allocation site; views keep
their base's token), which version counter it bumps (``.data`` gets its own),
whether it requires grad, which storages autograd saved for a backward pass
that has not run yet, and which in-place writes dirtied those saves.  It
records ``Event``s at the points rules care about; rules read the events and
never walk the tree themselves.

Precision comes first.  A value is a tensor only when local code proves it
(a torch factory, a Tensor method's result, an annotation, a parameter of a
module's ``forward``), two values share a storage only when they provably
do, and a tensor requires grad only when a parameter or ``requires_grad=True``
says so.  What the interpreter cannot prove is unknown, and rules stay quiet
about unknowns.  A hazard becomes an event only when it is complete on one
path: saved, then written, then reached by a backward pass (or returned to
the caller, who will run it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from aliaslint.analysis.autograd import Autograd
from aliaslint.analysis.builders import Builders
from aliaslint.analysis.calls import Calls
from aliaslint.analysis.dispatch import Dispatch
from aliaslint.analysis.events import (
    Call,
    Compare,
    Event,
    InplaceWrite,
    LostWrite,
    NonContiguousView,
    DataOnTemporary,
    PackHookWrite,
    Reference,
    Save,
    SavedWrite,
    StaleRead,
    Write,
)
from aliaslint.analysis.expressions import Expressions
from aliaslint.analysis.functions import Functions
from aliaslint.analysis.imports import Imports
from aliaslint.analysis.geometry import (
    covers_disjoint,
    covers_tile,
    indexes_overlap,
    regions_overlap,
)
from aliaslint.analysis.loops import Loops
from aliaslint.analysis.modules import Modules
from aliaslint.analysis.protocol import Protocol
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.statements import Statements
from aliaslint.analysis.syntax import attr_key, discards, reads
from aliaslint.analysis.values import (
    OTHER,
    UNKNOWN,
    ArrayValue,
    ClassValue,
    ContainerValue,
    FunctionValue,
    GradModeValue,
    Kind,
    ModuleValue,
    ObjectValue,
    ParamsValue,
    RefValue,
    TensorValue,
    Value,
    root_of,
)

from aliaslint.nodes import walk, walk_code

if TYPE_CHECKING:
    from aliaslint.project import Link

__all__ = [
    "OTHER", "UNKNOWN", "Analysis", "ArrayValue", "Call", "ClassValue", "Compare",
    "ContainerValue", "Event", "FunctionValue", "GradModeValue", "InplaceWrite", "Kind",
    "LostWrite", "ModuleValue", "NonContiguousView", "ObjectValue", "PackHookWrite", "DataOnTemporary", "ParamsValue", "RefValue",
    "Reference", "Save", "SavedWrite", "StaleRead", "TensorValue", "Value", "Write", "analyse",
    "attr_key", "covers_disjoint", "covers_tile", "discards", "indexes_overlap", "reads",
    "regions_overlap", "root_of", "walk", "walk_code",
]


class Analysis(Statements, Loops, Functions, Imports, Expressions, Calls, Dispatch, Protocol,
               Modules, Builders, Autograd):
    """Runs the interpreter over a module and collects its events."""

    def __init__(self, module: cst.Module, source: str | None = None,
                 link: Link | None = None):
        super().__init__(module, source)
        self._link = link
        self._path = link.path if link is not None else ""
        self._expr_dispatch = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Comparison: self._comparison,
            cst.BinaryOperation: self._binary,
            cst.UnaryOperation: self._unary,
            cst.Subscript: self._subscript,
            cst.Integer: self._literal,
            cst.Float: self._literal,
            cst.Imaginary: self._literal,
            cst.SimpleString: self._literal,
            cst.ConcatenatedString: self._concatenated,
            cst.FormattedString: self._formatted,
            cst.BooleanOperation: self._boolean,
            cst.Tuple: self._display,
            cst.List: self._display,
            cst.Set: self._set,
            cst.Dict: self._dict,
            cst.IfExp: self._if_exp,
            cst.NamedExpr: self._named_expr,
            cst.Lambda: self._lambda,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
        }
        self._stmt_dispatch = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._loop,
            cst.While: self._loop,
            cst.With: self._with,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.FunctionDef: self._function_def,
            cst.ClassDef: self._class_def,
        }

    def run(self) -> Analysis:
        env = Env()
        self._top = env
        self._block(self.module.body, env)
        # Function bodies run after the scope that defines them is complete,
        # so they see every module-level import (as pyflakes does).
        self._deferring = True
        while self._deferred:
            self._function_body(self._next_deferred())
        return self


def analyse(module: cst.Module, source: str | None = None,
            link: Link | None = None) -> Analysis:
    """Interpret ``module``; ``source`` is its text (regenerated from the tree if not given);
    ``link`` the program it is part of, whose other files its imports resolve into."""
    return Analysis(module, source, link).run()
