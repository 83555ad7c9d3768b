"""AL202 view-of-noncontiguous."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import NonContiguousView, walk
from aliaslint.headline import fit
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.predicates import VIEW

RULE = Rule(
    "AL202", "view-of-noncontiguous",
    "`.view()` is called on a tensor that is known not to be contiguous.",
    confirm=VIEW,
    fix="safe when nothing relies on the view sharing its base's memory (`.view` raised for "
        "certain; `.reshape` copies); none when the view, or the name it is bound to, is written "
        "in place, or its base is while the view is kept: the base is not contiguous, so "
        "`.reshape` and `.contiguous().view` both copy, and the write would silently stop "
        "reaching the other tensor; none for `.view(dtype)`",
)


@RULE.check(NonContiguousView)
def view_of_noncontiguous(event: NonContiguousView, ctx: Context):
    origin = event.receiver.layout_origin
    if origin is None:
        return
    shared = _relies_on_sharing(event.node, ctx)
    advice = "use `.reshape(...)`, or `.contiguous().view(...)`" if shared is None else (
        f"no automatic fix: {shared}, and on this layout `.reshape(...)` and "
        "`.contiguous().view(...)` both copy, so that write would silently stop reaching "
        "the other tensor · write the base itself, or copy on purpose and write the copy back")
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), " raises: ", ctx.quote(origin),
             f" at line {ctx.line(origin)} made the tensor non-contiguous"])
        + " · `.view()` needs a contiguous-compatible layout: \"view size is not compatible "
        "with input tensor's size and stride\" · " + advice,
        (("made non-contiguous here", origin),),
        fix=_reshape(event.node) if shared is None else None,
    )


def _reshape(call: cst.CSTNode) -> FixPlan | None:
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or \
            call.func.attr.value != "view" or _dtype_view(call):
        return None
    return FixPlan("use `.reshape(...)`", "safe", ((call.func.attr, "reshape"),))


def _relies_on_sharing(call: cst.CSTNode, ctx: Context) -> str | None:
    """What relies on the view sharing its base's memory, said for the message: the view
    written in place (directly or under the name it is bound to), or the base written in
    place while the view is kept under a name; None when nothing does."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.Attribute) and parent.attr.value.endswith("_") or \
            isinstance(parent, cst.AugAssign):
        return "the view is written in place here"
    if not isinstance(parent, (cst.Assign, cst.NamedExpr)):
        return None
    targets: list[cst.BaseExpression] = [t.target for t in parent.targets] \
        if isinstance(parent, cst.Assign) else [parent.target]
    for target in targets:
        if not isinstance(target, cst.Name):
            return f"the view is kept in {ctx.code(target)}"
        if _written(target.value, ctx.module):
            return f"`{target.value}` is written in place"
    base = call.func.value if isinstance(call, cst.Call) and \
        isinstance(call.func, cst.Attribute) else None
    if isinstance(base, cst.Name) and _written(base.value, ctx.module) and not any(
            isinstance(t, cst.Name) and t.value == base.value for t in targets):
        return f"`{base.value}` is written in place while the view is kept"
    return None


def _dtype_view(call: cst.Call) -> bool:
    """`.view(torch.float16)` / `.view(dtype=...)` reinterprets bytes: no reshape does that."""
    if any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in call.args):
        return True
    return len(call.args) == 1 and isinstance(call.args[0].value, cst.Attribute)


def _written(name: str, module: cst.Module) -> bool:
    """Is a tensor of this name written in place anywhere in the module (`name.add_(...)`,
    `name[...] = v`, `name += v`, `out=name`)? Then the copy `.reshape` may make would
    not carry those writes to the base."""
    def is_name(node: cst.CSTNode | None) -> bool:
        return isinstance(node, cst.Name) and node.value == name

    for node in walk(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                is_name(node.func.value) and node.func.attr.value.endswith("_") and \
                not node.func.attr.value.endswith("__"):
            return True
        if isinstance(node, cst.Call) and any(
                arg.keyword is not None and arg.keyword.value == "out" and is_name(arg.value)
                for arg in node.args):
            return True
        if isinstance(node, cst.AugAssign) and (is_name(node.target) or isinstance(
                node.target, cst.Subscript) and is_name(node.target.value)):
            return True
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) and \
                is_name(node.target.value):
            return True
    return False

