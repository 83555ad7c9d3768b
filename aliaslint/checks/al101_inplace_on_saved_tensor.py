"""AL101 inplace-on-saved-tensor."""

from __future__ import annotations

from aliaslint.analysis import SavedWrite
from aliaslint.checks.common import actor, outcome, saved, saved_write_related, written
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL101", "inplace-on-saved-tensor",
    "An in-place write changes a tensor that autograd saved for a backward pass that is still "
    "to come.",
    confirm="saved",
)


@RULE.check(SavedWrite)
def inplace_on_saved_tensor(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via not in (None, "view") or write.activation:
        return
    if write.target is None:  # optimizer.step()
        message = (f"{ctx.code(write.node)} updates in place parameters that "
                   f"{saved(save, ctx)} saved for backward · "
                   f"{outcome(event, ctx, 'will raise')} · step after that backward pass")
    else:
        message = (f"{written(write, ctx)} was saved for backward by {saved(save, ctx)} · "
                   f"written in place by {actor(write.label, write.node, ctx)} at line "
                   f"{ctx.line(write.node)} · {outcome(event, ctx, 'will raise')} · use the "
                   "out-of-place op, or `.clone()` before writing")
    yield RULE.finding(write.node, write.stmt, message, saved_write_related(event))

