"""Sometimes-alias ops (`reshape`, `flatten`, `.float()`, `.contiguous()`, `nn.Flatten`): the
source itself, a view of it, or a copy, decided by what the facts prove of the source."""

from __future__ import annotations


import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint import ops
from aliaslint.analysis.factories import dtype_named, literal_ints
from aliaslint.analysis.opfacts import short_name
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.shapes import Layout, dense, infer, view
from aliaslint.analysis.values import Args, Keywords, TensorValue, Value, replace

# Sometimes-alias ops whose outcome the layout decides (sizes and strides, not the dtype or
# the device): a view when the strides can express the result, a copy otherwise.  Of a
# tensor proven non-contiguous (transposed, permuted) but of sizes not known, that takes
# sizes that let the strides merge, often a dim of 1: a rare case, so a `low` finding.  Of a
# tensor whose layout is not known at all, the common case (a contiguous result of an op)
# is the alias.
LAYOUT_DECIDES = frozenset({"contiguous", "flatten", "ravel", "reshape", "reshape_as"})


class Outcomes(Part):
    """What a sometimes-alias op returns."""

    autograd: api.Autograd
    expressions: api.Expressions

    def sometimes_alias(self, op: ops.Op, source: Value | None, args: Args,
                        keywords: Keywords, node: cst.Call, env: Env, token: object,
                        requires: bool | None, graph: frozenset[int],
                        pending: frozenset) -> TensorValue:
        """The result of a sometimes-alias op: the source itself, a view of it, or a copy;
        which one depends on the input (dtype, device, layout).  ``token`` is the copy's."""
        if isinstance(source, TensorValue):
            proven = self._resolve_alias(op, source, args, keywords, node, env)
            if proven is not None:
                return proven
        # An explicit `.to(dtype)` / `.type(t)` is a conversion the code
        # usually guards by a dtype check: not treated as ambiguous.
        explicit = short_name(op.name) in ("to", "type") and bool(args)
        tensor = source if isinstance(source, TensorValue) else None
        return TensorValue(origin=node, storage=token, counter=token,
                           requires_grad=requires, graph=graph, pending=pending,
                           maybe_of=tensor.storage if tensor is not None and not explicit
                           else None,
                           alias_by_layout=short_name(op.name) in LAYOUT_DECIDES
                           and tensor is not None and tensor.contiguous is False,
                           view_origin=node,
                           contiguous=True if short_name(op.name) == "contiguous" else None,
                           input_or_copy=(tensor.input_or_copy or tensor)
                           if tensor is not None and op.extra.get("returns_input") else None)

    def _resolve_alias(self, op: ops.Op, source: TensorValue, args: Args, keywords: Keywords,
                       node: cst.Call, env: Env) -> TensorValue | None:
        """A sometimes-alias op whose outcome the facts prove: the source itself
        (`.float()` of a float32 tensor, `.contiguous()` of a contiguous one), a view
        (`reshape` of a contiguous tensor), or a new tensor (`.float()` of a uint8 one,
        `.contiguous()` of a proven non-contiguous layout); None when not proven."""
        name = short_name(op.name)
        converts_to = op.extra.get("converts_to")
        wanted: str | None = None
        if converts_to is not None and op.extra.get("same_when_unchanged"):
            wanted = converts_to
        elif name in ("to", "type") and len(args) == 1 and (
                args[0][0].keyword is None or name == "to" and "dtype" in keywords):
            wanted = dtype_named(args[0][1])
            if wanted is None:
                return None
        elif name == "type_as" and len(args) == 1 and isinstance(args[0][1], TensorValue):
            wanted = args[0][1].dtype
            if wanted is None:
                return None
        if wanted is not None:
            if source.dtype is None:
                return None
            if source.dtype == wanted:
                return replace(source, origin=node, same_as=node)
            return self._converted(source, node, wanted, env)
        if name == "contiguous" and not args:
            if source.contiguous is True:
                return replace(source, origin=node, same_as=node)
            if source.layout is not None and not source.layout.contiguous:
                return self._converted(source, node, source.dtype, env, dense_copy=True)
            return None
        if name not in ("reshape", "flatten"):
            return None
        sizes = literal_ints(args) if name == "reshape" else None
        if name == "flatten" and not args and source.layout is not None:
            sizes = (source.layout.numel,)
        # ATen's reshape is `view` when the strides can express the new shape, else a copy:
        # with the layout and the sizes known, `view`'s own rule decides.
        outcome = view(source.layout, sizes) if source.layout is not None and \
            sizes is not None else None
        if outcome is False and source.layout is not None and sizes is not None:
            copy = self._converted(source, node, source.dtype, env, dense_copy=True)
            shape = infer(sizes, source.layout.numel)
            return replace(copy, layout=dense(shape) if shape is not None else None)
        if source.contiguous is True or isinstance(outcome, Layout):
            # Documented: a contiguous input is reshaped without copying.
            view_op = ops.method("view")
            if view_op is None:
                return None
            source_node = node.func.value if type(node.func) is cst.Attribute else None
            return sole_handle(self.expressions.view(source, node, view_op, sizes, env), source,
                               source_node)
        return None

    def _converted(self, source: TensorValue, node: cst.Call, dtype: str | None, env: Env, *,
                   dense_copy: bool = False) -> TensorValue:
        """A new tensor with ``source``'s values (a dtype conversion or a dense copy)."""
        token = ("alloc", id(node))
        requires = self.autograd.requires_grad([source], env)
        layout = dense(source.layout.shape) if source.layout is not None and (
            dense_copy or source.layout.contiguous) else None
        return TensorValue(origin=node, storage=token, counter=token, requires_grad=requires,
                           graph=source.graph, pending=source.pending,
                           layout=layout, dtype=dtype,
                           contiguous=True if dense_copy or source.contiguous else None)


def sole_handle(view: TensorValue, base: TensorValue,
                base_node: cst.BaseExpression | None) -> TensorValue:
    """A view of a tensor made in the same expression and never named
    (`torch.arange(12.0).reshape(3, 4)`): the view is the only handle on that memory, so it is
    its owner as far as the code can tell."""
    if base.via is not None or base.requires_grad is True or base.storage is None or \
            not isinstance(base_node, (cst.Call, cst.BinaryOperation)):
        return view
    return replace(view, via=None, leaf=base.leaf)
