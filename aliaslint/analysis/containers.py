"""Lists, tuples and dicts whose elements are known: what indexing, the methods of `list`
and `dict`, and the builtins that copy a container (shallowly: the same element objects) give.

A container value keeps its elements one by one where the code says which is which (a
display, appends in order, literal dict keys) and as "some element", the join of them all,
otherwise.  These are pure functions over values; the interpreter calls them and rebinds
the container's name where a method changes it.
"""
from __future__ import annotations


import libcst as cst

from aliaslint.analysis.syntax import evaluated, name_key

from aliaslint.analysis.values import (
    replace,
    OTHER,
    UNKNOWN,
    ConstValue,
    ContainerValue,
    ModuleValue,
    TensorValue,
    Value,
    elements,
    join_elements,
    some_element)

# A literal key or index as Python compares it.
Key = object
NO_KEY = object()


def literal_key(node: cst.BaseExpression | None) -> object:
    """The value of a string, int or negative int literal; NO_KEY otherwise."""
    if type(node) is cst.Integer:
        return int(node.value, 0)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and \
            type(node.expression) is cst.Integer:
        return -int(node.expression.value, 0)
    if type(node) is cst.SimpleString:
        try:
            return evaluated(node)
        except Exception:  # an escape libcst cannot evaluate: not a key we know
            return NO_KEY
    return NO_KEY


def joined(container: ContainerValue, origin: cst.CSTNode | None) -> ContainerValue:
    """The same container with its elements no longer told apart."""
    return ContainerValue(origin=origin, each=some_element(container), mapping=container.mapping)


def item(container: ContainerValue, key: object) -> Value | None:
    """The element at a literal index or key; None when the layout does not say."""
    if container.items is None or key is NO_KEY:
        return None
    if container.keys is not None:
        for known, value in zip(container.keys, container.items):
            if known == key and type(known) is type(key):
                return value
        return None
    if container.mapping or not isinstance(key, int) or isinstance(key, bool):
        return None
    if -len(container.items) <= key < len(container.items):
        return container.items[key]
    return None


def guessed(value: Value) -> Value:
    """An element taken by an index the code does not pin down: which one is not known, so
    what follows from its identity is not certain (a finding on it is `low`)."""
    if isinstance(value, TensorValue):
        return replace(value, guessed=True)
    return value


def with_item(container: ContainerValue, key: object, value: Value,
              origin: cst.CSTNode) -> ContainerValue:
    """`c[key] = value`."""
    if container.items is not None and key is not NO_KEY:
        if container.keys is not None:
            keys = list(container.keys)
            items = list(container.items)
            for position, known in enumerate(keys):
                if known == key and type(known) is type(key):
                    items[position] = value
                    return replace(container, items=tuple(items), origin=origin)
            return replace(container, keys=(*keys, key), items=(*items, value), origin=origin)
        if not container.mapping and isinstance(key, int) and \
                -len(container.items) <= key < len(container.items):
            items = list(container.items)
            items[key] = value
            return replace(container, items=tuple(items), origin=origin)
    if key is NO_KEY and container.mapping and container.items is not None and \
            isinstance(value, ModuleValue) and \
            all(isinstance(element, ModuleValue) for element in container.items):
        # `layers[f"fc{i}"] = nn.Linear(...)`: a dict of layers in the order they were put
        # in, as `nn.Sequential(layers)` runs them (the keys are not known).
        return ContainerValue(origin=origin, items=(*container.items, value), mapping=True)
    return added(container, value, origin)


def added(container: ContainerValue, value: Value, origin: cst.CSTNode) -> ContainerValue:
    """The container with one more element at a place not known."""
    current = some_element(container)
    if current is None and (container.items is None or container.items):
        return ContainerValue(origin=origin, mapping=container.mapping)
    each = value if current is None else join_elements(current, value)
    return ContainerValue(origin=origin, each=each, mapping=container.mapping)


def appended(container: ContainerValue, values: tuple[Value, ...], origin: cst.CSTNode,
             in_order: bool) -> ContainerValue:
    """`c.append(v)` / `c.extend([...])`: in order where the layout is known and the code
    runs once (not in a loop, whose passes would each add one)."""
    if in_order and container.items is not None and container.keys is None and \
            not container.mapping:
        return ContainerValue(origin=origin, items=container.items + values)
    result = container
    for value in values:
        result = added(result, value, origin)
    return result


def sliced(container: ContainerValue, node: cst.Subscript) -> ContainerValue:
    """`c[a:b]`: a new list of the same elements."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    if type(index) is cst.Slice and container.items is not None and \
            container.keys is None and not container.mapping:
        bounds = []
        for bound in (index.lower, index.upper, index.step):
            key = literal_key(bound) if bound is not None else None
            if key is NO_KEY or isinstance(key, str):
                return joined(container, node)
            bounds.append(key)
        lower, upper, step = bounds
        return ContainerValue(origin=node, items=container.items[
            slice(lower, upper, step)])
    return joined(container, node)


def values_of(container: ContainerValue, origin: cst.CSTNode) -> ContainerValue:
    """`d.values()`: the same value objects."""
    if container.items is not None:
        return ContainerValue(origin=origin, items=container.items)
    return ContainerValue(origin=origin, each=container.each)


def items_of(container: ContainerValue, origin: cst.CSTNode) -> ContainerValue:
    """`d.items()`: (key, value) pairs."""
    if container.items is not None:
        return ContainerValue(origin=origin, items=tuple(
            ContainerValue(origin=origin, items=(OTHER, value)) for value in container.items))
    value = container.each if container.each is not None else UNKNOWN
    return ContainerValue(origin=origin, each=ContainerValue(origin=origin, items=(OTHER, value)))


def keys_of(origin: cst.CSTNode) -> ContainerValue:
    """`d.keys()`, `list(d)`: the keys, plain Python values."""
    return ContainerValue(origin=origin, each=OTHER)


def copied(container: ContainerValue, origin: cst.CSTNode, *, mapping: bool) -> ContainerValue:
    """`list(c)`, `dict(d)`, `d.copy()`, `copy.copy(c)`, `{**d}`: a new container holding
    the same element objects."""
    if container.mapping and not mapping:
        return keys_of(origin)  # `list(d)` of a dict is its keys
    if mapping and not container.mapping:
        return ContainerValue(origin=origin, mapping=True)  # `dict(pairs)`: not followed
    return replace(container, origin=origin)


def merged(parts: list[ContainerValue], origin: cst.CSTNode) -> ContainerValue:
    """`{**a, **b}` or `a | b`: later keys win where all keys are literal."""
    if len(parts) == 1:
        return replace(parts[0], origin=origin)  # `{**d}`: the same elements
    keys: list[object] = []
    items: list[Value] = []
    for part in parts:
        if part.items is None or part.keys is None:
            result = ContainerValue(origin=origin, mapping=True)
            for other in parts:
                result = join_values(result, other, origin)
            return result
        for key, value in zip(part.keys, part.items):
            if key in keys:
                items[keys.index(key)] = value
            else:
                keys.append(key)
                items.append(value)
    return ContainerValue(origin=origin, keys=tuple(keys), items=tuple(items), mapping=True)


def join_values(into: ContainerValue, other: ContainerValue, origin: cst.CSTNode) \
        -> ContainerValue:
    """A dict that may hold the elements of both, which ones where not known."""
    found = elements(other)
    if found is None:
        return ContainerValue(origin=origin, mapping=True)
    result = into
    for value in found:
        result = added(result, value, origin) if result.each is not None or \
            result.items else ContainerValue(origin=origin, each=value, mapping=True)
    return result


def element_key(name: str) -> str:
    """The key under which a container name waits to be read (Flow.stale) after a called
    function wrote one of its elements: `batch` read as `batch["image"]` sees the write."""
    return f"{name}[]"


def tensors_in(value: Value) -> list[TensorValue]:
    """The tensors a value holds, itself or in (nested) containers."""
    if isinstance(value, TensorValue):
        return [value]
    if isinstance(value, ContainerValue):
        found = elements(value) or ()
        return [tensor for element in found for tensor in tensors_in(element)]
    return []


def summed(container: ContainerValue, origin: cst.CSTNode) -> Value:
    """`sum(c)` of tensors: a new tensor whose graph is every element's."""
    tensors = tensors_in(container)
    if not tensors or (elements(container) or ()) and not all(
            isinstance(e, TensorValue) for e in elements(container) or ()):
        return UNKNOWN
    token = ("alloc", id(origin))
    requires = True if any(t.requires_grad is True for t in tensors) else None
    graph = frozenset().union(*(t.graph for t in tensors))
    pending = frozenset().union(*(t.pending for t in tensors)) if len(tensors) == 1 \
        else frozenset()
    return TensorValue(origin=origin, storage=token, counter=token, requires_grad=requires,
                       graph=graph, pending=pending)


# Summaries (modules.py) see a container argument's tensors under tokens of their own, so a
# write to an element inside the callee maps back to the caller's element:
# ("element", argument index, path), a path step being a position in `items` or "each".
def tokenised(container: ContainerValue, index: int, path: tuple = ()) -> ContainerValue:
    """A container argument as the callee sees it."""
    def token_for(value: Value | None, step: object) -> Value | None:
        if isinstance(value, TensorValue):
            token = ("element", index, (*path, step))
            return TensorValue(origin=value.origin, storage=token, counter=token,
                               requires_grad=value.requires_grad, guessed=value.guessed)
        if isinstance(value, ContainerValue):
            return tokenised(value, index, (*path, step))
        return value
    items = None if container.items is None else tuple(
        token_for(value, position) or UNKNOWN for position, value in enumerate(container.items))
    return replace(container, items=items, each=token_for(container.each, "each"))


def element_token(token: object) -> tuple[int, tuple] | None:
    """(argument index, path) of an element token."""
    if isinstance(token, tuple) and len(token) == 3 and token[0] == "element":
        return token[1], token[2]
    return None


def at_path(value: Value, path: tuple) -> list[Value]:
    """The caller's elements a path names: "each" is every element."""
    if not path:
        return [value]
    if not isinstance(value, ContainerValue):
        return []
    step, rest = path[0], path[1:]
    if step == "each":
        found = elements(value) or ()
        return [leaf for element in found for leaf in at_path(element, rest)]
    if value.items is not None and isinstance(step, int) and step < len(value.items):
        return at_path(value.items[step], rest)
    return []


def signature(value: Value) -> object:
    """What a summary depends on in a container argument: its layout, and the literals it
    holds (a comprehension over `["cls", "depth"]` binds each)."""
    if isinstance(value, ConstValue):
        return ("literal", type(value.literal), value.literal)
    if not isinstance(value, ContainerValue):
        return value.kind
    return ("container", value.mapping, value.keys,
            None if value.items is None else tuple(signature(v) for v in value.items),
            None if value.each is None else signature(value.each))


def without_literals(value: Value) -> Value:
    """``value`` with the literals it holds as plain values: the container a summary is
    computed for once its literals have varied between calls (protocol.CONTEXTS)."""
    if isinstance(value, ConstValue):
        return OTHER
    if not isinstance(value, ContainerValue) or value.items is None:
        return value
    return replace(value, items=tuple(without_literals(item) for item in value.items))


def aligned_index(node: cst.For) -> tuple[str, str] | None:
    """(index name, container key) when the loop walks a container's indices:
    `for i in range(len(feats))`, `for i, f in enumerate(feats)`; the container a name or
    `self.<attr>`."""
    target, iterable = node.target, node.iter
    if type(iterable) is not cst.Call or type(iterable.func) is not cst.Name or \
            len(iterable.args) != 1:
        return None
    argument = iterable.args[0].value
    if iterable.func.value == "enumerate" and type(target) is cst.Tuple and \
            target.elements and type(target.elements[0].value) is cst.Name:
        index, container = target.elements[0].value.value, argument
    elif iterable.func.value == "range" and type(target) is cst.Name and \
            type(argument) is cst.Call and type(argument.func) is cst.Name and \
            argument.func.value == "len" and len(argument.args) == 1:
        index, container = target.value, argument.args[0].value
    else:
        return None
    key = name_key(container)
    return (index, key) if key is not None else None
