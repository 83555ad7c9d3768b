"""AL204 write-to-copy-lost."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import LostWrite
from aliaslint.checks.common import writer_quote
from aliaslint.headline import fit
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.predicates import COPY_WRITE

RULE = Rule(
    "AL204", "write-to-copy-lost",
    "A write goes into the copy made by advanced indexing or a gathering operation and is lost.",
    fix="unsafe: the write made on the source through one index: `x[idx].fill_(v)` → "
        "`x[idx] = v`, `x[idx].add_(v)` → `x[idx] += v`, and `x[idx][:, j] = v` → "
        "`x[idx, j] = v` where `idx` is proven one-dimensional (then both index the same "
        "elements); the source now changes, which is the fix",
    confirm=COPY_WRITE,
)

# In-place methods whose effect on the copy an item assignment makes on the source.
_ASSIGNED = {"fill_": None, "copy_": None, "zero_": "0"}
_AUGMENTED = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}


@RULE.check(LostWrite)
def write_to_copy_lost(event: LostWrite, ctx: Context):
    write = event.write
    copy = write.target.copied_at if write.target is not None else None
    if copy is None:
        return
    yield RULE.finding(
        write.node, write.stmt,
        fit([*writer_quote(write, ctx), " writes into ", ctx.quote(copy), ", a copy, so the "
             "write is lost"])
        + f" · {ctx.code(copy)} is a new tensor (advanced indexing and ops such as "
        "`index_select` or `masked_select` copy), which is dropped after the write · write the "
        "source directly: `x[idx] = v`, `x.index_fill_(...)`, `x.masked_fill_(...)`, or "
        "combine the indices into one `x[...] = v`",
        (("the copy is made here", copy),),
        fix=_on_the_source(write.node, copy, event.leading_index, ctx),
    )


def _on_the_source(node: cst.CSTNode, copy: cst.CSTNode, leading: bool, ctx: Context
                   ) -> FixPlan | None:
    if not isinstance(copy, cst.Subscript):
        return None  # `x.index_select(0, i).zero_()`: the right `index_*_` call varies
    if isinstance(node, cst.Call):
        return _method(node, copy, ctx)
    if not leading:
        return None
    if isinstance(node, cst.AugAssign):
        statement: cst.BaseSmallStatement = node
    elif isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
        statement = node.body[0]
    else:
        return None
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
    elif isinstance(statement, cst.AugAssign):
        target = statement.target
    else:
        return None
    if not isinstance(target, cst.Subscript) or target.value is not copy or \
            not _full_slice(target.slice[0].slice):
        return None
    # `x[i][:, j]`: with `i` one-dimensional, dim 1 of the copy is dim 1 of `x`.
    combined = copy.with_changes(slice=[
        copy.slice[0].with_changes(comma=cst.MaybeSentinel.DEFAULT), *target.slice[1:]])
    return FixPlan("index the source once", "unsafe", ((target, ctx.exact(combined)),))


def _method(call: cst.Call, copy: cst.Subscript, ctx: Context) -> FixPlan | None:
    """`x[i].fill_(v)` as a statement → `x[i] = v` (and `zero_`, `copy_`, `add_`...)."""
    if not isinstance(call.func, cst.Attribute) or call.func.value is not copy or \
            not isinstance(ctx.parent(call), cst.Expr) or \
            any(arg.keyword is not None or arg.star for arg in call.args):
        return None
    method, args = call.func.attr.value, [ctx.exact(arg.value) for arg in call.args]
    if method in _ASSIGNED and len(args) == (0 if _ASSIGNED[method] else 1):
        text = f"{ctx.exact(copy)} = {_ASSIGNED[method] or args[0]}"
    elif method in _AUGMENTED and len(args) == 1:
        text = f"{ctx.exact(copy)} {_AUGMENTED[method]} {args[0]}"
    else:
        return None
    return FixPlan("write the source by item assignment", "unsafe", ((call, text),))


def _full_slice(index: cst.BaseSlice) -> bool:
    return isinstance(index, cst.Slice) and index.lower is None and index.upper is None and \
        index.step is None
