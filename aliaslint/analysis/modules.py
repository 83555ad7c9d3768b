"""`nn.Module` modelling and summaries of the file's own functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.core import Interpreter
from aliaslint.analysis.events import Save, Write
from aliaslint.analysis.opfacts import has_params, input_saved
from aliaslint.analysis.scopes import ClassInfo, Env, Summary
from aliaslint.analysis.syntax import (
    FALSE,
    NO_LITERAL,
    TRUE,
    declares_mutation,
    is_classmethod,
    is_literal,
    literal_constant,
)
from aliaslint.analysis.values import (
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
    RefValue,
    TensorValue,
    Value,
    join,
    local_class,
    module_items,
)


# nn.Module methods that return the module itself (`return self`), its parameters unchanged
# in identity: moving or casting a module converts its parameters in place.
SELF_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train",
                          "eval", "requires_grad_", "to_empty", "type", "xpu", "ipu", "mtia"})


class Modules(Interpreter):
    """Calls modules and the file's own functions through summaries."""

    def _construct_module(self, spec: ops.ModuleOp, qualname: str, node: cst.Call,
                          positional: list[Value], keywords: Keywords,
                          starred: Value | None = None) -> Value:
        short = qualname.removeprefix("torch.nn.modules.").removeprefix("torch.")
        inplace = False
        if spec.inplace_kwarg:
            flag = keywords.get(spec.inplace_kwarg, (None, None))[1]
            # By position, where the constructor's signature puts it: `nn.ReLU(True)` and
            # `nn.Dropout(p, True)` are in place; `nn.LeakyReLU(True)` is a slope of True.
            signature = spec.init_params or ()
            index = signature.index(spec.inplace_kwarg) \
                if spec.inplace_kwarg in signature else None
            if flag is None and index is not None and len(node.args) > index \
                    and not any(arg.star for arg in node.args[:index + 1]) \
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
                built = module_items(starred) if starred is not None and \
                    len(node.args) == 1 and node.args[0].star == "*" else None
                if not built or "Sequential" not in qualname:
                    # `nn.Sequential(*layers)` of a list not known here: a stack of modules
                    # not known here.
                    return ModuleValue(origin=node, module=ModuleInfo(label=label))
                # `nn.Sequential(*layers)` of a list of modules built by code: its layers.
                for child in built:
                    params |= child.module.params
                return ModuleValue(origin=node, module=ModuleInfo(
                    spec=spec, children=built, params=params, label=label))
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
            elif len(positional) == 1 and "List" in qualname and \
                    isinstance(positional[0], ContainerValue) and positional[0].items and \
                    (items := module_items(positional[0])):
                # `nn.ModuleList(layers)` of a list built by code: its modules, by index.
                children = items
                params = frozenset().union(*(child.module.params for child in items))
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
        spec = ops.module(cls.torch_base) if cls.torch_base is not None else None
        if spec is not None and spec.container and cls.method("__init__") is None and \
                cls.method("forward") is None and not cls.bases:
            # `class Stage(nn.Sequential)` adding only methods (a classmethod that builds it,
            # `cls(*layers)`): its instances are the container.
            positional = [value for arg, value in args if arg.keyword is None and not arg.star]
            keywords: Keywords = {arg.keyword.value: (value, arg.value) for arg, value in args
                                  if arg.keyword is not None}
            starred = next((value for arg, value in args if arg.star == "*"), None)
            return self._construct_module(spec, spec.name, node, positional, keywords, starred)
        init = cls.method("__init__")
        if init is not None:
            self._record_call(init, cls, node, args, env)
        self._learn_now(cls, args)
        token = ("instance", id(node))
        info = ModuleInfo(cls=cls, params=frozenset({token}), label=f"`{cls.name}`")
        return ModuleValue(origin=node, module=info)

    def _rebased(self, module: ModuleValue, node: cst.Call,
                 keep_origin: bool = False) -> ModuleValue:
        """Another instance like ``module``, made at ``node`` with parameters of its own: a
        deep copy, or what a local factory function (`def conv3x3(): return nn.Conv2d(…)`)
        returns at each call.  Its children keep their constructors as their origins (where
        an in-place layer of a built stack is reported); so does the module itself with
        ``keep_origin``."""
        info = module.module

        def token(t: object) -> object:
            return ("at", id(node), t)

        copy = replace(
            info, params=frozenset(token(t) for t in info.params),
            named={name: token(t) for name, t in info.named.items()},
            children=None if info.children is None else tuple(
                self._rebased(child, node, keep_origin=True) for child in info.children),
            element=None if info.element is None else self._rebased(info.element, node))
        return replace(module, module=copy, origin=module.origin if keep_origin else node,
                       snapshot=None)

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
        if not positional or len(positional) != len(args):
            return UNKNOWN
        arg_node = args[0][0].value
        if info.cls is None and info.spec is not None and len(positional) != len(info.spec.inputs):
            return UNKNOWN
        return self._run_module(module, positional, arg_node, node, env, self._unroll_place)

    def _run_module(self, module: ModuleValue, inputs: list[Value],
                    arg_node: cst.BaseExpression | None, node: cst.Call, env: Env,
                    place: tuple[int, ...] = ()) -> Value:
        """Call ``module`` on ``inputs``; ``arg_node`` is the first argument's expression.
        ``place`` is where the module sits in the containers the call runs through: a
        module repeated in a stack makes a new tensor at each place."""
        info = module.module
        x = inputs[0]
        if info.children is not None:
            value = x
            for index, child in enumerate(info.children):
                value = self._run_module(child, [value], arg_node, node, env, (*place, index))
                arg_node = None
            return value
        if info.cls is not None:
            return self._call_local_module(module, info.cls, inputs, arg_node, node, env,
                                           place)
        if not isinstance(x, TensorValue) and self._trainable(module, env):
            # A module with trainable parameters computes a tensor from its input; under
            # grad mode that tensor requires grad whatever the input was (a DataLoader
            # batch, a parameter of the caller).
            x = TensorValue(origin=arg_node)
            inputs = [x, *inputs[1:]]
        tensors = [v for v in inputs if isinstance(v, TensorValue)]
        graph: frozenset[int] = frozenset().union(*(v.graph for v in tensors))
        spec = info.spec
        token = ("alloc", id(node), id(module.origin), *place)
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

    def _call_local_module(self, module: ModuleValue, cls: ClassInfo, inputs: list[Value],
                           arg_node: cst.BaseExpression | None, node: cst.Call,
                           env: Env, place: tuple[int, ...] = ()) -> Value:
        forward = cls.method("forward")
        if forward is None:
            return UNKNOWN
        summary = self._summary(forward, cls, tuple(inputs))
        if summary is None:
            return UNKNOWN
        arg_nodes: list[cst.BaseExpression | None] = [arg.value for arg in node.args]
        if len(arg_nodes) != len(inputs):
            arg_nodes = [arg_node] + [None] * (len(inputs) - 1)
        return self._apply_summary(summary, list(zip(inputs, arg_nodes)),
                                   self._param_mapping(cls, module.module.params), node,
                                   None, env, forward, place)

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
        positional = [(value, arg.value) for arg, value in args
                      if arg.keyword is None and not arg.star]
        if len(positional) != len(args):
            self._unknown_call(args, env)
            return UNKNOWN
        module = receiver if isinstance(receiver, ModuleValue) else None
        cls = local_class(receiver) if receiver is not None else None
        self._record_call(definition, cls, node, args, env)
        summary = self._summary(definition, cls, tuple(
            constant_of(arg_node) or v for v, arg_node in positional))
        if summary is None:
            self._unknown_call(args, env)
            return UNKNOWN
        mapping = self._param_mapping(cls, module.module.params) \
            if module is not None and cls is not None else {}
        return self._apply_summary(summary, positional, mapping, node, None, env, definition)

    def _summary(self, function: cst.FunctionDef, cls: ClassInfo | None,
                 args: tuple[Value, ...]) -> Summary | None:
        key = (id(function), id(cls), tuple(
            a.requires_grad if isinstance(a, TensorValue) else
            ("literal", type(a.literal), a.literal) if isinstance(a, ConstValue) else
            ("ref", a.qualname) if isinstance(a, RefValue) else
            ("modules", tuple(id(m.origin) for m in items)) if (items := module_items(a)) else
            a.kind
            for a in args))
        if key in self._summaries:
            return self._summaries[key]
        if key in self._in_progress or len(self._in_progress) > 8:
            return None
        self._in_progress.add(key)
        self._silent += 1
        outer_stmt = self._stmt
        try:
            summary = self._summarise(function, cls, args)
        finally:
            self._silent -= 1
            self._in_progress.discard(key)
            self._stmt = outer_stmt
        self._summaries[key] = summary
        return summary

    def _summarise(self, function: cst.FunctionDef, cls: ClassInfo | None,
                   args: tuple[Value, ...]) -> Summary | None:
        env = Env(self._outer_env(self._top))
        env.flow.grad = self._decorated_grad_mode(function, env)
        params = list(function.params.params)
        offset = 1 if cls is not None else 0
        if cls is not None and params:
            env.names[params[0].name.value] = ClassValue(
                qualname=cls.name, origin=cls.node, module=ModuleInfo(cls=cls)
                if cls.is_module else None, info=cls) \
                if is_classmethod(function) else self._self_value(cls)
        if len(params) - offset < len(args) or any(
                p.default is None for p in params[offset + len(args):]):
            return None
        for index, (param, value) in enumerate(zip(params[offset:], args)):
            if isinstance(value, TensorValue):
                value = TensorValue(storage=("arg", index), counter=("arg", index),
                                    requires_grad=value.requires_grad, origin=param)
            env.names[param.name.value] = value
        for param in params[offset + len(args):]:
            env.names[param.name.value] = constant_of(param.default) or \
                self._default_reference(param.default, env)
        outer_log, self._write_log = self._write_log, []
        try:
            returns = self._run_body(function, env)
            log = self._write_log
        finally:
            self._write_log = outer_log
        if not returns:
            returns = [(OTHER, env.flow)]
        result, flow = returns[0][0], returns[0][1].copy()
        for value, other in returns[1:]:
            result = join(result, value)
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

    def _default_reference(self, default: cst.BaseExpression | None, env: Env) -> Value:
        """A default that names a class or function (`act_layer=nn.Tanh`): what it names.
        Evaluating a dotted name has no effect; anything else is unknown."""
        if isinstance(default, (cst.Name, cst.Attribute)):
            value = self._eval(default, env)
            if isinstance(value, (RefValue, ClassValue, FunctionValue)):
                return value
        return UNKNOWN

    def _apply_summary(self, summary: Summary,
                       args: Sequence[tuple[Value, cst.BaseExpression | None]],
                       mapping: dict[object, frozenset], node: cst.Call, label: str | None,
                       env: Env, function: cst.FunctionDef, place: tuple[int, ...] = ()) -> Value:
        for index, write in summary.writes.items():
            if index < len(args) and isinstance(args[index][0], TensorValue):
                value, arg_node = args[index]
                # A module of the callee that writes in place (`nn.ReLU(inplace=True)`) is
                # reported at its constructor, and named as the writer.
                self._write(value, arg_node, node,
                            label if label is not None or write.defined_at is None
                            else write.label, env, activation=write.activation,
                            defined_at=write.defined_at or write.node, visible=False,
                            callee=function.name.value, declared=declares_mutation(function))
        graph: frozenset[int] = frozenset().union(
            *(v.graph for v, _ in args if isinstance(v, TensorValue)))
        result = summary.result
        if summary.returns_arg is not None and summary.returns_arg < len(args):
            result = args[summary.returns_arg][0]
        elif isinstance(result, TensorValue):
            alloc = ("alloc", id(node), *place)
            # A leaf made in the callee is still a leaf in the caller.
            result = TensorValue(origin=node, storage=alloc, counter=alloc,
                                 requires_grad=result.requires_grad, leaf=result.leaf)
        elif isinstance(result, ModuleValue):
            return self._rebased(result, node)
        elif (items := module_items(result)) is not None and isinstance(result, ContainerValue) \
                and result.items is not None:
            # A factory's list of layers (`def make_layers(cfg): ... return layers`): new
            # modules at each call.
            return replace(result, items=tuple(self._rebased(m, node, keep_origin=True)
                                               for m in items), origin=node)
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


def constant_of(node: cst.BaseExpression | None) -> ConstValue | None:
    """A literal argument or default (`"copy"`, `False`, `None`) as a value."""
    literal = literal_constant(node)
    return None if literal is NO_LITERAL else ConstValue(origin=node, literal=literal)
