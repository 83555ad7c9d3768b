"""AL206 replicated-tensor."""

from __future__ import annotations

from aliaslint.analysis import InplaceWrite
from aliaslint.checks.common import writer, written
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL206", "replicated-tensor",
    "A container holds the same tensor several times, and one element is written in place.",
    confirm="replicated",
)


@RULE.check(InplaceWrite)
def replicated_tensor(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.replica is None:
        return
    container = target.replica
    yield RULE.finding(
        write.node, write.stmt,
        f"{written(write, ctx)} is an element of {ctx.code(container)} (line "
        f"{ctx.line(container)}), which holds the same tensor object in every place · the "
        f"in-place {writer(write, ctx)} changes all of them · build one tensor per element: "
        "`[torch.zeros(...) for _ in range(n)]` / `{k: torch.zeros(...) for k in keys}`",
        (("the repeated container is built here", container),),
    )

