"""Method calls as Python makes them: the method resolution order of the file's classes,
`super()`, methods reached through the class (`Base.forward(self, x)`), static and class
methods, properties, and `self.f()` in a base class that a subclass of the file overrides.

Which definition runs is decided here; what it does is its summary (modules.py), applied
at the call.  A receiver's class is known exactly when the code built the instance (an
instance of `Net` runs `Net`'s methods by its MRO); `self` in a method body is an instance
of that class or of any subclass, so `self.f()` there may run any override of `f` in the
file's subclasses: the effect is the join of theirs, a may-effect whose findings are `low`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint.analysis.syntax import attr_key
from aliaslint.nodes import walk
from aliaslint.analysis.scopes import ClassInfo, Env
from aliaslint.analysis.records import quick
from aliaslint.analysis.values import (
    UNKNOWN,
    Args,
    ClassValue,
    ModuleInfo,
    FunctionValue,
    Kind,
    ModuleValue,
    ObjectValue,
    TensorValue,
    Value,
    join,
    local_class,
)

# Bases whose methods do not hide the file's: torch's own base classes (their methods are
# modelled by name elsewhere) and Python's.  Any other base not defined in the file may
# define the method looked up, so the lookup stops there.
TRANSPARENT_BASES = frozenset({
    "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol",
})

# Decorators that change how a method binds; any other keeps today's handling.
STATIC = frozenset({"staticmethod", "builtins.staticmethod"})
CLASS = frozenset({"classmethod", "builtins.classmethod"})
PROPERTY = frozenset({"property", "builtins.property", "functools.cached_property",
                      "cached_property"})


def binding(function: cst.FunctionDef) -> str:
    """How a method of a class binds: "static", "class", "property" or "instance"."""
    for decorator in function.decorators:
        name = _dotted(decorator.decorator)
        if name in STATIC:
            return "static"
        if name in CLASS:
            return "class"
        if name in PROPERTY:
            return "property"
    return "instance"


def _dotted(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def c3(cls: ClassInfo, bases: Sequence[ClassInfo | str]) -> tuple | None:
    """The C3 linearization of ``cls`` with these direct bases (a str for a base not
    defined in the file), or None where Python would refuse the class."""
    sequences: list[list] = []
    for base in bases:
        sequences.append(list(base.linearization()) if isinstance(base, ClassInfo) else [base])
    sequences.append(list(bases))
    order: list = [cls]
    while True:
        sequences = [seq for seq in sequences if seq]
        if not sequences:
            return tuple(order)
        for seq in sequences:
            head = seq[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        order.append(head)
        for seq in sequences:
            if seq and seq[0] == head:
                del seq[0]


@quick
@dataclass(frozen=True, kw_only=True)
class SuperValue(Value):
    """`super()` in a method of ``owner``: attribute lookups start after ``owner`` in the
    receiver's MRO, and bind to the receiver."""

    kind: Kind = field(default=Kind.UNKNOWN, init=False)
    owner: ClassInfo = field(compare=False)
    receiver: Value = field(compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class MethodValue(Value):
    """`obj.f` read without calling it, for a method of the file's class: a bound method.
    Kept in an attribute (`self.forward = self.forward_slicing`), it is what a call of
    that attribute runs, and an instance attribute `forward` is what calling the module
    runs (`Module.__call__` looks `forward` up on the instance)."""

    kind: Kind = field(default=Kind.FUNCTION, init=False)
    definition: cst.FunctionDef = field(compare=False)
    receiver: Value = field(compare=False)


def exact(receiver: Value) -> bool:
    """Is the receiver's class known exactly (an instance the code built), rather than
    `self` in a method body, which may be an instance of a subclass?"""
    if isinstance(receiver, ModuleValue):
        return receiver.module.exact
    if isinstance(receiver, ObjectValue):
        return receiver.exact
    return True


def class_of(value: Value) -> ClassInfo | None:
    """The file's class a ClassValue names (module class or plain class)."""
    if isinstance(value, ClassValue):
        if value.module is not None and value.module.cls is not None:
            return value.module.cls
        return value.info
    return None


def attribute_storages(cls: ClassInfo) -> frozenset:
    """The storages of the tensors an instance holds as attributes (its own `__init__`'s
    and its local bases')."""
    tokens: set[object] = set()
    for entry in cls.linearization():
        if isinstance(entry, ClassInfo):
            tokens.update(value.storage for value in entry.attrs.values()
                          if isinstance(value, TensorValue) and value.storage is not None)
    return frozenset(tokens)


def kept_modules(cls: ClassInfo) -> list[tuple[str, ModuleValue]]:
    """The modules an instance holds as attributes, by name (`module` for `self.module`),
    as its `__init__` (its own or a local base's) left them."""
    found: dict[str, ModuleValue] = {}
    for entry in cls.linearization():
        if isinstance(entry, ClassInfo):
            for key, value in entry.attrs.items():
                if isinstance(value, ModuleValue) and key.count(".") == 1:
                    found.setdefault(key.split(".", 1)[1], value)
    return list(found.items())


def taken_at(cls: ClassInfo, key: str) -> cst.BaseExpression | None:
    """What the `__init__` of ``cls`` (or of a local base) assigns to ``key``
    (`self.module = model`): the expression, where the object took what it keeps."""
    for entry in cls.linearization():
        init = entry.methods.get("__init__") if isinstance(entry, ClassInfo) else None
        if init is None:
            continue
        for node in walk(init):
            if type(node) is cst.Assign and any(
                    attr_key(target.target) == key for target in node.targets):
                return node.value
    return None


class Dispatch(Part):
    """Resolves which definition of the file a method call or attribute read runs."""

    autograd: api.Autograd
    expressions: api.Expressions
    modules: api.Modules
    protocol: api.CallProtocol

    def super_call(self, node: cst.Call, env: Env) -> Value:
        """`super()` (or `super(Cls, self)`) in a method of a class of the file."""
        function = self.state.function
        owner = self.state.owners.get(id(function)) if function is not None else None
        params = list(function.params.params) if function is not None else []
        if function is None or owner is None or not params or binding(function) != "instance":
            return UNKNOWN
        if node.args:
            if len(node.args) != 2 or any(arg.keyword or arg.star for arg in node.args):
                return UNKNOWN
            named = class_of(self.expressions.eval(node.args[0].value, env))
            if named is None:
                return UNKNOWN
            owner = named
            receiver = self.expressions.eval(node.args[1].value, env)
        else:
            receiver = env.lookup(params[0].name.value)
        if local_class(receiver) is None:
            return UNKNOWN
        return SuperValue(owner=owner, receiver=receiver, origin=node)

    def _overrides(self, cls: ClassInfo, name: str) -> list[cst.FunctionDef] | None:
        """The definitions `self.<name>` may run on an instance of ``cls`` or of a subclass
        of the file: each class's own resolution, in the order the classes were defined.
        None when one of them is not known (a base outside the file comes first)."""
        found: list[cst.FunctionDef] = []
        for other in self.state.classes_by_node.values():
            if other is not cls and cls not in other.linearization():
                continue
            definition = other.method(name)
            if definition is None:
                return None  # hidden by a base outside the file or a class attribute
            if definition not in found:
                found.append(definition)
        return found

    def method_call(self, owner: Value, attr: str, node: cst.Call, args: Args,
                    env: Env) -> Value | None:
        """`Cls.f(...)`, `cls.f(...)` and `super().f(...)`: the definition is fixed by the
        lookup; None when it is not a method of the file."""
        if isinstance(owner, SuperValue):
            cls = local_class(owner.receiver)
            if cls is None:
                return None
            definition = cls.method(attr, after=owner.owner)
            if definition is None:
                return None
            return self.bound_call(definition, owner.receiver, node, args, env)
        cls = class_of(owner)
        if cls is None:
            return None
        definition = cls.method(attr)
        if definition is None:
            return None
        kind = binding(definition)
        if kind == "static":
            return self.bound_call(definition, None, node, args, env)
        if kind == "class":
            return self.bound_call(definition, owner, node, args, env)
        if kind != "instance" or not args or args[0][0].keyword or args[0][0].star:
            return None
        # `Base.forward(self, x)`: a plain function given its receiver.
        receiver = args[0][1]
        if local_class(receiver) is None:
            return None
        return self.bound_call(definition, receiver, node, list(args[1:]), env)

    def bound_call(self, definition: cst.FunctionDef, receiver: Value | None,
                   node: cst.Call, args: Args, env: Env, *, may: bool = False) -> Value:
        """Run ``definition`` bound as its decorators say, on ``receiver``."""
        kind = binding(definition)
        function = FunctionValue(qualname=definition.name.value, origin=definition,
                                 definition=definition)
        if kind == "static":
            return self.modules.call_function(function, None, node, args, env, may=may)
        if kind == "class":
            cls = local_class(receiver) if receiver is not None else None
            if isinstance(receiver, ClassValue):
                cls = class_of(receiver)
            if cls is None:
                self.autograd.unknown_call(args, env)
                return UNKNOWN
            return self.modules.call_function(function, None, node, args, env, may=may,
                                              first=ClassValue(
                                           qualname=cls.name, origin=cls.node, info=cls,
                                           module=ModuleInfo(cls=cls) if cls.is_module
                                           else None))
        if kind != "instance":
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        return self.modules.call_function(function, receiver, node, args, env, may=may)

    def dispatch(self, receiver: Value, attr: str, node: cst.Call, args: Args,
                 env: Env) -> Value | None:
        """`obj.f(...)` on an instance of a class of the file.  On an instance built here
        its MRO decides; on `self` every override in the file's subclasses may run, so
        the call is the join of their effects (may-effects, `low`)."""
        cls = local_class(receiver)
        if cls is None or isinstance(receiver, ClassValue):
            return None
        if exact(receiver):
            definition = cls.method(attr)
            if definition is None:
                return None
            return self.bound_call(definition, receiver, node, args, env)
        candidates = self._overrides(cls, attr)
        if not candidates:
            # A subclass hides it with what the file does not define: not known.
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        if len(candidates) == 1:
            return self.bound_call(candidates[0], receiver, node, args, env)
        # As if an `if` chose among them: each on its own path, the paths joined.
        result: Value | None = None
        start = env.copy()
        joined: Env | None = None
        for definition in candidates:
            branch = start.copy()
            value = self.bound_call(definition, receiver, node, args, branch, may=True)
            result = value if result is None else join(result, value)
            if joined is None:
                joined = branch
            else:
                joined.merge(branch)
        if joined is not None:
            env.restore(joined)
        return result if result is not None else UNKNOWN

    def bound_method(self, base: Value, attr: str, node: cst.Attribute) -> Value | None:
        """`obj.f` for an instance method `f` of the file's class, when one definition is
        the one every instance ``base`` may be runs."""
        cls = local_class(base)
        if cls is None or isinstance(base, ClassValue):
            return None
        definitions = [cls.method(attr)] if exact(base) else self._overrides(cls, attr)
        if not definitions or len(definitions) != 1 or definitions[0] is None or \
                binding(definitions[0]) != "instance":
            return None
        return MethodValue(qualname=f"{cls.name}.{attr}", origin=node,
                           definition=definitions[0], receiver=base)

    def property_value(self, base: Value, attr: str, node: cst.Attribute,
                       env: Env) -> Value | None:
        """`obj.weight_view` where the file's class defines it as a property: what its
        getter returns (a view of a parameter stays that view)."""
        cls = local_class(base)
        if cls is None or isinstance(base, ClassValue):
            return None
        definitions = [cls.method(attr)] if exact(base) else self._overrides(cls, attr)
        if not definitions or any(d is None or binding(d) != "property" for d in definitions):
            return None
        result: Value | None = None
        for definition in definitions:
            assert definition is not None
            summary = self.protocol.summary(definition, cls, (), exact=exact(base))
            if summary is None:
                return None
            value = self.modules.apply_summary(summary, [], self.modules.receiver_mapping(base),
                                               node,
                                               None, env, definition, may=len(definitions) > 1)
            result = value if result is None else join(result, value)
        return result
