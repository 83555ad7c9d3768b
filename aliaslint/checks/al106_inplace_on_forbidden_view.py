"""AL106 inplace-on-forbidden-view."""

from __future__ import annotations

from aliaslint.analysis import InplaceWrite, PackHookWrite, TensorValue
from aliaslint.checks.common import actor_quote, written
from aliaslint.headline import fit
from aliaslint.rule import Context, Rule
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.predicates import FORBIDDEN_VIEW

RULE = Rule(
    "AL106", "inplace-on-forbidden-view",
    "An in-place write, under grad mode, that autograd refuses at once: an output of a "
    "multi-output view, a view made under `no_grad`, a view a custom `autograd.Function` "
    "returned, or a saved-tensor pack hook writing its input.",
    confirm=FORBIDDEN_VIEW,
    traced=(Hazard.VIEW_REFUSED, Hazard.OUT_REFUSED),
)

# What the headline calls each kind of view.
_WHAT = {
    "multi-output": "an output of `{name}` of a tensor that requires grad",
    "grad-off": "a view made under `no_grad` of a tensor that requires grad",
    "custom": "a view returned by the custom `autograd.Function` `{name}`",
}

# What torch says about each kind of view, and what made it.
_WHY = {
    "multi-output": ("an output of `{name}`, which returns several views of a tensor that "
                     "requires grad: autograd cannot rebase one of them in place and raises "
                     "\"Output … is a view and is being modified inplace\"",
                     "the views were made here"),
    "grad-off": ("a view made under `no_grad` of a tensor that requires grad: written with grad "
                 "mode on it raises \"A view was created in no_grad mode and is being modified "
                 "inplace with grad mode enabled\"",
                 "the view was made here, with grad mode off"),
    "custom": ("a view returned by the custom `autograd.Function` `{name}`: its backward cannot "
               "account for an in-place change, so autograd raises \"This view was created "
               "inside a custom Function\"",
               "the custom Function returned it here"),
}

_ADVICE = {
    "multi-output": "use the out-of-place op, or `.clone()` the piece before writing",
    "grad-off": "make the view and the write both inside `torch.no_grad()`, or both outside",
    "custom": "return a new tensor from `forward` (`x.clone()`), or use the out-of-place op",
}


@RULE.check(InplaceWrite)
def inplace_on_forbidden_view(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or write.grad_enabled is not True or write.via not in (None, "view"):
        return
    if not isinstance(target, TensorValue) or target.forbidden is None:
        return
    kind, made, name = target.forbidden
    why, where = _WHY[kind]
    yield RULE.finding(
        write.node, write.stmt,
        fit([*actor_quote(write.label, write.node, ctx), " writes ",
             ctx.quote(write.target_node) if write.target_node is not None else "its input",
             f" in place, {_WHAT[kind].format(name=name)}: torch raises"])
        + f" · {written(write, ctx)} is {why.format(name=name)} · {_ADVICE[kind]}",
        ((where, made),),
    )


@RULE.check(PackHookWrite)
def pack_hook_writes_input(event: PackHookWrite, ctx: Context):
    yield RULE.finding(
        event.node, event.stmt,
        fit([ctx.quote(event.node), " writes the pack hook's input in place; ",
             ctx.quote(event.saved), f" at line {ctx.line(event.saved)} will raise"])
        + " · the first op that saves a tensor under these hooks raises \"A saved tensor pack "
        "hook is modifying its input in place\" · write a copy (`t = t.clone()`) and return that",
        (("the hooks are installed here", event.hooks),
         ("this op saves a tensor and runs the hook", event.saved)),
        # torch raises from the op that saves, once the hook has returned.
        witness=RULE.witness(rows=(ctx.line(event.saved),)),
    )
