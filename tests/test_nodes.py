"""aliaslint.nodes reads a node's children from its fields: the same nodes, in the same order,
as libcst's own ``children``."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import libcst as cst
import pytest

from aliaslint import nodes

ROOT = Path(__file__).resolve().parent.parent
# Every syntax form the grammar has, in a few lines each.
FORMS = '''
import a.b as c
from . import d
from .e import (f as g, h)
@deco(1)
async def fn(a, /, b: int = 2, *args, c, d=3, **kw) -> "T":
    global x
    async with a as (b, c), d:
        async for i in range(3):
            await z
    x: int = 1
    x += 1; del y
    lam = lambda p, *q, r=1, **s: p
    return [i for i in a if i], {k: v for k, v in b}, {*a}, (yield), (yield from b)
class C(B, metaclass=M):
    """doc"""
    def m(self): return self.a[1:2, ::3], a if b else c, not a, -a, a @ b, a ** -b
try:
    pass
except* E as e:
    raise X from e
else:
    pass
finally:
    pass
while (n := 1) < 2 <= 3:
    break
else:
    continue
match point:
    case Point(x=0, y=[1, *rest]) | {"k": v, **others} if v:
        pass
    case _:
        pass
assert a, f"{a!r:>{w}} {b=}" "plain"
raw = b'raw' rb"x"
with open(p) as f, g: print(*a, **k)
type Alias[T: int, *Ts, **P] = list[T]
def generic[T](x: T) -> T: ...
nonlocal_ = ...
'''


def _module_sources() -> list[str]:
    sources = [FORMS]
    for path in sorted((ROOT / "fixtures").rglob("*.py"))[:400]:
        sources.append(path.read_text(encoding="utf-8", errors="replace"))
    return sources


def _all_nodes(module: cst.Module):
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def test_children_are_libcsts_children():
    compared = 0
    for index, source in enumerate(_module_sources()):
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            assert index > 0, "FORMS must parse"
            continue
        for node in _all_nodes(module):
            expected = list(node.children)
            found = nodes.children(node)
            assert len(found) == len(expected) and all(
                a is b for a, b in zip(found, expected)), type(node).__name__
            compared += 1
    assert compared > 10_000


def test_walk_is_source_order_and_walk_code_keeps_the_code():
    module = cst.parse_module("y = f(a, b)  # c\nz = [g(x) for x in y]\n")
    names = [n.value for n in nodes.walk(module) if isinstance(n, cst.Name)]
    assert names == ["y", "f", "a", "b", "z", "g", "x", "x", "y"]
    code = list(nodes.walk_code(module))
    assert sorted(n.value for n in code if isinstance(n, cst.Name)) == sorted(names)
    assert not any(isinstance(n, (cst.Comment, cst.SimpleWhitespace, cst.Comma)) for n in code)


@pytest.mark.parametrize("kind", sorted(
    (k for k in vars(cst).values() if inspect.isclass(k) and issubclass(k, cst.CSTNode)
     and not inspect.isabstract(k) and "_visit_and_replace_children" in vars(k)),
    key=lambda k: k.__name__), ids=lambda k: k.__name__)
def test_every_node_type_has_its_fields_read(kind):
    fields = [name for name, _ in nodes._child_fields(kind)]
    names = {f for f in kind.__dataclass_fields__}
    assert set(fields) <= names


def test_facts_are_kept_while_one_of_the_last_analyses_asked_for_them():
    from aliaslint.nodes import Facts

    facts: Facts[int] = Facts()
    asked, once, gone = cst.Name("asked"), cst.Name("once"), cst.Name("gone")
    for node, fact in ((asked, 1), (once, 2), (gone, 3)):
        facts.put(node, fact)
    for _ in range(Facts.AGES - 1):
        Facts.next_analysis()
        assert facts.get(asked) == 1
    assert facts.get(once) == 2  # asked by the first of the last eight analyses
    Facts.next_analysis()
    assert facts.get(gone) is None and facts.get(asked) == 1 and facts.get(once) == 2
    assert facts.get(cst.Name("asked")) is None  # by node, not by equal content


def test_an_edited_modules_unchanged_statements_are_not_walked_again(monkeypatch):
    """What a module holds of `Instances` is gathered per top-level statement and kept
    with it: after an edit (the language server keeps the unchanged statements' nodes),
    only the edited statement is walked, and the result is the one a fresh walk gives."""
    from aliaslint.analysis import instances
    from aliaslint.nodes import Facts

    walked = []
    real = instances._Part

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, statement):
            walked.append(statement)
            super().__init__(statement)

    monkeypatch.setattr(instances, "_Part", Counting)
    module = cst.parse_module(
        "import torch.nn as nn\n\n"
        "class Head(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n"
        "head = Head()\n"
        "for _ in range(3):\n"
        "    Head()\n")
    first = instances.Instances(module)
    assert walked == list(module.body)
    edited = module.with_changes(body=[*module.body[:2], cst.parse_statement("head = 1\n")])
    walked.clear()
    Facts.next_analysis()
    again = instances.Instances(edited)
    assert walked == [edited.body[2]]
    fresh = instances.Instances(cst.parse_module(cst.Module(body=edited.body).code))
    assert (again.calls, again._mentions, again._subclassed, again._copies) == \
        (fresh.calls, fresh._mentions, fresh._subclassed, fresh._copies)
    assert {name: len(sites) for name, sites in again._sites.items()} == \
        {name: len(sites) for name, sites in fresh._sites.items()}
    assert len(again._owner) == len(fresh._owner) == 3  # the calls `__init__` makes
    assert first.calls["Head"] == 3 and "Head" not in again.calls  # 1 + 2 in the loop
    assert again.calls["Linear"] == 1 and again._subclassed == {"Module"}


def test_the_node_kinds_tested_by_exact_type_have_no_subclasses():
    """The analysis tests a node's kind with `type(node) is cst.X` (docs/engine.md): right
    only where no node is of a subclass of ``X``.  Every class so tested is concrete and has
    no subclass in libcst (a libcst that adds one fails here, not in a missed finding)."""
    from aliaslint.converted import ConvertedModule

    tested: set[str] = set()
    for path in (Path(nodes.__file__).parent / "analysis").glob("*.py"):
        tested |= set(re.findall(r"\bis (?:not )?cst\.(\w+)", path.read_text()))
    assert {"Name", "Attribute", "Call", "Assign"} <= tested
    for name in sorted(tested):
        kind = getattr(cst, name)
        assert issubclass(kind, cst.CSTNode) and not inspect.isabstract(kind), name
        assert kind.__subclasses__() == [], name
    assert ConvertedModule.__mro__[1] is cst.Module and "Module" not in tested
