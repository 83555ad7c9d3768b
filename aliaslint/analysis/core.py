"""The interpreter's state, shared by every part of it, and how events leave it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.instances import Instances
from aliaslint.analysis.events import (
    Call,
    Event,
    InplaceWrite,
    Reference,
    Save,
    SavedWrite,
    SaveIds,
    Write,
    WriteInputs,
)
from aliaslint.analysis.scopes import (
    ClassInfo,
    Converged,
    Deferred,
    Env,
    Flow,
    LoopFrame,
    Summary,
)
from aliaslint.analysis.syntax import freezes_gradients, runs_unconditionally
from aliaslint.analysis.values import (
    Args,
    ClassValue,
    FunctionValue,
    GradModeValue,
    HandleValue,
    Keywords,
    ModuleValue,
    ParamsValue,
    TensorValue,
    Value,
    Written,
)

if TYPE_CHECKING:
    from aliaslint.project import Link


@dataclass
class Site:
    """One call of a function of this file: the argument values by parameter name."""

    values: dict[str, Value]
    # The call is made by code only this file runs: module-level code (a script, a
    # `__main__` block) or a function itself reached only that way.
    closed: bool
    assumed: bool = False  # made in a body run with assumed call-site values


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

    def __init__(self, module: cst.Module, source: str | None = None):
        self.module = module
        self.events: list[Event] = []
        self.stats = Stats()
        # The statement being interpreted: events point their suppression at it.
        self._stmt: cst.CSTNode = module
        # The statement in which a call raised for certain (see `_raises`): the events
        # of the rest of it are not reported, since that code does not run.
        self._raised_in: cst.CSTNode | None = None
        self._deferred: list[Deferred] = []
        # Names the pending deferred bodies call: a body runs after its callers, so that
        # it sees the values their call sites pass (see functions.py).
        self._pending_calls: Counter[str] = Counter()
        self._pending_inits: Counter[int] = Counter()  # id(ClassInfo) → pending __init__s
        # Call sites of the file's functions: id(FunctionDef) → id(call) → the site.
        self._sites: dict[int, dict[int, Site]] = {}
        # The body running is analysed with its callers' values and could be called
        # from elsewhere with others: its events are `low` confidence findings.
        self._assuming = False
        self._closed = False  # the body running is reached only from this file's code
        self._emitted: set[Event] = set()
        self.low: set[Event] = set()  # events that rest on call-site values
        self._saves_log: list[cst.CSTNode] = []  # where each save was made, in order
        # Functions run by `checkpoint(..., use_reentrant=False)`: id → that call.
        self._checkpointed: dict[int, cst.Call] = {}
        self._deferred_keys: set[tuple[int, int, int]] = set()
        self._save_ids = SaveIds()
        self._silent = 0  # > 0 while summarising a callee: its events are not reported
        self._summaries: dict[tuple, Summary | None] = {}
        self._contexts: dict[tuple, list[tuple]] = {}  # literal contexts summarised
        self._summaries_run = 0  # callee bodies run to summarise calls (see protocol.py)
        # Branches and loop bodies around the statement (may not run), and whether the
        # effects being applied are may-effects (a hook perhaps registered): see protocol.py.
        self._branches = 0
        self._may_effect = False
        # Summaries being computed, outermost first (see protocol.py).
        self._summary_stack: list[Any] = []
        self._returns: list[tuple[Value, Flow]] | None = None  # values the function returns
        self._function: cst.FunctionDef | None = None
        # The `with` blocks around the statement: "unchecked" / "autocast" (see training.py).
        self._save_modes: list[str] = []
        # `training_step` methods of LightningModules under automatic optimisation.
        self._lightning_steps: set[int] = set()
        self._top = Env()
        # Module-level names: the statements that bind each, and names some
        # function rebinds with `global`.  A name bound once and never
        # rebound holds the same value whenever a function runs.
        self._bindings: dict[str, set[int]] = {}
        self._rebound: set[str] = set()
        self._outer_cache: dict[int, tuple[Env, Env]] = {}
        self._deferring = False  # running function bodies, the module body done
        self._write_log: list[Write] | None = None  # writes made while summarising
        # Tensors a summarised method keeps on its `self` (`self.cache = t`): key -> value.
        self._state_log: dict[str, tuple[object, TensorValue]] | None = None
        self._may_write = False  # applying a write a callee makes on some paths only
        self._instance_sites: Instances | None = None  # built when a summary first needs it
        self._inside: dict[int, frozenset[int]] = {}  # id(FunctionDef) -> its nodes' ids
        # The graphs backward passes ran through while summarising (see Summary.consumed).
        self._consume_log: list[frozenset[int]] | None = None
        self._index_values: dict[int, Value] = {}  # subscript index expression → value
        self._subscript_bases: dict[int, Value] = {}  # subscript → the value indexed
        self._rewriting = False  # evaluating the target of an in-place write
        self._type_checking = False  # in the body of `if TYPE_CHECKING:`
        # The file turns requires_grad off somewhere (`p.requires_grad = False`,
        # `model.requires_grad_(False)`): which modules it freezes is not tracked, so no
        # module's parameters are assumed to require grad.
        self._freezes = freezes_gradients(source if source is not None else module.code)
        # A factory's dtype when none is given: the default float dtype, unless the file
        # changes it somewhere (`torch.set_default_dtype`), which is not followed.
        text = source if source is not None else module.code
        self._default_float: str | None = None if "set_default_" in text else \
            ops.dtype_fact("default float")
        # Loops (see loops.py): the enclosing loops' break and continue states,
        # and, while the outermost loop of a nest runs, each inner loop's last
        # fixed point and the events already reported.
        self._loops: list[LoopFrame] = []
        self._lambda_depth = 0  # lambdas called from lambdas being evaluated
        # (index name, container key) of the loops running now that walk a container's
        # indices (`for i in range(len(feats))`, `for i, f in enumerate(feats)`).
        self._aligned: list[tuple[str, str]] = []
        self._loop_cache: dict[int, Converged] | None = None
        self._loop_events: set[Event] | None = None
        # Allocation sites met inside a loop → the storage token they make (see
        # Loops._renew).
        self._allocations: dict[int, object] = {}
        # The program around the file (aliaslint/project.py; None for a file alone) and
        # what imports.py keeps of its other files: the file whose code runs (this one, or
        # one being loaded), the module environment being loaded, each loaded file's
        # environment (None while it loads: a circular import sees its names so far as
        # unknown), the module environment of each of their functions, by
        # id(FunctionDef), and the statements binding each name of their modules.
        self._link: Link | None = None
        self._path = ""
        self._loading: Env | None = None
        self._foreign: dict[str, Env | None] = {}
        self._homes: dict[int, Env] = {}
        self._foreign_bindings: dict[int, dict[str, set[int]]] = {}
        # The file's classes by definition, and the class each method is defined in
        # (see dispatch.py).
        self._classes_by_node: dict[int, ClassInfo] = {}
        self._owners: dict[int, ClassInfo] = {}
        self._expr_dispatch: dict[type, Callable[[Any, Env], Value]] = {}
        self._stmt_dispatch: dict[type, Callable[[Any, Env], None]] = {}

    def _module_instances(self) -> Instances:
        """Where the module builds each class and calls each name (one walk, when a
        summary first needs it)."""
        if self._instance_sites is None:
            self._instance_sites = Instances(self.module)
        return self._instance_sites

    def _emit(self, event: Event, low: bool = False) -> None:
        if self._raised_in is self._stmt:
            return
        if self._silent:
            # The body of another file's function, run for a summary with this call's
            # values: what happens inside it is reported where the summary is applied.
            # Calls and references alone say nothing the function's own file does not.
            stack = self._summary_stack
            if stack and stack[-1].events is not None and stack[-1].level == self._silent \
                    and not isinstance(event, (Call, Reference)):
                stack[-1].events.append((event, self._is_low(event, low)))
            return
        low = self._is_low(event, low)
        if self._loop_events is not None:
            # Loop passes meet the same event again: report it once.
            if event in self._loop_events:
                return
            self._loop_events.add(event)
        if low:
            if event not in self._emitted:
                self.low.add(event)
        else:
            self.low.discard(event)
        if event not in self._emitted:
            self._emitted.add(event)
            self.events.append(event)

    def _is_low(self, event: Event, low: bool) -> bool:
        """Does the event rest on a guess (assumed values, a may-effect, an element picked by
        an unknown index)?  Then its finding is `low`."""
        write = getattr(event, "write", None)
        return low or self._assuming or isinstance(event, SavedWrite) and event.save.assumed \
            or isinstance(write, Write) and (write.may or write.guessed or write.assumed)

    def _raises(self, node: cst.CSTNode, env: Env) -> None:
        """The call at ``node`` raises for certain whenever it runs: where the statement
        runs it unconditionally, the path ends there (no finding on code after it that
        only this path reaches).  A body analysed with assumed call-site values proves
        nothing."""
        if self._assuming or not runs_unconditionally(self._stmt, node):
            return
        env.flow.dead = env.flow.raised = True
        self._raised_in = self._stmt

    # Which iteration of each unrolled loop over a container's layers is running
    # (`Loops._unroll`): part of the storage token of what a module call makes.
    _unroll_place: tuple[int, ...] = ()

    if TYPE_CHECKING:
        # Implemented by the mixins and called across them; declared here so
        # each part type-checks alone.  Keep in step with the implementations.
        # statements.py, loops.py
        def _block(self, body: Sequence[cst.CSTNode], env: Env) -> None: ...
        def _statement(self, stmt: cst.CSTNode, env: Env) -> None: ...
        def _small(self, small: cst.BaseSmallStatement, env: Env) -> None: ...
        def _bind(self, target: cst.BaseExpression, value: Value, env: Env,
                  evaluate_base: bool = True) -> None: ...
        def _assign_name(self, name: str, value: Value, env: Env) -> None: ...
        def _eval_target(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _element_of(self, iterable: Value, node: cst.CSTNode,
                        env: Env | None = None) -> Value: ...
        def _parameter(self, tokens: frozenset, origin: cst.CSTNode | None) -> TensorValue: ...
        def _leave(self, env: Env, *, to_head: bool) -> None: ...
        def _renew(self, token: object, env: Env) -> None: ...
        # expressions.py
        def _eval(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _receiver(self, node: cst.Attribute, env: Env) -> Value: ...
        def _eval_args(self, node: cst.Call, env: Env) -> None: ...
        def _slices(self, node: cst.Subscript, env: Env) -> None: ...
        def _annotation(self, annotation: cst.Annotation, env: Env) -> Value: ...
        def _view(self, base: TensorValue, node: cst.CSTNode, op: ops.Op | None,
                  dims: tuple | None = None, env: Env | None = None) -> TensorValue: ...
        # functions.py
        def _eval_silently(self, node: cst.BaseExpression, env: Env) -> Value: ...
        def _function_def(self, node: cst.FunctionDef, env: Env, *,
                          cls: ClassInfo | None = None, scope: Env | None = None) -> None: ...
        def _function_body(self, deferred: Deferred) -> None: ...
        def _run_body(self, node: cst.FunctionDef, env: Env) -> list[tuple[Value, Flow]]: ...
        def _outer_env(self, env: Env) -> Env: ...
        def _decorated_grad_mode(self, node: cst.FunctionDef, env: Env) -> bool | None: ...
        def _self_value(self, cls: ClassInfo, *, exact: bool = False) -> Value: ...
        def _class_def(self, node: cst.ClassDef, env: Env) -> None: ...
        # imports.py
        def _linked(self, value: Value, depth: int = 0) -> Value: ...
        def _home(self, function: cst.FunctionDef) -> Env: ...
        def _absolute_import(self, small: cst.ImportFrom) -> str | None: ...
        def _star_names(self, small: cst.ImportFrom, base: str | None) -> dict[str, Value]: ...
        # calls.py
        def _call(self, node: cst.Call, env: Env) -> Value: ...
        def _sometimes_alias(self, op: ops.Op, source: Value | None, args: Args,
                             keywords: Keywords, node: cst.Call, env: Env, token: object,
                             requires: bool | None, graph: frozenset[int],
                             pending: frozenset) -> TensorValue: ...
        # autograd.py
        def _write(self, target: Written, target_node: cst.CSTNode | None, node: cst.CSTNode,
                   label: str | None, env: Env, *, activation: bool = False,
                   defined_at: cst.CSTNode | None = None, visible: bool = True,
                   fill: bool = False, callee: str | None = None, declared: bool = False,
                   inputs: WriteInputs = (), region: tuple | None = None, index: tuple | None = (),
                   cover: tuple | None = None, may: bool = False,
                   assumed: bool = False) -> Written: ...
        def _dirty(self, token: object, write: Write, env: Env) -> None: ...
        def _log_write(self, write: Write, env: Env) -> None: ...
        def _mark_stale(self, tokens: set, write: Write, exclude: set, env: Env) -> None: ...
        def _read_at_the_op(self, operand: cst.BaseExpression, value: Value,
                            env: Env) -> None: ...
        def _absorb(self, target: TensorValue, result: TensorValue, env: Env) -> None: ...
        def _rebind_tensor(self, node: cst.CSTNode | None, value: TensorValue,
                           env: Env) -> None: ...
        def _new_save(self, value: Value, node: cst.CSTNode, label: str | None, what: str,
                      env: Env, what_node: cst.CSTNode | None = None, *,
                      conditional: bool = False) -> Save | None: ...
        def _save(self, storage: object, counter: object, node: cst.CSTNode,
                  label: str | None, what: str, env: Env,
                  what_node: cst.CSTNode | None = None, *, conditional: bool = False,
                  assumed: bool = False, slope: cst.CSTNode | None = None) -> Save: ...
        def _consume(self, value: TensorValue, node: cst.CSTNode, label: str | None, env: Env,
                     *, returned: bool = False, retain: bool = False) -> None: ...
        def _requires_grad(self, inputs: Sequence[Value], env: Env) -> bool | None: ...
        def _slope_save(self, op: ops.Op | None, nodes: dict[str, cst.BaseExpression],
                        target: TensorValue, node: cst.CSTNode, label: str | None,
                        env: Env) -> frozenset[int]: ...
        def _record_saves(self, op: ops.Op, bound: dict[str, Value], result: TensorValue,
                          node: cst.CSTNode, env: Env,
                          nodes: dict[str, cst.BaseExpression] | None = None
                          ) -> TensorValue: ...
        def _backward(self, op: ops.Op, receiver: Value | None, args: Args, node: cst.Call,
                      env: Env) -> None: ...
        def _optimizer_step(self, optimizer: ParamsValue, node: cst.Call, env: Env) -> None: ...
        def _grads_written(self, params: frozenset | None, node: cst.Call, env: Env) -> None: ...
        def _zero_grad(self, params: frozenset, node: cst.Call, env: Env) -> None: ...
        def _write_parameters(self, tokens: frozenset, node: cst.Call, env: Env) -> None: ...
        def _unknown_call(self, args: Args, env: Env) -> None: ...
        def _grad_mode(self, op: ops.Op, args: Args) -> GradModeValue: ...
        # builders.py
        def _child_at(self, container: ModuleValue, node: cst.Subscript) -> Value | None: ...
        def _concat_modules(self, left: Value, right: Value,
                            origin: cst.CSTNode) -> Value | None: ...
        def _grow_module_list(self, receiver: Value, receiver_node: cst.BaseExpression | None,
                              attr: str, positional: list[Value], env: Env) -> Value | None: ...
        def _grow_container(self, container: ModuleValue,
                            receiver_node: cst.BaseExpression | None, attr: str,
                            positional: list[Value], env: Env) -> Value | None: ...
        def _named_submodule(self, node: cst.Call, qualname: str | None, attr: str,
                             receiver: Value | None, receiver_node: cst.BaseExpression | None,
                             args: Args, env: Env) -> Value | None: ...
        # modules.py, protocol.py
        def _summarise(self, function: cst.FunctionDef, cls: ClassInfo | None,
                       args: tuple[Value, ...], layout: tuple | None = None,
                       exact: bool = True) -> Summary | None: ...
        def _bind_parameters(self, function: cst.FunctionDef, cls: ClassInfo | None,
                             args: tuple[Value, ...], layout: tuple | None,
                             env: Env, exact: bool = True) -> bool: ...
        def _construct_module(self, spec: ops.ModuleOp, qualname: str, node: cst.Call,
                              positional: list[Value], keywords: Keywords,
                              ordered: tuple[tuple[str, Value], ...] = ()) -> Value: ...
        def _construct_local_module(self, cls_value: ClassValue, node: cst.Call, args: Args,
                                    env: Env) -> Value: ...
        def _learn_now(self, cls: ClassInfo, args: Args) -> None: ...
        def _summary(self, function: cst.FunctionDef, cls: ClassInfo | None,
                     args: tuple[Value, ...], layout: tuple | None = None, *,
                     exact: bool = True) -> Summary | None: ...
        def _apply_summary(self, summary: Summary,
                           args: Sequence[tuple[Value, cst.BaseExpression | None]],
                           mapping: dict[object, frozenset], node: cst.CSTNode,
                           label: str | None, env: Env, function: cst.FunctionDef, *,
                           receiver: Value | None = None, may: bool = False) -> Value: ...
        def _receiver_mapping(self, receiver: Value | None) -> dict[object, frozenset]: ...
        # dispatch.py
        def _super(self, node: cst.Call, env: Env) -> Value: ...
        def _method_call(self, owner: Value, attr: str, node: cst.Call, args: Args,
                         env: Env) -> Value | None: ...
        def _dispatch(self, receiver: Value, attr: str, node: cst.Call, args: Args,
                      env: Env) -> Value | None: ...
        def _property(self, base: Value, attr: str, node: cst.Attribute,
                      env: Env) -> Value | None: ...
        def _stale_attribute(self, node: cst.Attribute, env: Env) -> None: ...
        def _bound_call(self, definition: cst.FunctionDef, receiver: Value | None,
                        node: cst.Call, args: Args, env: Env, *, may: bool = False) -> Value: ...
        def _bound_method(self, base: Value, attr: str,
                          node: cst.Attribute) -> Value | None: ...
        def _module_method(self, module: ModuleValue, attr: str, node: cst.Call, args: Args,
                           env: Env) -> Value: ...
        def _call_module(self, module: ModuleValue, node: cst.Call, positional: list[Value],
                         args: Args, env: Env) -> Value: ...
        def _run_forward(self, module: ModuleValue, given: list, node: cst.Call,
                         env: Env) -> Value: ...
        def _hooks_of(self, module: ModuleValue) -> list: ...
        def _run_hooked(self, module: ModuleValue, given: list, node: cst.Call,
                        env: Env) -> Value: ...
        def _register_hook(self, module: ModuleValue, attr: str, node: cst.Call, args: Args,
                           env: Env) -> Value: ...
        def _remove_hook(self, handle: HandleValue) -> None: ...
        def _apply_to_modules(self, module: ModuleValue, node: cst.Call,
                              given: tuple[cst.Arg, Value], env: Env) -> bool: ...
        def _module_members(self, module: ModuleValue, attr: str, node: cst.Call) -> Value: ...
        def _narrow(self, test: cst.BaseExpression, env: Env) -> tuple | None: ...
        def _call_function(self, function: FunctionValue, receiver: Value | None,
                           node: cst.Call, args: Args, env: Env, *, may: bool = False,
                           first: Value | None = None) -> Value: ...
        def _record_call(self, function: cst.FunctionDef, cls: ClassInfo | None,
                         node: cst.Call, args: Args, env: Env) -> None: ...
        def _rebased(self, module: ModuleValue, node: cst.Call) -> ModuleValue: ...
        def _construct_object(self, cls: ClassInfo, node: cst.Call, args: Args,
                              env: Env) -> Value: ...
        def _escape(self, args: Args) -> None: ...
