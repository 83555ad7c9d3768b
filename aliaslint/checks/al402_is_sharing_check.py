"""AL402 is-sharing-check."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import Compare, Kind, TensorValue, Value, walk_code
from aliaslint.checks.common import (
    TENSORISH,
    advice,
    comparison_witness,
    storage_test,
    tensor_behind,
)
from aliaslint.checks.words import code_has_is
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.predicates import COMPARE

RULE = Rule(
    "AL402", "is-sharing-check",
    "`is` between tensors or typed storages is used to decide whether memory is shared.",
    words=code_has_is,
    confirm=COMPARE,
    fix="unsafe: the comparison becomes one of the two tensors' untyped storages, whose answer "
        "differs for views, which is the point; only when both operands are known tensors",
)


# Value comparisons that decide the same question for every pair of tensors, views included.
_VALUE_TESTS = frozenset({"equal", "allclose", "array_equal"})


def _value_test_follows(event: Compare) -> bool:
    """`a is b or torch.equal(a, b)`: the identity test is a shortcut before a comparison of
    the values, which answers for views too."""
    stmt = event.stmt
    where = stmt.test if isinstance(stmt, (cst.If, cst.While)) else stmt
    for either in walk_code(where):
        if not (isinstance(either, cst.BooleanOperation) and isinstance(either.operator, cst.Or)):
            continue
        test = either.right
        if either.left is not event.node or not isinstance(test, cst.Call):
            continue
        name = test.func.attr.value if isinstance(test.func, cst.Attribute) else \
            test.func.value if isinstance(test.func, cst.Name) else ""
        args = [arg.value for arg in test.args]
        operands = [event.left_node, event.right_node]
        if name in _VALUE_TESTS and len(args) >= 2 and (
                all(a.deep_equals(b) for a, b in zip(args, operands)) or
                all(a.deep_equals(b) for a, b in zip(args, reversed(operands)))):
            return True
    return False


def _one_object(a: Value, b: Value) -> bool:
    return isinstance(a, TensorValue) and isinstance(b, TensorValue) and \
        a.storage is not None and a.storage == b.storage and a.counter == b.counter and \
        a.via is None and b.via is None


def _input(value: TensorValue) -> TensorValue:
    """The tensor whose memory ``value`` may have: the input of a call that returns its input
    itself or a copy (`.to()`, `.float()`), else the value."""
    return value.input_or_copy if value.input_or_copy is not None else value


def _tokens(value: TensorValue) -> set:
    """The storages ``value`` may be over: its own, and the source of a result that is a view
    of it for some inputs (`reshape`)."""
    return {token for token in (value.storage, value.maybe_of) if token is not None}


def _allocated(value: TensorValue) -> bool:
    """Made by a call in the checked code (not a caller's argument or an element of one,
    whose tokens stand for memory that may be anyone's)."""
    return isinstance(value.storage, tuple) and value.storage[:1] == ("alloc",)


def _shared_apart(a: TensorValue, b: TensorValue) -> bool:
    """May the two tensors share memory while being two objects?  Not when they are one
    object, when their storages are known apart and one of them was allocated by the checked
    code, or when a side is a call's input itself or its copy whose input is not known to
    share with the other side (the test asks whether the call copied)."""
    first, second = _input(a), _input(b)
    if first is second or _one_object(first, second):
        return False
    tokens = _tokens(first) & _tokens(second)
    if first is not a or second is not b:
        return bool(tokens)
    if tokens or a.storage is None or b.storage is None:
        return True
    # Two storages the analysis tells apart, one of them allocated here (a clone, a
    # factory's tensor): the other side existed before it or was computed into memory of
    # its own, so it is no view of it.  Two arguments' tokens stand for any memory.
    return not (_allocated(a) or _allocated(b))


@RULE.check(Compare)
def is_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("is", "is not"):
        return
    if event.operator == "is" and _value_test_follows(event):
        return
    if event.left.kind not in TENSORISH or event.right.kind not in TENSORISH:
        return
    if _one_object(event.left, event.right):
        # Both sides are the same tensor (`result is x` where a helper returns its argument
        # `x` itself): identity and shared memory give the same answer, so the test asks
        # what it means to.
        return
    if isinstance(event.left, TensorValue) and isinstance(event.right, TensorValue) and \
            not _shared_apart(event.left, event.right):
        return
    a = tensor_behind(event.left, event.left_node, ctx)
    b = tensor_behind(event.right, event.right_node, ctx)
    tensors = Kind.TENSOR in (event.left.kind, event.right.kind)
    operands = "tensors" if tensors else "storages"
    if tensors:
        what = (" tests object identity, not shared memory: views of one storage are other "
                "objects")
        why = ("tests whether two names hold one Python object; views of one storage "
               "(slices, `.t()`, `.view()`, `.detach()`) are distinct objects")
    else:
        outcome = "True" if event.operator == "is not" else "False"
        what = f" is always {outcome}: each `.storage()` call makes a new object"
        why = f"is always {outcome}: each `.storage()` call returns a new wrapper object"
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), what])
        + f" · `{event.operator}` between {operands} {why} · " + advice(a, b),
        witness=comparison_witness(RULE, "is", [event.left_node, event.right_node], ctx),
        fix=storage_test(event.node, a, b, event.operator == "is not"),
    )

