"""Layout geometry: which `.view()` certainly fails, which slices overlap, which views share
no element."""

from __future__ import annotations

from math import gcd

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.syntax import literal_int
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
    flatten_rest = len(positional) == 2 and type(last) is cst.UnaryOperation and \
        type(last.operator) is cst.Minus and type(last.expression) is cst.Integer \
        and last.expression.value == "1"
    merged_last = type(last) is cst.BinaryOperation and type(last.operator) is cst.Multiply
    return flatten_all or flatten_rest or merged_last


def _bound(node: cst.BaseExpression | None) -> tuple[int, int] | None:
    """A slice bound as (k, c), meaning k·n + c for a dim of unknown size n."""
    if node is None:
        return None
    if type(node) is cst.Integer:
        return (0, int(node.value, 0))
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus \
            and type(node.expression) is cst.Integer:
        return (1, -int(node.expression.value, 0))
    raise ValueError


def slice_region(node: cst.CSTNode | None) -> tuple | None:
    """The part of dim 0 a subscript `x[a:b]` covers, as ((k, c), (k, c)) bounds;
    None when it is not one step-1 slice with literal (or absent) bounds."""
    if type(node) is not cst.Subscript or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if type(index) is not cst.Slice or index.step is not None:
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
    if type(node) is not cst.Subscript:
        return None
    regions: list = []
    for position, element in enumerate(node.slice):
        index = element.slice
        if type(index) is cst.Slice:
            if index.step is not None:
                regions.append("?")
                continue
            try:
                regions.append((_bound(index.lower) or (0, 0), _bound(index.upper) or (1, 0)))
            except ValueError:
                regions.append("?")
            continue
        if type(index) is not cst.Index:
            return None
        value = index.value
        if type(value) is cst.Ellipsis:
            if position != len(node.slice) - 1:
                return None
            break
        if type(value) is cst.Name and value.value == "None":
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


# --------------------------------------------------------------------------- element covers
#
# A view taken straight from a tensor that owns its storage, with literal offsets and
# strides, covers a set of that tensor's elements, described by constraints on their
# indices (one tuple each):
#
#   ("range", dim, lower, upper, step)   lower <= i_dim < upper, i_dim ≡ lower (mod step);
#                                        bounds as _bound gives them, (k, c) = k·n + c
#   ("diag", dim1, dim2, offset)         i_dim2 - i_dim1 == offset
#
# An index fixing a dim (`x[2]`, `select(0, 2)`) is the range of one element.  A dim below
# 0 counts from the end (`x[..., :1, :]` constrains dim -2); a dim counted from either end
# compares only with a dim counted from the same end, unless the root's rank is known.  A
# view's cover is (root, constraints, exact): the root names the tensor the indices are of
# (its storage token and where it was made), so covers of one root compare.  The
# constraints of two covers together describe the elements both reach; a pair that no
# index satisfies proves the views disjoint.  Distinct indices of a tensor that owns its
# storage (not expanded) are distinct memory, so disjoint index sets are disjoint memory,
# whatever the sizes.  ``exact``: the view reaches every element its constraints allow
# (every place of its index literal), so covers of writes can be added up (covers_tile).

COVER_OPS = frozenset({"diagonal", "narrow", "select"})
WHOLE = ((0, 0), (1, 0), 1)  # a range's bounds and step that reach all of its dim


def _place(index: cst.BaseSlice, dim: int) -> tuple | None:
    """The constraint one literal place of a basic index puts on ``dim``; None when the
    place is not a literal int or a slice with literal bounds and step."""
    try:
        if type(index) is cst.Slice:
            step = literal_int(index.step) if index.step is not None else 1
            lower = _bound(index.lower) or (0, 0)
            upper = _bound(index.upper) or (1, 0)
            if step is None or step <= 0 or step > 1 and lower[0] != 0:
                return None  # the residue of an end-relative start depends on the size
            return ("range", dim, lower, upper, step)
        point = _bound(index.value) if type(index) is cst.Index else None
    except ValueError:
        return None
    if point is None:
        return None
    return ("range", dim, point, (point[0], point[1] + 1), 1)


def index_cover(node: cst.Subscript) -> tuple[tuple, bool]:
    """The constraints a basic index `x[a:b:s, i]` puts on its leading dims, up to the first
    place that is not a literal int or a slice with literal bounds and step: from there on
    (a computed index, `None` or `...`, which move the dims after them) nothing is claimed.
    After one `...` the places index the last dims, counted from the end (`x[..., :1, :]`
    reaches dim -2 from 0 to 1), when every one of them is literal.

    With it, whether the constraints are exact: every place literal, so the view reaches
    every element they allow (geometry.covers_tile needs that), not only some of them."""
    places = [element.slice for element in node.slice]
    ellipsis = next((position for position, index in enumerate(places)
                     if type(index) is cst.Index and type(index.value) is cst.Ellipsis),
                    None)
    head = places if ellipsis is None else places[:ellipsis]
    tail = [] if ellipsis is None else places[ellipsis + 1:]
    constraints: list[tuple] = []
    for dim, index in enumerate(head):
        constraint = _place(index, dim)
        if constraint is None:
            return tuple(constraints), False
        constraints.append(constraint)
    ending = [_place(index, position - len(tail)) for position, index in enumerate(tail)]
    if None in ending:
        return tuple(constraints), False
    return tuple(constraints) + tuple(ending), True


def op_cover(name: str, args: dict[str, int | None], rank: int | None) -> tuple | None:
    """The constraints `diagonal(offset, dim1, dim2)`, `narrow(dim, start, length)` and
    `select(dim, index)` with these literal arguments put on their base's indices."""

    def dim(value: int | None, default: int | None = None) -> int | None:
        value = default if value is None else value
        if value is None:
            return None
        if value < 0:
            return value + rank if rank is not None and value + rank >= 0 else None
        return value

    if name == "diagonal":
        first, second = dim(args.get("dim1"), 0), dim(args.get("dim2"), 1)
        offset = args.get("offset", 0)
        if first is None or second is None or first == second or offset is None:
            return None
        return (("diag", first, second, offset),) if first < second else \
            (("diag", second, first, -offset),)
    if name == "narrow":
        axis, start, length = dim(args.get("dim")), args.get("start"), args.get("length")
        if axis is None or start is None or length is None or start < 0 or length < 0:
            return None
        return (("range", axis, (0, start), (0, start + length), 1),)
    if name == "select":
        axis, position = dim(args.get("dim")), args.get("index")
        if axis is None or position is None:
            return None
        point = (1, position) if position < 0 else (0, position)
        return (("range", axis, point, (point[0], point[1] + 1), 1),)
    return None


def _ranges_disjoint(a: tuple, b: tuple) -> bool:
    """Two ranges of one dim that share no index, for every size of the dim."""
    (_, _, low_a, high_a, step_a), (_, _, low_b, high_b, step_b) = a, b
    # Intervals apart: only bounds of one kind compare for every n (clamping only shrinks).
    if high_a[0] == low_b[0] and high_a <= low_b or high_b[0] == low_a[0] and high_b <= low_a:
        return True
    if low_a[0] == low_b[0] == 0:
        # Residues: i ≡ low_a (mod step_a) and i ≡ low_b (mod step_b) have no common
        # solution when the gcd of the steps does not divide the starts' difference.
        return (low_a[1] - low_b[1]) % gcd(step_a, step_b) != 0
    return False


def covers_disjoint(a: tuple | None, b: tuple | None) -> bool:
    """Do two covers of one root provably share no element?"""
    if a is None or b is None or a[0] != b[0]:
        return False
    constraints = a[1] + b[1]
    ranges = [c for c in constraints if c[0] == "range"]
    for i, first in enumerate(ranges):
        for second in ranges[i + 1:]:
            if first[1] == second[1] and _ranges_disjoint(first, second):
                return True
    points = {c[1]: c[2][1] for c in ranges if c[2][0] == 0 and c[3] == (0, c[2][1] + 1)}
    diagonals = [c for c in constraints if c[0] == "diag"]
    for i, (_, first, second, offset) in enumerate(diagonals):
        if any(other[1:3] == (first, second) and other[3] != offset
               for other in diagonals[i + 1:]):
            return True  # two diagonals of one pair of dims
        if first in points and second in points and points[second] - points[first] != offset:
            return True  # a fixed element off this diagonal
    return False


def _tiles(ranges: list[tuple], size: int | None) -> bool:
    """Do these ranges of one dim together reach every index of it, for every size (or for
    ``size``, when the layout proves it)?"""
    if size is not None:
        if size > 4096:
            return False

        def clamp(bound: tuple) -> int:
            return min(max(bound[0] * size + bound[1], 0), size)

        reached: set[int] = set()
        for _, _, lower, upper, step in ranges:
            reached.update(range(clamp(lower), clamp(upper), step))
        return len(reached) == size
    # Contiguous pieces: from index 0, each piece starts at or before where the last ended,
    # as bounds of one kind (clamping to the size keeps that order), until one ends at n.
    pieces = sorted((r for r in ranges if r[4] == 1), key=lambda r: r[2])
    reach = (0, 0)
    grew = True
    while grew and reach[0] == 0:
        grew = False
        for _, _, lower, upper, _ in pieces:
            if lower[0] == reach[0] and lower[1] <= reach[1] and (
                    upper[0] > reach[0] or upper[0] == reach[0] and upper[1] > reach[1]):
                reach, grew = upper, True
    if reach[0] == 1:
        # An end-relative reach: the pieces that start from the end take it on to n.
        grew = True
        while grew and reach[1] < 0:
            grew = False
            for _, _, lower, upper, _ in pieces:
                if lower[0] == 1 and lower[1] <= reach[1] and upper[0] == 1 and \
                        upper[1] > reach[1]:
                    reach, grew = upper, True
        return reach[1] >= 0
    # Phases of one step (`x[0::2]`, `x[1::2]`), each to the end: every residue from 0.
    phases = [r for r in ranges if r[3] == (1, 0) and r[2][0] == 0]
    steps = {r[4] for r in phases}
    if len(steps) != 1:
        return False
    step = steps.pop()
    return {r[2][1] for r in phases} >= set(range(step))


def covers_tile(covers: frozenset | tuple, shape: tuple | None) -> bool:
    """Do the exact covers of writes to one root together reach every element of it?

    Proven along one dim: every cover that counts is an exact range of that dim alone (the
    rest of the root whole), and the ranges together reach every index of the dim,
    whatever its size: `x[..., :k, :]` and `x[..., k:, :]`, `x[:k]` and `x[k:]`, `x[0::2]`
    and `x[1::2]`, or `narrow` pieces that tile a dim the layout proves the size of.
    ``shape``: the root's sizes, when literals prove them (they place a dim counted from
    the end, and bound a dim's indices)."""
    roots = {cover[0] for cover in covers}
    if len(roots) != 1:
        return False
    rank = len(shape) if shape is not None else None
    by_dim: dict[int, list[tuple]] = {}
    for _, constraints, exact in covers:
        if not exact:
            continue
        constraints = tuple(c for c in constraints if c[0] != "range" or c[2:] != WHOLE)
        if not constraints:
            return True  # all of the root
        if len(constraints) != 1 or constraints[0][0] != "range":
            continue
        constraint = constraints[0]
        dim = constraint[1]
        if dim < 0 and rank is not None:
            dim += rank
        by_dim.setdefault(dim, []).append(constraint)
    for dim, ranges in by_dim.items():
        size = shape[dim] if shape is not None and 0 <= dim < len(shape) else None
        if _tiles(ranges, size if isinstance(size, int) else None):
            return True
    return False
