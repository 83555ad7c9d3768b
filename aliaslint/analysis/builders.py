"""Modules built by code: lists of modules grown by `append`, `extend`, `+` and `+=` and
turned into containers (`nn.Sequential(*layers)`), and submodules registered under literal
names (`add_module`, `register_module`, `setattr(self, "name", m)`, `getattr(self, "name")`).
A name may be computed from literals (`str(i)`, `f"layer{i}"` where a loop over a literal
range binds `i`: loops.py unrolls such loops, one iteration per element).

A list of modules is a `ContainerValue` whose `items` are all `ModuleValue`s, in order.  A
`ModuleDict` built from a dict of modules under literal keys keeps them in insertion order
with their keys; `.items()`, `.values()` and `.keys()` are lists of what they visit, and a
loop or a comprehension over such a list, or over a container whose layers are known, runs
once per element in order (`visited_in_order`).  A
comprehension (`[Block(d) for _ in range(n)]`) is one element repeated: as children of a
container it runs twice, the way a loop body runs until a save of one iteration meets a write
of the next (docs/engine.md, Loops).  What the container does when called is then its
children's effects composed in order (`Modules._run_module`): no rule needs to know how the
list was built.
"""

from __future__ import annotations


import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.containers import NO_KEY, literal_key
from aliaslint.analysis.syntax import NO_LITERAL, evaluated, literal_constant, name_key
from aliaslint.analysis.values import (
    replace,
    INT,
    OTHER,
    ModuleInfo,
    Args,
    ConstValue,
    ContainerValue,
    ModuleValue,
    Value,
    local_class,
    module_items,
    module_list,
)

# Methods of `nn.Module` that register a submodule under a name: `self.<name>` afterwards.
REGISTER_METHODS = frozenset({"add_module", "register_module"})

# The `ModuleDict` methods that visit its entries in insertion order.
DICT_VIEWS = frozenset({"items", "values", "keys"})

# A container of at most this many known elements is iterated element by element.
UNROLL_LAYERS = 32


def carries_module(value: Value) -> bool:
    """A module, or a tuple holding one (`(name, head)` of `heads.items()`)."""
    return isinstance(value, ModuleValue) or isinstance(value, ContainerValue) and \
        value.items is not None and any(isinstance(item, ModuleValue) for item in value.items)


def visited_in_order(value: Value) -> tuple[Value, ...] | None:
    """What iterating ``value`` visits, one element after another, where the code that built
    it says: the layers of a `ModuleList` or `Sequential` whose children are known, or a list
    whose elements are known and carry modules (`heads.items()` of a `ModuleDict`,
    `enumerate(self.layers)`, `zip(self.blocks, self.norms)`).  None otherwise: a
    `ModuleDict` itself iterates its keys, and a container of one repeated element
    (`[Block() for _ in range(n)]`) runs as a loop body."""
    if isinstance(value, ModuleValue):
        info = value.module
        if not info.children or info.element is not None or info.keys is not None or \
                info.spec is not None and "Dict" in info.spec.name or \
                len(info.children) > UNROLL_LAYERS:
            return None
        return info.children
    if isinstance(value, ContainerValue) and not value.mapping and value.items and \
            value.replicated is None and len(value.items) <= UNROLL_LAYERS and \
            all(carries_module(item) for item in value.items):
        return value.items
    return None


def literal_items(value: Value) -> tuple[ConstValue, ...] | None:
    """The elements of a list or tuple display of literals (`["cls", "depth"]`), which a
    comprehension over it binds one by one: a factory given each picks its branch."""
    if not isinstance(value, ContainerValue) or value.mapping or not value.items or \
            value.replicated is not None or len(value.items) > UNROLL_LAYERS:
        return None
    found = tuple(item for item in value.items if isinstance(item, ConstValue))
    return found if len(found) == len(value.items) else None


def known_items(value: Value) -> tuple[Value, ...] | None:
    """The elements of a sequence, in order, when each one is known: what
    `visited_in_order` gives, or a list or tuple display's elements."""
    visited = visited_in_order(value)
    if visited is not None:
        return visited
    if isinstance(value, ContainerValue) and not value.mapping and value.items is not None \
            and value.replicated is None:
        return value.items
    return None


def walked_together(qualname: str | None, positional: list[Value], args: Args,
                    node: cst.CSTNode) -> ContainerValue | None:
    """`enumerate(self.layers)` of layers known one by one: each with its index;
    `zip(self.blocks, self.norms)`: the k-th of each, as long as the shortest.  None for
    other calls, and where no argument is such a container."""
    if len(positional) != len(args) or not any(
            visited_in_order(value) is not None for value in positional):
        return None
    if qualname == "builtins.enumerate" and len(positional) == 1:
        return ContainerValue(origin=node, items=tuple(
            ContainerValue(origin=node, items=(INT, layer))
            for layer in visited_in_order(positional[0]) or ()))
    sequences = [known_items(value) for value in positional]
    if qualname != "builtins.zip" or len(positional) < 2 or None in sequences:
        return None
    return ContainerValue(origin=node, items=tuple(
        ContainerValue(origin=node, items=row)
        for row in zip(*(sequence or () for sequence in sequences))))


def dict_of_modules(value: Value) -> tuple[tuple, tuple[ModuleValue, ...]] | None:
    """`nn.ModuleDict({"cls": nn.Linear(d, 5), ...})` (a display or a comprehension over
    literals): its keys and modules, in insertion order.  None when a key is not a literal
    string or a value not a module."""
    if not isinstance(value, ContainerValue) or not value.mapping or value.items is None or \
            value.keys is None or len(value.keys) != len(value.items) or \
            not all(isinstance(key, str) for key in value.keys):
        return None
    modules = tuple(item for item in value.items if isinstance(item, ModuleValue))
    return (value.keys, modules) if len(modules) == len(value.items) else None


def dict_view(module: ModuleValue, attr: str, node: cst.CSTNode) -> ContainerValue | None:
    """`heads.items()`, `.values()`, `.keys()` of a `ModuleDict` whose entries are known: a
    list of what each visits, in insertion order."""
    info = module.module
    if attr not in DICT_VIEWS or info.keys is None or info.children is None:
        return None
    keys = tuple(ConstValue(origin=node, literal=key) for key in info.keys)
    if attr != "items":
        return ContainerValue(origin=node, items=keys if attr == "keys" else info.children)
    return ContainerValue(origin=node, items=tuple(
        ContainerValue(origin=node, items=(key, child)) for key, child in zip(keys,
                                                                              info.children)))


def _literal_int(node: cst.BaseExpression) -> int | None:
    """A literal integer index (`0`, `-1`), or None."""
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        inner = _literal_int(node.expression)
        return -inner if inner is not None else None
    if type(node) is cst.Integer:
        return int(evaluated(node))
    return None


def name_literal(arg: cst.Arg, value: Value) -> object:
    """The name an argument gives: a literal, or a string computed from literals (`str(i)`,
    `f"stage{i}"` in an unrolled loop); ``NO_LITERAL`` otherwise."""
    return value.literal if isinstance(value, ConstValue) else literal_constant(arg.value)


def _known_names(info: ModuleInfo) -> tuple[str, ...] | None:
    """The names a container's children are registered under, where known: none yet, or
    each registered here by name or by `append`."""
    if info.names is not None:
        return info.names
    return () if info.children is not None and not info.children else None


class Builders(Part):
    """Lists of modules grown by code, and submodules registered by name."""

    statements: api.Statements

    def concat_modules(self, left: Value, right: Value,
                       origin: cst.CSTNode) -> ContainerValue | None:
        """`trunk + [nn.ReLU()]`, `layers += [conv, act]`: the modules of both, in order."""
        first, second = module_items(left), module_items(right)
        if first is None or second is None:
            return None
        return module_list(first + second, origin)

    def grow_module_list(self, receiver: Value, receiver_node: cst.BaseExpression | None,
                         attr: str, positional: list[Value], env: Env) -> Value | None:
        """`layers.append(m)`, `layers.extend(more)` on a list of modules held by a name:
        the name holds the longer list.  None when this is no such call."""
        if attr not in ("append", "extend") or len(positional) != 1:
            return None
        items = module_items(receiver)
        key = name_key(receiver_node)
        if items is None or key is None or not isinstance(receiver, ContainerValue) or \
                receiver.items is None:
            return None
        added: tuple[ModuleValue, ...] | None = (positional[0],) if attr == "append" and \
            isinstance(positional[0], ModuleValue) else module_items(positional[0]) \
            if attr == "extend" else None
        if added is None:
            return None
        self.statements.assign_name(key, module_list(items + added, receiver.origin), env)
        return OTHER

    def grow_container(self, container: ModuleValue, receiver_node: cst.BaseExpression | None,
                       attr: str, positional: list[Value], env: Env) -> Value | None:
        """`self.layers.append(nn.Linear(d, d))`, `self.layers.extend(more)` on a
        `ModuleList` or `Sequential` whose layers are known, held by a name: it holds one
        more.  None when this is no such call."""
        info = container.module
        key = name_key(receiver_node)
        if attr not in ("append", "extend") or len(positional) != 1 or key is None or \
                info.children is None or info.element is not None or info.spec is None or \
                not info.spec.container or "Dict" in info.spec.name:
            return None
        added: tuple[ModuleValue, ...] | None = (positional[0],) if attr == "append" and \
            isinstance(positional[0], ModuleValue) else module_items(positional[0]) \
            if attr == "extend" else None
        if added is None:
            return None
        # `Sequential.append` registers under `str(len(self))`.
        names = _known_names(info)
        if names is not None:
            names += tuple(str(len(info.children) + at) for at in range(len(added)))
        grown = replace(info, children=info.children + added, names=names,
                        params=info.params.union(*(layer.module.params for layer in added)))
        self.statements.assign_name(key, replace(container, module=grown), env)
        return container

    def named_submodule(self, node: cst.Call, qualname: str | None, attr: str,
                        receiver: Value | None, receiver_node: cst.BaseExpression | None,
                        args: Args, env: Env) -> Value | None:
        """`self.add_module("stage1", m)`, `self.register_module(...)`, `setattr(self,
        "stage1", m)`: `self.stage1` is m; `getattr(self, "stage1")` is what it holds.  Only
        literal names; None when this is no such call."""
        if any(arg.keyword is not None or arg.star for arg, _ in args):
            return None
        value: Value | None
        if attr in REGISTER_METHODS and isinstance(receiver, ModuleValue) and len(args) == 2 \
                and not (type(receiver_node) is cst.Name and receiver_node.value == "self"):
            return self._register_child(receiver, receiver_node, name_literal(*args[0]),
                                        args[1][1], env)
        if attr in REGISTER_METHODS and isinstance(receiver, ModuleValue) and \
                type(receiver_node) is cst.Name and receiver_node.value == "self" and \
                len(args) == 2:
            owner, name_arg, value = receiver_node, args[0], args[1][1]
        elif qualname in ("builtins.setattr", "builtins.getattr") and len(args) >= 2 and \
                type(args[0][0].value) is cst.Name and args[0][0].value.value == "self":
            owner, name_arg = args[0][0].value, args[1]
            value = args[2][1] if qualname == "builtins.setattr" and len(args) == 3 else None
            if qualname == "builtins.getattr":
                name = name_literal(*name_arg)
                if not isinstance(name, str) or not name.isidentifier():
                    return None
                # What `self.<name>` holds: bound in this method, or set by `__init__`.
                key = f"self.{name}"
                cls = local_class(args[0][1])
                held = env.lookup(key) if key in env.names else \
                    cls.attr(key) if cls is not None else None
                return held if isinstance(held, ModuleValue) else None
            if value is None:
                return None
        else:
            return None
        name = name_literal(*name_arg)
        if name is NO_LITERAL or not isinstance(name, str) or not name.isidentifier() or \
                not isinstance(value, ModuleValue):
            return None
        self.statements.assign_name(f"{owner.value}.{name}", value, env)
        return OTHER if attr in REGISTER_METHODS or qualname == "builtins.setattr" else None

    def _register_child(self, container: ModuleValue,
                        receiver_node: cst.BaseExpression | None, name: object, value: Value,
                        env: Env) -> Value | None:
        """`self.slice1.add_module(str(i), features[i])` on a `Sequential` or `ModuleList`
        whose children's names are known (none yet, or all registered here): a child under
        a new name runs after the others; under a name it holds, it takes that child's
        place (`_modules[name] = m`).  None when this is no such call."""
        info = container.module
        key = name_key(receiver_node)
        if key is None or not isinstance(value, ModuleValue) or not isinstance(name, str) or \
                info.children is None or info.element is not None or info.spec is None or \
                not info.spec.container or "Dict" in info.spec.name:
            return None
        names = _known_names(info)
        if names is None:
            return None
        children = info.children
        if name in names:
            at = names.index(name)
            children = (*children[:at], value, *children[at + 1:])
        else:
            children, names = (*children, value), (*names, name)
        params: frozenset = frozenset().union(*(child.module.params for child in children))
        self.statements.assign_name(key, replace(container, module=replace(
            info, children=children, names=names, params=params)), env)
        return OTHER

    def child_at(self, container: ModuleValue, node: cst.Subscript) -> Value | None:
        """`self.features[0]`, `self.features[-1]`: that child of a container whose children
        are known; `self.features[:4]` of a `Sequential`: a `Sequential` of those children
        (what `Sequential.__getitem__` returns for a slice).  Only literal indexes."""
        children = container.module.children
        if children is None or len(node.slice) != 1:
            return None
        index = node.slice[0].slice
        keys = container.module.keys
        if keys is not None:
            # `self.heads["depth"]` of a `ModuleDict`: the module under that key.
            key = literal_key(index.value) if type(index) is cst.Index else NO_KEY
            return children[keys.index(key)] if key in keys else None
        if type(index) is cst.Index:
            # A literal, or an int a loop over a literal range binds (`features[i]`).
            held = self.state.index_values.get(id(index.value))
            at = held.literal if isinstance(held, ConstValue) and \
                type(held.literal) is int else _literal_int(index.value)
            return children[at] if at is not None and -len(children) <= at < len(children) \
                else None
        spec = container.module.spec
        if spec is None or "Sequential" not in spec.name or type(index) is not cst.Slice:
            return None
        parts = (index.lower, index.upper, index.step)
        bounds = [_literal_int(part) if part is not None else None for part in parts]
        if any(b is None and part is not None for b, part in zip(bounds, parts)) or \
                bounds[2] == 0:
            return None
        picked = children[slice(*bounds)]
        params: frozenset = frozenset().union(*(child.module.params for child in picked))
        return ModuleValue(origin=node, module=ModuleInfo(
            spec=spec, children=picked, params=params, label=container.module.label))
