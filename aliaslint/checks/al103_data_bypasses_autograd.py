"""AL103 data-bypasses-autograd."""

from __future__ import annotations

from aliaslint.analysis import SavedWrite, TensorValue
from aliaslint.checks.common import (
    actor_quote,
    before_backward,
    out_of_place,
    saved,
    saved_write_related,
    saver,
    written,
)
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import SAVED

RULE = Rule(
    "AL103", "data-bypasses-autograd",
    "An in-place write through `.data` changes a tensor that a pending backward pass will read,"
    " and autograd cannot notice.",
    fix="unsafe: the write made out of place on the tensor itself (`x.data.clamp_(max=1)` → "
        "`x = x.clamp(max=1)`), so the op enters the graph and backward sees it; gradients "
        "change, which is the fix. The same write under `torch.no_grad()` would only turn the "
        "silent error into AL101's RuntimeError",
    confirm=SAVED,
    traced=(Hazard.UNCOUNTED_WRITTEN,),
    # The tracer reports the write a backward pass then reads as a saved tensor written.
    confirmed_by=(Hazard.SAVED_WRITTEN,),
)


@RULE.check(SavedWrite)
def data_bypasses_autograd(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "data":
        return
    yield RULE.finding(
        write.node, write.stmt,
        fit(*before_backward(event, ctx, "gets wrong gradients", [
            *actor_quote(write.label, write.node, ctx), " silently changes what ",
            saver(save, ctx), " saved; "], [
            *actor_quote(write.label, write.node, ctx), " changes what ", saver(save, ctx),
            " saved; "]))
        + f" · saved: {saved(save, ctx)} · {written(write, ctx)} has its own version counter, "
        "so autograd cannot notice the write · "
        "write after the backward pass, or under `torch.no_grad()` without `.data` so autograd "
        "can check it",
        saved_write_related(event),
        fix=out_of_place(write.node, write.target_node, ctx, proven_alone=True)
        if _computed(write.target) else None,
    )


def _computed(data: object) -> bool:
    """Is this `.data` of a tensor the graph computed (not a leaf such as a parameter,
    whose `.data` write is an update the code means to keep on the parameter)?"""
    derived = getattr(data, "derived", None)
    base = derived[1] if isinstance(derived, tuple) and derived[:1] == ("data",) else None
    return isinstance(base, TensorValue) and not base.leaf and base.requires_grad is True

