"""AL301 numpy-shared-write."""

from __future__ import annotations

from dataclasses import replace

from aliaslint.analysis import ArrayValue, Kind, StaleRead
from aliaslint.checks.common import read_related, sees, writer, written
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL301", "numpy-shared-write",
    "A tensor and a NumPy array share one buffer, and one side is written while the other is "
    "still read.",
    confirm="numpy",
    assumption="the tensor behind `t.cpu().numpy()` is on the CPU already, so `.cpu()` "
               "returned it and the array shares its memory",
)


@RULE.check(StaleRead)
def numpy_shared_write(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    target = write.target
    if target is None or {target.kind, value.kind} != {Kind.TENSOR, Kind.NDARRAY}:
        return
    if write.activation or write.callee is not None:
        return
    if target.maybe_of is not None or value.maybe_of is not None:
        return  # through `.float()` / `.to()` that may copy: AL205's case, not proven sharing
    shared = target.view_origin if target.view_origin is not None else value.view_origin
    if shared is None:
        return
    side = "the tensor" if target.kind is Kind.TENSOR else "the NumPy array"
    assumed = any(isinstance(v, ArrayValue) and v.device_assumed for v in (target, value))
    finding = RULE.finding(
        write.node, write.stmt,
        f"{written(write, ctx)} and `{event.name}` share one buffer ({ctx.code(shared)} at "
        f"line {ctx.line(shared)} does not copy{' a tensor already on the CPU' if assumed else ''})"
        f" · {writer(write, ctx)} writes {side} in place"
        f" at line {ctx.line(write.node)} · {sees(event, ctx)} · copy at the boundary: "
        "`torch.tensor(a)`, `torch.from_numpy(a.copy())` or `t.numpy().copy()`",
        (("memory is shared from here", shared), read_related(event)),
    )
    yield replace(finding, confidence="low") if assumed else finding

