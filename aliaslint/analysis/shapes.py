"""Shapes, strides and dtypes known from literals: what a view op makes of a layout.

A layout is known only when every size is a literal the code wrote (`torch.zeros(3, 4)`,
`.view(2, -1)`, `x[1:3]`); strides are in elements, as `Tensor.stride()` gives them.  The
functions follow ATen's own rules (``computeStride`` for `view`, ``inferSize`` for `-1`,
``is_contiguous``), so what they prove holds for every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import libcst as cst

from aliaslint.analysis.syntax import literal_int
from aliaslint.analysis.records import quick

Shape = tuple[int, ...]


@quick
@dataclass(frozen=True)
class Layout:
    shape: Shape
    strides: Shape
    # Where the first element sits in the storage, in elements (`storage_offset()`).
    offset: int = 0

    @property
    def contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides)

    @property
    def numel(self) -> int:
        return prod(self.shape)


def dense(shape: Shape) -> Layout:
    """A new tensor's layout: row-major, contiguous."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return Layout(shape, tuple(reversed(strides)))


def is_contiguous(shape: Shape, strides: Shape) -> bool:
    """ATen's definition: size-1 dims may have any stride, an empty tensor is contiguous."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def infer(sizes: Shape, numel: int) -> Shape | None:
    """`view(2, -1)`: the sizes with the one -1 filled in; None when they cannot hold ``numel``."""
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        return None
    known = prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or numel % known:
            return None
        return tuple(numel // known if s == -1 else s for s in sizes)
    return sizes if known == numel else None


def view(layout: Layout, sizes: Shape) -> Layout | None | bool:
    """`.view(*sizes)`: the new layout; False when torch refuses it (the strides cannot
    express it without a copy); None when the sizes do not fit (another error)."""
    shape = infer(sizes, layout.numel)
    if shape is None:
        return None
    strides = _compute_stride(layout.shape, layout.strides, shape)
    return False if strides is None else Layout(shape, strides, layout.offset)


def _compute_stride(old_shape: Shape, old_strides: Shape, new_shape: Shape) -> Shape | None:
    """ATen's ``computeStride``: the strides `view` gives, or None when it must copy."""
    if not old_shape:
        return tuple(1 for _ in new_shape)
    if prod(old_shape) == 0:
        return dense(new_shape).strides if old_shape != new_shape else old_strides
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _dim(dim: int, ndim: int) -> int | None:
    dim = dim + ndim if dim < 0 else dim
    return dim if 0 <= dim < ndim else None


def transpose(layout: Layout, a: int, b: int) -> Layout | None:
    n = len(layout.shape)
    a_, b_ = _dim(a, n), _dim(b, n)
    if a_ is None or b_ is None:
        return None
    order = list(range(n))
    order[a_], order[b_] = order[b_], order[a_]
    return permute(layout, tuple(order))


def permute(layout: Layout, dims: Shape) -> Layout | None:
    n = len(layout.shape)
    order = [_dim(d, n) for d in dims]
    if len(order) != n or None in order or len(set(order)) != n:
        return None
    return Layout(tuple(layout.shape[d] for d in order if d is not None),
                  tuple(layout.strides[d] for d in order if d is not None), layout.offset)


def unsqueeze(layout: Layout, dim: int) -> Layout | None:
    n = len(layout.shape)
    d = _dim(dim, n + 1)
    if d is None:
        return None
    stride = layout.strides[d] * layout.shape[d] if d < n else 1
    return Layout(layout.shape[:d] + (1,) + layout.shape[d:],
                  layout.strides[:d] + (stride,) + layout.strides[d:], layout.offset)


def expand(layout: Layout, sizes: Shape) -> Layout | None:
    n, m = len(layout.shape), len(sizes)
    if m < n:
        return None
    shape, strides = [], []
    for i, size in enumerate(sizes):
        j = i - (m - n)
        if j < 0:
            if size < 0:
                return None
            shape.append(size)
            strides.append(0)
            continue
        old = layout.shape[j]
        if size == -1 or size == old:
            shape.append(old)
            strides.append(layout.strides[j])
        elif old == 1:
            shape.append(size)
            strides.append(0)
        else:
            return None
    return Layout(tuple(shape), tuple(strides), layout.offset)


def narrow(layout: Layout, dim: int, start: int, length: int) -> Layout | None:
    d = _dim(dim, len(layout.shape))
    if d is None or start < 0 or length < 0 or start + length > layout.shape[d]:
        return None
    return Layout(layout.shape[:d] + (length,) + layout.shape[d + 1:], layout.strides,
                  layout.offset + start * layout.strides[d])


def select(layout: Layout, dim: int, position: int) -> Layout | None:
    d = _dim(dim, len(layout.shape))
    if d is None or not -layout.shape[d] <= position < layout.shape[d]:
        return None
    return Layout(layout.shape[:d] + layout.shape[d + 1:],
                  layout.strides[:d] + layout.strides[d + 1:],
                  layout.offset + position % layout.shape[d] * layout.strides[d])


def index(layout: Layout, node: cst.Subscript) -> Layout | None:
    """Basic indexing with literal ints and step-1 or literal-step slices (and `None`,
    `...`): the view's layout."""
    elements: list[cst.BaseSlice] = [element.slice for element in node.slice]
    ellipses = [i for i, e in enumerate(elements) if type(e) is cst.Index and
                type(e.value) is cst.Ellipsis]
    consumed = sum(1 for e in elements if not (type(e) is cst.Index and (
        type(e.value) is cst.Ellipsis or type(e.value) is cst.Name and
        e.value.value == "None")))
    if len(ellipses) > 1 or consumed > len(layout.shape):
        return None
    if ellipses:
        i = ellipses[0]
        fill = [cst.Slice(lower=None, upper=None)] * (len(layout.shape) - consumed)
        elements = elements[:i] + fill + elements[i + 1:]
    shape: list[int] = []
    strides: list[int] = []
    offset = layout.offset
    dim = 0
    for element in elements:
        if type(element) is cst.Index and type(element.value) is cst.Name and \
                element.value.value == "None":
            shape.append(1)
            strides.append(strides[-1] * shape[-2] if strides else 1)
            continue
        if dim >= len(layout.shape):
            return None
        size, stride = layout.shape[dim], layout.strides[dim]
        if type(element) is cst.Index:
            value = literal_int(element.value)
            if value is None or not -size <= value < size:
                return None
            offset += value % size * stride
        elif type(element) is cst.Slice:
            bounds = [literal_int(b) if b is not None else None
                      for b in (element.lower, element.upper, element.step)]
            if any(b is None and e is not None for b, e in zip(
                    bounds, (element.lower, element.upper, element.step))):
                return None
            if bounds[2] is not None and bounds[2] <= 0:
                return None
            span = range(size)[slice(*bounds)]
            offset += span.start * stride
            shape.append(len(span))
            strides.append(stride * span.step)
        else:
            return None
        dim += 1
    shape.extend(layout.shape[dim:])
    strides.extend(layout.strides[dim:])
    return Layout(tuple(shape), tuple(strides), offset)


def literal_shape(args: list[cst.BaseExpression]) -> Shape | None:
    """`zeros(3, 4)`, `zeros((3, 4))`, `zeros([3, 4])`: the literal sizes."""
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        args = [element.value for element in args[0].elements]
    sizes = [literal_int(arg) for arg in args]
    if not sizes or any(size is None for size in sizes):
        return None
    return tuple(size for size in sizes if size is not None)


def nested_shape(node: cst.BaseExpression) -> Shape | None:
    """`[[1, 2], [3, 4]]`: (2, 2); None when ragged or not a literal display."""
    if isinstance(node, (cst.List, cst.Tuple)):
        inner = [nested_shape(element.value) for element in node.elements
                 if type(element) is not cst.StarredElement]
        if len(inner) != len(node.elements) or any(s is None for s in inner) or \
                len(set(inner)) > 1:
            return None
        return (len(inner),) + (inner[0] or () if inner else ())
    if isinstance(node, (cst.Integer, cst.Float)) or literal_int(node) is not None or \
            type(node) is cst.Name and node.value in ("True", "False") or \
            type(node) is cst.UnaryOperation and type(node.expression) is cst.Float:
        return ()
    return None


def scalar_kind(node: cst.BaseExpression) -> str | None:
    """The Python type of a literal scalar or of every scalar in a literal display
    ("int", "float", "bool"; mixed: the widest, as torch promotes them)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        kinds = {scalar_kind(element.value) for element in node.elements}
        if not kinds or None in kinds:
            return None
        return next(k for k in ("float", "int", "bool") if k in kinds)
    if type(node) is cst.UnaryOperation and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return scalar_kind(node.expression)
    if type(node) is cst.Float:
        return "float"
    if type(node) is cst.Integer:
        return "int"
    if type(node) is cst.Name and node.value in ("True", "False"):
        return "bool"
    return None


def after_view(layout: Layout | None, name: str | None, dims: Shape | None) -> Layout | None:
    """The layout a view op with these literal arguments makes of ``layout``."""
    if layout is None or name is None:
        return None
    n = len(layout.shape)
    args = dims or ()
    if name in ("detach", "alias"):
        return layout
    if name == "t":
        return layout if n < 2 else transpose(layout, 0, 1)
    if name == "T":
        return permute(layout, tuple(reversed(range(n))))
    if name == "mT" and n >= 2:
        return transpose(layout, -2, -1)
    if dims is None:
        return squeeze(layout, None) if name == "squeeze" else \
            diagonal(layout) if name == "diagonal" else None
    if name in ("transpose", "swapaxes", "swapdims") and len(args) == 2:
        return transpose(layout, *args)
    if name == "permute":
        return permute(layout, args)
    if name == "view":
        result = view(layout, args)
        return result if isinstance(result, Layout) else None
    if name == "expand":
        return expand(layout, args)
    if name == "unsqueeze" and len(args) == 1:
        return unsqueeze(layout, args[0])
    if name == "squeeze" and len(args) <= 1:
        return squeeze(layout, args[0] if args else None)
    if name == "select" and len(args) == 2:
        return select(layout, *args)
    if name == "narrow" and len(args) == 3:
        return narrow(layout, *args)
    if name == "diagonal" and not args:
        return diagonal(layout)
    return None


def squeeze(layout: Layout, dim: int | None) -> Layout | None:
    n = len(layout.shape)
    if dim is None:
        keep = [i for i in range(n) if layout.shape[i] != 1]
    else:
        d = _dim(dim, n) if n else 0
        if d is None:
            return None
        keep = [i for i in range(n) if i != d or layout.shape[i] != 1]
    return Layout(tuple(layout.shape[i] for i in keep), tuple(layout.strides[i] for i in keep),
                  layout.offset)


def diagonal(layout: Layout) -> Layout | None:
    if len(layout.shape) != 2:
        return None
    return Layout((min(layout.shape),), (layout.strides[0] + layout.strides[1],), layout.offset)
