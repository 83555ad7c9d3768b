"""AL205 ambiguous-alias-write."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import InplaceWrite, Kind, StaleRead, TensorValue, Write
from aliaslint.checks.common import is_argument, maybe_alias_message, read_related
from aliaslint.diagnostics import Witness
from aliaslint.rule import Confidence, Context, Rule
from aliaslint.runtime.predicates import SOURCE_WRITE

RULE = Rule(
    "AL205", "ambiguous-alias-write",
    "An in-place write into the result of an operation that returns its input only sometimes.",
    confirm=SOURCE_WRITE,
)


def _witness(write: Write, ctx: Context) -> Witness:
    """The source of the ambiguous call: the run shows whether the write reached it."""
    call = write.target.view_origin if write.target is not None else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return RULE.witness(operands=(ctx.operand(call.func.value),))
    return RULE.witness()


def _ambiguous_call(write: Write) -> cst.CSTNode | None:
    """The call whose result the code writes in place, when it aliases its source sometimes
    (or, the facts prove, did return its source)."""
    target = write.target
    if target is None or write.activation or write.callee:
        return None
    if target.same_as is not None:
        return target.same_as
    return target.view_origin if target.maybe_of is not None else None


def _copied_back(write: Write, call: cst.CSTNode) -> bool:
    """`src.copy_(src.cpu().normal_())`: the statement copies the written result into the
    source itself, so the source ends with those values whichever tensor the call made."""
    stmt = write.stmt
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or \
            not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    outer = small.value if isinstance(small, cst.Expr) else None
    return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Attribute) and \
        outer.func.attr.value == "copy_" and outer.func.value.deep_equals(call.func.value)


def _confidence(write: Write) -> Confidence:
    """`low` when sizes not known here decide (`reshape` of a transposed tensor merges its
    dims without a copy for some sizes only, often only when one of them is 1); `high`
    otherwise (the dtype asked for, or a layout not known, whose common case aliases)."""
    target = write.target
    return "low" if isinstance(target, TensorValue) and target.same_as is None and \
        target.alias_by_layout else "high"


def _source(write: Write) -> object:
    """The storage the ambiguous call's source has."""
    target = write.target
    if target is None:
        return None
    return target.storage if target.same_as is not None else target.maybe_of


@RULE.check(InplaceWrite)
def ambiguous_alias_write_to_argument(event: InplaceWrite, ctx: Context):
    write = event.write
    call = _ambiguous_call(write)
    source = _source(write)
    if call is None or not is_argument(source) or _copied_back(write, call):
        return
    yield RULE.finding(
        write.node, write.stmt,
        maybe_alias_message(write, call, ctx, "the caller's tensor"),
        (("the ambiguous call", call),), witness=_witness(write, ctx),
        confidence=_confidence(write))


@RULE.check(StaleRead)
def ambiguous_alias_write_read_later(event: StaleRead, ctx: Context):
    write = event.write
    call = _ambiguous_call(write)
    if call is None or write.target is None or event.value.storage != _source(write) or \
            _copied_back(write, call):
        return
    if event.value.kind is Kind.NDARRAY and write.target.same_as is not None:
        return  # a NumPy array proven to share the memory: AL301
    yield RULE.finding(
        write.node, write.stmt,
        maybe_alias_message(write, call, ctx,
                            f"`{event.name}` (read at line {ctx.line(event.read)})"),
        (("the ambiguous call", call), read_related(event)), witness=_witness(write, ctx),
        confidence=_confidence(write))

