"""Calls on containers and on function values: the methods of `list` and `dict` that move
elements (the container's name rebound to what they leave), and lambdas run where they are
called.  What each method does to the elements is in containers.py."""
from __future__ import annotations


import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State
from aliaslint.analysis import containers
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.syntax import all_params, attr_key
from aliaslint.analysis.values import (
    replace,
    OTHER,
    UNKNOWN,
    Args,
    ContainerValue,
    Kind,
    LambdaValue,
    ParamsValue,
    TensorValue,
    Value,
    kept_as_copy,
)

# Calls that make a new container holding the same elements.
SHALLOW_COPIES = frozenset({"builtins.list", "builtins.tuple", "builtins.dict", "copy.copy",
                            "collections.OrderedDict"})
MAPPING_COPIES = frozenset({"builtins.dict", "collections.OrderedDict"})
EMPTY_CONTAINERS = frozenset({"builtins.list", "builtins.dict", "collections.OrderedDict"})
# The methods of `list` and `dict` modelled on a known container (see `ContainerCalls.container_method`).
CONTAINER_METHODS = frozenset({"items", "values", "keys", "copy", "get", "append", "extend",
                               "insert", "pop", "update", "clear", "sort", "reverse"})


class ContainerCalls(Part):
    """Evaluates calls of container methods and of lambdas."""

    autograd: api.Autograd
    expressions: api.Expressions
    statements: api.Statements

    def __init__(self, state: State) -> None:
        super().__init__(state)
        self._lambda_depth = 0  # lambdas called from lambdas being evaluated

    def call_lambda(self, function: LambdaValue, node: cst.Call, args: Args,
                    env: Env) -> Value:
        """A call of a lambda: its body, with the arguments bound, on this path's facts
        (what it writes, the caller's tensors are written)."""
        params = all_params(function.definition.params)
        positional = [value for arg, value in args if arg.keyword is None and not arg.star]
        if len(positional) != len(args) or len(positional) > len(params) or \
                self._lambda_depth > 8 or not isinstance(function.scope, Env):
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        inner = Env(function.scope, flow=env.flow)
        for position, param in enumerate(params):
            inner.names[param.name.value] = positional[position] \
                if position < len(positional) else UNKNOWN
        self._lambda_depth += 1
        try:
            result = self.expressions.eval(function.definition.body, inner)
        finally:
            self._lambda_depth -= 1
        env.flow = inner.flow
        return result

    def container_method(self, owner: ContainerValue, owner_node: cst.BaseExpression,
                         attr: str, node: cst.Call, args: Args, env: Env) -> Value:
        """The methods of `list` and `dict` that move elements (see containers.py): the
        container's name is rebound to what the method leaves in it."""
        positional = [value for arg, value in args if arg.keyword is None and not arg.star]
        if len(positional) != len(args):
            self._rebind_container(owner_node, containers.joined(owner, node), env)
            return UNKNOWN
        if attr in ("items", "values", "keys", "copy") and positional:
            return UNKNOWN
        if attr == "items":
            return containers.items_of(owner, node) if owner.mapping else UNKNOWN
        if attr == "values":
            return containers.values_of(owner, node) if owner.mapping else UNKNOWN
        if attr == "keys":
            return containers.keys_of(node)
        if attr == "copy":
            return containers.copied(owner, node, mapping=owner.mapping)
        if attr == "get" and owner.mapping and positional:
            found = containers.item(owner, containers.literal_key(node.args[0].value))
            if found is not None:
                return found
            element = containers.some_element(owner)
            return containers.guessed(element) if element is not None else UNKNOWN
        in_order = not self.state.loops
        changed: ContainerValue | None = None
        result: Value = OTHER
        if attr == "append" and len(positional) == 1 and not owner.mapping:
            changed = containers.appended(owner, (positional[0],), node, in_order)
        elif attr == "extend" and len(positional) == 1 and not owner.mapping:
            more = positional[0]
            if isinstance(more, ContainerValue) and more.items is not None and not more.mapping:
                changed = containers.appended(owner, more.items, node, in_order)
            elif isinstance(more, ContainerValue) and more.each is not None and \
                    not more.mapping:
                changed = containers.appended(owner, (more.each,), node, False)
            else:
                changed = ContainerValue(origin=node)
        elif attr == "insert" and len(positional) == 2 and not owner.mapping:
            at = containers.literal_key(node.args[0].value)
            if in_order and owner.items is not None and isinstance(at, int) and \
                    not isinstance(at, bool):
                items = list(owner.items)
                items.insert(at, positional[1])
                changed = ContainerValue(origin=node, items=tuple(items))
            else:
                changed = containers.added(owner, positional[1], node)
        elif attr == "pop" and len(positional) <= 2:
            key = containers.literal_key(node.args[0].value) if positional else -1
            found = containers.item(owner, key) if (positional or not owner.mapping) else None
            element = containers.some_element(owner)
            result = found if found is not None else containers.guessed(element) \
                if element is not None else UNKNOWN
            if found is not None and in_order and owner.items is not None:
                position = (owner.keys.index(key) if owner.keys is not None
                            else key % len(owner.items))  # type: ignore[operator]
                changed = replace(owner, items=owner.items[:position] + owner.items[position + 1:],
                                  keys=None if owner.keys is None else
                                  owner.keys[:position] + owner.keys[position + 1:], origin=node)
            else:
                changed = containers.joined(owner, node)
        elif attr == "update" and len(positional) == 1 and owner.mapping:
            more = positional[0]
            changed = containers.merged([owner, more], node) if isinstance(
                more, ContainerValue) and more.mapping else \
                ContainerValue(origin=node, mapping=True)
        elif attr in ("clear", "sort", "reverse"):
            changed = ContainerValue(origin=node, mapping=owner.mapping) if attr == "clear" \
                else containers.joined(owner, node)
            result = OTHER
        if changed is not None:
            self._rebind_container(owner_node, changed, env)
        return result

    def _rebind_container(self, node: cst.BaseExpression, value: ContainerValue,
                          env: Env) -> None:
        """The container named by ``node`` now holds ``value``'s elements."""
        if type(node) is cst.Name or attr_key(node) is not None:
            self.statements.bind(node, value, env, evaluate_base=False)


def builtin_container(qualname: str, positional: list[Value], node: cst.Call) -> Value | None:
    """Containers that repeat one object, and copies that share their tensors."""
    if qualname in ("builtins.dict.fromkeys", "itertools.repeat"):
        item = positional[1] if qualname.endswith("fromkeys") and len(positional) > 1 \
            else positional[0] if qualname.endswith("repeat") and positional else None
        if isinstance(item, TensorValue):
            return ContainerValue(origin=node, each=item, replicated=node)
        return None
    if qualname in EMPTY_CONTAINERS and not node.args:
        # `OrderedDict()`, `list()`: empty, filled by the code that follows.
        return ContainerValue(origin=node, items=(), mapping=qualname in MAPPING_COPIES,
                              keys=() if qualname in MAPPING_COPIES else None)
    if qualname in SHALLOW_COPIES and len(positional) == 1:
        source = positional[0]
        if isinstance(source, ParamsValue) and source.kind is Kind.PARAMS:
            return ParamsValue(Kind.OTHER, origin=node, params=source.params, snapshot=node)
        if source.snapshot is not None and not isinstance(source, ContainerValue):
            return kept_as_copy(source, node, origin=node)
        if isinstance(source, ContainerValue) and source.replicated is not None:
            return replace(source, origin=node)
        if isinstance(source, ContainerValue):
            # A new container of the same element objects (`list(d)` is the keys).
            mapping = qualname in MAPPING_COPIES or \
                qualname == "copy.copy" and source.mapping
            return containers.copied(source, node, mapping=mapping)
    if qualname in ("builtins.sorted", "builtins.reversed") and positional and \
            isinstance(positional[0], ContainerValue) and not positional[0].mapping:
        return containers.joined(positional[0], node)
    return None
