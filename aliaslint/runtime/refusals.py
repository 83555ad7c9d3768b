"""The aliasing errors PyTorch raises at an in-place write, and the hazard each one is.

torch refuses these writes before they reach any dispatch mode, so the tracer learns of
them from the exception: the wrapped call sees it go by (and re-raises it untouched), and
an error that ends the traced block is read from its traceback.  The texts are torch's
own (``torch/csrc/autograd``, ``aten/src/ATen/MemoryOverlap.cpp``).
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeGuard

from aliaslint.runtime.hazards import Hazard


class Refusal(NamedTuple):
    text: str  # a part of torch's message that names the case
    hazard: Hazard
    # which earlier line explains it: "leaf", "view", "overlap", "input", "hook"; "out" for
    # an `out=` call, "function" for a custom Function's forward
    kind: str
    explanation: str


REFUSALS = (
    Refusal("a leaf Variable that requires grad is being used in an in-place operation",
            Hazard.LEAF_REFUSED, "leaf", "it writes a leaf tensor that requires grad, with grad mode on; "
            "write it inside `torch.no_grad()`"),
    Refusal("This view is the output of a function that returns multiple views", Hazard.VIEW_REFUSED,
            "view", "it writes one of the views a multi-output view op (`split`, `chunk`, "
            "`unbind`) returned, which autograd cannot rebase; use the out-of-place op or "
            "clone the view"),
    Refusal("A view was created in no_grad mode and is being modified inplace", Hazard.VIEW_REFUSED,
            "view", "it writes, with grad mode on, a view made under `no_grad` of a tensor "
            "that requires grad; make and write the view in the same grad mode"),
    Refusal("This view was created inside a custom Function", Hazard.VIEW_REFUSED, "view",
            "it writes a view a custom `autograd.Function` returned, which would bypass its "
            "backward; clone the output first"),
    Refusal("A saved tensor pack hook is modifying its input in place", Hazard.VIEW_REFUSED, "hook",
            "a saved-tensor pack hook writes the tensor autograd is saving; pack a copy"),
    Refusal("functions with out=... arguments don't support automatic differentiation",
            Hazard.OUT_REFUSED, "out", "an `out=` call with grad mode on, where an input or "
            "`out` requires grad, cannot be differentiated; use the out-of-place call, or make "
            "the call inside `torch.no_grad()` when it is not meant to be differentiated"),
    Refusal("Some elements marked as dirty during the forward method were not returned as "
            "output", Hazard.VIEW_REFUSED, "function", "its `forward` marks an input dirty "
            "(`ctx.mark_dirty`) but does not return that input itself (a view of it, or "
            "nothing); return the written input as it is"),
    Refusal("more than one element of the written-to tensor refers to a single memory "
            "location", Hazard.OVERLAPPING_WRITE, "overlap", "several elements of the written tensor are one "
            "memory location (a stride of 0, as `expand` makes); clone it first"),
    Refusal("some elements of the input tensor and the written-to tensor refer to a single "
            "memory location", Hazard.OVERLAPPING_WRITE, "input", "an input overlaps the written memory "
            "partially; clone the input first"),
)


def refusal(error: BaseException | None) -> Refusal | None:
    """The refusal ``error`` is, if torch raised one of these."""
    if not isinstance(error, RuntimeError):
        return None
    text = str(error)
    for case in REFUSALS:
        if case.text in text:
            return case
    return None


# In-place activations whose backward refuses a negative parameter (torch's derivatives
# check it), by the name of the call, and that parameter's keyword.  `rrelu_` is one in eval
# mode (`training=False`, the default of its functional forms): it is then a leaky ReLU of
# slope (lower + upper) / 2; in training mode its backward uses the slopes it drew, whatever
# their sign.
SLOPED = {"leaky_relu": "negative_slope", "leaky_relu_": "negative_slope",
          "elu": "alpha", "elu_": "alpha", "celu": "alpha", "celu_": "alpha",
          "rrelu_": "lower"}
# rrelu's defaults for `lower` and `upper` (torch.nn.functional.rrelu).
_RRELU_BOUNDS = (1.0 / 8.0, 1.0 / 3.0)


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def negative_parameter(name: str, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> tuple[str, float] | None:
    """The keyword and value of the negative slope (or alpha) a call of ``name`` passes, if it
    passes one (``SLOPED``); for ``rrelu_`` in eval mode, the slope its bounds make."""
    if name == "rrelu_":
        return _rrelu_slope(args, kwargs)
    keyword = SLOPED[name]
    value = args[1] if len(args) > 1 else kwargs.get(keyword)
    if not _number(value) or value >= 0:
        return None
    return keyword, value


def _rrelu_slope(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, float] | None:
    """``rrelu_(input, lower, upper, training)`` (and ``F.rrelu(..., inplace=True)``, whose
    first four parameters are the same) with ``training`` false: its one slope when it is
    negative."""
    def argument(position: int, keyword: str, default: Any) -> Any:
        return args[position] if len(args) > position else kwargs.get(keyword, default)

    lower = argument(1, "lower", _RRELU_BOUNDS[0])
    upper = argument(2, "upper", _RRELU_BOUNDS[1])
    training = argument(3, "training", False)
    if not isinstance(training, int) or training or not (_number(lower) and _number(upper)):
        return None
    slope = (lower + upper) / 2
    if slope >= 0:
        return None
    return "eval-mode slope", round(slope, 6)
