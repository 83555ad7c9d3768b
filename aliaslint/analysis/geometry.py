"""Layout geometry: which `.view()` certainly fails, which slices overlap."""

from __future__ import annotations

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.values import Args, RefValue


def dtype_view(args: Args) -> bool:
    """`t.view(torch.float16)` / `t.view(dtype=...)` reinterprets, it does not reshape."""
    for arg, value in args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return True
        if isinstance(value, RefValue):
            return True
    return False


def view_fails(layout_op: tuple | None, args: Args) -> bool:
    """Does `.view(*args)` certainly fail on a tensor ``layout_op`` made non-contiguous?

    Splitting a dimension works on any layout; merging needs the merged
    dimensions adjacent and in order in memory.  Reported: flattening
    (`view(-1)`, `view(n)`, `view(b, -1)`) or merging the last sizes
    (`view(b, t, h * d)`) after a transpose or permute with literal dims that
    moves a dimension other than the first two; and flattening an expanded
    tensor.  A transpose of dims 0 and 1 (or `.t()`, `.T`) is not judged:
    merging the dims behind them works, and size-1 dims (one channel, a batch
    of one) make many of those views legal.
    """
    if layout_op is None:
        return False
    name, dims = layout_op
    positional = [arg.value for arg, _ in args if arg.keyword is None and not arg.star]
    if len(positional) != len(args) or not positional:
        return False
    flatten_all = len(positional) == 1 and not isinstance(positional[0], (cst.Tuple, cst.List))
    op = ops.lookup(name) if "." in name else ops.method(name)
    if op is None:
        return False
    if op.self_overlapping:
        return flatten_all
    if not op.reorders_dims or not dims:
        return False
    # The signature says how the literal dims move: two of them swapped
    # (`transpose(1, 2)`), or a whole permutation (`permute(0, 2, 1, 3)`).
    if len(op.params) == 2 and op.params[0][-1:] == "0" and op.params[1][-1:] == "1":
        moved = set(dims)
    elif op.params == ("dims",):
        moved = {d for position, d in enumerate(dims) if d != position}
    else:
        return False
    if moved <= {0, 1}:
        return False
    last = positional[-1]
    flatten_rest = len(positional) == 2 and isinstance(last, cst.UnaryOperation) and \
        isinstance(last.operator, cst.Minus) and isinstance(last.expression, cst.Integer) \
        and last.expression.value == "1"
    merged_last = isinstance(last, cst.BinaryOperation) and isinstance(
        last.operator, cst.Multiply)
    return flatten_all or flatten_rest or merged_last


def _bound(node: cst.BaseExpression | None) -> tuple[int, int] | None:
    """A slice bound as (k, c), meaning k·n + c for a dim of unknown size n."""
    if node is None:
        return None
    if isinstance(node, cst.Integer):
        return (0, int(node.value, 0))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return (1, -int(node.expression.value, 0))
    raise ValueError


def slice_region(node: cst.CSTNode | None) -> tuple | None:
    """The part of dim 0 a subscript `x[a:b]` covers, as ((k, c), (k, c)) bounds;
    None when it is not one step-1 slice with literal (or absent) bounds."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Slice) or index.step is not None:
        return None
    try:
        lower = _bound(index.lower) or (0, 0)
        upper = _bound(index.upper) or (1, 0)
    except ValueError:
        return None
    return (lower, upper)


def regions_overlap(a: tuple | None, b: tuple | None) -> bool | None:
    """Do two dim-0 regions overlap for every large enough size?  None: not known.

    A region of None is the whole dimension.  Bounds compare as n grows, so
    `x[1:]` and `x[:-1]` overlap and `x[:2]` and `x[2:]` do not.
    """
    whole = ((0, 0), (1, 0))
    a, b = a or whole, b or whole
    return max(a[0], b[0]) < min(a[1], b[1])



def index_regions(node: cst.CSTNode | None) -> tuple | None:
    """The part of each dim a basic index `x[a:b, i]` covers, as slice_region's bounds; a
    dim whose part is not a literal is "?".  None when the index is not a literal basic
    index one can align with the dims (an ellipsis before the last place, a step)."""
    if not isinstance(node, cst.Subscript):
        return None
    regions: list = []
    for position, element in enumerate(node.slice):
        index = element.slice
        if isinstance(index, cst.Slice):
            if index.step is not None:
                regions.append("?")
                continue
            try:
                regions.append((_bound(index.lower) or (0, 0), _bound(index.upper) or (1, 0)))
            except ValueError:
                regions.append("?")
            continue
        if not isinstance(index, cst.Index):
            return None
        value = index.value
        if isinstance(value, cst.Ellipsis):
            if position != len(node.slice) - 1:
                return None
            break
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        try:
            low = _bound(value)
        except ValueError:
            regions.append("?")
            continue
        if low is None:
            return None
        regions.append((low, (low[0], low[1] + 1)))
    return tuple(regions)


def indexes_overlap(a: tuple | None, b: tuple | None) -> bool:
    """Do two basic indexes of one tensor share an element, proven in every dim?"""
    if a is None or b is None:
        return False
    for i in range(max(len(a), len(b))):
        first = a[i] if i < len(a) else None
        second = b[i] if i < len(b) else None
        if first == "?" or second == "?":
            return False
        if not regions_overlap(first, second):
            return False
    return True
