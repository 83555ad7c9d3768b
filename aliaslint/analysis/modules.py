"""`nn.Module` modelling and summaries of the file's own functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.core import Interpreter
from aliaslint.analysis.events import Save, Write
from aliaslint.analysis.opfacts import has_params, input_saved
from aliaslint.analysis.protocol import (
    HOOK_METHODS,
    MODULE_ITERATORS,
    Given,
    bind,
    constant_of,
    spread,
)
from aliaslint.analysis.scopes import ClassInfo, Env, Summary
from aliaslint.analysis.syntax import (
    FALSE,
    NO_LITERAL,
    TRUE,
    declares_mutation,
    is_literal,
    literal_constant,
)
from aliaslint.analysis.values import (
    BOTTOM,
    OTHER,
    UNKNOWN,
    Args,
    ClassValue,
    ConstValue,
    ContainerValue,
    FunctionValue,
    Keywords,
    Kind,
    ModuleInfo,
    ModuleValue,
    ParamsValue,
    ObjectValue,
    TensorValue,
    Value,
    join,
    local_class,
)


# nn.Module methods that return the module itself (`return self`), its parameters unchanged
# in identity: moving or casting a module converts its parameters in place.
SELF_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train",
                          "eval", "requires_grad_", "to_empty", "type", "xpu", "ipu", "mtia"})


class Modules(Interpreter):
    """Calls modules and the file's own functions through summaries."""

    def _construct_module(self, spec: ops.ModuleOp, qualname: str, node: cst.Call,
                          positional: list[Value], keywords: Keywords) -> Value:
        short = qualname.removeprefix("torch.nn.modules.").removeprefix("torch.")
        inplace = False
        if spec.inplace_kwarg:
            flag = keywords.get(spec.inplace_kwarg, (None, None))[1]
            index = getattr(spec, "inplace_index", None)
            if flag is None and index is not None and len(node.args) > index \
                    and node.args[index].keyword is None:
                flag = node.args[index].value
            inplace = is_literal(flag, TRUE)
        children = None
        params: frozenset = frozenset()
        named: dict[str, object] = {}
        element = None
        label = f"`{short}(inplace=True)`" if inplace else f"`{short}()`"
        if spec.container:
            if any(arg.star for arg in node.args):
                # `nn.Sequential(*layers)`: a stack of modules not known here.
                return ModuleValue(origin=node, module=ModuleInfo(label=label))
            modules = [v for v in positional if isinstance(v, ModuleValue)]
            if len(modules) == len(positional) and "ModuleDict" not in qualname:
                children = tuple(modules)
                if len(positional) == 1 and "List" in qualname:
                    children = None
            for child in modules:
                params |= child.module.params
            if len(positional) == 1 and isinstance(positional[0], ContainerValue) and \
                    isinstance(positional[0].each, ModuleValue):
                # `nn.ModuleList([Block(d) for _ in range(n)])`: each element is a Block.
                element = positional[0].each
                params = element.module.params
        elif has_params(spec):
            named = self._named_parameters(spec, node)
            params = frozenset(named.values()) or frozenset({("params", id(node))})
        info = ModuleInfo(spec=spec, inplace=inplace, children=children, params=params,
                          label=label, named=named, element=element)
        return ModuleValue(origin=node, module=info)

    @staticmethod
    def _named_parameters(spec: ops.ModuleOp, node: cst.Call) -> dict[str, object]:
        """The module's `weight` and `bias`: the parameters it passes to its op under those
        names (`linear(input, weight, bias)`).  A constructor given a literal False
        (`bias=False`, `affine=False`) may have dropped some: then none is claimed."""
        op = spec.functional()
        if op is None or any(is_literal(arg.value, FALSE) for arg in node.args):
            return {}
        return {name: ("params", id(node), name) for name in ("weight", "bias")
                if name in op.params}

    def _construct_local_module(self, cls_value: ClassValue, node: cst.Call, args: Args,
                                env: Env) -> Value:
        cls = cls_value.module.cls if cls_value.module is not None else None
        if cls is None:
            return UNKNOWN
        init = cls.method("__init__")
        if init is not None:
            self._record_call(init, cls, node, args, env)
        self._learn_now(cls, args)
        token = ("instance", id(node))
        info = ModuleInfo(cls=cls, params=frozenset({token}), label=f"`{cls.name}`")
        return ModuleValue(origin=node, module=info)

    def _rebased(self, module: ModuleValue, node: cst.Call) -> ModuleValue:
        """Another instance like ``module``, made at ``node`` with parameters of its own: a
        deep copy, or what a local factory function (`def conv3x3(): return nn.Conv2d(…)`)
        returns at each call."""
        info = module.module

        def token(t: object) -> object:
            return ("at", id(node), t)

        copy = replace(
            info, params=frozenset(token(t) for t in info.params), hooks=list(info.hooks),
            named={name: token(t) for name, t in info.named.items()},
            children=None if info.children is None else tuple(
                self._rebased(child, node) for child in info.children),
            element=None if info.element is None else self._rebased(info.element, node))
        return replace(module, module=copy, origin=node, snapshot=None)

    def _construct_object(self, cls: ClassInfo, node: cst.Call, args: Args,
                          env: Env) -> Value:
        """An instance of a plain class of this file: its attributes are what `__init__`
        sets."""
        init = cls.method("__init__")
        if init is not None:
            self._record_call(init, cls, node, args, env)
            self._learn_now(cls, args)
        return ObjectValue(qualname=cls.name, cls=cls, origin=node)

    def _module_method(self, module: ModuleValue, attr: str, node: cst.Call, args: Args,
                       env: Env) -> Value:
        info = module.module
        if attr in HOOK_METHODS:
            return self._register_hook(module, attr, node, args, env)
        if attr in MODULE_ITERATORS and not args:
            return self._module_members(module, attr, node)
        if attr == "apply" and len(args) == 1 and args[0][0].keyword is None and \
                not args[0][0].star and self._apply_to_modules(module, node, args[0], env):
            return module
        if attr == "manual_backward" and info.cls is not None and info.cls.lightning and \
                info.cls.method(attr) is None and args and isinstance(args[0][1], TensorValue):
            self._consume(args[0][1], node, None, env)  # Lightning: `loss.backward()`
            return OTHER
        if attr == "optimizers" and info.cls is not None and info.cls.lightning and \
                info.cls.method(attr) is None and not args:
            # Lightning: what `configure_optimizers` returned (the optimizers it built).
            configure = info.cls.method("configure_optimizers")
            summary = self._summary(configure, info.cls, ()) if configure else None
            return summary.result if summary is not None else UNKNOWN
        if attr in SELF_METHODS:
            # `model.to(device)`, `model.train()`: the module itself, its parameters the same.
            if attr == "requires_grad_":
                flag = args[0][0].value if args else None
                if flag is not None and not is_literal(flag, TRUE):
                    info.frozen = True
            return module
        if attr in ops.parameter_methods() and info.params:
            return ParamsValue(Kind.PARAMS, origin=node, params=info.params)
        op = ops.lookup(f"torch.nn.Module.{attr}")
        if op is not None and op.kind == "reference" and info.params:
            # state_dict(): the module's own tensors, not copies.
            return ParamsValue(Kind.OTHER, origin=node, params=info.params, snapshot=node)
        if op is not None and op.kind == "optimizer_step" and "grads" in op.writes:
            self._zero_grad(info.params, node, env)
            return OTHER
        if attr == "load_state_dict" and info.params:
            self._write_parameters(info.params, node, env)
            return UNKNOWN
        if info.cls is not None and info.cls.method(attr) is not None:
            return UNKNOWN
        self._unknown_call(args, env)
        return UNKNOWN

    def _call_module(self, module: ModuleValue, node: cst.Call, positional: list[Value],
                     args: Args, env: Env) -> Value:
        info = module.module
        given = spread(args)
        if given is None or not given and info.cls is None:
            return UNKNOWN
        if info.cls is None and (len(positional) != len(given) or info.spec is not None and
                                 len(positional) != len(info.spec.inputs)):
            return UNKNOWN
        return self._run_module(module, given, node, env)

    def _run_module(self, module: ModuleValue, given: list[Given], node: cst.Call,
                    env: Env) -> Value:
        """Call ``module`` on the arguments ``given`` (see protocol.Given): its forward
        pre-hooks, its forward, then its forward hooks."""
        if module.module.members is not None:
            return UNKNOWN  # which of several modules runs is not known
        if self._hooks_of(module):
            return self._run_hooked(module, given, node, env)
        return self._run_forward(module, given, node, env)

    def _run_forward(self, module: ModuleValue, given: list[Given], node: cst.Call,
                     env: Env) -> Value:
        """``module``'s forward on the arguments ``given``."""
        info = module.module
        if info.cls is not None and info.children is None:
            return self._call_local_module(module, info.cls, given, node, env)
        inputs = [value for _, value, _ in given]
        arg_node = given[0][2] if given else None
        x = inputs[0]
        if info.children is not None:
            value = x
            for child in info.children:
                value = self._run_module(child, [(None, value, arg_node)], node, env)
                arg_node = None
            return value
        if not isinstance(x, TensorValue) and self._trainable(module, env):
            # A module with trainable parameters computes a tensor from its input; under
            # grad mode that tensor requires grad whatever the input was (a DataLoader
            # batch, a parameter of the caller).
            x = TensorValue(origin=arg_node)
            inputs = [x, *inputs[1:]]
        tensors = [v for v in inputs if isinstance(v, TensorValue)]
        graph: frozenset[int] = frozenset().union(*(v.graph for v in tensors))
        spec = info.spec
        token = ("alloc", id(node), id(module.origin))
        fresh = TensorValue(origin=node, storage=token, counter=token, graph=graph)
        if spec is None and info.assumed and env.flow.grad is True and not info.frozen \
                and not info.escaped and not self._freezes:
            # A model the file trains but did not build (see ModuleInfo.assumed).
            made = frozenset(self._save(t, t, node, info.label, "its parameters", env,
                                        assumed=True).id for t in info.params)
            return replace(fresh, requires_grad=True, graph=graph | made)
        if spec is None:
            # A torch.nn class the tables do not describe: its output is a
            # differentiable function of its inputs, nothing more is known.
            if not tensors:
                return UNKNOWN
            return replace(fresh, requires_grad=True if any(
                v.requires_grad for v in tensors) else None)
        if not isinstance(x, TensorValue) or spec.returns not in ("tensor", "tensors"):
            return UNKNOWN
        if spec.returns == "tensors":
            # (output, state) of an RNN, (output, weights) of attention: the output, fresh.
            output = self._run_spec(module, spec, x, inputs, fresh, graph, arg_node, node, env)
            return ContainerValue(origin=node, items=(output, UNKNOWN))
        return self._run_spec(module, spec, x, inputs, fresh, graph, arg_node, node, env)

    def _run_spec(self, module: ModuleValue, spec: ops.ModuleOp, x: TensorValue,
                  inputs: list[Value], fresh: TensorValue, graph: frozenset[int],
                  arg_node: cst.BaseExpression | None, node: cst.Call, env: Env) -> Value:
        """A torch.nn module of the tables on its inputs: its result, with its saves."""
        info = module.module
        functional = spec.functional()
        saved_when = spec.saved_when or (functional.saved_when if functional else None)
        if spec.identity:
            return x
        params = self._parameter(info.params, module.origin) if info.params else None
        bound: dict[str, Value] = {"input": x}
        bound.update(zip(spec.inputs[1:], inputs[1:]))  # a loss's target
        if params is not None:
            bound["weight"] = params
        refused: frozenset[int] = frozenset()
        if info.inplace:
            refused = self._slope_save(spec.inplace(), _slope_arguments(spec, module.origin),
                                       x, node, info.label, env)
            result = self._write(x, arg_node, node, info.label, env, activation=True,
                                 defined_at=module.origin, visible=False)
            result = replace(result, graph=graph | refused)
        else:
            result = fresh
        requires = self._requires_grad(list(bound.values()), env)
        result = replace(result, requires_grad=requires)
        # In place, the module runs the in-place op, whose saves may differ
        # (hardswish_ decomposes; its saves are unknown, so none are assumed).
        inplace_op = spec.inplace() if info.inplace else None
        saves = spec.saves if not info.inplace else (
            inplace_op.saves_must if inplace_op is not None else None)
        if requires is not True or not saves:
            return result
        new: set[int] = set()
        for name in sorted(saves):
            if name == "result":
                saved = [self._new_save(result, node, info.label, "its result", env)]
            elif name == "input" and input_saved("input", bound, saved_when):
                saved = [self._new_save(x, node, info.label, "its input", env)]
            elif name == "weight" and params is not None and input_saved("weight", bound):
                saved = [self._save(token, token, node, info.label, "its parameters", env)
                         for token in info.params]
            elif name in spec.inputs[1:] and input_saved(name, bound, saved_when):
                saved = [self._new_save(bound[name], node, info.label, f"its {name}", env)]
            else:
                saved = []
            new.update(save.id for save in saved if save is not None)
        return replace(result, graph=result.graph | new)

    def _trainable(self, module: ModuleValue, env: Env) -> bool:
        """Does calling ``module`` under this grad mode surely track its parameters?  Only a
        torch.nn module with parameters built in this file, which nothing froze or handed
        to an unknown function, in a file that freezes nothing."""
        info = module.module
        return env.flow.grad is True and info.spec is not None and has_params(info.spec) \
            and not info.frozen and not info.escaped and not self._freezes

    def _call_local_module(self, module: ModuleValue, cls: ClassInfo, given: list[Given],
                           node: cst.Call, env: Env) -> Value:
        forward = cls.method("forward")
        bound = bind(forward, 1, given) if forward is not None else None
        if forward is None or bound is None:
            return UNKNOWN
        summary = self._summary(forward, cls, bound.values, bound.layout)
        if summary is None:
            return UNKNOWN
        return self._apply_summary(summary, bound.slots,
                                   self._param_mapping(cls, module.module.params), node,
                                   None, env, forward)

    @staticmethod
    def _param_mapping(info: ClassInfo, params: frozenset) -> dict[object, frozenset]:
        """Parameter tokens seen inside a class's methods → the instance's tokens."""
        mapping: dict[object, frozenset] = {info.self_token: params}
        for token in info.all_params():
            mapping[token] = params
        for base in info.bases:
            mapping[base.self_token] = params
        return mapping

    def _call_function(self, function: FunctionValue, receiver: Value | None, node: cst.Call,
                       args: Args, env: Env) -> Value:
        definition = function.definition
        module = receiver if isinstance(receiver, ModuleValue) else None
        cls = local_class(receiver) if receiver is not None else None
        given = spread(args)
        bound = bind(definition, 1 if cls is not None else 0, given) \
            if given is not None else None
        if bound is None:
            self._unknown_call(args, env)
            return UNKNOWN
        self._record_call(definition, cls, node, args, env)
        summary = self._summary(definition, cls, bound.values, bound.layout)
        if summary is None:
            self._unknown_call(args, env)
            return UNKNOWN
        mapping = self._param_mapping(cls, module.module.params) \
            if module is not None and cls is not None else {}
        return self._apply_summary(summary, bound.slots, mapping, node, None, env, definition)

    def _summarise(self, function: cst.FunctionDef, cls: ClassInfo | None,
                   args: tuple[Value, ...], layout: tuple | None = None) -> Summary | None:
        env = Env(self._outer_env(self._top))
        env.flow.grad = self._decorated_grad_mode(function, env)
        if not self._bind_parameters(function, cls, args, layout, env):
            return None
        outer_log, self._write_log = self._write_log, []
        try:
            returns = self._run_body(function, env)
            log = self._write_log
        finally:
            self._write_log = outer_log
        if not returns:
            returns = [(OTHER, env.flow)]
        # A path that ends in a recursive call not yet summarised returns nothing in
        # this round of the fixed point (see protocol.py).
        reached = [(value, other) for value, other in returns if value is not BOTTOM] or \
            returns[:1]
        result, flow = reached[0][0], returns[0][1].copy()
        for value, _ in reached[1:]:
            result = join(result, value)
        for _, other in returns[1:]:
            flow.merge(other)
        writes: dict[int, Write] = {}
        for write in log:
            token = write.target.storage if write.target is not None else None
            if isinstance(token, tuple) and token[0] == "arg":
                writes.setdefault(token[1], write)
        saves = tuple((token, save) for token, pending in flow.saves.items() for save in pending)
        returns_arg = None
        if isinstance(result, TensorValue) and isinstance(result.storage, tuple) \
                and result.storage[0] == "arg" and result.via is None:
            returns_arg = result.storage[1]
        return Summary(result, writes, saves, returns_arg)

    def _apply_summary(self, summary: Summary,
                       args: Sequence[tuple[Value, cst.BaseExpression | None]],
                       mapping: dict[object, frozenset], node: cst.Call, label: str | None,
                       env: Env, function: cst.FunctionDef) -> Value:
        for index, write in summary.writes.items():
            if index < len(args) and isinstance(args[index][0], TensorValue):
                value, arg_node = args[index]
                # A write a callee of the callee made points where it was made.
                self._write(value, arg_node, node, label, env, activation=write.activation,
                            defined_at=write.defined_at or write.node, visible=False,
                            assumed=write.assumed,
                            callee=write.callee or function.name.value,
                            declared=write.declared if write.callee else declares_mutation(
                                function))
        graph: frozenset[int] = frozenset().union(
            *(v.graph for v, _ in args if isinstance(v, TensorValue)))
        result = summary.result
        if result is BOTTOM:
            return BOTTOM
        if summary.returns_arg is not None and summary.returns_arg < len(args):
            result = args[summary.returns_arg][0]
        elif isinstance(result, TensorValue):
            token = ("alloc", id(node))
            # A leaf made in the callee is still a leaf in the caller.
            result = TensorValue(origin=node, storage=token, counter=token,
                                 requires_grad=result.requires_grad, leaf=result.leaf)
        elif isinstance(result, ModuleValue):
            return self._rebased(result, node)
        elif isinstance(result, FunctionValue):
            return result  # a closure (`def hook(...)` made by a factory): its definition
        elif result.kind is not Kind.OTHER:
            return UNKNOWN
        new: set[int] = set()
        for token, save in summary.saves:
            # A save the callee left pending, moved onto the caller's storages.
            moved: list[Save | None] = []
            if isinstance(token, tuple) and token[0] == "arg" and token[1] < len(args):
                value, arg_node = args[token[1]]
                moved.append(self._new_save(value, node, label, "its input", env, arg_node))
            elif token in mapping:
                moved.extend(self._save(t, t, node, label, "its parameters", env)
                             for t in mapping[token])
            elif isinstance(summary.result, TensorValue) and token == summary.result.storage:
                moved.append(self._new_save(result, node, label, "its result", env))
            new.update(save.id for save in moved if save is not None)
        if isinstance(result, TensorValue):
            result = replace(result, graph=result.graph | graph | frozenset(new))
        return result


def _slope_arguments(spec: ops.ModuleOp, origin: cst.CSTNode | None) -> dict[str, cst.BaseExpression]:
    """The slope arguments of an in-place activation module's constructor, by the names
    of the in-place op it runs: `nn.LeakyReLU(-0.2, inplace=True)`, `nn.ELU(alpha=-1.0)`.
    Modules that choose their mode when called (`nn.RReLU` samples slopes in training
    mode) give none."""
    inplace = spec.inplace()
    if inplace is None or len(inplace.negative_slope) != 1 or not isinstance(origin, cst.Call):
        return {}
    name = inplace.negative_slope[0]
    for position, arg in enumerate(origin.args):
        if arg.keyword is not None and arg.keyword.value == name or \
                arg.keyword is None and position == 0 and not arg.star:
            return {name: arg.value}
    return {}


