"""The interpreter's state, shared by every part of it, and how events leave it."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from aliaslint.analysis.events import Event, Save, SaveIds, Write
from aliaslint.analysis.scopes import (
    ClassInfo,
    Converged,
    Deferred,
    Env,
    Flow,
    LoopFrame,
    Summary,
)
from aliaslint.analysis.values import (
    ClassValue,
    FunctionValue,
    GradModeValue,
    ModuleValue,
    ParamsValue,
    TensorValue,
    Value,
    Written,
)


@dataclass
class Stats:
    """How much interpreting a module took: what tests of the loop analysis measure."""

    statements: int = 0  # statements interpreted, each time a pass runs it
    loop_passes: int = 0  # passes over a loop body
    loops_reused: int = 0  # loop entries an earlier fixed point of the same loop covered
    loops_widened: int = 0  # loops whose changing names were widened to unknown


class Interpreter:
    """State of one run over a module.  The parts of the interpreter (statements,
    expressions, calls, modules, autograd) are mixins over this class."""

    def __init__(self, module: cst.Module):
        self.module = module
        self.events: list[Event] = []
        self.stats = Stats()
        # The statement being interpreted: events point their suppression at it.
        self._stmt: cst.CSTNode = module
        self._deferred: list[Deferred] = []
        self._deferred_keys: set[tuple[int, int, int]] = set()
        self._save_ids = SaveIds()
        self._silent = 0  # > 0 while summarising a callee: its events are not reported
        self._summaries: dict[tuple, Summary | None] = {}
        self._in_progress: set[tuple] = set()
        self._returns: list[tuple[Value, Flow]] | None = None  # values the function returns
        self._function: cst.FunctionDef | None = None
        self._top = Env()
        # Module-level names: the statements that bind each, and names some
        # function rebinds with `global`.  A name bound once and never
        # rebound holds the same value whenever a function runs.
        self._bindings: dict[str, set[int]] = {}
        self._rebound: set[str] = set()
        self._outer_cache: dict[int, tuple[Env, Env]] = {}
        self._deferring = False  # running function bodies, the module body done
        self._write_log: list[Write] | None = None  # writes made while summarising
        self._index_values: dict[int, Value] = {}  # subscript index expression → value
        self._rewriting = False  # evaluating the target of an in-place write
        # Loops (see loops.py): the enclosing loops' break and continue states,
        # and, while the outermost loop of a nest runs, each inner loop's last
        # fixed point and the events already reported.
        self._loops: list[LoopFrame] = []
        self._loop_cache: dict[int, Converged] | None = None
        self._loop_events: set[Event] | None = None
        self._expr_dispatch: dict[type, Callable[[Any, Env], Value]] = {}
        self._stmt_dispatch: dict[type, Callable[[Any, Env], None]] = {}

    def _emit(self, event: Event) -> None:
        if self._silent:
            return
        if self._loop_events is not None:
            # Loop passes meet the same event again: report it once.
            if event in self._loop_events:
                return
            self._loop_events.add(event)
        self.events.append(event)

    if TYPE_CHECKING:
        # Implemented by the mixins; declared here so each part type-checks alone.
        def _eval(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _eval_target(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _eval_args(self, node: cst.Call, env: Env) -> None: ...
        def _eval_silently(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _block(self, body: Any, env: Env) -> None: ...
        def _statement(self, stmt: cst.CSTNode, env: Env) -> None: ...
        def _small(self, small: cst.BaseSmallStatement, env: Env) -> None: ...
        def _bind(self, target: Any, value: Value, env: Env,
                  evaluate_base: bool = True) -> None: ...
        def _assign_name(self, name: str, value: Value, env: Env) -> None: ...
        def _slices(self, node: cst.Subscript, env: Env) -> None: ...
        def _annotation(self, annotation: cst.Annotation, env: Env) -> Value: ...
        def _view(self, base: TensorValue, node: Any, op: Any,
                  dims: tuple | None = None) -> TensorValue: ...
        def _element_of(self, iterable: Value, node: Any) -> Value: ...
        def _leave(self, env: Env, *, to_head: bool) -> None: ...
        def _parameter(self, tokens: frozenset, origin: Any) -> TensorValue: ...
        def _return(self, value: Value, node: Any, env: Env) -> None: ...
        def _function_def(self, node: cst.FunctionDef, env: Env, *,
                          cls: ClassInfo | None = None, scope: Env | None = None) -> None: ...
        def _function_body(self, deferred: Deferred) -> None: ...
        def _run_body(self, node: cst.FunctionDef, env: Env) -> list: ...
        def _outer_env(self, env: Env) -> Env: ...
        def _decorated_grad_mode(self, node: cst.FunctionDef, env: Env) -> bool | None: ...
        def _self_value(self, cls: ClassInfo) -> Value: ...
        def _class_def(self, node: cst.ClassDef, env: Env) -> None: ...
        def _call(self, node: cst.Call, env: Env) -> Value: ...
        def _write(self, target: Written, target_node: Any, node: Any, label: str | None,
                   env: Env, *, activation: bool = False, defined_at: Any = None,
                   visible: bool = True, fill: bool = False, callee: str | None = None,
                   declared: bool = False, inputs: tuple = (),
                   region: tuple | None = None) -> Written: ...
        def _mark_stale(self, tokens: set, write: Write, exclude: set, env: Env) -> None: ...
        def _dirty(self, token: object, write: Write, env: Env) -> None: ...
        def _new_save(self, value: Value, node: Any, label: str | None, what: str,
                      env: Env, what_node: Any = None) -> Save | None: ...
        def _save(self, storage: object, counter: object, node: Any, label: str | None,
                  what: str, env: Env, what_node: Any = None) -> Save: ...
        def _consume(self, value: TensorValue, node: Any, label: str | None, env: Env, *,
                     returned: bool = False, retain: bool = False) -> None: ...
        def _requires_grad(self, inputs: Sequence[Value], env: Env) -> bool | None: ...
        def _record_saves(self, op: Any, bound: dict[str, Value], result: TensorValue,
                          node: Any, env: Env, nodes: dict | None = None) -> TensorValue: ...
        def _backward(self, op: Any, receiver: Any, args: Any, node: Any, env: Env) -> None: ...
        def _optimizer_step(self, optimizer: ParamsValue, node: Any, env: Env) -> None: ...
        def _write_parameters(self, tokens: frozenset, node: Any, env: Env) -> None: ...
        def _unknown_call(self, args: Any, env: Env) -> None: ...
        def _grad_mode(self, op: Any, args: Any) -> GradModeValue: ...
        def _construct_module(self, spec: Any, qualname: str, node: Any, positional: Any,
                              keywords: Any) -> Value: ...
        def _construct_local_module(self, cls_value: ClassValue, node: Any) -> Value: ...
        def _module_method(self, module: ModuleValue, node: Any, args: Any,
                           env: Env) -> Value: ...
        def _call_module(self, module: ModuleValue, node: Any, positional: Any, args: Any,
                         env: Env) -> Value: ...
        def _call_function(self, function: FunctionValue, receiver: Any, node: Any, args: Any,
                           env: Env) -> Value: ...
        def _numpy_share(self, op: Any, bound: Any, nodes: Any, node: Any, env: Env) -> Value: ...
        def _builtin_container(self, qualname: str, positional: Any,
                               node: Any) -> Value | None: ...
        def _apply(self, op: Any, qualname: str, receiver: Any, receiver_node: Any, args: Any,
                   node: Any, env: Env) -> Value: ...
