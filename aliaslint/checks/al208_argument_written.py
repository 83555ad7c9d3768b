"""AL208 argument-written."""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import Kind, StaleRead, discards
from aliaslint.checks.common import read_related, sees, written
from aliaslint.headline import fit
from aliaslint.runtime.hazards import Hazard
from aliaslint.rule import Context, Rule
from aliaslint.runtime.predicates import ARGUMENT

# Factories whose result holds no data yet: a caller that passes one to a function
# made it for that function to fill (`out = torch.zeros(n); lam = fill(out, batch)`).
_BUFFER_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                               "empty_like", "full_like", "new_zeros", "new_ones", "new_empty",
                               "new_full"})


def _output_buffer(origin: cst.CSTNode | None) -> bool:
    if not isinstance(origin, cst.Call):
        return False
    func = origin.func
    name = func.attr.value if isinstance(func, cst.Attribute) else (
        func.value if isinstance(func, cst.Name) else "")
    return name in _BUFFER_FACTORIES


# Methods called by their name (by Python, torch or a training framework): renaming one would
# stop it being called, so the finding proposes what works instead.
_CALLED_BY_NAME = frozenset({
    "forward", "backward", "setup_context", "jvp", "vjp",  # nn.Module, autograd.Function
    "training_step", "validation_step", "test_step", "predict_step",  # Lightning
})


def _remedy(callee: str) -> str:
    """What the author of ``callee`` can do: make it out of place, or say that it writes."""
    if not (callee in _CALLED_BY_NAME or callee.startswith("__") and callee.endswith("__")):
        return (f"return a new tensor instead, pass a `.clone()`, or name the function "
                f"`{callee}_`")
    return (f"return a new tensor instead (out-of-place ops, or clone the argument at the top "
            f"of `{callee}`), pass a `.clone()`, or say in `{callee}`'s docstring that it "
            f"modifies its argument in place (a method called by its name cannot become "
            f"`{callee}_`)")


RULE = Rule(
    "AL208", "argument-written",
    "A function writes a caller's tensor argument in place without saying so, and the caller "
    "reads that tensor afterwards.",
    confirm=ARGUMENT,
    traced=(Hazard.FUNCTION_INPUT_WRITTEN,),
)


@RULE.check(StaleRead)
def argument_written(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    if write.callee is None or write.declared or write.activation:
        return
    if discards(write.stmt, write.node):
        return  # called for its effect alone: the caller expects the write
    # The fix (return a new tensor, or say so in the name) goes into the callee: the
    # finding points at its write; the call and the caller's read are related.
    inside = write.defined_at
    if write.target is None or inside is None or value.kind is not Kind.TENSOR:
        return
    if _output_buffer(value.origin):
        return  # the caller made an empty buffer for the callee to fill
    call = write.node
    arguments = call.args if isinstance(call, cst.Call) else ()
    target = ctx.quote(write.target_node) if write.target_node is not None else "argument"
    witness = RULE.witness(rows=ctx.rows(call), operands=tuple(
        ctx.operand(arg.value) for arg in arguments if not arg.star))
    yield RULE.finding(
        inside, inside,
        fit([ctx.quote(inside), " writes the caller's ", target, " (via ",
             ctx.quote(write.node), f", line {ctx.line(write.node)}); {sees(event, ctx)}"],
            # Long code: the call is left to the related locations, which name it first.
            [ctx.quote(inside), " writes the caller's ", target, f"; {sees(event, ctx)}"])
        + f" · {ctx.code(write.node)} writes its argument {written(write, ctx)} in place "
        f"({ctx.code(inside)} at {ctx.place(inside)}, inside `{write.callee}`) though "
        f"nothing in its name or docstring says so · {_remedy(write.callee)}",
        (("called here with the caller's tensor", call), read_related(event)),
        witness=witness,
    )

