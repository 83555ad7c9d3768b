"""AL206 replicated-tensor."""

from __future__ import annotations

import libcst as cst


from aliaslint.analysis import ArrayValue, InplaceWrite, TensorValue, walk_code
from aliaslint.checks.common import writer_quote, written
from aliaslint.headline import fit
from aliaslint.rule import Context, FixPlan, Rule
from aliaslint.runtime.predicates import REPLICATED

RULE = Rule(
    "AL206", "replicated-tensor",
    "A container holds the same tensor several times, and one element is written in place.",
    fix="unsafe: one tensor per element (`[torch.zeros(8) for _ in range(n)]`, "
        "`{k: torch.zeros(8) for k in keys}`) where the repeated expression makes a new "
        "tensor from plain arguments; each element is then written alone, which is the fix. "
        "Shown only where it names an existing tensor (a copy per element must be chosen)",
    confirm=REPLICATED,
)


@RULE.check(InplaceWrite)
def replicated_tensor(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.replica is None:
        return
    container = target.replica
    yield RULE.finding(
        write.node, write.stmt,
        fit([*writer_quote(write, ctx), " changes every element of ", ctx.quote(container),
             f" (line {ctx.line(container)}): they are all one tensor"])
        + f" · {written(write, ctx)} is an element of {ctx.code(container)}, which holds the "
        "same tensor object in every place · build one tensor per element: "
        "`[torch.zeros(...) for _ in range(n)]` / `{k: torch.zeros(...) for k in keys}`",
        (("the repeated container is built here", container),),
        fix=_one_per_element(container, target, ctx),
    )


def _one_per_element(container: cst.CSTNode, element: TensorValue | ArrayValue, ctx: Context
                     ) -> FixPlan | None:
    """`[x] * n` → `[x for _ in range(n)]`, `dict.fromkeys(keys, x)` → `{key: x for key in
    keys}`: unsafe where ``x`` allocates a new tensor each time it is evaluated from
    arguments that evaluating again cannot change; `x.clone()` per element, shown only,
    where ``x`` is an existing tensor."""
    repeated = _repeated(container)
    if repeated is None:
        return None
    item, count, keys = repeated
    fresh = element.origin is item and element.storage == ("alloc", id(item))
    # Evaluated once per element, arguments with calls in them might differ each time.
    plain = isinstance(item, cst.Call) and all(_plain(arg.value) for arg in item.args)
    each = ctx.exact(item) if fresh else f"{ctx.exact(item)}.clone()"
    names = {node.value for node in walk_code(item) if isinstance(node, cst.Name)}
    if keys is None:
        var = next(name for name in ("_", "_i", "_index") if name not in names)
        text = f"[{each} for {var} in range({ctx.exact(count)})]"
    else:
        var = next(name for name in ("key", "_key", "_k") if name not in names)
        text = f"{{{var}: {each} for {var} in {ctx.exact(keys)}}}"
    return FixPlan("make one tensor per element" if fresh else "copy the tensor per element",
                   "unsafe" if fresh and plain else "display-only", ((container, text),))


def _repeated(container: cst.CSTNode):
    """(the repeated expression, the count, the keys) of `[x] * n`, `n * [x]` (keys None)
    or `dict.fromkeys(keys, x)` (count None); None for any other container."""
    if isinstance(container, cst.BinaryOperation):
        for listed, count in ((container.left, container.right),
                              (container.right, container.left)):
            if isinstance(listed, cst.List) and len(listed.elements) == 1 and \
                    isinstance(listed.elements[0], cst.Element):
                return listed.elements[0].value, count, None
        return None
    # `itertools.repeat(x, n)` is an iterator: left alone.
    if isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute) and \
            container.func.attr.value == "fromkeys" and len(container.args) == 2 and \
            all(arg.keyword is None and not arg.star for arg in container.args):
        return container.args[1].value, None, container.args[0].value
    return None


def _plain(node: cst.CSTNode) -> bool:
    """An argument whose value is the same however often it is evaluated: literals and
    names, attributes, subscripts and arithmetic of them (no calls)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                         cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript):
        return _plain(node.value) and all(_plain_index(e.slice) for e in node.slice)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _plain(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation):
        return _plain(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return _plain(node.left) and _plain(node.right)
    return False


def _plain_index(index: cst.BaseSlice) -> bool:
    if isinstance(index, cst.Index):
        return _plain(index.value)
    if isinstance(index, cst.Slice):
        return all(bound is None or _plain(bound)
                   for bound in (index.lower, index.upper, index.step))
    return False
