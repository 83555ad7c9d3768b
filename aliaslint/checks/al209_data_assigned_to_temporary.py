"""AL209 data-assigned-to-temporary."""

from __future__ import annotations

from aliaslint.checks import words
from aliaslint.analysis import DataOnTemporary
from aliaslint.headline import Code, fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.predicates import TEMPORARY_DATA

RULE = Rule(
    "AL209", "data-assigned-to-temporary",
    "`.data` is assigned on a tensor object an expression just made, which nothing keeps.",
    words=words.DATA_ASSIGNED,
    confirm=TEMPORARY_DATA,
)


@RULE.check(DataOnTemporary)
def data_assigned_to_temporary(event: DataOnTemporary, ctx: Context):
    made = ctx.code(event.base)
    yield RULE.finding(
        event.node, event.stmt,
        fit(["assigning ", Code(f"{ctx.source(event.base)}.data"), " changes nothing: ",
             ctx.quote(event.base), " is a new tensor object, dropped at once"])
        + f" · {made} makes a new tensor object each time it runs · setting its `.data` swaps "
        "the data of that object only, which is dropped at the end of the statement, so "
        "nothing the program keeps changes · write the values instead: "
        f"`{ctx.source(event.base)}.copy_(v)` (under `torch.no_grad()` for a parameter), or "
        "index-assign into the tensor itself",
        witness=RULE.witness(operands=(ctx.operand(event.base),)),
    )
