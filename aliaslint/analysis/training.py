"""The training APIs real loops go through, by what their documentation promises.

Each entry is a documented contract of the library, not a guess about its code:

* `torch.amp.GradScaler` (also `torch.cuda.amp.GradScaler`): `scale(t)` returns `t`
  multiplied by the scale factor, so `scaler.scale(loss).backward()` is a backward pass
  through `loss`'s graph; `step(optimizer)` unscales the gradients and calls
  `optimizer.step()` (unless they hold inf/NaN, when it skips the step — the write may not
  happen, but a step that happens writes every parameter of that optimizer).
* `accelerate.Accelerator`: `prepare(*objects)` returns the objects it was given, in order,
  wrapped for the device (a wrapped module has the same parameters); `backward(loss)` calls
  `loss.backward()` (after scaling).
* `torch.compile(module)` returns an `OptimizedModule` that runs `module` and holds its
  parameters; `DistributedDataParallel(module)` / `DataParallel(module)` run `module` and
  hold its parameters (`.module` is `module`).
* `torch.optim.swa_utils.AveragedModel(module)` deep-copies `module`: separate parameters.
* `LightningModule.manual_backward(loss)` calls `loss.backward()` (after the precision
  plugin's scaling).

FSDP and DeepSpeed engines replace the parameters of what they wrap (flattened, sharded):
their results are not the module they were given, so they stay unknown.
"""

from __future__ import annotations


import libcst as cst

from aliaslint import ops
from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint.analysis.events import Write
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.syntax import FALSE, is_literal, zeroes_grads
from aliaslint.analysis.values import Args, ParamsValue, TensorValue, Value, grad_of, replace

# Classes whose instances the interpreter follows: qualname → the name used below.
INSTANCES = {
    "torch.amp.GradScaler": "GradScaler",
    "torch.amp.grad_scaler.GradScaler": "GradScaler",
    "torch.cuda.amp.GradScaler": "GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler": "GradScaler",
    "torch.GradScaler": "GradScaler",
    "accelerate.Accelerator": "Accelerator",
    "accelerate.accelerator.Accelerator": "Accelerator",
}

# Calls that return the module they are given (the same parameters).
MODULE_WRAPPERS = frozenset({
    "torch.compile",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
})

# Calls that return a deep copy of the module they are given.
MODULE_COPIES = frozenset({
    "torch.optim.swa_utils.AveragedModel",
    "copy.deepcopy",
})

# Functions that call the function they are given on inputs that require grad: every
# positional input (torch.autograd.functional detaches its inputs and turns
# requires_grad on), or only the first (torch.func transforms differentiate `argnums=0`
# by default).  `vmap` and `jacfwd` (forward mode) are not here: their inputs do not.
GRAD_TRANSFORMS = {
    "torch.autograd.functional.jacobian": "all",
    "torch.autograd.functional.hessian": "all",
    "torch.autograd.functional.vjp": "all",
    "torch.autograd.functional.jvp": "all",
    "torch.autograd.functional.hvp": "all",
    "torch.autograd.functional.vhp": "all",
    "torch.func.grad": "first",
    "torch.func.grad_and_value": "first",
    "torch.func.jacrev": "first",
    "torch.func.hessian": "first",
    "torch.func.vjp": "all",
}

# `checkpoint(fn, *args, use_reentrant=False)` runs `fn` without keeping what it saves and
# runs it again during backward: a saved tensor written in place then is not detected,
# the recomputation reads the written value (PyTorch's checkpoint documentation).
CHECKPOINTS = frozenset({"torch.utils.checkpoint.checkpoint"})

# The base of custom autograd functions: `Fn.apply(x)` runs `Fn.forward(ctx, x)` with grad
# mode off; a result that is an input, or a view of one, is a view autograd forbids
# writing in place.
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})

# `with saved_tensors_hooks(pack, unpack):` calls `pack` on every tensor a forward op in the
# block saves; a `pack` that writes its argument in place makes that op raise.
SAVED_TENSORS_HOOKS = frozenset({"torch.autograd.graph.saved_tensors_hooks"})

# Blocks whose saves autograd does not version-check: with any saved-tensor hooks installed
# (`saved_tensors_hooks`, `save_on_cpu`) the saved tensor is whatever the pack hook returned,
# and a later in-place write to the original raises nothing (the gradient may be silently
# wrong instead, which the engine does not claim).
UNCHECKED_SAVES = SAVED_TENSORS_HOOKS | {"torch.autograd.graph.save_on_cpu"}

# `with autocast(...)`: ops on autocast's lists cast their inputs (and the parameters they
# take) to another dtype first and save those copies; only what an op returns is surely
# what it saves.
AUTOCASTS = frozenset({
    "torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
    "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
})

# Base classes of modules whose `manual_backward(loss)` runs `loss.backward()`.
LIGHTNING_MODULES = frozenset({
    "lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
    "pytorch_lightning.LightningModule",
    "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule",
})


class Training(Part):
    """The training APIs as writes: backward passes, `zero_grad`, optimizer steps and state
    loads, by the contracts above and the autograd model."""

    autograd: api.Autograd

    def backward(self, op: ops.Op, receiver: Value | None, args: Args, node: cst.Call,
                 env: Env) -> None:
        retain_kwarg = op.extra.get("retain_kwarg", "retain_graph")
        retain = False
        targets = []
        if receiver is not None:
            targets.append(receiver)
        elif args:
            targets.append(args[0][1])
        create_graph = False
        for arg, value in args:
            if arg.keyword is not None and arg.keyword.value in (retain_kwarg, "create_graph"):
                retain = retain or not is_literal(arg.value, FALSE)
                create_graph = create_graph or arg.keyword.value == "create_graph"
        for target in targets:
            if isinstance(target, TensorValue):
                self.autograd.consume(target, node, None, env, retain=retain)
        if op.name.endswith(".backward") and not create_graph:
            # AccumulateGrad adds into an existing `.grad` in place (out of place only
            # under create_graph).
            self._grads_written(None, node, env)

    def zero_grad(self, params: frozenset, node: cst.Call, env: Env) -> None:
        """`zero_grad(set_to_none=False)` zeroes each `.grad` in place; the default drops the
        tensors, so a name kept on one no longer shares with the next gradient."""
        if zeroes_grads(node):
            self._grads_written(params, node, env)
            return
        for name, value in list(env.names.items()):
            if isinstance(value, TensorValue) and grad_of(value.storage) in params:
                dropped = ("dropped", id(node), value.storage)
                env.names[name] = replace(value, storage=dropped, counter=dropped)

    def _grads_written(self, params: frozenset | None, node: cst.Call, env: Env) -> None:
        """The `.grad` tensors of ``params`` (None: of every parameter) written in place: by
        a backward pass that accumulates, or by `zero_grad(set_to_none=False)`."""
        tokens = {value.storage for value in env.names.values()
                  if isinstance(value, TensorValue) and grad_of(value.storage) is not None and
                  (params is None or grad_of(value.storage) in params)}
        write = Write(node=node, stmt=self.state.stmt, target=None, grad_enabled=env.flow.grad)
        self.autograd.mark_stale(tokens, write, set(), env)

    def optimizer_step(self, optimizer: ParamsValue, node: cst.Call, env: Env) -> None:
        self.write_parameters(optimizer.params, node, env)

    def write_parameters(self, tokens: frozenset, node: cst.Call, env: Env) -> None:
        """optimizer.step(), load_state_dict(): every parameter written in place."""
        write = Write(node=node, stmt=self.state.stmt, target=None, grad_enabled=env.flow.grad,
                      params=tokens)
        self.autograd.log_write(write, env)
        for token in tokens:
            self.autograd.dirty(token, write, env)
        self.autograd.mark_stale(set(tokens), write, set(), env)
