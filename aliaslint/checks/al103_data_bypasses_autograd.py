"""AL103 data-bypasses-autograd."""

from __future__ import annotations

from aliaslint.analysis import SavedWrite
from aliaslint.checks.common import outcome, saved, saved_write_related, written
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL103", "data-bypasses-autograd",
    "An in-place write through `.data` changes a tensor that a pending backward pass will read,"
    " and autograd cannot notice.",
    confirm="saved",
)


@RULE.check(SavedWrite)
def data_bypasses_autograd(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "data":
        return
    yield RULE.finding(
        write.node, write.stmt,
        f"{written(write, ctx)} writes through `.data` into a tensor {saved(save, ctx)} "
        "saved for backward; `.data` has its own version counter, so autograd cannot notice · "
        f"{outcome(event, ctx, 'will silently use the new values (wrong gradients)')} · "
        "write after the backward pass, or under `torch.no_grad()` without `.data` so autograd "
        "can check it",
        saved_write_related(event),
    )

