"""What the op tables and literal arguments say about a factory's result: its shape and
dtype (`zeros(3, 4)`, `full((2, 2), 7)`, `arange(12.0)`), legacy constructors, and whether a
`.view(...)` must fail."""

from __future__ import annotations

from math import ceil

import libcst as cst
from aliaslint.analysis.core import Part
from aliaslint import ops

from aliaslint.analysis.geometry import view_fails
from aliaslint.analysis.shapes import Shape, dense, literal_shape, nested_shape, scalar_kind, view
from aliaslint.analysis.syntax import literal_int
from aliaslint.analysis.values import Args, Keywords, RefValue, TensorValue, Value



def literal_ints(args: Args) -> tuple[int, ...] | None:
    """`transpose(1, 2)` → (1, 2); None when an argument is not an integer literal."""
    values = []
    for arg, _ in args:
        value = literal_int(arg.value)
        if arg.keyword is not None or value is None:
            return None
        values.append(value)
    return tuple(values)


class Factories(Part):
    """Facts of factories and views from the op tables and literal arguments."""

    def legacy_new(self, node: cst.Call, dtype: str | None) -> TensorValue:
        """A legacy constructor given data or sizes: a new tensor."""
        token = ("alloc", id(node))
        values = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        shape = nested_shape(values[0]) if len(values) == 1 and isinstance(
            values[0], (cst.List, cst.Tuple)) else literal_shape(values) if values and \
            len(values) == len(node.args) else None
        return TensorValue(origin=node, storage=token, counter=token, requires_grad=False,
                           contiguous=True, dtype=dtype,
                           layout=dense(shape) if shape is not None else None)

    def view_fails(self, base: TensorValue, args: Args) -> bool:
        """Does `.view(*args)` certainly raise?  Exact when the layout and the sizes are
        literals; else the layout op that made the base non-contiguous decides."""
        sizes = literal_ints(args)
        if base.layout is not None and sizes is not None:
            return view(base.layout, sizes) is False
        return base.contiguous is False and view_fails(base.layout_op, args)

    def dtype_argument(self, keywords: Keywords) -> str | None:
        """The dtype a `dtype=torch.float16` / `np.uint8` argument names."""
        value = keywords.get("dtype", (None, None))[0]
        return dtype_named(value) if value is not None else None

    def scalar_dtype(self, kind: str | None) -> str | None:
        """The dtype torch gives a Python scalar of this kind (a float: the default)."""
        if kind is None or kind == "float" and self.state.default_float is None:
            return None
        table = ops.dtype_fact("python scalar") or {}
        return self.state.default_float if kind == "float" else table.get(kind)

    def factory_facts(self, op: ops.Op, args: Args,
                      keywords: Keywords) -> tuple[Shape | None, str | None]:
        """The literal shape and the dtype of a factory's result (`zeros(3, 4)`,
        `full((2, 2), 7)`, `arange(12.0)`)."""
        positional = [arg.value for arg, _ in args if arg.keyword is None and not arg.star]
        if any(arg.star for arg, _ in args):
            return None, None
        shape: Shape | None = None
        if op.params[:1] == ("size",) and positional:
            first = positional[0]
            shape = literal_shape([first]) if isinstance(first, (cst.Tuple, cst.List)) \
                else literal_shape(positional) if len(op.params) == 1 else None
        how = op.extra.get("dtype_from")
        if how == "args" and positional:
            ends = [literal_int(p) for p in positional]
            if len(positional) <= 3 and None not in ends:
                shape = (len(range(*[e for e in ends if e is not None])),)
            elif len(positional) == 1 and type(positional[0]) is cst.Float:
                shape = (max(0, ceil(float(positional[0].value))),)
        if "dtype" in keywords:
            return shape, self.dtype_argument(keywords)
        factory = op.extra.get("factory_dtype")
        if factory is not None:
            return shape, self.state.default_float if factory == "default" else factory
        if how == "args":
            kinds = {scalar_kind(p) for p in positional}
            kind = None if None in kinds or not kinds else "float" if "float" in kinds \
                else "int" if "int" in kinds else None
            return shape, self.scalar_dtype(kind)
        if how == "fill" and len(positional) > 1:
            return shape, self.scalar_dtype(scalar_kind(positional[1]))
        return shape, None


def dtype_named(value: Value) -> str | None:
    """The dtype a reference such as `torch.float16` or `np.uint8` names."""
    return ops.dtype(value.qualname) if isinstance(value, RefValue) else None
