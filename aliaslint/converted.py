"""libcst's tree of a module, made from CPython's tree of it instead of libcst's parser.

libcst's parser is most of what a cold check of a file costs (it reads every space and
comment into nodes); CPython's tree, which the screen makes anyway, holds everything the
analysis reads.  This module builds, from CPython's tree and the text, the libcst nodes the
analysis walks (the same classes, the same fields that carry meaning), leaving out what
only reproduces the text: whitespace, commas, parentheses and comments are libcst's empty
defaults.  Such a tree answers the question "does this file have findings?" exactly as the
parsed one does (``tests/test_converted.py`` compares the two node by node over the
fixtures and random code), but it cannot say where a node is or print it: a check on it
stops at the first thing that needs positions or text (``NeedsText``), and the file is
checked again on libcst's own tree.  Files with findings are few, so nearly every file is
checked on the converted tree alone.

What is not converted (a `match` statement, an `except*`, strings other than one plain
literal) is parsed by libcst: the part alone, an expression or a whole top-level statement.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import types
import unicodedata
from typing import Any, Callable

import libcst as cst

from aliaslint.lines import rows as text_rows
from aliaslint.quiet import walk
from aliaslint.screen import LONE_BACKSLASH, statement_rows


class NeedsText(Exception):
    """A check on a converted tree asked for something only libcst's own tree has (a
    position, a node's text): the file is checked again on that tree."""


class _Unsupported(Exception):
    """A construct the converter leaves to libcst's parser."""


_new = object.__new__
_set = object.__setattr__


def _setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """What sets field ``name`` of a new ``cls`` node: its slot's own setter (over twice as
    fast as ``object.__setattr__``, which looks the name up first), else that."""
    for klass in cls.__mro__:
        if name in vars(klass):
            found = vars(klass)[name]
            if isinstance(found, types.MemberDescriptorType):
                setter: Callable[[Any, Any], None] = found.__set__
                return setter
            break
    return lambda node, value: _set(node, name, value)


def _maker(cls: type) -> Callable[..., Any]:
    """A constructor of ``cls`` that skips validation: every field given or its default
    (one shared default object per field: the nodes are immutable)."""
    names, defaults = [], {}
    for f in dataclasses.fields(cls):
        names.append(f.name)
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = f.default_factory()
        else:
            defaults[f.name] = None
    params = ", ".join(f"{name}=_d_{name}" for name in names)
    body = "".join(f"    _s_{name}(o, {name})\n" for name in names)
    namespace: dict[str, Any] = {f"_d_{name}": value for name, value in defaults.items()}
    namespace.update({f"_s_{name}": _setter(cls, name) for name in names})
    namespace.update(_new=_new, _cls=cls)
    exec(f"def make({params}):\n    o = _new(_cls)\n{body}    return o\n", namespace)
    made: Callable[..., Any] = namespace["make"]
    return made


class _Makers(dict[type, Callable[..., Any]]):
    def __missing__(self, cls: type) -> Callable[..., Any]:
        made = self[cls] = _maker(cls)
        return made


_make: dict[type, Callable[..., Any]] = _Makers()

_BINARY = {ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply,
           ast.Div: cst.Divide, ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo,
           ast.Pow: cst.Power, ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift,
           ast.BitOr: cst.BitOr, ast.BitAnd: cst.BitAnd, ast.BitXor: cst.BitXor,
           ast.MatMult: cst.MatrixMultiply}
_AUGMENTED = {ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign,
              ast.Mult: cst.MultiplyAssign, ast.Div: cst.DivideAssign,
              ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign,
              ast.Pow: cst.PowerAssign, ast.LShift: cst.LeftShiftAssign,
              ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign,
              ast.BitAnd: cst.BitAndAssign, ast.BitXor: cst.BitXorAssign,
              ast.MatMult: cst.MatrixMultiplyAssign}
_UNARY = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARE = {ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan,
            ast.LtE: cst.LessThanEqual, ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual,
            ast.Is: cst.Is, ast.IsNot: cst.IsNot, ast.In: cst.In, ast.NotIn: cst.NotIn}

# One plain string literal: its text is libcst's `SimpleString.value`.  A body may not
# hold its own closing quotes; raw strings escape a quote with a backslash too.
_SIMPLE_STRING = re.compile(
    r"(?i:[rbu]|br|rb)?"
    r"(?:'''(?:\\.|'(?!'')|[^\\'])*'''|\"\"\"(?:\\.|\"(?!\"\")|[^\\\"])*\"\"\""
    r"|'(?:\\.|[^\\'\r\n])*'|\"(?:\\.|[^\\\"\r\n])*\")", re.DOTALL)
_COMMENT = re.compile(r"#[^\r\n]*")


def _one_plain_string(text: str) -> bool:
    """Does ``_SIMPLE_STRING`` match all of ``text``?  Told without the pattern (slow over a
    long docstring) for the usual literal: no prefix, no backslash, and no quote of its own
    kind inside."""
    first = text[:1]
    if (first == "'" or first == '"') and "\\" not in text:
        if text[:3] == first * 3:
            if len(text) >= 6 and text[-3:] == first * 3 and first not in text[3:-3]:
                return True
        elif len(text) >= 2 and text[-1] == first and first not in text[1:-1] and \
                "\n" not in text and "\r" not in text:
            return True
    return _SIMPLE_STRING.fullmatch(text) is not None


def _operator(cls: type) -> cst.CSTNode:
    # A node of its own, as the parser makes: nothing keyed by a node's id meets another.
    node: cst.CSTNode = _make[cls]()
    return node


class _Converter:
    def __init__(self, source: str, normalised: frozenset[str] = frozenset()) -> None:
        self.rows = text_rows(source)
        self.normalised = normalised  # identifiers CPython may have read otherwise
        self._expressions: dict[type, Callable[[Any], Any]] = {
            ast.Name: self.name, ast.Constant: self.constant, ast.Attribute: self.attribute,
            ast.Call: self.call, ast.Subscript: self.subscript, ast.BinOp: self.binary,
            ast.UnaryOp: self.unary, ast.BoolOp: self.boolean, ast.Compare: self.compare,
            ast.Lambda: self.lambda_, ast.IfExp: self.if_expression, ast.Dict: self.dict_display,
            ast.Set: self.set_display, ast.List: self.list_display, ast.Tuple: self.tuple_display,
            ast.ListComp: self.list_comp, ast.SetComp: self.set_comp,
            ast.GeneratorExp: self.generator, ast.DictComp: self.dict_comp,
            ast.Await: self.await_, ast.Yield: self.yield_, ast.YieldFrom: self.yield_from,
            ast.NamedExpr: self.named, ast.JoinedStr: self.parsed_string,
        }
        self._statements: dict[type, Callable[[Any], Any]] = {
            ast.FunctionDef: self.function, ast.AsyncFunctionDef: self.function,
            ast.ClassDef: self.class_def, ast.If: self.if_statement, ast.For: self.for_loop,
            ast.AsyncFor: self.for_loop, ast.While: self.while_loop, ast.With: self.with_,
            ast.AsyncWith: self.with_, ast.Try: self.try_,
        }
        self._small: dict[type, Callable[[Any], Any]] = {
            ast.Expr: self.expr_statement, ast.Assign: self.assign,
            ast.AugAssign: self.aug_assign, ast.AnnAssign: self.ann_assign,
            ast.Return: self.return_, ast.Pass: self.keyword(cst.Pass),
            ast.Break: self.keyword(cst.Break), ast.Continue: self.keyword(cst.Continue),
            ast.Raise: self.raise_, ast.Assert: self.assert_, ast.Delete: self.delete,
            ast.Global: self.global_, ast.Nonlocal: self.nonlocal_, ast.Import: self.import_,
            ast.ImportFrom: self.import_from,
        }

    # --- the text ------------------------------------------------------------------------

    def _column(self, row: int, offset: int) -> int:
        """CPython's column (UTF-8 bytes) as a count of characters."""
        text = self.rows[row - 1]
        if text.isascii():
            return offset
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))

    def _text(self, row: int, column: int, end_row: int, end_column: int) -> str:
        start = self._column(row, column)
        end = self._column(end_row, end_column)
        if row == end_row:
            return self.rows[row - 1][start:end]
        middle = "".join(self.rows[row:end_row - 1])
        return self.rows[row - 1][start:] + middle + self.rows[end_row - 1][:end]

    def segment(self, node: Any) -> str:
        return self._text(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)

    def _not_continued(self, node: Any) -> None:
        """A statement on a row the one before continues with a backslash is on that
        row's logical line, which CPython's positions do not say: libcst parses it."""
        if node.lineno > 1 and self.rows[node.lineno - 2].rstrip("\r\n").endswith("\\"):
            raise _Unsupported("a statement after a line continued by a backslash")

    def _starts_row(self, node: Any) -> bool:
        """Is ``node`` the first thing on its row (a block's body on lines of its own)?"""
        self._not_continued(node)
        text = self.rows[node.lineno - 1]
        return not text[:self._column(node.lineno, node.col_offset)].strip()

    def _same_line(self, before: Any, statement: Any) -> bool:
        """Are two simple statements on one logical line (`a = 1; b = 2`)?"""
        if statement.lineno == before.end_lineno:
            return True
        self._not_continued(statement)
        return False

    # --- expressions ---------------------------------------------------------------------

    def expression(self, node: Any) -> Any:
        convert = self._expressions.get(type(node))
        if convert is None:
            raise _Unsupported(type(node).__name__)
        return convert(node)

    def optional(self, node: Any) -> Any:
        return None if node is None else self.expression(node)

    def name(self, node: ast.Name) -> Any:
        return self.identifier(node.id)

    def identifier(self, text: str) -> Any:
        if self.normalised and text in self.normalised:
            raise _Unsupported("an identifier CPython normalises")
        return _make[cst.Name](value=text)

    def constant(self, node: ast.Constant) -> Any:
        value = node.value
        if value is None or value is True or value is False:
            return _make[cst.Name](value=str(value))
        if value is Ellipsis:
            return _make[cst.Ellipsis]()
        kind = type(value)
        if kind is str or kind is bytes:
            text = self.segment(node)
            if _one_plain_string(text) and not text.startswith(("f", "F")):
                return _make[cst.SimpleString](value=text)
            return self.parsed_string(node)
        if kind is int:
            return _make[cst.Integer](value=self.segment(node))
        if kind is float:
            return _make[cst.Float](value=self.segment(node))
        if kind is complex:
            return _make[cst.Imaginary](value=self.segment(node))
        raise _Unsupported(repr(value))

    def parsed_string(self, node: Any) -> Any:
        """Implicitly joined strings and f-strings: libcst's parse of their text."""
        parsed = cst.parse_expression(f"({self.segment(node)})")
        return parsed.with_changes(lpar=(), rpar=())

    def attribute(self, node: ast.Attribute) -> Any:
        return _make[cst.Attribute](value=self.expression(node.value),
                                    attr=self.identifier(node.attr))

    def call(self, node: ast.Call) -> Any:
        arguments: list[tuple[tuple[int, int], Any]] = []
        for argument in node.args:
            if type(argument) is ast.Starred:
                arg = _make[cst.Arg](value=self.expression(argument.value), star="*")
            else:
                arg = _make[cst.Arg](value=self.expression(argument), star="")
            arguments.append(((argument.lineno, argument.col_offset), arg))
        for keyword in node.keywords:
            if keyword.arg is None:
                arg = _make[cst.Arg](value=self.expression(keyword.value), star="**")
            else:
                arg = _make[cst.Arg](value=self.expression(keyword.value),
                                     keyword=self.identifier(keyword.arg), star="")
            arguments.append(((keyword.lineno, keyword.col_offset), arg))
        if node.keywords and node.args:
            arguments.sort(key=lambda pair: pair[0])
        return _make[cst.Call](func=self.expression(node.func),
                               args=tuple(arg for _, arg in arguments))

    def subscript(self, node: ast.Subscript) -> Any:
        index = node.slice
        if type(index) is ast.Tuple and not self._parenthesized(index):
            parts = index.elts
        else:
            parts = [index]
        return _make[cst.Subscript](value=self.expression(node.value),
                                    slice=tuple(_make[cst.SubscriptElement](
                                        slice=self._slice(part)) for part in parts))

    def _slice(self, node: Any) -> Any:
        if type(node) is ast.Slice:
            return _make[cst.Slice](lower=self.optional(node.lower),
                                    upper=self.optional(node.upper),
                                    step=self.optional(node.step))
        if type(node) is ast.Starred:
            return _make[cst.Index](value=self.expression(node.value), star="*")
        return _make[cst.Index](value=self.expression(node))

    def _parenthesized(self, node: ast.Tuple) -> bool:
        """Is the tuple of a subscript written in parentheses of its own (`x[(a, b)]`, one
        index) rather than bare (`x[a, b]`, two)?"""
        if not node.elts:
            return True
        first = node.elts[0]
        before = _COMMENT.sub("", self._text(node.lineno, node.col_offset,
                                              first.lineno, first.col_offset))
        if "(" not in before:
            return False
        after = self._text(first.end_lineno, first.end_col_offset,  # type: ignore[arg-type]
                           node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
        after = _COMMENT.sub("", after).split(",", 1)[0]
        return before.count("(") > after.count(")")

    def binary(self, node: ast.BinOp) -> Any:
        return _make[cst.BinaryOperation](left=self.expression(node.left),
                                          operator=_operator(_BINARY[type(node.op)]),
                                          right=self.expression(node.right))

    def unary(self, node: ast.UnaryOp) -> Any:
        return _make[cst.UnaryOperation](operator=_operator(_UNARY[type(node.op)]),
                                         expression=self.expression(node.operand))

    def boolean(self, node: ast.BoolOp) -> Any:
        kind = _BOOLEAN[type(node.op)]
        values = node.values
        result = self.expression(values[0])
        for value in values[1:]:  # an operator node per link, as the parser makes
            result = _make[cst.BooleanOperation](left=result, operator=_operator(kind),
                                                 right=self.expression(value))
        return result

    def compare(self, node: ast.Compare) -> Any:
        return _make[cst.Comparison](
            left=self.expression(node.left),
            comparisons=tuple(_make[cst.ComparisonTarget](
                operator=_operator(_COMPARE[type(op)]), comparator=self.expression(right))
                for op, right in zip(node.ops, node.comparators)))

    def lambda_(self, node: ast.Lambda) -> Any:
        return _make[cst.Lambda](params=self.parameters(node.args),
                                 body=self.expression(node.body))

    def if_expression(self, node: ast.IfExp) -> Any:
        return _make[cst.IfExp](test=self.expression(node.test), body=self.expression(node.body),
                                orelse=self.expression(node.orelse))

    def _elements(self, nodes: list[Any]) -> tuple[Any, ...]:
        return tuple(_make[cst.StarredElement](value=self.expression(element.value))
                     if type(element) is ast.Starred else
                     _make[cst.Element](value=self.expression(element)) for element in nodes)

    def dict_display(self, node: ast.Dict) -> Any:
        return _make[cst.Dict](elements=tuple(
            _make[cst.StarredDictElement](value=self.expression(value)) if key is None else
            _make[cst.DictElement](key=self.expression(key), value=self.expression(value))
            for key, value in zip(node.keys, node.values)))

    def set_display(self, node: ast.Set) -> Any:
        return _make[cst.Set](elements=self._elements(node.elts))

    def list_display(self, node: ast.List) -> Any:
        return _make[cst.List](elements=self._elements(node.elts))

    def tuple_display(self, node: ast.Tuple) -> Any:
        return _make[cst.Tuple](elements=self._elements(node.elts))

    def _for_in(self, generators: list[ast.comprehension]) -> Any:
        inner = None
        for generator in reversed(generators):
            inner = _make[cst.CompFor](
                target=self.expression(generator.target), iter=self.expression(generator.iter),
                ifs=tuple(_make[cst.CompIf](test=self.expression(test))
                          for test in generator.ifs),
                inner_for_in=inner,
                asynchronous=_make[cst.Asynchronous]() if generator.is_async else None)
        return inner

    def list_comp(self, node: ast.ListComp) -> Any:
        return _make[cst.ListComp](elt=self.expression(node.elt),
                                   for_in=self._for_in(node.generators))

    def set_comp(self, node: ast.SetComp) -> Any:
        return _make[cst.SetComp](elt=self.expression(node.elt),
                                  for_in=self._for_in(node.generators))

    def generator(self, node: ast.GeneratorExp) -> Any:
        return _make[cst.GeneratorExp](elt=self.expression(node.elt),
                                       for_in=self._for_in(node.generators))

    def dict_comp(self, node: ast.DictComp) -> Any:
        return _make[cst.DictComp](key=self.expression(node.key),
                                   value=self.expression(node.value),
                                   for_in=self._for_in(node.generators))

    def await_(self, node: ast.Await) -> Any:
        return _make[cst.Await](expression=self.expression(node.value))

    def yield_(self, node: ast.Yield) -> Any:
        return _make[cst.Yield](value=self.optional(node.value))

    def yield_from(self, node: ast.YieldFrom) -> Any:
        return _make[cst.Yield](value=_make[cst.From](item=self.expression(node.value)))

    def named(self, node: ast.NamedExpr) -> Any:
        return _make[cst.NamedExpr](target=self.expression(node.target),
                                    value=self.expression(node.value))

    def parameters(self, args: ast.arguments) -> Any:
        positional = args.posonlyargs + args.args
        defaults: list[Any] = [None] * (len(positional) - len(args.defaults)) + \
            list(args.defaults)

        def param(arg: ast.arg, default: Any, star: str) -> Any:
            annotation = None if arg.annotation is None else \
                _make[cst.Annotation](annotation=self.expression(arg.annotation))
            return _make[cst.Param](name=self.identifier(arg.arg), annotation=annotation,
                                    default=self.optional(default), star=star)

        posonly = tuple(param(arg, default, "")
                        for arg, default in zip(args.posonlyargs, defaults))
        plain = tuple(param(arg, default, "")
                      for arg, default in zip(args.args, defaults[len(args.posonlyargs):]))
        kwonly = tuple(param(arg, default, "")
                       for arg, default in zip(args.kwonlyargs, args.kw_defaults))
        if args.vararg is not None:
            star_arg: Any = param(args.vararg, None, "*")
        elif kwonly:
            star_arg = _make[cst.ParamStar]()
        else:
            star_arg = cst.MaybeSentinel.DEFAULT
        return _make[cst.Parameters](
            params=plain, star_arg=star_arg, kwonly_params=kwonly,
            star_kwarg=None if args.kwarg is None else param(args.kwarg, None, "**"),
            posonly_params=posonly,
            posonly_ind=_make[cst.ParamSlash]() if posonly else cst.MaybeSentinel.DEFAULT)

    def dotted(self, text: str) -> Any:
        parts = text.split(".")
        result = self.identifier(parts[0])
        for part in parts[1:]:
            result = _make[cst.Attribute](value=result, attr=self.identifier(part))
        return result

    # --- statements ----------------------------------------------------------------------

    def statements(self, body: list[ast.stmt]) -> list[Any]:
        """A block's statements: compound ones as they are, simple ones grouped by line
        (`a = 1; b = 2` is one `SimpleStatementLine`)."""
        converted: list[Any] = []
        line: list[Any] = []
        last: Any = None
        for statement in body:
            small = self._small.get(type(statement))
            if small is None:
                if line:
                    converted.append(_make[cst.SimpleStatementLine](body=tuple(line)))
                    line = []
                compound = self._statements.get(type(statement))
                if compound is None:
                    raise _Unsupported(type(statement).__name__)
                converted.append(compound(statement))
                continue
            if line and not self._same_line(last, statement):
                converted.append(_make[cst.SimpleStatementLine](body=tuple(line)))
                line = []
            line.append(small(statement))
            last = statement
        if line:
            converted.append(_make[cst.SimpleStatementLine](body=tuple(line)))
        return converted

    def block(self, body: list[ast.stmt]) -> Any:
        if self._starts_row(body[0]):
            return _make[cst.IndentedBlock](body=tuple(self.statements(body)))
        # `if x: a; b`: the body on the header's line, simple statements only.
        small = []
        for statement in body:
            convert = self._small.get(type(statement))
            if convert is None:
                raise _Unsupported("compound statement on its header's line")
            small.append(convert(statement))
        return _make[cst.SimpleStatementSuite](body=tuple(small))

    def _else(self, body: list[ast.stmt]) -> Any:
        return _make[cst.Else](body=self.block(body)) if body else None

    @staticmethod
    def keyword(cls: type) -> Callable[[Any], Any]:
        return lambda node: _make[cls]()

    def expr_statement(self, node: ast.Expr) -> Any:
        return _make[cst.Expr](value=self.expression(node.value))

    def assign(self, node: ast.Assign) -> Any:
        return _make[cst.Assign](
            targets=tuple(_make[cst.AssignTarget](target=self.expression(target))
                          for target in node.targets),
            value=self.expression(node.value))

    def aug_assign(self, node: ast.AugAssign) -> Any:
        return _make[cst.AugAssign](target=self.expression(node.target),
                                    operator=_operator(_AUGMENTED[type(node.op)]),
                                    value=self.expression(node.value))

    def ann_assign(self, node: ast.AnnAssign) -> Any:
        return _make[cst.AnnAssign](
            target=self.expression(node.target),
            annotation=_make[cst.Annotation](annotation=self.expression(node.annotation)),
            value=self.optional(node.value))

    def return_(self, node: ast.Return) -> Any:
        return _make[cst.Return](value=self.optional(node.value))

    def raise_(self, node: ast.Raise) -> Any:
        return _make[cst.Raise](exc=self.optional(node.exc),
                                cause=None if node.cause is None else
                                _make[cst.From](item=self.expression(node.cause)))

    def assert_(self, node: ast.Assert) -> Any:
        return _make[cst.Assert](test=self.expression(node.test), msg=self.optional(node.msg))

    def delete(self, node: ast.Delete) -> Any:
        if len(node.targets) == 1:
            target = self.expression(node.targets[0])
        else:
            target = _make[cst.Tuple](elements=self._elements(node.targets))
        return _make[cst.Del](target=target)

    def global_(self, node: ast.Global) -> Any:
        return _make[cst.Global](names=tuple(_make[cst.NameItem](name=self.identifier(name))
                                             for name in node.names))

    def nonlocal_(self, node: ast.Nonlocal) -> Any:
        return _make[cst.Nonlocal](names=tuple(_make[cst.NameItem](name=self.identifier(name))
                                               for name in node.names))

    def _alias(self, alias: ast.alias, dotted: bool) -> Any:
        return _make[cst.ImportAlias](
            name=self.dotted(alias.name) if dotted else self.identifier(alias.name),
            asname=None if alias.asname is None else
            _make[cst.AsName](name=self.identifier(alias.asname)))

    def import_(self, node: ast.Import) -> Any:
        return _make[cst.Import](names=tuple(self._alias(alias, True) for alias in node.names))

    def import_from(self, node: ast.ImportFrom) -> Any:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _make[cst.ImportStar]()
        else:
            names = tuple(self._alias(alias, False) for alias in node.names)
        return _make[cst.ImportFrom](
            module=None if node.module is None else self.dotted(node.module),
            names=names, relative=tuple(_operator(cst.Dot) for _ in range(node.level or 0)))

    def _decorators(self, node: Any) -> tuple[Any, ...]:
        return tuple(_make[cst.Decorator](decorator=self.expression(decorator))
                     for decorator in node.decorator_list)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        if getattr(node, "type_params", None):
            raise _Unsupported("type parameters")
        return _make[cst.FunctionDef](
            name=self.identifier(node.name), params=self.parameters(node.args),
            body=self.block(node.body), decorators=self._decorators(node),
            returns=None if node.returns is None else
            _make[cst.Annotation](annotation=self.expression(node.returns)),
            asynchronous=_make[cst.Asynchronous]() if type(node) is ast.AsyncFunctionDef
            else None)

    def class_def(self, node: ast.ClassDef) -> Any:
        if getattr(node, "type_params", None):
            raise _Unsupported("type parameters")
        bases = tuple(_make[cst.Arg](value=self.expression(base.value), star="*")
                      if type(base) is ast.Starred else
                      _make[cst.Arg](value=self.expression(base), star="")
                      for base in node.bases)
        keywords = tuple(_make[cst.Arg](value=self.expression(keyword.value), star="**")
                         if keyword.arg is None else
                         _make[cst.Arg](value=self.expression(keyword.value),
                                        keyword=self.identifier(keyword.arg), star="")
                         for keyword in node.keywords)
        return _make[cst.ClassDef](name=self.identifier(node.name), body=self.block(node.body),
                                   bases=bases, keywords=keywords,
                                   decorators=self._decorators(node))

    def if_statement(self, node: ast.If) -> Any:
        orelse: Any = None
        if node.orelse:
            first = node.orelse[0]
            if len(node.orelse) == 1 and type(first) is ast.If and \
                    self.rows[first.lineno - 1][
                        self._column(first.lineno, first.col_offset):].startswith("elif"):
                orelse = self.if_statement(first)
            else:
                orelse = self._else(node.orelse)
        return _make[cst.If](test=self.expression(node.test), body=self.block(node.body),
                             orelse=orelse)

    def for_loop(self, node: ast.For | ast.AsyncFor) -> Any:
        return _make[cst.For](target=self.expression(node.target),
                              iter=self.expression(node.iter), body=self.block(node.body),
                              orelse=self._else(node.orelse),
                              asynchronous=_make[cst.Asynchronous]()
                              if type(node) is ast.AsyncFor else None)

    def while_loop(self, node: ast.While) -> Any:
        return _make[cst.While](test=self.expression(node.test), body=self.block(node.body),
                                orelse=self._else(node.orelse))

    def with_(self, node: ast.With | ast.AsyncWith) -> Any:
        items = tuple(_make[cst.WithItem](
            item=self.expression(item.context_expr),
            asname=None if item.optional_vars is None else
            _make[cst.AsName](name=self.expression(item.optional_vars)))
            for item in node.items)
        return _make[cst.With](items=items, body=self.block(node.body),
                               asynchronous=_make[cst.Asynchronous]()
                               if type(node) is ast.AsyncWith else None)

    def try_(self, node: ast.Try) -> Any:
        handlers = tuple(_make[cst.ExceptHandler](
            body=self.block(handler.body), type=self.optional(handler.type),
            name=None if handler.name is None else
            _make[cst.AsName](name=self.identifier(handler.name)))
            for handler in node.handlers)
        return _make[cst.Try](body=self.block(node.body), handlers=handlers,
                              orelse=self._else(node.orelse),
                              finalbody=_make[cst.Finally](body=self.block(node.finalbody))
                              if node.finalbody else None)

    # --- the module ----------------------------------------------------------------------

    def module(self, tree: ast.Module) -> cst.Module:
        body: list[Any] = []
        group: list[ast.stmt] = []
        for statement in tree.body:
            # Top-level statements converted in groups of one line's simple statements (or
            # one compound statement), each parsed by libcst where it cannot be converted.
            if group and (type(statement) not in self._small or
                          type(group[-1]) not in self._small or
                          not self._joined(group[-1], statement)):
                body.extend(self._top(group))
                group = []
            group.append(statement)
        if group:
            body.extend(self._top(group))
        module: cst.Module = _make[ConvertedModule](body=tuple(body))
        return module

    def _joined(self, before: ast.stmt, statement: ast.stmt) -> bool:
        try:
            return self._same_line(before, statement)
        except _Unsupported:
            return True  # one group, which libcst parses

    def _top(self, group: list[ast.stmt]) -> list[Any]:
        try:
            return self.statements(group)
        except (_Unsupported, cst.ParserSyntaxError):
            text = "".join(self.rows[statement_rows(group[0])[0] - 1:group[-1].end_lineno])
            from aliaslint.parsing import parse_module

            return list(parse_module(text).body)


# Text CPython reads where libcst's tokenizer may differ: a tab in a line's indentation
# (libcst does not expand tabs as CPython does), a line of only a backslash (which the
# parse repairs first, see screen.without_lone_backslashes).  Such a file is parsed by
# libcst whole, which reports or repairs it as a check without conversion does.  (A tab
# that starts a row inside a string's text is text, not indentation: `_tabs_in_strings`.)
_TAB_INDENT = re.compile(r"^[ \f]*\t", re.MULTILINE)
_TAB_ROW = re.compile(r"[ \f]*\t")


def _tabs_in_strings(tree: ast.Module, converter: _Converter) -> bool:
    """Does each row whose indentation holds a tab lie inside the text of one plain string
    literal begun on a row before it (a docstring's continuation), where no tokenizer
    reads indentation?"""
    tabbed = {row for row, text in enumerate(converter.rows, 1) if _TAB_ROW.match(text)}
    inside: set[int] = set()
    for node in walk(tree):
        if type(node) is ast.Constant and type(node.value) in (str, bytes) and \
                node.end_lineno is not None and node.end_lineno > node.lineno and \
                _one_plain_string(converter.segment(node)):  # one token, not `"a" "b"`
            inside.update(range(node.lineno + 1, node.end_lineno + 1))
    return tabbed <= inside


# A word with a letter beyond ASCII: CPython's tree holds identifiers NFKC-normalised (U+0140
# is read as `l` and U+00B7), libcst as written.
_BEYOND_ASCII = re.compile(r"[^\W\x00-\x7f]")
_WORD_ON = re.compile(r"\w*")


def _words_beyond_ascii(source: str) -> set[str]:
    """Each word (a longest run of word characters) that holds a letter beyond ASCII: found
    from those letters, which are few, rather than by a pattern tried at every word."""
    found: set[str] = set()
    end = 0
    for letter in _BEYOND_ASCII.finditer(source):
        at = letter.start()
        if at < end:
            continue  # in the word found last
        start = at
        while start and (source[start - 1].isalnum() or source[start - 1] == "_"):
            start -= 1  # what `\w` matches: an alphanumeric character or `_`
        end = _WORD_ON.match(source, at).end()  # type: ignore[union-attr]
        found.add(source[start:end])
    return found


def module_from_ast(tree: ast.Module, source: str) -> cst.Module | None:
    """libcst's tree of ``source`` as far as the analysis reads it, from ``tree``
    (CPython's tree of the same text, for the running grammar); None where the file is
    better parsed by libcst whole (``_TAB_INDENT``, ``LONE_BACKSLASH``, or a part libcst's
    parser rejects, which its parse of the file then reports)."""
    # (Each pattern is tried only where the text holds what it needs: a scan for a
    # character costs a small part of a pattern's scan.)
    if ("\\\n" in source or "\\\r" in source or source.endswith("\\")) and \
            LONE_BACKSLASH.search(source):
        return None
    # Identifiers whose written form may differ from CPython's (a word a comment or string
    # holds may be one of them too): the statements that use one are parsed by libcst.
    normalised = frozenset() if source.isascii() else frozenset(
        unicodedata.normalize("NFKC", word) for word in _words_beyond_ascii(source)
        if not unicodedata.is_normalized("NFKC", word))
    try:
        converter = _Converter(source, normalised)
        if "\t" in source and _TAB_INDENT.search(source) and \
                not _tabs_in_strings(tree, converter):
            return None
        return converter.module(tree)
    except (_Unsupported, cst.ParserSyntaxError, RecursionError):
        return None


# Fields that only reproduce the text: whitespace, commas, brackets, comments.  A converted
# tree leaves them at libcst's defaults (shared objects, in no file); every other field is
# what libcst's parser makes, node for node.
LAYOUT = frozenset({
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
    "footer", "trailing_whitespace", "colon", "equal", "indent", "newline", "default_indent",
    "default_newline", "has_trailing_newline", "encoding", "lbrace", "rbrace", "lbracket",
    "rbracket", "dot", "first_colon", "second_colon", "asterisk"})


class _Fields(dict[type, tuple[str, ...]]):
    def __missing__(self, cls: type) -> tuple[str, ...]:
        names = self[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                  if f.name not in LAYOUT and "whitespace" not in f.name)
        return names


_MEANINGFUL: dict[type, tuple[str, ...]] = _Fields()


def nodes_of(tree: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node of a tree outside its layout fields, depth first: the nodes an analysis
    of it can hold (a made tree's or a parsed one's, in the same order)."""
    found: list[cst.CSTNode] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        for name in _MEANINGFUL[type(node)]:
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif type(value) is tuple or type(value) is list:
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def twins(made: cst.Module, parsed: cst.Module) -> dict[int, cst.CSTNode] | None:
    """Each node of a converted tree (by id, layout fields aside) → the node libcst's parse
    of the same text has in its place; None where the two trees differ in shape (the
    converter's guarantee broken: nothing is then answered from them)."""
    found: dict[int, cst.CSTNode] = {}
    stack: list[tuple[Any, Any]] = [(made, parsed)]
    while stack:
        ours, theirs = stack.pop()
        kind = type(ours)
        if kind is not type(theirs) and not (kind is ConvertedModule and
                                             type(theirs) is cst.Module):
            return None
        found[id(ours)] = theirs
        for name in _MEANINGFUL[kind]:
            value, other = getattr(ours, name), getattr(theirs, name)
            if isinstance(value, cst.CSTNode):
                if not isinstance(other, cst.CSTNode):
                    return None
                stack.append((value, other))
            elif type(value) is tuple or type(value) is list:
                if not isinstance(other, (tuple, list)) or len(value) != len(other):
                    return None
                stack.extend((item, twin) for item, twin in zip(value, other)
                             if isinstance(item, cst.CSTNode))
    return found


class ConvertedModule(cst.Module):
    """A module made by ``module_from_ast``: it has no text of its own to give."""

    __slots__ = ()  # type: ignore[misc]  # as libcst's nodes: no attributes but fields

    @property
    def code(self) -> str:
        raise NeedsText("the module's text")

    def code_for_node(self, node: cst.CSTNode) -> str:
        raise NeedsText("a node's text")


def is_converted(module: cst.Module) -> bool:
    return type(module) is ConvertedModule
