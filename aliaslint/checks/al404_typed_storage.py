"""AL404 typed-storage."""

from __future__ import annotations

import re

import libcst as cst

from aliaslint.checks import words
from aliaslint.analysis import Call, Reference
from aliaslint.diagnostics import Applicability
from aliaslint.headline import Code, fit
from aliaslint.rule import Context, FixPlan, Rule, chain
from aliaslint.runtime.predicates import STORAGE

RULE = Rule(
    "AL404", "typed-storage",
    "The deprecated typed storage API is used; use `untyped_storage()` and "
    "`torch.UntypedStorage`.",
    words=words.STORAGE,
    confirm=STORAGE,
    fix="safe where the storage is asked the same question in both APIs (`data_ptr()`, "
        "`device`, `nbytes()`, `is_shared()`); unsafe where units change (`size()` counts "
        "elements in a typed storage, bytes in an untyped one); shown only otherwise",
)

# What a typed and an untyped storage of one tensor answer alike: the same memory, the
# same device, the same bytes.
_SAME_ANSWER = frozenset({"data_ptr", "device", "nbytes", "is_shared", "is_pinned", "is_cuda"})
# What they answer in different units: elements in one, bytes in the other.
_UNITS_CHANGE = frozenset({"size", "__len__", "tolist"})


_TYPED_STORAGE_CLASS = re.compile(r"^torch\.(?:cuda\.)?(?:storage\.)?(?!Untyped)(\w+)Storage$")


@RULE.check(Call)
def typed_storage_call(event: Call, ctx: Context):
    if event.qualname == "torch.Tensor.storage" and event.receiver is not None \
            and event.receiver_node is not None:
        tensor = ctx.source(event.receiver_node)
        yield RULE.finding(
            event.node, event.stmt,
            fit([Code(f"{tensor}.storage()"), " returns a deprecated `TypedStorage`"]) + " · use "
            f"`{tensor}.untyped_storage()` (its sizes and offsets count bytes, not elements)",
            witness=RULE.witness(operands=(ctx.operand(event.receiver_node),)),
            fix=_untyped(event.node, ctx),
        )


def _untyped(call: cst.CSTNode, ctx: Context) -> FixPlan | None:
    """`t.storage()` → `t.untyped_storage()`, classed by what the code asks the storage."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    parent = ctx.parent(call)
    asked = parent.attr.value if isinstance(parent, cst.Attribute) else None
    applicability: Applicability = "safe" if asked in _SAME_ANSWER else \
        "unsafe" if asked in _UNITS_CHANGE else "display-only"
    return FixPlan("use `untyped_storage()`", applicability,
                   ((call.func.attr, "untyped_storage"),))


@RULE.check(Reference)
def typed_storage_class(event: Reference, ctx: Context):
    match = _TYPED_STORAGE_CLASS.match(event.qualname)
    if match is None or match.group(1) == "_":
        return
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), " is a deprecated typed storage class"
             + ("" if ctx.source(event.node) == event.qualname else f" (`{event.qualname}`)")])
        + " · use "
        "`torch.UntypedStorage` (or a tensor of the wanted dtype)",
        # An imported name is bound only after its line ran: nothing to read then.
        witness=RULE.witness(target=chain(event.node)),
    )

