"""AL403 data-ptr-sharing-check."""

from __future__ import annotations

import re

from aliaslint.analysis import Compare, Kind
from aliaslint.checks.common import advice, comparison_witness, derived_operands, inner, is_call
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL403", "data-ptr-sharing-check",
    "`data_ptr()` of two tensors is compared to decide whether memory is shared.",
    words=re.compile(r"data_ptr").search,
    confirm="compare",
)


@RULE.check(Compare)
def data_ptr_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("==", "!="):
        return
    if derived_operands(event, "data_ptr", (Kind.TENSOR,)) is None:
        return
    a = ctx.source(inner(event.left_node))
    b = ctx.source(inner(event.right_node))
    yield RULE.finding(
        event.node, event.stmt,
        "`data_ptr()` equality only tells whether two tensors start at the same address: "
        f"a view at an offset (`{a}[1:]`) shares the storage with a different `data_ptr()` · "
        + advice(a, b),
        witness=comparison_witness(RULE, "data_ptr", [
            inner(side) for side in (event.left_node, event.right_node)
            if is_call(side, "data_ptr")], ctx),
    )

