"""AL403 data-ptr-sharing-check."""

from __future__ import annotations

from aliaslint.checks import words
from aliaslint.analysis import Compare, Kind, TensorValue, Value
from aliaslint.checks.common import (
    advice,
    comparison_witness,
    derived_operands,
    inner,
    is_call,
    storage_test,
)
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.predicates import COMPARE

RULE = Rule(
    "AL403", "data-ptr-sharing-check",
    "`data_ptr()` of two tensors is compared to decide whether memory is shared.",
    words=words.DATA_PTR,
    confirm=COMPARE,
    fix="unsafe: the comparison becomes one of the two tensors' untyped storages, whose answer "
        "differs for views, which is the point; only when both operands are known tensors",
)


def starts_storage(value: Value) -> bool:
    """Is ``value`` proven to sit at storage offset 0 (a new tensor of literal shape, or a
    view of one that does not move the start: `reshape`, `t()`, `x[0]`, `x[:, :2]`)?"""
    return isinstance(value, TensorValue) and value.layout is not None and \
        value.layout.offset == 0


@RULE.check(Compare)
def data_ptr_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("==", "!="):
        return
    operands = derived_operands(event, "data_ptr", (Kind.TENSOR,))
    if operands is None or all(starts_storage(value) for value in operands):
        # Both proven to start their storage: equal pointers mean the same storage.
        return
    a = ctx.source(inner(event.left_node))
    b = ctx.source(inner(event.right_node))
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), " misses views at an offset: it compares where tensors "
             "start, not their storage"],
            [ctx.quote(event.node), " misses views that start at an offset"])
        + " · `data_ptr()` equality only tells whether two tensors start at the same address: "
        f"a view at an offset (`{a}[1:]`) shares the storage with a different `data_ptr()` · "
        + advice(a, b),
        witness=comparison_witness(RULE, "data_ptr", [
            inner(side) for side in (event.left_node, event.right_node)
            if is_call(side, "data_ptr")], ctx),
        fix=storage_test(event.node, a, b, event.operator == "!="),
    )

