"""AL401 id-sharing-check."""

from __future__ import annotations

from aliaslint.checks import words
from aliaslint.analysis import Compare, Kind
from aliaslint.checks.common import (
    TENSORISH,
    advice,
    comparison_witness,
    derived_operands,
    inner,
    is_call,
    storage_test,
    tensor_behind,
)
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.predicates import COMPARE

RULE = Rule(
    "AL401", "id-sharing-check",
    "`id()` of tensors or storages is compared to decide whether memory is shared.",
    words=words.ID,
    confirm=COMPARE,
    fix="unsafe: the comparison becomes one of the two tensors' untyped storages, whose answer "
        "differs for views, which is the point; only when both operands are known tensors",
)


@RULE.check(Compare)
def id_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("==", "!="):
        return
    operands = derived_operands(event, "id", TENSORISH)
    if operands is None:
        return
    left, right = inner(event.left_node), inner(event.right_node)
    a = tensor_behind(operands[0], left, ctx)
    b = tensor_behind(operands[1], right, ctx)
    if Kind.TENSOR in (operands[0].kind, operands[1].kind):
        what, short = (" tests object identity, not shared memory: views of one storage have "
                       "other ids"), " tests object identity, not shared memory"
        why = "views of one storage are distinct objects with distinct ids"
    else:
        what = " says nothing: each `.storage()` call makes a new object that dies at once"
        short = " says nothing: each `.storage()` call makes a new object"
        why = ("each `.storage()` call returns a new wrapper object that dies at once, "
               "so the ids say nothing and may even coincide")
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), what], [ctx.quote(event.node), short])
        + f" · `id()` comparison tests Python object identity, not shared memory: {why} · "
        + advice(a, b),
        witness=comparison_witness(RULE, "id", [left, right] if is_call(event.left_node, "id")
                                   and is_call(event.right_node, "id") else [], ctx),
        fix=storage_test(event.node, a, b, event.operator == "!="),
    )

