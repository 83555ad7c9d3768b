"""Message pieces and predicates several rules share."""

from __future__ import annotations

import re

import libcst as cst
from libcst.helpers import get_full_name_for_node

from aliaslint.analysis import Compare, Kind, SavedWrite, StaleRead, Value, Write
from aliaslint import ops
from aliaslint.diagnostics import Applicability, Witness
from aliaslint.headline import Code, fit
from aliaslint.rule import Context, FixPlan, Rule

SAME_STORAGE = "{a}.untyped_storage().data_ptr() == {b}.untyped_storage().data_ptr()"


ADVICE = (
    "to test for one storage compare `" + SAME_STORAGE + "`; for overlapping "
    "memory use `aliaslint.shares_memory({a}, {b})`"
)


def tensor_behind(value: Value, node: cst.CSTNode, ctx: Context) -> str | None:
    """The source of the tensor a value stands for: `a` for `a`, `a.storage()`, `a.data`."""
    if value.kind is Kind.TENSOR:
        return ctx.source(node)
    if value.derived is not None and value.kind in (Kind.STORAGE, Kind.TYPED_STORAGE):
        call = node
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            return ctx.source(call.func.value)
    return None


def derived_operands(event: Compare, how: str, kinds) -> tuple[Value, Value] | None:
    """Both operands' sources when both are ``how(x)`` of a value of ``kinds``."""
    pairs = []
    for value in (event.left, event.right):
        if value.derived is None or value.derived[0] != how or value.derived[1].kind not in kinds:
            return None
        pairs.append(value.derived[1])
    return pairs[0], pairs[1]


def inner(node: cst.CSTNode) -> cst.CSTNode:
    """`x` for `id(x)` and `x.data_ptr()`."""
    if isinstance(node, cst.Call):
        if node.args and not isinstance(node.func, cst.Attribute):
            return node.args[0].value
        if isinstance(node.func, cst.Attribute):
            return node.func.value
    return node


def comparison_witness(rule: Rule, comparison: str, operands: list[cst.CSTNode],
                       ctx: Context) -> Witness:
    """The runtime claim of a sharing test: which test, over which operands."""
    return rule.witness(comparison=comparison,
                        operands=tuple(ctx.operand(node) for node in operands))


def is_call(node: cst.CSTNode, name: str) -> bool:
    """``name(x)`` for a function, ``x.name()`` for a method (no other arguments)."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute):
        return node.func.attr.value == name and not node.args
    return isinstance(node.func, cst.Name) and node.func.value == name and len(node.args) == 1


def storage_test(node: cst.CSTNode, a: str | None, b: str | None,
                 negated: bool) -> FixPlan | None:
    """The sharing test rewritten as a comparison of the two tensors' untyped storages (which
    needs only torch): unsafe, since its answer changes, which is the point. None unless both
    operands are known tensors."""
    if a is None or b is None:
        return None

    def storage(text: str) -> str:
        # A name, attribute chain, call or subscript binds tighter than `.`: no parentheses.
        atomic = re.fullmatch(r"[\w.]+(?:\[[^\[\]]*\]|\([^()]*\))*(?:\.[\w.]+)*", text)
        operand = text if atomic else f"({text})"
        return f"{operand}.untyped_storage().data_ptr()"

    return FixPlan("compare the untyped storages instead", "unsafe",
                   ((node, f"{storage(a)} {'!=' if negated else '=='} {storage(b)}"),))


def advice(a: str | None, b: str | None) -> str:
    return ADVICE.format(a=a or "a", b=b or "b")


# `.storage()` makes a new TypedStorage object per call; untyped storages keep
# one Python object per storage (torch >= 2.2), so their identity is meaningful.
TENSORISH = (Kind.TENSOR, Kind.TYPED_STORAGE)


def actor(label: str | None, node: cst.CSTNode, ctx: Context) -> str:
    """How a message names what saved or wrote: the call, or the module it ran."""
    if label is None:
        return ctx.code(node)
    return f"{label} in {ctx.code(node)}"


def written(write: Write, ctx: Context) -> str:
    if write.target_node is not None:
        return ctx.code(write.target_node)
    return "its input"


def saved(save, ctx: Context) -> str:
    what = save.what if save.what_node is None else f"{save.what} {ctx.code(save.what_node)}"
    return f"{actor(save.label, save.node, ctx)} ({what}, line {ctx.line(save.node)})"


def outcome(event: SavedWrite, ctx: Context, what: str) -> str:
    checkpoint = event.write.checkpoint
    if checkpoint is not None:
        # Non-reentrant checkpointing keeps no saves: the backward pass recomputes the
        # function and takes them from the recomputation, so no version check fails.  It
        # stops recomputing once it has them (before the write) unless early stopping is
        # off, and then it reads the written values.
        return (f"under `checkpoint(..., use_reentrant=False)` (line {ctx.line(checkpoint)}) "
                "nothing raises: backward recomputes this function and takes the saved "
                "values from the recomputation, right only while it stops early (the "
                "default); with `set_checkpoint_early_stop(False)` the gradients are "
                "silently wrong")
    if event.returned:
        return f"backward through the tensor returned at line {ctx.line(event.consumer)} {what}"
    return f"{ctx.code(event.consumer)} at line {ctx.line(event.consumer)} {what}"


def actor_quote(label: str | None, node: cst.CSTNode, ctx: Context) -> list[str | Code]:
    """``actor`` for a headline: the call (shortened to fit), or the module it ran."""
    return [ctx.quote(node)] if label is None else [label, " in ", ctx.quote(node)]


def saver(save, ctx: Context) -> Code:
    """What saved a tensor for backward, for a headline: the call that ran (the module it
    ran and the line are in the details)."""
    return ctx.quote(save.node)


def when(event: SavedWrite, ctx: Context, what: str, *, named: bool = False
         ) -> list[str | Code]:
    """The headline's end: where the pending backward pass ``what`` (will raise ...), the
    call that runs it ``named`` where there is one (`loss.backward()`)."""
    checkpoint = event.write.checkpoint
    if checkpoint is not None:
        return [f"`checkpoint` (line {ctx.line(checkpoint)}) may give wrong gradients"]
    if event.returned:
        return [f"backward of the output (line {ctx.line(event.consumer)}) {what}"]
    if named:
        return [ctx.quote(event.consumer), f" at line {ctx.line(event.consumer)} {what}"]
    return [f"backward at line {ctx.line(event.consumer)} {what}"]


def before_backward(event: SavedWrite, ctx: Context, what: str,
                    *heads: list[str | Code]) -> list[list[str | Code]]:
    """Headline variants for ``fit``: each head followed by where backward ``what``, first
    naming the call that runs it, then only its line."""
    return [[*head, *when(event, ctx, what, named=named)]
            for named in (True, False) for head in heads]


def saved_write_related(event: SavedWrite) -> tuple[tuple[str, cst.CSTNode], ...]:
    write, save = event.write, event.save
    related = [("saved for backward here", save.node)]
    if write.defined_at is not None:
        related.append(("the in-place write happens here", write.defined_at))
    related.append(("returned here: backward through it fails" if event.returned
                    else "backward runs here", event.consumer))
    return tuple(related)


def writer(write: Write, ctx: Context) -> str:
    return actor(write.label, write.node, ctx)


def writer_quote(write: Write, ctx: Context) -> list[str | Code]:
    """``writer`` for a headline."""
    return actor_quote(write.label, write.node, ctx)


def sees(event: StaleRead, ctx: Context) -> str:
    return f"`{event.name}` read at line {ctx.line(event.read)} sees the change"


def read_related(event: StaleRead) -> tuple[str, cst.CSTNode]:
    return (f"`{event.name}` is read here", event.read)


def is_argument(value: Value | object) -> bool:
    """Is this a value (or a storage token) of the memory a function was given?"""
    storage = value.storage if isinstance(value, Value) else value
    return isinstance(storage, tuple) and bool(storage) and storage[0] == "arg"


def plain_write(event: StaleRead) -> bool:
    """A write by code that names its target, of a tensor both names hold."""
    write = event.write
    return (write.target is not None and not write.activation and write.callee is None
            and event.value.snapshot is None)


def maybe_alias_message(write: Write, origin: cst.CSTNode, ctx: Context, changed: str) -> str:
    """``origin`` is the call that returns its source only sometimes; the write through its
    result may change ``changed`` (the caller's tensor, or a name read later)."""
    proven = write.target is not None and write.target.same_as is not None
    how = ("which returns its source itself when no conversion or copy is needed, as here: "
           "the source already has the dtype and layout asked for") if proven else (
        "which returns its source itself (or a view of it) when no conversion or copy is "
        "needed and a new tensor otherwise")
    target = ctx.quote(write.target_node) if write.target_node else "the tensor"
    head = [*writer_quote(write, ctx), " changes " if proven else " may change ", changed, ": "]
    if write.target_node is None or ctx.source(write.target_node) != ctx.source(origin):
        head += [target, " from "]
    line = f" (line {ctx.line(origin)}) "
    headline = fit(
        [*head, ctx.quote(origin), line,
         "is its source here" if proven else "is its source when no copy is needed"],
        [*writer_quote(write, ctx), " changes " if proven else " may change ", changed, ": ",
         ctx.quote(origin), line, "returns its source here" if proven else
         "can return its source"])
    return (f"{headline} · {ctx.code(write.target_node) if write.target_node else 'the tensor'} "
            f"comes from {ctx.code(origin)} (line {ctx.line(origin)}), {how} · "
            "use the out-of-place op, or `.clone()` to always get a copy")


def out_of_place(call: cst.CSTNode, target: cst.CSTNode | None, ctx: Context, *,
                 proven_alone: bool) -> FixPlan | None:
    """The in-place call rewritten out of place: `inplace=True` → `inplace=False`,
    `F.relu_(x)` → `F.relu(x)`, and as a statement of its own `x.mul_(2)` → `x = x.mul(2)`
    (the result kept under the written name). Unsafe: later reads now see the old values,
    which is the fix; display-only unless ``proven_alone`` (no other name is known to hold
    the written tensor, whose readers would no longer see the write)."""
    if not isinstance(call, cst.Call):
        return None
    applicability: Applicability = "unsafe" if proven_alone else "display-only"
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace" and \
                isinstance(arg.value, cst.Name) and arg.value.value == "True":
            return FixPlan("use `inplace=False`", applicability, ((arg.value, "False"),))
    func = call.func
    name = func.attr if isinstance(func, cst.Attribute) else func if isinstance(
        func, cst.Name) else None
    if name is None or not name.value.endswith("_") or name.value.endswith("__") or \
            ops.method(name.value[:-1]) is None and ops.lookup(
                f"torch.nn.functional.{name.value[:-1]}") is None:
        return None
    twin = name.value[:-1]
    # `y.mul_(2).add_(1)`: each in-place method returns its receiver, so the links after
    # this one write the same tensor; made out of place here, they write the new one.
    top, in_place = call, True
    while True:
        parent = ctx.parent(top)
        outer = ctx.parent(parent) if isinstance(parent, cst.Attribute) else None
        if not (isinstance(outer, cst.Call) and outer.func is parent):
            break
        assert isinstance(parent, cst.Attribute)
        in_place = in_place and _in_place(parent.attr.value)
        top = outer
    statement = isinstance(ctx.parent(top), cst.Expr) and in_place
    # `x.data` written: the tensor `x` whose data it is.
    data_of = target.value if isinstance(target, cst.Attribute) and \
        target.attr.value == "data" else None
    if statement:
        if data_of is not None and isinstance(func, cst.Attribute):
            # `x.data.clamp_(...)` → `x = x.clamp(...)`: the op now enters the graph.
            target, func = data_of, func.with_changes(value=data_of)
        # Only a plain name (the one written) can take the result: `x = x.mul(2)`.
        if not isinstance(target, cst.Name):
            return None
        renamed = call.with_changes(func=_renamed(func, twin))
        text = f"{target.value} = {ctx.exact(top.deep_replace(call, renamed))}"
        return FixPlan(f"assign the out-of-place `{twin}` instead", applicability,
                       ((top, text),))
    if data_of is not None or top is not call and isinstance(ctx.parent(top), cst.Expr):
        # An out-of-place op on `x.data` in an expression would drop the write altogether,
        # and so would a statement `x.mul_(2).sum()` whose value nobody keeps.
        return None
    return FixPlan(f"use the out-of-place `{twin}`", applicability, ((name, twin),))


def _in_place(method: str) -> bool:
    return method.endswith("_") and not method.endswith("__")


def _renamed(func: cst.BaseExpression, name: str) -> cst.BaseExpression:
    if isinstance(func, cst.Attribute):
        return func.with_changes(attr=cst.Name(name))
    return cst.Name(name)


def module_name(module: str, at: cst.CSTNode, ctx: Context) -> tuple[str, tuple[str, ...]]:
    """The name under which new code at ``at`` reads the top-level ``module`` (`copy`), and
    the import the fix must add for it (none when the scope already has it).  Where the
    module's own name means something else in that scope (a parameter `copy=False`, a
    local `copy = ...`, `from copy import copy`), an alias that no scope of the module uses:
    `import copy as _copy`."""
    scope = ctx.scope(at)
    visible = list(scope[module]) if scope is not None else []
    if visible and all(_imports(assignment, module) for assignment in visible):
        return module, ()
    if scope is not None and not visible and not _used(module, ctx):
        return module, (module,)
    alias = next(name for name in (f"_{module}", *(f"_{module}{n}" for n in range(2, 100)),
                                   f"_{module}_module")
                 if not _used(name, ctx))
    return alias, (f"{module} as {alias}",)


def _imports(assignment, module: str) -> bool:
    """Is this binding `import module` (or `import module.sub`, which binds it too)?"""
    statement = getattr(assignment, "node", None)
    if not isinstance(statement, cst.Import):
        return False
    return any(alias.asname is None and (get_full_name_for_node(alias.name) or "").split(".")[0]
               == module and assignment.name == module for alias in statement.names)


def _used(name: str, ctx: Context) -> bool:
    """Does ``name`` appear anywhere in the module's code (as a word)?"""
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", ctx.module.code) is not None
