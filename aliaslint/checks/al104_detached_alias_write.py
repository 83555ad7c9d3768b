"""AL104 detached-alias-write."""

from __future__ import annotations

from aliaslint.analysis import SavedWrite
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
    "AL104", "detached-alias-write",
    "An in-place write through a `.detach()` alias changes a tensor that autograd still needs.",
    fix="unsafe: the write through the detached alias made out of place (`codes.clamp_(0)` → "
        "`codes = codes.clamp(0)`), so the alias gets a tensor of its own and what autograd "
        "saved keeps its values, which is the fix",
    confirm=SAVED,
    traced=(Hazard.DETACHED_WRITTEN,),
    # The tracer reports the write a backward pass then reads as a saved tensor written.
    confirmed_by=(Hazard.SAVED_WRITTEN,),
)


@RULE.check(SavedWrite)
def detached_alias_write(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "detach" or write.activation:
        return
    yield RULE.finding(
        write.node, write.stmt,
        fit(*before_backward(event, ctx, "will raise", [
            *actor_quote(write.label, write.node, ctx), " writes a `.detach()` alias of what ",
            saver(save, ctx), " saved; "], [
            *actor_quote(write.label, write.node, ctx), " writes a detached alias of what ",
            saver(save, ctx), " saved; "]))
        + f" · {written(write, ctx)} is a `.detach()` alias of a tensor {saved(save, ctx)} "
        "saved for backward; it shares that tensor's storage and version counter, so writing "
        f"it in place at line {ctx.line(write.node)} invalidates the saved value · "
        "`.clone()` the detached tensor before writing",
        saved_write_related(event),
        # Out of place, the alias gets a new tensor and the saved one keeps its values.
        fix=out_of_place(write.node, write.target_node, ctx, proven_alone=True),
    )

