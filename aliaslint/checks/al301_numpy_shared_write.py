"""AL301 numpy-shared-write."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from aliaslint.analysis import ArrayValue, Kind, StaleRead
from aliaslint.checks.common import read_related, sees, writer, writer_quote, written
from aliaslint.headline import fit
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import NUMPY

RULE = Rule(
    "AL301", "numpy-shared-write",
    "A tensor and a NumPy array share one buffer, and one side is written while the other is "
    "still read.",
    fix="unsafe: a copy where the sharing starts (`torch.from_numpy(a).clone()`, "
        "`t.numpy().copy()`), so the write no longer reaches the other side, which is the fix; "
        "it costs a second buffer and undoes sharing that was meant (filling a pinned buffer "
        "from NumPy)",
    confirm=NUMPY,
    traced=(Hazard.NUMPY_SHARED,),
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
    # The side the sharing call made gets its own buffer: a tensor by `.clone()`, an
    # array by `.copy()`.
    made = target if shared is target.view_origin else value
    fix = FixPlan(
        "copy where the sharing starts", "unsafe",
        ((shared, f"{ctx.exact(shared)}.{'clone' if made.kind is Kind.TENSOR else 'copy'}()"),),
    ) if isinstance(shared, cst.Call) else None
    finding = RULE.finding(
        write.node, write.stmt,
        fit([*writer_quote(write, ctx), f" also changes `{event.name}` (one buffer since line "
             f"{ctx.line(shared)}), read at line {ctx.line(event.read)}"])
        + f" · {written(write, ctx)} and `{event.name}` share one buffer ({ctx.code(shared)} at "
        f"line {ctx.line(shared)} does not copy{' a tensor already on the CPU' if assumed else ''})"
        f" · {writer(write, ctx)} writes {side} in place · copy at the boundary: "
        "`torch.tensor(a)`, `torch.from_numpy(a.copy())` or `t.numpy().copy()`",
        (("memory is shared from here", shared), read_related(event)),
        fix=fix,
    )
    yield replace(finding, confidence="low") if assumed else finding

