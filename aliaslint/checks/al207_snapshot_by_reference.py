"""AL207 snapshot-by-reference."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import Kind, StaleRead, Value, attr_key, reads
from aliaslint.checks.common import module_name, read_related, writer_quote
from aliaslint.headline import fit
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import SNAPSHOT

RULE = Rule(
    "AL207", "snapshot-by-reference",
    'A "snapshot" of a model or tensor is only a reference, and the source is mutated '
    'afterwards.',
    confirm=SNAPSHOT,
    traced=(Hazard.SNAPSHOT_OVERWRITTEN,),
    fix="unsafe: the snapshot becomes a copy (`copy.deepcopy(...)`, `.clone()`, a clone of each "
        "element), so it keeps the old values, which is the intent; the copy stays on the "
        "source's device and costs its memory there; where `copy` means something else in the "
        "snapshot's scope (a parameter `copy=False`), the module is imported under a free name "
        "(`import copy as _copy`)",
)


@RULE.check(StaleRead)
def snapshot_by_reference(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    snapshot = value.snapshot
    if snapshot is None or write.activation or write.callee is not None and \
            write.target is not None:
        # A callee's write to a tensor argument is AL208's; a callee that steps an
        # optimizer (writes parameters, target None) changes the snapshot as a step here does.
        return
    if event.rewritten or _handed_on(event):
        # The second name is itself written again (`buf[i][m] = v` round a loop), or only
        # handed to another name (`hidden = buf`): the code updates the tensor under that
        # name, it does not read it for its old values.
        return
    if isinstance(snapshot, cst.Attribute) and attr_key(snapshot) is None and not (
            event.read_stmt is not None and reads(event.read_stmt, snapshot)):
        # `w = model.weight` may be a mere handle on the current tensor; it is a snapshot
        # when the code sets it against the source (`model.weight - previous`).
        return
    if value.kind is Kind.MODULE:
        kind, advice = "the same module under a second name", "`copy.deepcopy(...)` of the module"
    elif value.kind is Kind.TENSOR:
        kind, advice = "a second name for the same tensor", "`.clone()` (or `.detach().clone()`)"
    elif isinstance(snapshot, (cst.ListComp, cst.DictComp)):
        kind = "references to the same tensors"
        advice = "copy each element in the comprehension, `.detach().clone()`"
    else:
        kind = "references to the same tensors"
        advice = "`copy.deepcopy(...)`, or `{k: v.clone() for k, v in ...items()}`"
    yield RULE.finding(
        snapshot, snapshot,
        fit([ctx.quote(snapshot), " is no copy: ", *writer_quote(write, ctx),
             f" (line {ctx.line(write.node)}) changes it before `{event.name}` is read (line "
             f"{ctx.line(event.read)})"],
            [ctx.quote(snapshot), f" is no copy: line {ctx.line(write.node)} changes it in "
             f"place before `{event.name}` is read (line {ctx.line(event.read)})"])
        + f" · {ctx.code(snapshot)} keeps {kind}, not a copy · take a copy: {advice}",
        (("changed in place here", write.node),
         *(((f"the parameters are written here, inside `{write.callee}`", write.defined_at),)
           if write.callee is not None and write.defined_at is not None else ()),
         read_related(event)),
        # The run reads what the name holds once the snapshot statement has finished.
        witness=RULE.witness(target=tuple(event.name.split("."))),
        fix=_copy(snapshot, value, ctx),
    )


def _handed_on(event: StaleRead) -> bool:
    """Is the read the whole value of a plain assignment to names (`hidden = buf`)?"""
    stmt = event.read_stmt
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Assign) and small.value is event.read and all(
            isinstance(target.target, cst.Name) for target in small.targets)
        for small in stmt.body)


def _copy(snapshot: cst.CSTNode, value: Value, ctx: Context) -> FixPlan | None:
    """The snapshot expression made a copy."""
    if isinstance(snapshot, (cst.ListComp, cst.DictComp)):
        element = snapshot.elt if isinstance(snapshot, cst.ListComp) else snapshot.value
        text = ctx.exact(element)
        detached = isinstance(element, cst.Call) and isinstance(element.func, cst.Attribute) \
            and element.func.attr.value == "detach" or isinstance(element, cst.Attribute) \
            and element.attr.value == "data"
        return FixPlan("clone each element", "unsafe",
                       ((element, f"{text}.clone()" if detached else
                         f"{text}.detach().clone()"),))
    if not isinstance(snapshot, cst.BaseExpression):
        return None
    text = ctx.exact(snapshot)
    if value.kind is Kind.TENSOR:
        atomic = isinstance(snapshot, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
        text = text if atomic else f"({text})"
        return FixPlan("take a copy with `.detach().clone()`", "unsafe",
                       ((snapshot, f"{text}.detach().clone()"),))
    # `copy` may mean something else where the snapshot is taken (a parameter `copy=False`).
    name, imports = module_name("copy", snapshot, ctx)
    return FixPlan("take a copy with `copy.deepcopy(...)`", "unsafe",
                   ((snapshot, f"{name}.deepcopy({text})"),), imports=imports)

