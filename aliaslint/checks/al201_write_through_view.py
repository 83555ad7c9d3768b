"""AL201 write-through-view."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import (
    Kind,
    StaleRead,
    TensorValue,
    Write,
    covers_disjoint,
    covers_tile,
    indexes_overlap,
    reads,
    regions_overlap,
    root_of,
)
from aliaslint.checks.common import is_argument, plain_write, read_related, writer_quote
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import SHARED_WRITE

RULE = Rule(
    "AL201", "write-through-view",
    "An in-place write through a named view also changes its base, which is read afterwards.",
    confirm=SHARED_WRITE,
    traced=(Hazard.VIEW_WRITE_READ,),
)


def _fill_reported(event: StaleRead) -> bool:
    """A write that overwrites what it writes (item assignment, `copy_`, `fill_`, `out=`) is
    how code fills a buffer through views on purpose.  Reported: through a named view made by
    a view op (`t()`, `narrow`, `diagonal`, ...), or all of a named slice of a tensor that is
    not a placeholder (not made by `zeros` / `empty` / `full` ...); and, the base written, a view taken before it that is
    read next to the base (`new - prev`) as the old values, the overlap proven in every dim."""
    write, target, value = event.write, event.write.target, event.value
    assert isinstance(target, TensorValue)
    if target.requires_grad is True:
        return False  # autograd's own rules (AL101, AL106) say what that write breaks
    if target.via is not None:
        # Filling part of a named slice by computed indices (`mask[:h, :w] = False`,
        # `scores[scores < t] = 0`) is how padded batches and masks are built; all of a slice
        # of data (`nn.init.zeros_(rows)`), or a fixed element of it (`prompt[0] = 0`), is not.
        return target.op_view or not target.blank and write.index is not None and \
            "?" not in write.index
    if not isinstance(value, TensorValue) or value.via != "view":
        return False
    return indexes_overlap(write.index, value.index) and event.read_stmt is not None and \
        write.target_node is not None and reads(event.read_stmt, write.target_node)


def _filled(write: Write, base: TensorValue) -> bool:
    """Is ``base`` a tensor the code just made, read after writes through its parts that
    together reach every element of it (`first, second = out[..., :1, :], out[..., 1:, :]`,
    each written in place)?  Then the read sees what the writes were for: the code fills its
    own tensor piece by piece.  Fresh: made by an out-of-place op or a factory here (not an
    argument, a parameter, an attribute, a tensor that may be its source), held by no
    attribute or container when written (Write.joint)."""
    if not write.joint or write.cover is None or base.via is not None or \
            base.maybe_of is not None or root_of(base) != write.cover[0]:
        return False
    token = base.storage
    if not (isinstance(token, tuple) and token and token[0] == "alloc"):
        return False
    return covers_tile(write.joint, base.layout.shape if base.layout is not None else None)


def _returned(stmt: cst.CSTNode | None, read: cst.CSTNode) -> bool:
    """Is ``read`` the whole value of a `return` (`return batch`)?"""
    return isinstance(stmt, cst.SimpleStatementLine) and \
        any(isinstance(small, cst.Return) and small.value is read for small in stmt.body)


@RULE.check(StaleRead)
def write_through_view(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    target = write.target
    if target is None or not plain_write(event) or target.expanded:
        return
    if target.kind is not Kind.TENSOR or value.kind is not Kind.TENSOR:
        return
    if target.maybe_of is not None or value.maybe_of is not None:
        return
    if not isinstance(write.target_node, (cst.Name, cst.Attribute)):
        return  # `x[:, 0] = 0`, `x[i].zero_()`: writing part of x is the intent
    if event.rewritten:
        return  # the reader updates the base too: it is a buffer being filled
    if is_argument(value) and _returned(event.read_stmt, event.read):
        # A helper that writes rows of its argument and hands it back: whether that hurts
        # is decided at each call site, where AL208 reports a caller that reads it again.
        return
    if isinstance(value, TensorValue) and covers_disjoint(write.cover, value.cover):
        return  # two views of one tensor that reach no common element
    if isinstance(value, TensorValue) and _filled(write, value):
        return  # the code built its own tensor through its parts
    if target.via is not None and value.via is not None and not (
            target.region is not None and value.region is not None
            and regions_overlap(target.region, value.region)):
        return  # two views (unbind pieces, slices): overlap not proven
    if write.fill and not _fill_reported(event):
        return
    if target.via in ("view", "detach") and target.view_origin is not None:
        origin, of_target = target.view_origin, True
    elif value.via in ("view", "detach") and value.view_origin is not None:
        origin, of_target = value.view_origin, False
    else:
        return
    # The text is read only for a finding: on a tree made from CPython's, asking it means
    # parsing the file.
    written = ctx.code(write.target_node)
    quoted = ctx.quote(write.target_node)
    if of_target:
        sees = f"`{event.name}` read at line {ctx.line(event.read)} sees the change"
        message = (fit([*writer_quote(write, ctx), " writes the view ", quoted, " of ",
                        ctx.quote(origin), f" (line {ctx.line(origin)}); {sees}"],
                       [*writer_quote(write, ctx), " writes the view ", quoted,
                        f" made at line {ctx.line(origin)}; {sees}"])
                   + f" · {written} is a view made by {ctx.code(origin)} at line "
                   f"{ctx.line(origin)} · `.clone()` the view before writing it, or write "
                   "the base on purpose")
    else:
        message = (fit([*writer_quote(write, ctx), " writes ", quoted, " in place; its view `",
                        event.name, "` (", ctx.quote(origin), f", line {ctx.line(origin)}) read "
                        f"at line {ctx.line(event.read)} sees the change"],
                       [*writer_quote(write, ctx), " writes ", quoted, f" in place; its view "
                        f"`{event.name}` (line {ctx.line(origin)}) read at line "
                        f"{ctx.line(event.read)} sees the change"])
                   + f" · `{event.name}` is a view made by {ctx.code(origin)} at line "
                   f"{ctx.line(origin)} · `.clone()` the view if it must keep the old values")
    yield RULE.finding(
        write.node, write.stmt, message,
        (("the view is made here", origin), read_related(event)))

