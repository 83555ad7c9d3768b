"""The interpreter's values have one class per kind, and the rules can ask any of them
the tensor questions."""

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from aliaslint.analysis import (
    OTHER,
    UNKNOWN,
    ArrayValue,
    Call,
    ClassValue,
    Compare,
    ContainerValue,
    FunctionValue,
    GradModeValue,
    Kind,
    ModuleValue,
    ObjectValue,
    ParamsValue,
    RefValue,
    StaleRead,
    TensorValue,
    Value,
    Write,
    analyse,
)
from aliaslint.analysis.values import ModuleInfo, join

ROOT = Path(__file__).resolve().parent.parent

CLASSES = {
    Kind.TENSOR: {TensorValue}, Kind.NDARRAY: {ArrayValue}, Kind.MODULE: {ModuleValue},
    Kind.PARAMS: {ParamsValue}, Kind.OPTIMIZER: {ParamsValue}, Kind.GRAD_MODE: {GradModeValue},
    Kind.REF: {RefValue}, Kind.FUNCTION: {FunctionValue}, Kind.CLASS: {ClassValue},
    Kind.OTHER: {Value, ContainerValue, ParamsValue}, Kind.UNKNOWN: {Value, ObjectValue},
    Kind.STORAGE: {Value}, Kind.TYPED_STORAGE: {Value},
}

TRAINING = """
    import copy

    import numpy as np
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.act(self.fc(x))


    class Meter:
        def __init__(self):
            self.total = 0


    def train(batches):
        model = Net()
        best = model
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        state = model.state_dict()
        meter = Meter()
        buf = torch.zeros(4)
        arr = buf.numpy()
        q, k = buf.chunk(2)
        pair = [buf] * 2
        for x in batches:
            with torch.no_grad():
                y = model(x)
            loss = model(x).sum()
            if id(q) == id(k) or buf.storage() is buf.untyped_storage():
                arr += 1
            loss.backward()
            opt.step()
            buf.add_(1)
            meter.total += q.sum().item()
        return best, state, pair, copy.copy(state), y
    """


def _values(analysis) -> list:
    values = []
    for event in analysis.events:
        if isinstance(event, Compare):
            values += [event.left, event.right]
        elif isinstance(event, Call):
            values += [event.result] + ([event.receiver] if event.receiver else [])
        elif isinstance(event, StaleRead):
            values.append(event.value)
    return values


def test_each_kind_has_its_class():
    analysis = analyse(cst.parse_module(textwrap.dedent(TRAINING)))
    values = _values(analysis)
    seen = {type(value) for value in values}
    assert {TensorValue, ModuleValue, ParamsValue, Value} <= seen, seen
    for value in values:
        assert type(value) in CLASSES[value.kind], (value.kind, type(value))


@pytest.mark.parametrize("value", [
    OTHER, UNKNOWN, ArrayValue(), ModuleValue(module=ModuleInfo()),
    ParamsValue(Kind.PARAMS, params=frozenset({1})), ContainerValue(each=TensorValue()),
    RefValue(qualname="torch.zeros"), GradModeValue(enabled=False),
], ids=lambda value: type(value).__name__)
def test_values_that_are_not_tensors_know_no_tensor_facts(value):
    """Rules read these on whatever a name holds; only tensors can say more."""
    assert value.requires_grad is None and value.leaf is False and value.via is None
    assert value.expanded is False and value.region is None and value.maybe_of is None
    assert value.layout_origin is None and value.copied_at is None
    assert value.replica is None
    if not isinstance(value, ArrayValue):
        assert value.storage is None and value.view_origin is None
    if not isinstance(value, (ModuleValue, ParamsValue)):
        assert value.snapshot is None


def test_a_class_fixes_its_kind():
    assert TensorValue().kind is Kind.TENSOR and ArrayValue().kind is Kind.NDARRAY
    with pytest.raises(TypeError):
        TensorValue(kind=Kind.MODULE)


def test_write_is_built_with_keywords():
    node = cst.Name("x")
    write = Write(node=node, stmt=node, target=TensorValue(), grad_enabled=True)
    assert write.fill is False and write.region is None
    with pytest.raises(TypeError):
        Write(node, node, None, None, None, None, False, True)


def test_join_keeps_what_both_paths_agree_on():
    a = TensorValue(storage="s", counter="c", requires_grad=True, via="view",
                    graph=frozenset({1}))
    b = TensorValue(storage="s", counter="d", requires_grad=True, graph=frozenset({2}))
    joined = join(a, b)
    assert isinstance(joined, TensorValue)
    assert (joined.storage, joined.counter, joined.requires_grad, joined.via, joined.graph) == (
        "s", None, True, None, frozenset({1, 2}))


def test_join_of_two_modules_made_apart_is_unknown():
    one, two = ModuleInfo(label="a"), ModuleInfo(label="a")
    assert join(ModuleValue(module=one), ModuleValue(module=one)).kind is Kind.MODULE
    assert join(ModuleValue(module=one), ModuleValue(module=two)) is UNKNOWN
    joined = join(ClassValue(qualname="D", module=one), ClassValue(qualname="D", module=two))
    assert isinstance(joined, ClassValue) and joined.module is None


def test_join_of_containers_joins_their_elements():
    a = ContainerValue(each=TensorValue(storage="s"))
    b = ContainerValue(each=TensorValue(storage="t"))
    joined = join(a, b)
    assert isinstance(joined, ContainerValue) and isinstance(joined.each, TensorValue)
    assert joined.each.storage is None and joined.items is None
    # Element by element where both paths know the same layout.
    c = ContainerValue(items=(TensorValue(storage="s"), TensorValue(storage="u")))
    d = ContainerValue(items=(TensorValue(storage="s"), TensorValue(storage="v")))
    pair = join(c, d)
    assert isinstance(pair, ContainerValue) and pair.items is not None
    assert [getattr(v, "storage") for v in pair.items] == ["s", None]
    arrays = join(ArrayValue(storage="s"), ArrayValue(storage="t"))
    assert isinstance(arrays, ArrayValue) and arrays.storage is None


def test_a_snapshot_on_one_path_is_kept():
    kept = TensorValue(storage="s", snapshot=cst.Name("w"))
    assert join(kept, UNKNOWN) is kept and join(OTHER, kept) is kept


def test_values_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TensorValue().storage = "s"


@pytest.mark.slow
@pytest.mark.xdist_group("mypy")  # one mypy at a time on the checkout's .mypy_cache
def test_mypy_passes_on_the_analysis_package():
    pytest.importorskip("mypy")
    # Imported modules are checked by their own settings, not reported here.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--check-untyped-defs", "--warn-unused-ignores",
         "--disallow-untyped-defs", "--follow-imports=silent", "aliaslint/analysis"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:]


def _analysis_dataclasses() -> list[type]:
    import importlib
    import pkgutil

    import aliaslint.analysis as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"aliaslint.analysis.{info.name}")
        found += [cls for cls in vars(module).values() if isinstance(cls, type) and
                  dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__]
    return found


def test_the_analysis_replace_makes_what_dataclasses_replace_makes():
    """The analysis copies values with `values.replace`, which copies the fields instead of
    calling `__init__`: right only while no dataclass of the analysis has a
    `__post_init__`, slots, or an init-only field that could hold anything but its default
    (`kind`, which no code of the analysis sets after `__init__`)."""
    from aliaslint.analysis.values import replace

    classes = _analysis_dataclasses()
    assert TensorValue in classes and ModuleInfo in classes and len(classes) > 20
    for cls in classes:
        assert not hasattr(cls, "__post_init__"), cls
        assert "__slots__" not in vars(cls), cls
        init_only = [f.name for f in dataclasses.fields(cls) if not f.init]
        assert init_only in ([], ["kind"]), cls
    for path in (ROOT / "aliaslint" / "analysis").glob("*.py"):
        assert "object.__setattr__" not in path.read_text(encoding="utf-8"), path
    node = cst.parse_expression("x.t()")
    samples = [
        (TensorValue(storage=("alloc", 1), counter=("alloc", 1), origin=node,
                     requires_grad=True, graph=frozenset({3})),
         {"requires_grad": None, "via": "view", "view_origin": node}),
        (ModuleValue(origin=node, module=ModuleInfo(params=frozenset({("p", 1)}))),
         {"origin": None}),
        (ContainerValue(origin=node, items=(UNKNOWN, OTHER)), {"items": ()}),
        (Write(node=node, stmt=node, target=None, grad_enabled=True),
         {"label": "`nn.ReLU(inplace=True)`", "grad_enabled": None}),
    ]
    for value, changes in samples:
        mine, theirs = replace(value, **changes), dataclasses.replace(value, **changes)
        assert type(mine) is type(theirs)
        assert vars(mine) == vars(theirs)
        assert mine == theirs and vars(value) != vars(mine)


def test_an_analysis_once_run_is_freed_without_the_collector():
    """The parts know each other (a cycle): once the analysis has run they are let go, so
    that what it made is freed with its events, not left for a collection to walk."""
    import gc
    import weakref

    module = cst.parse_module(textwrap.dedent(TRAINING))
    enabled = gc.isenabled()
    gc.disable()
    try:
        analysis = analyse(module)
        assert analysis.events  # the events outlive the parts
        parts = [weakref.ref(analysis._statements), weakref.ref(analysis._functions)]
        state = weakref.ref(analysis.state)
        del analysis
        assert [part() for part in parts] == [None, None] and state() is None
    finally:
        if enabled:
            gc.enable()


def test_quick_inits_make_the_objects_dataclass_makes():
    """Every class given `values.quick` (the values, the events, the small records of the
    analysis) is made by its quick ``__init__`` exactly as by the one ``dataclass`` wrote:
    the same fields, in the same order, from the same arguments, each default factory
    called per object, and the same TypeError for a missing or positional-only misuse."""
    from aliaslint.analysis.records import REPLACED  # (every part is imported above)

    assert {TensorValue, RefValue, Call, StaleRead} <= set(REPLACED)
    for cls, dataclass_init in REPLACED.items():
        fields = [f for f in dataclasses.fields(cls) if f.init]
        required = [f for f in fields if f.default is dataclasses.MISSING and
                    f.default_factory is dataclasses.MISSING]
        for given in (required, fields):  # defaults taken, then every field given
            arguments = {f.name: object() for f in given}
            positional = [arguments.pop(f.name) for f in given if not f.kw_only]
            quick_made, made = object.__new__(cls), object.__new__(cls)
            cls.__init__(quick_made, *positional, **arguments)
            dataclass_init(made, *positional, **arguments)
            assert list(vars(quick_made)) == list(vars(made)), cls
            for name, value in vars(made).items():
                other = vars(quick_made)[name]
                factory = next(f.default_factory for f in dataclasses.fields(cls)
                               if f.name == name)
                if factory is dataclasses.MISSING:
                    assert other is value, (cls, name)
                else:  # a fresh object each time, equal to the other's
                    assert other == value and (other is not value or
                                               factory() is factory()), (cls, name)
        if required:
            with pytest.raises(TypeError):
                cls()


def test_events_hash_by_their_node_and_stay_equal_by_every_field():
    """Every event class hashes by its kind and node (a set of events does not hash the
    values they hold) and compares by all its fields: equal events hash alike, and two
    events of one node that differ are two members of a set."""
    from aliaslint.analysis import events
    from aliaslint.analysis.events import Event, Reference

    kinds = [cls for cls in vars(events).values()
             if isinstance(cls, type) and issubclass(cls, Event)]
    assert len(kinds) > 8 and all(cls.__hash__ is Event.__hash__ for cls in kinds)
    node = cst.Name("x")
    first, again, other = (Reference(node, node, "torch.x"), Reference(node, node, "torch.x"),
                           Reference(node, node, "torch.y"))
    assert first == again and hash(first) == hash(again) and first != other
    assert len({first, again, other}) == 2
