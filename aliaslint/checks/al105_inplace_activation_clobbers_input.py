"""AL105 inplace-activation-clobbers-input."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import SavedWrite, StaleRead, Write
from aliaslint.checks.common import (
    before_backward,
    out_of_place,
    saved,
    saved_write_related,
    saver,
)
from aliaslint.headline import Code, fit
from aliaslint.diagnostics import Witness
from aliaslint.rule import Context, Finding, FixPlan, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import CLOBBERED, NEGATIVE_SLOPE

RULE = Rule(
    "AL105", "inplace-activation-clobbers-input",
    "An in-place activation overwrites its input while that input is still needed.",
    fix="unsafe: the activation made out of place, at the module's constructor "
        "(`nn.ReLU(inplace=True)` → `inplace=False`) or at the call (`F.relu(x, inplace=True)` "
        "→ `inplace=False`, `F.relu_(x)` → `F.relu(x)`, a statement `F.relu_(x)` → "
        "`x = F.relu(x)`), so the input a later read or backward needs keeps its values, which "
        "is the fix; it costs one more activation-sized tensor",
    confirm=CLOBBERED,
    traced=(Hazard.NEGATIVE_SLOPE, Hazard.MODULE_SAVED_WRITTEN),
    # The tracer reports the write a backward pass then reads as a saved tensor written.
    confirmed_by=(Hazard.SAVED_WRITTEN,),
)


def _where(write: Write, ctx: Context):
    """The primary node, its statement, the related location of the call that runs the
    write, and the witness.  The fix (`inplace=False`, the out-of-place op) goes where the
    in-place op is written: the module's constructor or the helper's write when the call
    runs one of those, else the call itself."""
    witness = RULE.witness(rows=ctx.rows(write.node))
    if write.defined_at is None:
        return write.node, write.stmt, (), witness
    runs = ("the in-place write runs here", write.node)
    return write.defined_at, write.defined_at, (runs,), witness


def _who(write: Write, node: cst.CSTNode, ctx: Context) -> list[str | Code]:
    """For the headline: the in-place op where it is written (``node``), and the call that
    runs it when that is elsewhere (`nn.ReLU(inplace=True)` in `self.act(x)`)."""
    if node is write.node:
        return [ctx.quote(node)]
    return [ctx.quote(node), " in ", ctx.quote(write.node)]


def _fix(node: cst.CSTNode, write: Write, ctx: Context) -> FixPlan | None:
    # The written name is the caller's only where the finding is at the call itself.
    target = write.target_node if node is write.node else None
    return out_of_place(node, target, ctx, proven_alone=True)


@RULE.check(SavedWrite)
def inplace_activation_clobbers_saved(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if not write.activation or write.via == "data":
        return
    node, stmt, runs, witness = _where(write, ctx)
    related = tuple(r for r in saved_write_related(event) if r[1] is not write.defined_at)
    if save.slope is not None:
        yield _negative_slope(event, save.slope, node, stmt, runs, ctx)
        return
    yield RULE.finding(
        node, stmt,
        fit(*before_backward(
            event, ctx, "will raise",
            [*_who(write, node, ctx), " overwrites in place what ", saver(save, ctx),
             " saved for backward; "],
            [ctx.quote(node), " overwrites in place what ", saver(save, ctx),
             " saved for backward; "],
            [ctx.quote(node), " overwrites in place what ", saver(save, ctx), " saved; "]))
        + f" · saved: {saved(save, ctx)} · use `inplace=False` or the out-of-place op",
        runs + related, witness=witness, fix=_fix(node, write, ctx),
    )


def _negative_slope(event: SavedWrite, slope: cst.CSTNode, node: cst.CSTNode, stmt: cst.CSTNode,
                    runs: tuple[tuple[str, cst.CSTNode], ...], ctx: Context) -> Finding:
    """The activation's own backward refuses the slope: it raises at the backward pass."""
    write = event.write
    consumer = event.consumer
    return RULE.finding(
        node, stmt,
        fit(*before_backward(
            event, ctx, "will raise",
            [*_who(write, node, ctx), " runs in place with a negative slope ", ctx.quote(slope),
             "; "],
            [ctx.quote(node), " runs in place with a negative slope; "]))
        + " · its backward reads the input's sign from the result, which the slope flipped: "
        "\"In-place … backward calculation is triggered with a negative slope which is not "
        "supported\" · use `inplace=False` or the out-of-place op",
        (*runs, ("the negative slope", slope),
         ("returned here: backward through it fails" if event.returned else "backward runs here",
          consumer)),
        # torch raises in the backward pass, not at the write.
        witness=Witness(NEGATIVE_SLOPE, rows=(*ctx.rows(write.node), *ctx.rows(consumer))),
    )


@RULE.check(StaleRead)
def inplace_activation_clobbers_alias(event: StaleRead, ctx: Context):
    write = event.write
    if not write.activation:
        return
    node, stmt, runs, witness = _where(write, ctx)
    read = (f"`{event.name}` is read here and sees the overwritten values", event.read)
    yield RULE.finding(
        node, stmt,
        fit([*_who(write, node, ctx), " overwrites ",
             ctx.quote(write.target_node) if write.target_node is not None else "its input",
             f" in place, but `{event.name}` still holds it and is read at line "
             f"{ctx.line(event.read)}"])
        + " · use `inplace=False`, or `.clone()` what must keep the old values",
        (*runs, read), witness=witness, fix=_fix(node, write, ctx),
    )

