"""What the op tables say about one call, in the interpreter's terms."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.syntax import FALSE, is_literal, literal_number
from aliaslint.analysis.values import Args, ContainerValue, Kind, TensorValue, Value

# torch's own classes the interpreter models: the roots of its value kinds.
MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
TENSOR_TYPES = {"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"}
PARAMETER_TYPES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}


def short_name(qualname: str) -> str:
    for prefix in ("torch.Tensor.", "torch.nn.functional.", "torch.nn."):
        if qualname.startswith(prefix):
            return qualname[len(prefix):]
    return qualname


def is_activation(op: ops.Op) -> bool:
    name = short_name(op.name)
    # `torch.relu_(x)` is `x.relu_()`.
    return name in _activation_names() or name.startswith("torch.") and \
        name[len("torch."):] in _activation_names()


@cache
def _activation_names() -> frozenset[str]:
    """In-place ops a module's or function's `inplace=True` turns into (relu_, elu_, …)."""
    names = set()
    for name in ops.names("modules"):
        spec = ops.module(name)
        if spec is not None and spec.inplace_op:
            names.add(spec.inplace_op)
    for name in ops.names("ops"):
        if name.startswith("torch.nn.functional."):
            op = ops.lookup(name)
            if op is not None and op.inplace_kwarg and op.twin:
                names.add(op.twin)
    return frozenset(names)


def is_nn_class(qualname: str) -> bool:
    """`torch.nn.BCELoss`, `torch.nn.modules.loss.MSELoss`: a class of torch.nn."""
    head, _, last = qualname.rpartition(".")
    return (head == "torch.nn" or head.startswith("torch.nn.modules")) and last[:1].isupper()


def has_params(spec: ops.ModuleOp) -> bool:
    explicit = getattr(spec, "has_params", None)
    if explicit is not None:
        return bool(explicit)
    return bool(spec.opaque or (spec.saves and {"weight", "bias"} & set(spec.saves)))


def storage_kind(method: str) -> Kind | None:
    """The kind of storage a Tensor method returns (`untyped_storage`, `storage`), if any."""
    kind = ops.non_tensor_methods().get(method)
    return {"storage": Kind.STORAGE, "typed_storage": Kind.TYPED_STORAGE}.get(kind or "")


def returns_value(method: str) -> bool:
    """A Tensor method that returns a plain Python value (`data_ptr`, `item`, `size`)."""
    return ops.non_tensor_methods().get(method) == "value"


def chosen_saves(op: ops.Op, bound: dict[str, Value],
                 nodes: Mapping[str, cst.BaseExpression] | None = None) -> frozenset:
    """What ``op``'s backward saves for these arguments: the overloads the
    arguments fit, and only what all of them save."""
    if op.saves_must == op.saves_may or not op.overloads:
        return op.saves_must or frozenset()
    candidates = fitting_overloads(op, bound, nodes or {})
    if not candidates or any(overload.saves is None for overload in candidates):
        return op.saves_must or frozenset()
    return frozenset.intersection(*(overload.saves or frozenset() for overload in candidates))


def fitting_overloads(op: ops.Op, bound: Mapping[str, Value],
                      nodes: Mapping[str, cst.BaseExpression]) -> list[ops.Overload]:
    """The overloads a call can reach: not the `out=` ones (unless it passes `out=`), each
    argument a parameter of it, a tensor where it takes a tensor and a number where it takes
    none (`torch.pow(h, 2)` is `pow.Tensor_Scalar`, `torch.max(h, 1)` is `max.dim`)."""
    named = {name for overload in op.overloads.values() for name in overload.params}
    wants_out = "out" in nodes
    fitting = []
    for overload in op.overloads.values():
        if overload.is_out != wants_out:
            continue
        fits = True
        for name, value in bound.items():
            if name in ("self", "out") or name not in named:
                continue  # the receiver, or a keyword-only / Python-level argument
            if name not in overload.params:
                fits = False
            elif value.kind is Kind.TENSOR:
                fits = name in overload.tensors
            elif value.kind is Kind.OTHER and not is_literal(nodes.get(name), "None"):
                fits = name not in overload.tensors
            if not fits:
                break
        if fits:
            fitting.append(overload)
    return fitting


def tensor_inputs(bound: Mapping[str, Value]) -> tuple[list[TensorValue], bool]:
    """The tensors an op takes, also inside list arguments (`torch.cat([a, b])`), and
    whether some list argument holds values not known here."""
    tensors: list[TensorValue] = []
    unknown = False
    for value in bound.values():
        if isinstance(value, TensorValue):
            tensors.append(value)
        elif isinstance(value, ContainerValue):
            elements = value.items if value.items is not None else (
                (value.each,) if value.each is not None else None)
            if elements is None:
                unknown = True
                continue
            for element in elements:
                if isinstance(element, TensorValue):
                    tensors.append(element)
                elif element.kind is not Kind.OTHER:
                    unknown = True
    return tensors, unknown


def input_saved(name: str, bound: dict[str, Value],
                saved_when: Mapping[str, frozenset[str]] | None = None) -> bool:
    """Autograd keeps an input only when a gradient formula that reads it runs: proven when
    an input whose requiring grad makes the op save it does (``op.saved_when``); without
    that fact, when another tensor input requires grad, or for an op's only input."""
    tensors = {key: v for key, v in bound.items() if v.kind is Kind.TENSOR}
    if name not in tensors:
        return False
    when = saved_when.get(name) if saved_when is not None else None
    if when is not None:
        return any(key in tensors and getattr(tensors[key], "requires_grad", None) is True
                   for key in when)
    others = [v for key, v in tensors.items() if key != name]
    if not others:
        return tensors[name].requires_grad is True
    return any(v.requires_grad is True for v in others)


def refused_slope(op: ops.Op | None,
                  nodes: Mapping[str, cst.BaseExpression]) -> cst.BaseExpression | None:
    """The argument that makes the in-place backward of ``op`` raise: a slope whose literal
    value is negative (the mean of ``op.negative_slope``'s arguments, all given).  Defaults
    are positive; `training=` anything but a literal False draws random slopes."""
    if op is None or not op.negative_slope:
        return None
    training = nodes.get("training")
    if training is not None and not is_literal(training, FALSE):
        return None
    values = [literal_number(nodes.get(name)) for name in op.negative_slope]
    if any(value is None for value in values):
        return None
    if sum(v for v in values if v is not None) >= 0:
        return None
    return nodes[op.negative_slope[0]]


def bind_arguments(op: ops.Op, receiver: Value | None, receiver_node: cst.BaseExpression | None,
                   args: Args) -> tuple[dict[str, Value], dict[str, cst.BaseExpression]]:
    """Argument values and nodes by parameter name, as the op's signature names them.  Past
    the positions all overloads agree on, the names of the overloads the call fits, when
    they agree (`torch.max(a, b)` passes `other`, `torch.max(h, 1)` passes `dim`)."""
    bound, nodes = _bind(op.params, receiver, receiver_node, args)
    positional = sum(1 for arg, _ in args if arg.keyword is None and not arg.star)
    if positional <= len(op.params) or not op.overloads:
        return bound, nodes
    longer = [o for o in op.overloads.values() if len(o.params) >= positional]
    fitting = []
    for overload in longer:
        trial, trial_nodes = _bind(overload.params, receiver, receiver_node, args)
        if overload in fitting_overloads(op, trial, trial_nodes):
            fitting.append(overload)
    orders = {o.params[:positional] for o in fitting}
    if len(orders) == 1:
        return _bind(fitting[0].params, receiver, receiver_node, args)
    return bound, nodes


def _bind(params: tuple[str, ...], receiver: Value | None,
          receiver_node: cst.BaseExpression | None,
          args: Args) -> tuple[dict[str, Value], dict[str, cst.BaseExpression]]:
    bound: dict[str, Value] = {}
    nodes: dict[str, cst.BaseExpression] = {}
    if receiver is not None and receiver_node is not None:
        bound["self"], nodes["self"] = receiver, receiver_node
    position = 0
    for arg, value in args:
        if arg.star:
            continue
        if arg.keyword is not None:
            bound[arg.keyword.value], nodes[arg.keyword.value] = value, arg.value
        elif position < len(params):
            name = params[position]
            bound[name], nodes[name] = value, arg.value
            position += 1
    return bound, nodes

