"""AL202 view-of-noncontiguous."""

from __future__ import annotations

from aliaslint.analysis import NonContiguousView
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL202", "view-of-noncontiguous",
    "`.view()` is called on a tensor that is known not to be contiguous.",
    confirm="view",
)


@RULE.check(NonContiguousView)
def view_of_noncontiguous(event: NonContiguousView, ctx: Context):
    origin = event.receiver.layout_origin
    if origin is None:
        return
    yield RULE.finding(
        event.node, event.stmt,
        f"{ctx.code(event.node)} needs a contiguous-compatible layout, but "
        f"{ctx.code(origin)} at line {ctx.line(origin)} made the tensor non-contiguous: "
        "this raises \"view size is not compatible with input tensor's size and stride\" · "
        "use `.reshape(...)`, or `.contiguous().view(...)`",
        (("made non-contiguous here", origin),),
    )

