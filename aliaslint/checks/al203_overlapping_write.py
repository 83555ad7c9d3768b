"""AL203 overlapping-write."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import InplaceWrite, Kind, TensorValue, covers_disjoint, regions_overlap
from aliaslint.checks.common import writer_quote
from aliaslint.headline import Code, fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import SHARED_WRITE

RULE = Rule(
    "AL203", "overlapping-write",
    "An in-place write targets memory that overlaps itself or one of the operation's inputs.",
    confirm=SHARED_WRITE,
    traced=(Hazard.OVERLAPPING_WRITE,),
)


@RULE.check(InplaceWrite)
def overlapping_write(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.kind is not Kind.TENSOR:
        return
    if target.expanded:
        origin = target.view_origin
        made: list[str | Code] = [" (", ctx.quote(origin), f", line {ctx.line(origin)})"] \
            if origin is not None else []
        yield RULE.finding(
            write.node, write.stmt,
            fit([*writer_quote(write, ctx), " writes an `expand`ed tensor", *made,
                 ", whose elements share memory"],
                [*writer_quote(write, ctx), " writes an `expand`ed tensor",
                 f" (line {ctx.line(origin)})" if origin is not None else "",
                 ", whose elements share memory"])
            + " · several of its elements are one "
            "memory location, so most ops raise (\"unsupported operation: more than one "
            "element of the written-to tensor refers to a single memory location\") and the "
            "rest (`masked_fill_`, indexing) write each location several times · "
            "`.clone()` (or `.contiguous()`) it first, or build it with `repeat`",
            (("expanded here", origin),) if origin is not None else (),
        )
        return
    for value, role in write.inputs:
        if value.kind is not Kind.TENSOR or value.storage is None \
                or value.storage != target.storage:
            continue
        if role == "index":
            overlaps = True
        elif isinstance(value, TensorValue) and covers_disjoint(write.cover, value.cover):
            continue  # two views of one tensor that reach no common element
        else:
            if write.region is None:
                mine, whole_target = (None if target.via is None else target.region), \
                    target.via is None
            else:
                mine, whole_target = (write.region or None), False
            theirs = None if value.via is None else value.region
            if whole_target and value.via is None:
                continue  # the same memory exactly: `a.add_(a)` is fine
            if whole_target or value.via is None:
                overlaps = True  # a view lies inside its base
            elif mine is None or theirs is None:
                continue  # two views of unknown extent: overlap not proven
            else:
                overlaps = bool(regions_overlap(mine, theirs))
        if not overlaps:
            continue
        source = ctx.quote(role) if isinstance(role, cst.CSTNode) else "its input"
        yield RULE.finding(
            write.node, write.stmt,
            fit([*writer_quote(write, ctx), " reads ", source, " while writing memory that "
                 "overlaps it"])
            + " · the same storage, partly: the result depends on the order elements are "
            "processed, and torch raises \"unsupported operation: some elements of the input "
            "tensor and the written-to tensor refer to a single memory location\" · "
            "`.clone()` the input first",
            (),
        )
        return

