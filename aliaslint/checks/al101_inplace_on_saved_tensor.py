"""AL101 inplace-on-saved-tensor."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import SavedWrite
from aliaslint.checks.common import (
    actor_quote,
    before_backward,
    out_of_place,
    outcome,
    saved,
    saved_write_related,
    saver,
)
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import SAVED

RULE = Rule(
    "AL101", "inplace-on-saved-tensor",
    "An in-place write changes a tensor that autograd saved for a backward pass that is still "
    "to come.",
    fix="unsafe: the write made out of place (`inplace=False`, `x = x.mul(2)`), so what "
        "autograd saved keeps its values, which is the fix; shown only where another name may "
        "hold the written tensor or it is a leaf such as a parameter (its update belongs "
        "after the backward pass); in a chain `y.mul_(2).add_(1)` the first link is made out of place "
        "and the rest of the chain writes the new tensor",
    confirm=SAVED,
    traced=(Hazard.SAVED_WRITTEN,),
)


@RULE.check(SavedWrite)
def inplace_on_saved_tensor(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via not in (None, "view") or write.activation:
        return
    # The checkpoint case says why nothing raises after the headline.
    checkpoint = f" · {outcome(event, ctx, '')}" if write.checkpoint is not None else ""
    if write.target is None:  # optimizer.step()
        message = (fit(*before_backward(event, ctx, "will raise", [
                            ctx.quote(write.node), " updates parameters that ", saver(save, ctx),
                            " saved for backward; "]))
                   + f" · saved: {saved(save, ctx)}{checkpoint} · step after that backward pass")
    else:
        target = ctx.quote(write.target_node) if write.target_node is not None else "its input"
        # A write inside a function this code calls is quoted where it is (the finding's
        # location); the call is related.
        what = [ctx.quote(write.defined_at)] if write.callee is not None and \
            write.defined_at is not None else actor_quote(write.label, write.node, ctx)
        message = (fit(*before_backward(
                            event, ctx, "will raise",
                            [*what, " overwrites ", target, ", saved for backward by ",
                             saver(save, ctx), "; "],
                            [*what, " overwrites what ", saver(save, ctx),
                             " saved for backward; "],
                            [*what, " overwrites what ", saver(save, ctx), " saved; "]))
                   + f" · saved: {saved(save, ctx)}{checkpoint} · use the out-of-place op, or "
                   "`.clone()` before writing")
    if write.callee is not None and write.defined_at is not None:
        # A function of the program wrote it: the finding points at that write, where the
        # fix goes (out of place there), and the call is related.
        related = (*(r for r in saved_write_related(event) if r[1] is not write.defined_at),
                   ("written through this call", write.node))
        inside = write.defined_at
        receiver = inside.func.value if isinstance(inside, cst.Call) and isinstance(
            inside.func, cst.Attribute) else None
        # Shown only: the callee's tensor is the caller's, whose other names see the write.
        fix = out_of_place(inside, receiver, ctx, proven_alone=False)
        yield RULE.finding(inside, inside, message, related, fix=fix)
        return
    # A leaf (a parameter) written in place is an update meant to stay on that tensor:
    # rebinding its name to a new one would drop it, so that rewrite is only shown.
    alone = write.via is None and not getattr(write.target, "leaf", False)
    fix = out_of_place(write.node, write.target_node, ctx, proven_alone=alone) \
        if write.target is not None else None
    yield RULE.finding(write.node, write.stmt, message, saved_write_related(event), fix=fix)

