"""The abstract interpreter: what each name holds, statement by statement.

One pass over a libcst module evaluates every expression to an abstract
``Value`` (a tensor, a storage, a module, a reference to an importable name,
…) and records ``Event``s at the points rules care about (comparisons,
calls, attribute references).  Rules read the events; they never walk the
tree themselves.

Precision comes first: a value is a tensor only when local code proves it
(a torch factory, a Tensor method's result, an annotation, a parameter of a
module's ``forward``).  Anything the interpreter cannot prove is ``UNKNOWN``,
and rules stay quiet about unknowns.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator

import libcst as cst

from aliaslint import ops


class Kind(Enum):
    TENSOR = "tensor"
    STORAGE = "storage"  # torch.UntypedStorage
    TYPED_STORAGE = "typed storage"  # the deprecated torch.TypedStorage
    MODULE = "module"  # an nn.Module instance
    REF = "ref"  # a reference to an importable name (module, class, function)
    FUNCTION = "function"  # a function defined in the checked file
    CLASS = "class"  # a class defined in the checked file
    OTHER = "other"  # a known non-tensor Python value (number, str, bool, None, …)
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Value:
    kind: Kind
    # For REF: the dotted name ("torch.nn.functional.relu"); for MODULE: its class.
    qualname: str | None = None
    # For values computed from another one: (how, what), e.g. ("id", <tensor>),
    # ("data_ptr", <tensor>).  Lets a rule see what a number stands for.
    derived: tuple[str, Value] | None = None
    # Where the value was made, for related spans.
    origin: cst.CSTNode | None = field(default=None, compare=False)

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.STORAGE, Kind.TYPED_STORAGE)


UNKNOWN = Value(Kind.UNKNOWN)
OTHER = Value(Kind.OTHER)


def join(a: Value, b: Value) -> Value:
    """The value a name holds after two paths meet: what both agree on."""
    if a == b:
        return a
    if a.kind == b.kind and a.kind not in (Kind.REF, Kind.MODULE, Kind.FUNCTION, Kind.CLASS):
        return Value(a.kind, origin=a.origin)
    return UNKNOWN


# ---------------------------------------------------------------------------
# Events: the facts rules consume.


@dataclass(frozen=True)
class Event:
    node: cst.CSTNode
    # The enclosing simple statement or compound statement header: a
    # suppression comment on its first line covers the finding.
    stmt: cst.CSTNode


@dataclass(frozen=True)
class Compare(Event):
    operator: str  # "==", "!=", "is", "is not", "<", …
    left: Value
    right: Value
    left_node: cst.BaseExpression
    right_node: cst.BaseExpression


@dataclass(frozen=True)
class Call(Event):
    qualname: str | None  # resolved callee: "torch.zeros", "torch.Tensor.storage", …
    receiver: Value | None  # the object a method was called on
    receiver_node: cst.BaseExpression | None
    result: Value


@dataclass(frozen=True)
class Reference(Event):
    qualname: str  # an importable name used in the code: "torch.FloatStorage"


# ---------------------------------------------------------------------------

_COMPARE_OPS = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_NON_TENSOR_COMPARE = {"is", "is not", "in", "not in"}
_BUILTINS = frozenset(dir(builtins))
_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_TENSOR_TYPES = {"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"}
# Methods of tensors whose results are storages (not in the op tables:
# they are Python-level methods of torch.Tensor, not ATen ops).
_STORAGE_METHODS = {"untyped_storage": Kind.STORAGE, "storage": Kind.TYPED_STORAGE}
# Python-level Tensor methods returning plain Python values.
_SCALAR_METHODS = {"data_ptr", "item", "tolist", "dim", "numel", "size", "stride",
                   "storage_offset", "is_contiguous", "element_size", "nelement"}


class Env:
    """Name → Value for one scope, with a fallback to enclosing scopes."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: Env | None = None, names: dict[str, Value] | None = None):
        self.names = dict(names) if names else {}
        self.parent = parent

    def lookup(self, name: str) -> Value:
        env: Env | None = self
        while env is not None:
            value = env.names.get(name)
            if value is not None:
                return value
            env = env.parent
        if name in _BUILTINS:
            return Value(Kind.REF, qualname=f"builtins.{name}")
        return UNKNOWN

    def copy(self) -> Env:
        return Env(self.parent, self.names)

    def merge(self, other: Env) -> None:
        """Join ``other`` (a sibling path of the same scope) into this env."""
        for name in self.names.keys() | other.names.keys():
            a = self.names.get(name)
            b = other.names.get(name)
            if a is None or b is None:
                # Bound on one path only: after the join it may be unbound or
                # an outer value; nothing is proven.
                self.names[name] = UNKNOWN
            else:
                self.names[name] = join(a, b)


@dataclass
class _Deferred:
    function: cst.FunctionDef
    parent: Env
    # The enclosing class when the function is a method, and whether that
    # class is an nn.Module.
    in_module_class: bool
    is_method: bool


class Analysis:
    """Runs the interpreter over a module and collects its events."""

    def __init__(self, module: cst.Module):
        self.module = module
        self.events: list[Event] = []
        self._stmt: cst.CSTNode = module
        self._deferred: list[_Deferred] = []
        self._expr_dispatch = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Comparison: self._comparison,
            cst.BinaryOperation: self._binary,
            cst.UnaryOperation: self._unary,
            cst.Subscript: self._subscript,
            cst.Integer: self._literal,
            cst.Float: self._literal,
            cst.Imaginary: self._literal,
            cst.SimpleString: self._literal,
            cst.ConcatenatedString: self._generic_other,
            cst.FormattedString: self._generic_other,
            cst.BooleanOperation: self._generic_unknown,
            cst.Tuple: self._generic_other,
            cst.List: self._generic_other,
            cst.Set: self._generic_other,
            cst.Dict: self._generic_other,
            cst.IfExp: self._if_exp,
            cst.NamedExpr: self._named_expr,
            cst.Lambda: self._lambda,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
        }
        self._stmt_dispatch = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._loop,
            cst.While: self._loop,
            cst.With: self._with,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.FunctionDef: self._function_def,
            cst.ClassDef: self._class_def,
        }

    # -- driver -------------------------------------------------------------

    def run(self) -> Analysis:
        env = Env()
        self._block(self.module.body, env)
        # Function bodies run after the scope that defines them is complete,
        # so they see every module-level import (as pyflakes does).
        while self._deferred:
            deferred = self._deferred.pop(0)
            self._function_body(deferred)
        return self

    # -- statements ---------------------------------------------------------

    def _block(self, body, env: Env) -> None:
        for stmt in body:
            self._statement(stmt, env)

    def _statement(self, stmt: cst.CSTNode, env: Env) -> None:
        handler = self._stmt_dispatch.get(type(stmt))
        if handler is not None:
            handler(stmt, env)
        else:
            # Match and other compound statements: evaluate what they contain,
            # then forget what they bound.
            self._stmt = stmt
            for expr in _expressions_in(stmt):
                self._eval(expr, env)
            for name in _names_bound_in(stmt):
                env.names[name] = UNKNOWN

    def _simple_line(self, line: cst.SimpleStatementLine, env: Env) -> None:
        self._stmt = line
        for small in line.body:
            self._small(small, env)

    def _small(self, small: cst.BaseSmallStatement, env: Env) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            for target in small.targets:
                self._bind(target.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            declared = self._annotation(small.annotation, env)
            value = self._eval(small.value, env) if small.value is not None else declared
            if declared.kind is not Kind.UNKNOWN and small.value is not None:
                value = declared if value.kind is Kind.UNKNOWN else value
            self._bind(small.target, value, env)
        elif isinstance(small, cst.AugAssign):
            target = self._eval(small.target, env)
            self._eval(small.value, env)
            # `t += x` on a tensor is in place and keeps its kind; on anything
            # else the result type is not proven.
            result = target if target.kind is Kind.TENSOR else UNKNOWN
            self._bind(small.target, result, env, evaluate_base=False)
        elif isinstance(small, cst.Expr):
            self._eval(small.value, env)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                self._eval(small.value, env)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    env.names[_alias_name(alias)] = Value(Kind.REF, qualname=dotted)
                else:
                    top = dotted.split(".")[0]
                    env.names[top] = Value(Kind.REF, qualname=top)
        elif isinstance(small, cst.ImportFrom):
            if small.relative or small.module is None:
                base = None
            else:
                base = _dotted(small.module)
            if isinstance(small.names, cst.ImportStar):
                return
            for alias in small.names:
                name = _alias_name(alias)
                if base is None:
                    env.names[name] = UNKNOWN
                else:
                    qualname = f"{base}.{_dotted(alias.name)}"
                    env.names[name] = Value(Kind.REF, qualname=qualname)
                    self.events.append(Reference(alias, self._stmt, qualname))
        elif isinstance(small, cst.Del):
            self._forget(small.target, env)
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                env.names[item.name.value] = UNKNOWN
        else:
            for expr in _expressions_in(small):
                self._eval(expr, env)

    def _bind(self, target, value: Value, env: Env, evaluate_base: bool = True) -> None:
        if isinstance(target, cst.Name):
            env.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = element.value
                self._bind(inner, UNKNOWN, env, evaluate_base)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, OTHER, env, evaluate_base)
        elif evaluate_base and isinstance(target, cst.Attribute):
            self._eval(target.value, env)
        elif evaluate_base and isinstance(target, cst.Subscript):
            self._eval(target.value, env)
            self._slices(target, env)

    def _forget(self, target, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.names[target.value] = UNKNOWN
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._forget(element.value, env)

    def _if(self, node: cst.If, env: Env) -> None:
        self._stmt = node
        self._eval(node.test, env)
        taken = env.copy()
        self._block(node.body.body, taken)
        other = env.copy()
        if isinstance(node.orelse, cst.If):
            self._if(node.orelse, other)
        elif isinstance(node.orelse, cst.Else):
            self._block(node.orelse.body.body, other)
        taken.merge(other)
        env.names = taken.names

    def _loop(self, node, env: Env) -> None:
        # Two passes reach the fixed point of this small lattice: the second
        # pass starts from the join of "before the loop" and "after one turn".
        before = env.copy()
        for _ in range(2):
            self._stmt = node
            if isinstance(node, cst.For):
                self._eval(node.iter, env)
                self._bind(node.target, UNKNOWN, env)
            else:
                self._eval(node.test, env)
            self._block(node.body.body, env)
            env.merge(before)
        if node.orelse is not None:
            self._block(node.orelse.body.body, env)

    def _with(self, node: cst.With, env: Env) -> None:
        self._stmt = node
        for item in node.items:
            self._eval(item.item, env)
            if item.asname is not None:
                self._bind(item.asname.name, UNKNOWN, env)
        self._block(node.body.body, env)

    def _try(self, node, env: Env) -> None:
        before = env.copy()
        self._block(node.body.body, env)
        # A handler may start anywhere in the body: from what both ends agree on.
        start = before.copy()
        start.merge(env)
        outcomes = [env]
        for handler in node.handlers:
            handler_env = start.copy()
            self._stmt = handler
            if handler.type is not None:
                self._eval(handler.type, handler_env)
            if handler.name is not None:
                self._bind(handler.name.name, UNKNOWN, handler_env)
            self._block(handler.body.body, handler_env)
            outcomes.append(handler_env)
        if node.orelse is not None:
            self._block(node.orelse.body.body, env)
        for outcome in outcomes[1:]:
            env.merge(outcome)
        if node.finalbody is not None:
            self._block(node.finalbody.body.body, env)

    def _function_def(self, node: cst.FunctionDef, env: Env, *, in_module_class=False,
                      is_method=False, scope: Env | None = None) -> None:
        """Bind the function in ``env``; its body later sees ``scope`` (default ``env``)."""
        self._stmt = node
        for decorator in node.decorators:
            self._eval(decorator.decorator, env)
        for param in _all_params(node.params):
            if param.default is not None:
                self._eval(param.default, env)
        env.names[node.name.value] = Value(Kind.FUNCTION, qualname=node.name.value, origin=node)
        self._deferred.append(_Deferred(node, scope or env, in_module_class, is_method))

    def _function_body(self, deferred: _Deferred) -> None:
        node = deferred.function
        env = Env(_outer_env(deferred.parent))
        params = _all_params(node.params)
        for index, param in enumerate(params):
            value = UNKNOWN
            if param.annotation is not None:
                value = self._annotation(param.annotation, env)
            elif (deferred.in_module_class and node.name.value == "forward" and index > 0
                  and param.default is None and param.star == ""
                  and param in node.params.params):
                # nn.Module.forward receives tensors unless it says otherwise.
                value = Value(Kind.TENSOR, origin=param)
            if deferred.is_method and index == 0 and param in node.params.params:
                value = Value(Kind.MODULE) if deferred.in_module_class else UNKNOWN
            env.names[param.name.value] = value
        body = node.body
        if isinstance(body, cst.IndentedBlock):
            self._block(body.body, env)
        else:
            self._simple_line_like(body, env)

    def _simple_line_like(self, body: cst.SimpleStatementSuite, env: Env) -> None:
        self._stmt = body
        for small in body.body:
            self._small(small, env)

    def _class_def(self, node: cst.ClassDef, env: Env) -> None:
        self._stmt = node
        is_module = False
        for base in node.bases:
            value = self._eval(base.value, env)
            if value.kind is Kind.REF and value.qualname in _MODULE_BASES:
                is_module = True
            elif value.kind is Kind.CLASS and value.qualname == "nn.Module":
                is_module = True
        class_env = Env(env)
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef):
                # Methods do not see the class body's names (Python's scoping).
                self._function_def(stmt, class_env, in_module_class=is_module, is_method=True,
                                   scope=env)
            else:
                self._statement(stmt, class_env)
        # A subclass of a local nn.Module subclass is a module too.
        env.names[node.name.value] = Value(
            Kind.CLASS, qualname="nn.Module" if is_module else node.name.value, origin=node
        )

    # -- expressions --------------------------------------------------------

    def _eval(self, node: cst.BaseExpression, env: Env) -> Value:
        handler = self._expr_dispatch.get(type(node))
        if handler is None:
            return self._generic_unknown(node, env)
        return handler(node, env)

    def _eval_children(self, node: cst.CSTNode, env: Env) -> None:
        for child in _child_expressions(node):
            self._eval(child, env)

    def _generic_unknown(self, node, env: Env) -> Value:
        self._eval_children(node, env)
        return UNKNOWN

    def _generic_other(self, node, env: Env) -> Value:
        self._eval_children(node, env)
        return OTHER

    def _literal(self, node, env: Env) -> Value:
        return OTHER

    def _name(self, node: cst.Name, env: Env) -> Value:
        if node.value in ("None", "True", "False"):
            return OTHER
        return env.lookup(node.value)

    def _attribute(self, node: cst.Attribute, env: Env) -> Value:
        base = self._eval(node.value, env)
        attr = node.attr.value
        if base.kind is Kind.REF:
            qualname = f"{base.qualname}.{attr}"
            self.events.append(Reference(node, self._stmt, qualname))
            return Value(Kind.REF, qualname=qualname, origin=node)
        if base.kind is Kind.TENSOR:
            op = ops.lookup(f"torch.Tensor.{attr}")
            if op is not None and op.returns == "tensor":
                return Value(Kind.TENSOR, derived=(attr, base), origin=node)
            return UNKNOWN
        return UNKNOWN

    def _call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        receiver = None
        receiver_node = None
        qualname = None
        if isinstance(func, cst.Attribute):
            owner = self._eval(func.value, env)
            if owner.kind is Kind.REF:
                qualname = f"{owner.qualname}.{func.attr.value}"
                self.events.append(Reference(func, self._stmt, qualname))
            elif owner.is_tensor_like:
                receiver, receiver_node = owner, func.value
                prefix = "torch.Tensor" if owner.kind is Kind.TENSOR else "torch.UntypedStorage"
                qualname = f"{prefix}.{func.attr.value}"
        else:
            callee = self._eval(func, env)
            if callee.kind is Kind.REF:
                qualname = callee.qualname
            elif callee.kind is Kind.CLASS and callee.qualname == "nn.Module":
                qualname = "torch.nn.Module"
        args = [self._eval(arg.value, env) for arg in node.args]
        result = self._call_result(qualname, receiver, args, node)
        self.events.append(Call(node, self._stmt, qualname, receiver, receiver_node, result))
        return result

    def _call_result(self, qualname, receiver, args, node) -> Value:
        if qualname is None:
            return UNKNOWN
        method = qualname.rpartition(".")[2]
        if receiver is not None and receiver.kind is not Kind.TENSOR:
            # Methods of storages: nothing here returns a tensor.
            return Value(Kind.OTHER, derived=(method, receiver), origin=node)
        if receiver is not None:
            if method in _STORAGE_METHODS:
                return Value(_STORAGE_METHODS[method], derived=(method, receiver), origin=node)
            if method in _SCALAR_METHODS:
                return Value(Kind.OTHER, derived=(method, receiver), origin=node)
        if qualname == "builtins.id" and len(args) == 1:
            return Value(Kind.OTHER, derived=("id", args[0]), origin=node)
        if qualname in _TENSOR_TYPES:
            return Value(Kind.TENSOR, origin=node)
        op = ops.lookup(qualname)
        if op is not None and op.returns == "tensor":
            return Value(Kind.TENSOR, origin=node)
        return UNKNOWN

    def _comparison(self, node: cst.Comparison, env: Env) -> Value:
        left_node = node.left
        left = self._eval(left_node, env)
        any_tensor = False
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            operator = _COMPARE_OPS.get(type(target.operator), "?")
            self.events.append(
                Compare(node, self._stmt, operator, left, right, left_node, target.comparator)
            )
            if operator not in _NON_TENSOR_COMPARE and Kind.TENSOR in (left.kind, right.kind):
                any_tensor = True
            left, left_node = right, target.comparator
        # Element-wise comparison of a tensor is a tensor (only when chained once:
        # `a < b < c` is `(a < b) and (b < c)`).
        if any_tensor and len(node.comparisons) == 1:
            return Value(Kind.TENSOR, origin=node)
        return UNKNOWN

    def _binary(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self._eval(node.left, env)
        right = self._eval(node.right, env)
        if Kind.TENSOR in (left.kind, right.kind):
            return Value(Kind.TENSOR, origin=node)
        if left.kind is Kind.OTHER and right.kind is Kind.OTHER:
            return OTHER
        return UNKNOWN

    def _unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self._eval(node.expression, env)
        if isinstance(node.operator, cst.Not):
            return OTHER
        return Value(Kind.TENSOR, origin=node) if operand.kind is Kind.TENSOR else UNKNOWN

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self._eval(node.value, env)
        self._slices(node, env)
        if base.kind is Kind.TENSOR:
            return Value(Kind.TENSOR, origin=node)
        return UNKNOWN

    def _slices(self, node: cst.Subscript, env: Env) -> None:
        for element in node.slice:
            self._eval_children(element, env)

    def _if_exp(self, node: cst.IfExp, env: Env) -> Value:
        self._eval(node.test, env)
        return join(self._eval(node.body, env), self._eval(node.orelse, env))

    def _named_expr(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self._eval(node.value, env)
        self._bind(node.target, value, env)
        return value

    def _lambda(self, node: cst.Lambda, env: Env) -> Value:
        inner = Env(env)
        for param in _all_params(node.params):
            if param.default is not None:
                self._eval(param.default, env)
            inner.names[param.name.value] = UNKNOWN
        self._eval(node.body, inner)
        return OTHER

    def _comprehension(self, node, env: Env) -> Value:
        # The first iterable runs in the enclosing scope; targets, later
        # iterables, conditions and the element run in the comprehension's own.
        inner = Env(env)
        clause = node.for_in
        scope = env
        while clause is not None:
            self._eval(clause.iter, scope)
            self._bind(clause.target, UNKNOWN, inner)
            for condition in clause.ifs:
                self._eval(condition.test, inner)
            clause, scope = clause.inner_for_in, inner
        if isinstance(node, cst.DictComp):
            self._eval(node.key, inner)
            self._eval(node.value, inner)
        else:
            self._eval(node.elt, inner)
        return OTHER if not isinstance(node, cst.GeneratorExp) else UNKNOWN

    def _annotation(self, annotation: cst.Annotation, env: Env) -> Value:
        declared = self._eval(annotation.annotation, env)
        if declared.kind is Kind.REF and declared.qualname in _TENSOR_TYPES:
            return Value(Kind.TENSOR, origin=annotation)
        return UNKNOWN


# ---------------------------------------------------------------------------
# Small helpers over libcst nodes.


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name).split(".")[0]


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    result = list(params.posonly_params) + list(params.params)
    if isinstance(params.star_arg, cst.Param):
        result.append(params.star_arg)
    result.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def _outer_env(env: Env) -> Env:
    """Names a function body sees from its definition scope.

    Imports, functions and classes are stable; other variables may change
    before the function runs, so they are not trusted.
    """
    chain = []
    scope: Env | None = env
    while scope is not None:
        chain.append(scope)
        scope = scope.parent
    stable = {}
    for scope in reversed(chain):
        for name, value in scope.names.items():
            if value.kind in (Kind.REF, Kind.FUNCTION, Kind.CLASS):
                stable[name] = value
            else:
                stable[name] = UNKNOWN
    return Env(None, stable)


def _child_expressions(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The nearest expressions below ``node`` (not below those expressions)."""
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            yield child
        elif not isinstance(child, (cst.BaseSuite, cst.BaseStatement)):
            yield from _child_expressions(child)


def _expressions_in(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            yield child
        else:
            yield from _expressions_in(child)


def _names_bound_in(node: cst.CSTNode) -> Iterator[str]:
    for child in node.children:
        if isinstance(child, (cst.AssignTarget, cst.AsName, cst.MatchAs, cst.MatchStar)):
            for sub in _walk(child):
                if isinstance(sub, cst.Name):
                    yield sub.value
        else:
            yield from _names_bound_in(child)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def analyse(module: cst.Module) -> Analysis:
    return Analysis(module).run()
