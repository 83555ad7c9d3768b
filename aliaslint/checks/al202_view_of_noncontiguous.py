"""AL202 view-of-noncontiguous."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import NonContiguousView, walk
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.predicates import VIEW

RULE = Rule(
    "AL202", "view-of-noncontiguous",
    "`.view()` is called on a tensor that is known not to be contiguous.",
    confirm=VIEW,
    fix="safe when the view's result is not written in place (`.view` raised for certain; "
        "`.reshape` copies); unsafe when it, or the name it is bound to, is written in place, since "
        "writes to a copy no longer reach the base; none for `.view(dtype)`",
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
        fix=_reshape(event.node, ctx),
    )


def _reshape(call: cst.CSTNode, ctx: Context) -> FixPlan | None:
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or \
            call.func.attr.value != "view" or _dtype_view(call):
        return None
    parent = ctx.parent(call)
    written = isinstance(parent, cst.Attribute) and parent.attr.value.endswith("_") or \
        isinstance(parent, (cst.AugAssign, cst.NamedExpr)) or isinstance(parent, cst.Assign) \
        and any(not isinstance(t.target, cst.Name) or _written(t.target.value, ctx.module)
                for t in parent.targets)
    return FixPlan("use `.reshape(...)`", "unsafe" if written else "safe",
                   ((call.func.attr, "reshape"),))


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

