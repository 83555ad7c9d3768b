"""What the tracer sees at run time, named by kind; the rules decide the codes.

The tracer reports a ``Hazard`` and knows no rule codes: a rule module declares the hazards
it reports (``Rule(..., traced=(Hazard.VIEW_WRITE_READ,))``), and a runtime finding takes
that rule's code when its findings are read, after the traced code has run.
"""

from __future__ import annotations

import enum


class Hazard(enum.Enum):
    # Backward read a tensor autograd saved, written in place since it was saved.
    SAVED_WRITTEN = "saved-written"
    # The same, written by the `forward` of an in-place module the user built
    # (`nn.ReLU(inplace=True)`): reported where the module is built.
    MODULE_SAVED_WRITTEN = "module-saved-written"
    # The same, written through a `.detach()` alias.
    DETACHED_WRITTEN = "detached-written"
    # The same, written through an alias with its own version counter (`.data`).
    UNCOUNTED_WRITTEN = "uncounted-written"
    # torch refused an in-place write to a leaf that requires grad.
    LEAF_REFUSED = "leaf-refused"
    # torch refused an in-place write to a view autograd cannot rebase.
    VIEW_REFUSED = "view-refused"
    # A write through a named view, its base (or an overlapping view) read afterwards.
    VIEW_WRITE_READ = "view-write-read"
    # A write whose destination overlaps itself, or an input that overlaps it partially.
    OVERLAPPING_WRITE = "overlapping-write"
    # An in-place activation with a negative slope (alpha) on a tensor that requires grad.
    NEGATIVE_SLOPE = "negative-slope"
    # torch refused an `out=` call with grad mode on and an argument that requires grad.
    OUT_REFUSED = "out-refused"
    # A custom `autograd.Function`'s forward wrote an input that requires grad without
    # `ctx.mark_dirty`: autograd keeps the input's old history (no error, wrong gradients).
    FUNCTION_INPUT_WRITTEN = "function-input-written"
    # A write or read of memory a live NumPy array shares.
    NUMPY_SHARED = "numpy-shared"
    # A tensor kept from `state_dict()` or `.grad`, written in place by its owner (an
    # optimizer step, `load_state_dict`, `backward`), then read through the kept reference.
    SNAPSHOT_OVERWRITTEN = "snapshot-overwritten"


def codes() -> dict[Hazard, str]:
    """Each hazard's code: the rule that declares it.  Imports the rules (after a run)."""
    from aliaslint import registry

    found: dict[Hazard, str] = {}
    for code, rule in registry.rules().items():
        for hazard in rule.traced:
            if hazard in found:
                raise ValueError(f"{hazard} is reported by {found[hazard]} and {code}")
            found[hazard] = code
    return found
