"""AL404 typed-storage."""

from __future__ import annotations

import re

from aliaslint.analysis import Call, Reference
from aliaslint.rule import Context, Rule, chain

RULE = Rule(
    "AL404", "typed-storage",
    "The deprecated typed storage API is used; use `untyped_storage()` and "
    "`torch.UntypedStorage`.",
    words=re.compile(r"[sS]torage").search,
    confirm="storage",
)


_TYPED_STORAGE_CLASS = re.compile(r"^torch\.(?:cuda\.)?(?:storage\.)?(?!Untyped)(\w+)Storage$")


@RULE.check(Call)
def typed_storage_call(event: Call, ctx: Context):
    if event.qualname == "torch.Tensor.storage" and event.receiver is not None \
            and event.receiver_node is not None:
        tensor = ctx.source(event.receiver_node)
        yield RULE.finding(
            event.node, event.stmt,
            f"`{tensor}.storage()` returns a deprecated `TypedStorage` · use "
            f"`{tensor}.untyped_storage()` (its sizes and offsets count bytes, not elements)",
            witness=RULE.witness(operands=(ctx.operand(event.receiver_node),)),
        )


@RULE.check(Reference)
def typed_storage_class(event: Reference, ctx: Context):
    match = _TYPED_STORAGE_CLASS.match(event.qualname)
    if match is None or match.group(1) == "_":
        return
    yield RULE.finding(
        event.node, event.stmt,
        f"`{event.qualname}` is a deprecated typed storage class · use "
        "`torch.UntypedStorage` (or a tensor of the wanted dtype)",
        # An imported name is bound only after its line ran: nothing to read then.
        witness=RULE.witness(target=chain(event.node)),
    )

