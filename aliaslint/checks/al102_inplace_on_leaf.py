"""AL102 inplace-on-leaf."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import InplaceWrite, TensorValue
from aliaslint.checks.common import actor_quote
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import LEAF

RULE = Rule(
    "AL102", "inplace-on-leaf",
    "An in-place write to a leaf tensor that requires grad, outside `torch.no_grad()`.",
    confirm=LEAF,
    traced=(Hazard.LEAF_REFUSED,),
    # The tracer reports the write a backward pass then reads as a saved tensor written.
    confirmed_by=(Hazard.SAVED_WRITTEN,),
)


@RULE.check(InplaceWrite)
def inplace_on_leaf(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or not target.leaf or target.requires_grad is not True:
        return
    if isinstance(target, TensorValue) and target.forbidden is not None:
        return  # torch refuses the view first (AL106)
    if write.via not in (None, "view") or write.grad_enabled is not True:
        return
    receiver = write.target_node
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and \
            receiver.func.attr.value.endswith("_"):
        return  # `p.mul_(d).add_(x)`: torch raises at the first write, reported already
    related: tuple[tuple[str, cst.CSTNode], ...] = ()
    if target.origin is not None:
        related = (("created here as a leaf that requires grad", target.origin),)
    what = "a view of a leaf" if write.via == "view" else "a leaf"
    quoted = ctx.quote(write.target_node) if write.target_node is not None else "its input"
    yield RULE.finding(
        write.node, write.stmt,
        fit([*actor_quote(write.label, write.node, ctx), " writes ", quoted,
             f", {what} that requires grad, outside `torch.no_grad()`: it raises"])
        + " · \"a leaf Variable that requires grad is being used in an in-place operation\" · "
        "wrap the update in `with torch.no_grad():`",
        related,
    )

