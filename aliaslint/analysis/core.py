"""The interpreter's state, shared by every part of it, and how events leave it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.instances import Instances
from aliaslint.analysis.events import (
    Call,
    Event,
    Reference,
    SavedWrite,
    SaveIds,
    Write)
from aliaslint.analysis.scopes import (
    ClassInfo,
    Converged,
    Deferred,
    Env,
    Flow,
    LoopFrame)
from aliaslint.analysis.syntax import freezes_gradients, runs_unconditionally
from aliaslint.analysis.values import (
    TensorValue,
    Value)

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


class State:
    """What one run over a module knows and has found, shared by the parts of the
    interpreter (see `Part`): the statement running, the paths' bookkeeping, the summaries
    made so far, and the events reported."""

    def __init__(self, module: cst.Module, source: str | None = None):
        self.module = module
        self.events: list[Event] = []
        self.stats = Stats()
        # The statement being interpreted: events point their suppression at it.
        self.stmt: cst.CSTNode = module
        # The statement in which a call raised for certain (see `raises`): the events
        # of the rest of it are not reported, since that code does not run.
        self.raised_in: cst.CSTNode | None = None
        self.deferred: list[Deferred] = []
        # Names the pending deferred bodies call: a body runs after its callers, so that
        # it sees the values their call sites pass (see functions.py).
        self.pending_calls: Counter[str] = Counter()
        self.pending_inits: Counter[int] = Counter()  # id(ClassInfo) → pending __init__s
        # The body running is analysed with its callers' values and could be called
        # from elsewhere with others: its events are `low` confidence findings.
        self.assuming = False
        self.emitted: set[Event] = set()
        self.low: set[Event] = set()  # events that rest on call-site values
        self.saves_log: list[cst.CSTNode] = []  # where each save was made, in order
        # Functions run by `checkpoint(..., use_reentrant=False)`: id → that call.
        self.checkpointed: dict[int, cst.Call] = {}
        self.save_ids = SaveIds()
        self.silent = 0  # > 0 while summarising a callee: its events are not reported
        # Branches and loop bodies around the statement (may not run), and whether the
        # effects being applied are may-effects (a hook perhaps registered): see protocol.py.
        self.branches = 0
        self.may_effect = False
        # Summaries being computed, outermost first (see protocol.py).
        self.summary_stack: list[Any] = []
        self.returns: list[tuple[Value, Flow]] | None = None  # values the function returns
        self.function: cst.FunctionDef | None = None
        # The `with` blocks around the statement: "unchecked" / "autocast" (see training.py).
        self.save_modes: list[str] = []
        # `training_step` methods of LightningModules under automatic optimisation.
        self.lightning_steps: set[int] = set()
        self.top = Env()
        # Module-level names: the statements that bind each, and names some
        # function rebinds with `global`.  A name bound once and never
        # rebound holds the same value whenever a function runs.
        self.bindings: dict[str, set[int]] = {}
        self.rebound: set[str] = set()
        self.deferring = False  # running function bodies, the module body done
        self.write_log: list[Write] | None = None  # writes made while summarising
        # Tensors a summarised method keeps on its `self` (`self.cache = t`): key -> value.
        self.state_log: dict[str, tuple[object, TensorValue]] | None = None
        self.may_write = False  # applying a write a callee makes on some paths only
        self.instance_sites: Instances | None = None  # built when a summary first needs it
        # The graphs backward passes ran through while summarising (see Summary.consumed).
        self.consume_log: list[frozenset[int]] | None = None
        self.index_values: dict[int, Value] = {}  # subscript index expression → value
        self.subscript_bases: dict[int, Value] = {}  # subscript → the value indexed
        self.rewriting = False  # evaluating the target of an in-place write
        self.type_checking = False  # in the body of `if TYPE_CHECKING:`
        # The file turns requires_grad off somewhere (`p.requires_grad = False`,
        # `model.requires_grad_(False)`): which modules it freezes is not tracked, so no
        # module's parameters are assumed to require grad.
        self.freezes = freezes_gradients(source if source is not None else module.code)
        # A factory's dtype when none is given: the default float dtype, unless the file
        # changes it somewhere (`torch.set_default_dtype`), which is not followed.
        text = source if source is not None else module.code
        self.default_float: str | None = None if "set_default_" in text else \
            ops.dtype_fact("default float")
        # Loops (see loops.py): the enclosing loops' break and continue states,
        # and, while the outermost loop of a nest runs, each inner loop's last
        # fixed point and the events already reported.
        self.loops: list[LoopFrame] = []
        # (index name, container key) of the loops running now that walk a container's
        # indices (`for i in range(len(feats))`, `for i, f in enumerate(feats)`).
        self.aligned: list[tuple[str, str]] = []
        self.loop_cache: dict[int, Converged] | None = None
        self.loop_events: set[Event] | None = None
        # The program around the file (aliaslint/project.py; None for a file alone) and
        # what imports.py keeps of its other files: the file whose code runs (this one, or
        # one being loaded), the module environment being loaded, each loaded file's
        # environment (None while it loads: a circular import sees its names so far as
        # unknown), the module environment of each of their functions, by
        # id(FunctionDef), and the statements binding each name of their modules.
        self.link: Link | None = None
        self.path = ""
        self.loading: Env | None = None
        self.homes: dict[int, Env] = {}
        self.foreign_bindings: dict[int, dict[str, set[int]]] = {}
        # The file's classes by definition, and the class each method is defined in
        # (see dispatch.py).
        self.classes_by_node: dict[int, ClassInfo] = {}
        self.owners: dict[int, ClassInfo] = {}
        self.expr_dispatch: dict[type, Callable[[Any, Env], Value]] = {}
        self.stmt_dispatch: dict[type, Callable[[Any, Env], None]] = {}

    def module_instances(self) -> Instances:
        """Where the module builds each class and calls each name (one walk, when a
        summary first needs it)."""
        if self.instance_sites is None:
            self.instance_sites = Instances(self.module)
        return self.instance_sites

    def emit(self, event: Event, low: bool = False) -> None:
        if self.raised_in is self.stmt:
            return
        if self.silent:
            # The body of another file's function, run for a summary with this call's
            # values: what happens inside it is reported where the summary is applied.
            # Calls and references alone say nothing the function's own file does not
            # (``emit_call`` and ``emit_reference`` do not even build them).
            stack = self.summary_stack
            if stack and stack[-1].events is not None and stack[-1].level == self.silent \
                    and not isinstance(event, (Call, Reference)):
                stack[-1].events.append((event, self.is_low(event, low)))
            return
        low = self.is_low(event, low)
        # (Membership by a set's size: an event's hash walks every value it holds, so each
        # set is asked once.)
        if self.loop_events is not None:
            # Loop passes meet the same event again: report it once.
            before = len(self.loop_events)
            self.loop_events.add(event)
            if len(self.loop_events) == before:
                return
        before = len(self.emitted)
        self.emitted.add(event)
        new = len(self.emitted) != before
        if low:
            if new:
                self.low.add(event)
        elif self.low:
            self.low.discard(event)
        if new:
            self.events.append(event)

    def emit_call(self, node: cst.Call, qualname: str | None, receiver: Value | None,
                  receiver_node: cst.BaseExpression | None, result: Value) -> None:
        """A call's event; not built while silent, where ``emit`` drops it (a third of all
        events a check made were these two kinds, built to be dropped)."""
        if not self.silent:
            self.emit(Call(node, self.stmt, qualname, receiver, receiver_node, result))

    def emit_reference(self, node: cst.CSTNode, qualname: str) -> None:
        """A reference's event (an importable name used); not built while silent."""
        if not self.silent:
            self.emit(Reference(node, self.stmt, qualname))

    def is_low(self, event: Event, low: bool) -> bool:
        """Does the event rest on a guess (assumed values, a may-effect, an element picked by
        an unknown index)?  Then its finding is `low`."""
        write = getattr(event, "write", None)
        return low or self.assuming or isinstance(event, SavedWrite) and event.save.assumed \
            or isinstance(write, Write) and (write.may or write.guessed or write.assumed)

    def raises(self, node: cst.CSTNode, env: Env) -> None:
        """The call at ``node`` raises for certain whenever it runs: where the statement
        runs it unconditionally, the path ends there (no finding on code after it that
        only this path reaches).  A body analysed with assumed call-site values proves
        nothing."""
        if self.assuming or not runs_unconditionally(self.stmt, node):
            return
        env.flow.dead = env.flow.raised = True
        self.raised_in = self.stmt

    # Which iteration of each unrolled loop over a container's layers is running
    # (`Loops._unroll`): part of the storage token of what a module call makes.
    unroll_place: tuple[int, ...] = ()


class Part:
    """One part of the interpreter: a set of methods over the run's `State` that calls the
    other parts it names through their interfaces (interfaces.py).  Each part class
    declares the parts it calls as annotations of the class (`calls: api.Calls`); `Analysis`
    makes the parts and connects them."""

    # The names of the parts it calls: its class's annotations whose type is an interface.
    handles: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = vars(cls).get("__annotations__", {})
        cls.handles = tuple(name for name, kind in declared.items()
                            if str(kind).startswith("api."))

    def __init__(self, state: State) -> None:
        self.state = state

    def connect(self, parts: dict[str, object]) -> None:
        for name in self.handles:
            setattr(self, name, parts[name])
