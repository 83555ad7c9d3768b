"""Small questions about libcst nodes: names, targets, literals, parameters."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, cast

import libcst as cst

from aliaslint import nodes
from aliaslint.nodes import walk


TRUE, FALSE = "True", "False"


def is_literal(node: cst.CSTNode | None, text: str) -> bool:
    return type(node) is cst.Name and node.value == text


def attr_key(node: cst.CSTNode | None) -> str | None:
    """`self.h` → "self.h": attributes of `self` are tracked like names."""
    if type(node) is cst.Attribute and type(node.value) is cst.Name \
            and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def is_classmethod(function: cst.FunctionDef) -> bool:
    """Decorated `@classmethod`: its first parameter is the class."""
    return any(type(d.decorator) is cst.Name and d.decorator.value == "classmethod"
               for d in function.decorators)


def name_key(node: cst.CSTNode | None) -> str | None:
    """The key a name or `self.<attr>` is tracked under."""
    return node.value if type(node) is cst.Name else attr_key(node)


def dotted(node: cst.CSTNode) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""


def alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and type(alias.asname.name) is cst.Name:
        return alias.asname.name.value
    return dotted(alias.name).split(".")[0]


def all_params(params: cst.Parameters) -> list[cst.Param]:
    result = list(params.posonly_params) + list(params.params)
    if type(params.star_arg) is cst.Param:
        result.append(params.star_arg)
    result.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def child_expressions(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The nearest expressions below ``node`` (not below those expressions)."""
    for child in nodes.children(node):
        if isinstance(child, cst.BaseExpression):
            yield child
        elif not isinstance(child, (cst.BaseSuite, cst.BaseStatement)):
            yield from child_expressions(child)


def expressions_in(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for child in nodes.children(node):
        if isinstance(child, cst.BaseExpression):
            yield child
        else:
            yield from expressions_in(child)


def names_bound_in(node: cst.CSTNode) -> Iterator[str]:
    for child in nodes.children(node):
        if isinstance(child, (cst.AssignTarget, cst.AsName, cst.MatchAs, cst.MatchStar)):
            for sub in walk(child):
                if type(sub) is cst.Name:
                    yield sub.value
        else:
            yield from names_bound_in(child)


def reads(stmt: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Does ``stmt`` contain an expression written exactly as ``node`` (`s`, `self.buf`)?"""
    return any(type(sub) is type(node) and sub.deep_equals(node) for sub in walk(stmt))


def discards(stmt: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is ``node`` a whole expression statement, or only printed or logged by one
    (`print(x[m].zero_())`, `logger.info(...)`): its result thrown away?"""
    if not (type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1
            and type(stmt.body[0]) is cst.Expr):
        return False
    value = stmt.body[0].value
    if value is node:
        return True
    if type(value) is not cst.Call or not any(arg.value is node for arg in value.args):
        return False
    func = value.func
    if type(func) is cst.Name:
        return func.value == "print"
    return type(func) is cst.Attribute and func.attr.value in _LOG_METHODS and \
        isinstance(func.value, (cst.Name, cst.Attribute)) and \
        "log" in cst.Module([]).code_for_node(func.value).lower()


# Methods of a `logging.Logger` (or the `logging` module) that only format their arguments.
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception",
                          "log"})


def names_of(node: cst.CSTNode | None) -> set[str]:
    if type(node) is cst.Name:
        return {node.value}
    key = attr_key(node)
    return {key} if key else set()


def names_assigned_by(stmt: cst.CSTNode) -> set[str]:
    """Names that receive a statement's result: its assignment targets."""
    names: set[str] = set()
    if type(stmt) is cst.SimpleStatementLine:
        for small in stmt.body:
            targets = []
            if type(small) is cst.Assign:
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            for target in targets:
                names |= names_of(target)
    return names


def is_alias_expression(node: cst.BaseExpression) -> bool:
    """`w`, `self.w`, `w.data`, `w.detach()`: another name for the same memory."""
    node = _under_alias(node)
    return type(node) is cst.Name or attr_key(node) is not None


def _under_alias(node: cst.BaseExpression) -> cst.BaseExpression:
    """`w` for `w.detach()` and `w.data`, which hold w's memory; else the node itself."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute and not node.args \
            and node.func.attr.value == "detach":
        return node.func.value
    if type(node) is cst.Attribute and node.attr.value == "data":
        return node.value
    return node


def zeroes_grads(call: cst.Call) -> bool:
    """`zero_grad(set_to_none=False)` (or `zero_grad(False)`): zero each `.grad` in place,
    where the default (set_to_none=True since torch 2.0) drops the tensors."""
    flag = next((arg.value for arg in call.args
                 if arg.keyword is None or arg.keyword.value == "set_to_none"), None)
    return flag is not None and is_literal(flag, FALSE)


def yields_loop_element(element: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """A comprehension's element that is one of its loop variables, or another name for its
    memory (`p`, `v.detach()`, `p.data`): the comprehension collects the iterated objects."""
    element = _under_alias(element)
    return type(element) is cst.Name and element.value in names_in_target(target)


def names_in_target(target: cst.BaseExpression) -> set[str]:
    """The names an assignment or loop target binds (`k, (a, b)` binds k, a, b)."""
    if type(target) is cst.Name:
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(names_in_target(e.value) for e in target.elements))
    return set()


def declares_mutation(function: cst.FunctionDef) -> bool:
    """A trailing `_` or "in place" in the docstring: the function says it writes."""
    if function.name.value.endswith("_"):
        return True
    if any(param.name.value in ("inplace", "in_place") for param in all_params(function.params)):
        return True
    doc = (function.get_docstring() or "").lower()
    return "in place" in doc or "in-place" in doc or "inplace" in doc


def basic_index(node: cst.Subscript) -> bool:
    """Basic indexing (ints, slices, None, ...) gives a view; anything else may copy."""
    for element in node.slice:
        index = element.slice
        if type(index) is cst.Index and not basic_index_element(index.value):
            return False
    return True


def basic_index_element(value: cst.BaseExpression) -> bool:
    """An index that is basic by its syntax: an int literal, `...`, None."""
    if isinstance(value, (cst.Integer, cst.Ellipsis)) or is_literal(value, "None"):
        return True
    return type(value) is cst.UnaryOperation and type(value.expression) is cst.Integer


def literal_int(node: cst.BaseExpression | None) -> int | None:
    """`3`, `-1` → the int; None for anything else."""
    sign = 1
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        node, sign = node.expression, -1
    if type(node) is not cst.Integer:
        return None
    return sign * int(node.value, 0)


@lru_cache(maxsize=8192)
def _evaluated(text: str) -> Any:
    return ast.literal_eval(text)


def evaluated(node: cst.SimpleString | cst.Integer | cst.Float) -> Any:
    """``node.evaluated_value``, remembered by its text: the same literals recur (a key,
    a keyword, a size) and each evaluation compiles."""
    return _evaluated(node.value)


# What `literal_constant` returns for an expression that is no literal.
NO_LITERAL = object()


def literal_constant(node: cst.CSTNode | None) -> object:
    """The value of a literal `True`, `False`, `None`, string or number; ``NO_LITERAL``
    otherwise."""
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if type(node) is cst.SimpleString:
        return evaluated(node)
    number = literal_number(node)
    return NO_LITERAL if number is None else number


def literal_number(node: cst.CSTNode | None) -> float | None:
    """`0.2`, `-1`, `-1e-2` → their value; None for anything else."""
    sign = 1.0
    if type(node) is cst.UnaryOperation and isinstance(node.operator, (cst.Minus, cst.Plus)):
        sign = -1.0 if type(node.operator) is cst.Minus else 1.0
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        return sign * float(evaluated(node))
    return None


# `x.requires_grad_(False)`, `p.requires_grad = flag`: anything but turning it on.
_FREEZE = re.compile(r"requires_grad_\(\s*(?!\)|True\s*\))|\.requires_grad\s*=(?!=)\s*(?!True\b)")


def runs_unconditionally(statement: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Does running ``statement`` (a simple statement line, or a compound statement's
    header) always evaluate ``node``?  Not in the branches of `a if c else b`, the right
    of `and` / `or`, a lambda, a comprehension past its first iterable, or the body of a
    compound statement (its own statements)."""
    if statement is node:
        return True
    if type(statement) is cst.IfExp:
        children: list[cst.CSTNode] = [statement.test]
    elif type(statement) is cst.BooleanOperation:
        children = [statement.left]
    elif type(statement) is cst.Lambda:
        return False
    elif isinstance(statement, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        children = [statement.for_in.iter]
    elif isinstance(statement, cst.BaseCompoundStatement):
        header: list[cst.CSTNode | None] = [
            getattr(statement, "test", None), getattr(statement, "iter", None),
            *(item.item for item in getattr(statement, "items", ()))]
        children = [child for child in header if child is not None]
    else:
        children = nodes.children(statement)
    return any(runs_unconditionally(child, node) for child in children)


def freezes_gradients(source: str) -> bool:
    """Does the source turn `requires_grad` off anywhere (or set it from a variable)?"""
    return _FREEZE.search(source) is not None


_CALLED: nodes.Facts[tuple[str, ...]] = nodes.Facts()


def called_names(function: cst.FunctionDef) -> tuple[str, ...]:
    """The names a function's body calls: `f(...)`, `self.f(...)`, `Cls(...)`, those of the
    functions defined in it included (each walked once, its names kept with it)."""
    known = _CALLED.get(function)
    if known is not None:
        return known
    names: list[str] = []
    stack: list[cst.CSTNode] = [function.body]
    readers = nodes.CODE_READERS
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.FunctionDef:  # its body's names are its own, kept with it
            inner = cast(cst.FunctionDef, node)
            names.extend(called_names(inner))
            stack.extend(child for child in nodes.code_children(inner) if child is not inner.body)
            continue
        if kind is cst.Call:
            call = cast(cst.Call, node)
            func = call.func
            if type(func) is cst.Name:
                names.append(func.value)
            elif type(func) is cst.Attribute:
                owner = func.value
                if type(owner) is cst.Name and owner.value in ("self", "cls"):
                    names.append(func.attr.value)
            # A function handed to another (`checkpoint(block, x)`) is called from here.
            names.extend(arg.value.value for arg in call.args if type(arg.value) is cst.Name)
        stack.extend((readers.get(kind) or nodes.code_reader(kind))(node))
    return _CALLED.put(function, tuple(names))


def callee_name(function: cst.FunctionDef, cls: object) -> str:
    """The name callers use: the class's for `__init__`, the function's otherwise."""
    name = function.name.value
    if name == "__init__" and cls is not None:
        return getattr(cls, "name", name)
    return name


def is_private(function: cst.FunctionDef, cls: object) -> bool:
    """Only this file calls it: a `_private` function, or a method of a `_private` class."""
    name = function.name.value
    if name.startswith("_") and not name.startswith("__"):
        return True
    return cls is not None and getattr(cls, "name", "").startswith("_")


def optional_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`X` of `Optional[X]`, `Union[X, None]`, `X | None` and `None | X`; None otherwise."""
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.BitOr:
        if is_none(node.right):
            return node.left
        if is_none(node.left):
            return node.right
        return None
    if type(node) is not cst.Subscript:
        return None
    name = type_name(node.value)
    types = [e.slice.value for e in node.slice if type(e.slice) is cst.Index]
    if name == "Optional" and len(types) == 1:
        return types[0]
    if name == "Union" and len(types) == 2 and any(is_none(t) for t in types):
        return next(t for t in types if not is_none(t))
    return None


def type_name(node: cst.BaseExpression) -> str | None:
    return node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else None


def is_none(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "None"
