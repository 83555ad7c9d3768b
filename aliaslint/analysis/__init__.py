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

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.autograd import Autograd
from aliaslint.analysis.builders import Builders
from aliaslint.analysis.calls import Calls
from aliaslint.analysis.container_calls import ContainerCalls
from aliaslint.analysis.core import State, Stats
from aliaslint.analysis.dispatch import Dispatch
from aliaslint.analysis.effects import Effects
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
from aliaslint.analysis.factories import Factories
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
from aliaslint.analysis.outcomes import Outcomes
from aliaslint.analysis.protocol import CallProtocol
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.statements import Statements
from aliaslint.analysis.training import Training
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

from aliaslint import nodes
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


class Analysis:
    """Runs the interpreter over a module and collects its events.

    The interpreter is a set of parts over one `State`, each a module of this package with
    a narrow interface (interfaces.py): statements, loops, function definitions and bodies,
    expressions, calls, container methods, factories and sometimes-alias outcomes, method
    dispatch, the module call protocol and its summaries, module construction and their
    effects, module containers, imports from the other files of the program, and the
    autograd and training-API models.  `Analysis` makes them, connects them, and runs the
    module body, then the function bodies it deferred."""

    def __init__(self, module: cst.Module, source: str | None = None,
                 link: Link | None = None):
        self.state = state = State(module, source)
        state.link = link
        state.path = link.path if link is not None else ""
        # The parts the dispatch tables below name, then all of them.
        statements, loops, functions = Statements(state), Loops(state), Functions(state)
        expressions, calls = Expressions(state), Calls(state)
        made = (statements, loops, functions, Imports(state), expressions, calls,
                Outcomes(state), Factories(state), ContainerCalls(state), Dispatch(state),
                CallProtocol(state), Modules(state), Effects(state), Builders(state),
                Autograd(state), Training(state))
        # Each part as the others see it: the annotation makes mypy check that each
        # provides its interface.
        seen: tuple[
            api.Statements,
            api.Loops,
            api.Functions,
            api.Imports,
            api.Expressions,
            api.Calls,
            api.Outcomes,
            api.Factories,
            api.ContainerCalls,
            api.Dispatch,
            api.CallProtocol,
            api.Modules,
            api.Effects,
            api.Builders,
            api.Autograd,
            api.Training,
        ] = made
        # A part is known to the others by the name of its module (`Part.handles`).
        parts: dict[str, object] = {type(part).__module__.rpartition(".")[2]: part
                                    for part in seen}
        for part in made:
            part.connect(parts)
        self._statements: api.Statements = statements
        self._functions: api.Functions = functions
        self._parts: tuple[object, ...] = made
        state.expr_dispatch = {
            cst.Name: expressions.name,
            cst.Attribute: expressions.attribute,
            cst.Call: calls.call,
            cst.Comparison: expressions.comparison,
            cst.BinaryOperation: expressions.binary,
            cst.UnaryOperation: expressions.unary,
            cst.Subscript: expressions.subscript,
            cst.Integer: expressions.literal,
            cst.Float: expressions.literal,
            cst.Imaginary: expressions.literal,
            cst.SimpleString: expressions.literal,
            cst.ConcatenatedString: expressions.concatenated,
            cst.FormattedString: expressions.formatted,
            cst.BooleanOperation: expressions.boolean,
            cst.Tuple: expressions.display,
            cst.List: expressions.display,
            cst.Set: expressions.set_display,
            cst.Dict: expressions.dict_display,
            cst.IfExp: expressions.if_exp,
            cst.NamedExpr: expressions.named_expr,
            cst.Lambda: expressions.lambda_expression,
            cst.ListComp: expressions.comprehension,
            cst.SetComp: expressions.comprehension,
            cst.GeneratorExp: expressions.comprehension,
            cst.DictComp: expressions.comprehension,
        }
        state.stmt_dispatch = {
            cst.SimpleStatementLine: statements.simple_line,
            cst.If: statements.if_statement,
            cst.For: loops.loop,
            cst.While: loops.loop,
            cst.With: statements.with_statement,
            cst.Try: statements.try_statement,
            cst.TryStar: statements.try_statement,
            cst.FunctionDef: functions.function_def,
            cst.ClassDef: functions.class_def,
        }


    @property
    def module(self) -> cst.Module:
        return self.state.module

    @property
    def events(self) -> list[Event]:
        return self.state.events

    @property
    def low(self) -> set[Event]:
        return self.state.low

    @property
    def stats(self) -> Stats:
        return self.state.stats

    def run(self) -> Analysis:
        state = self.state
        env = Env()
        state.top = env
        self._statements.block(state.module.body, env)
        # Function bodies run after the scope that defines them is complete,
        # so they see every module-level import (as pyflakes does).
        state.deferring = True
        while state.deferred:
            self._functions.function_body(self._functions.next_deferred())
        self._let_go()
        return self

    def _let_go(self) -> None:
        """The parts know each other and the state's dispatch tables know them: a cycle that
        only the collector would free, walking everything the analysis made.  Once run,
        the parts are let go, and what the analysis made is freed as soon as its events
        are (only the state, with the events, stays)."""
        for part in self._parts:
            vars(part).clear()
        self.state.expr_dispatch = {}
        self.state.stmt_dispatch = {}
        self._parts = ()


def analyse(module: cst.Module, source: str | None = None,
            link: Link | None = None) -> Analysis:
    """Interpret ``module``; ``source`` is its text (regenerated from the tree if not given);
    ``link`` the program it is part of, whose other files its imports resolve into."""
    nodes.Facts.next_analysis()
    return Analysis(module, source, link).run()
