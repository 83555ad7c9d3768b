"""AL104 detached-alias-write."""

from __future__ import annotations

from aliaslint.analysis import SavedWrite
from aliaslint.checks.common import outcome, saved, saved_write_related, written
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL104", "detached-alias-write",
    "An in-place write through a `.detach()` alias changes a tensor that autograd still needs.",
    confirm="saved",
)


@RULE.check(SavedWrite)
def detached_alias_write(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "detach" or write.activation:
        return
    yield RULE.finding(
        write.node, write.stmt,
        f"{written(write, ctx)} is a `.detach()` alias of a tensor {saved(save, ctx)} saved "
        "for backward; it shares that tensor's storage and version counter, so writing it in "
        f"place at line {ctx.line(write.node)} invalidates the saved value · "
        f"{outcome(event, ctx, 'will raise')} · `.clone()` the detached tensor before writing",
        saved_write_related(event),
    )

