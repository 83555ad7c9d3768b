"""`nn.Module` modelling and summaries of the file's own functions."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.builders import DICT_VIEWS, dict_of_modules, dict_view
from aliaslint.analysis.effects import _items, _of_argument
from aliaslint.analysis.dispatch import MethodValue, attribute_storages, exact
from aliaslint.analysis.events import Save, Write
from aliaslint.analysis.opfacts import has_params, input_saved
from aliaslint.analysis.protocol import (
    HOOK_METHODS,
    MODULE_ITERATORS,
    bind,
    spread)
from aliaslint.analysis.scopes import (
    ClassInfo,
    Given,
    Env,
    Summary,
    arg_mark,
    is_state,
    state_token,
    state_tokens,
)
from aliaslint.analysis.syntax import (
    FALSE,
    TRUE,
    is_literal,
    literal_constant,
    name_key)
from aliaslint.analysis.values import (
    BOTTOM,
    OTHER,
    UNKNOWN,
    Args,
    ArrayValue,
    ClassValue,
    ContainerValue,
    FunctionValue,
    Keywords,
    LambdaValue,
    Kind,
    ModuleInfo,
    ModuleValue,
    ParamsValue,
    PartialValue,
    RefValue,
    ObjectValue,
    TensorValue,
    Value,
    is_true,
    join,
    local_class,
    module_items,
    ordered_positional,
    replace,
    spread_modules)


# nn.Module methods that return the module itself (`return self`), its parameters unchanged
# in identity: moving or casting a module converts its parameters in place.
SELF_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train",
                          "eval", "requires_grad_", "to_empty", "type", "xpu", "ipu", "mtia"})


class Modules(Part):
    """Calls modules and the file's own functions through summaries."""

    autograd: api.Autograd
    effects: api.Effects
    expressions: api.Expressions
    functions: api.Functions
    imports: api.Imports
    outcomes: api.Outcomes
    protocol: api.CallProtocol
    statements: api.Statements
    training: api.Training

    def construct_module(self, spec: ops.ModuleOp, qualname: str, node: cst.Call,
                         positional: list[Value], keywords: Keywords,
                         ordered: tuple[tuple[str, Value], ...] = ()) -> Value:
        short = qualname.removeprefix("torch.nn.modules.").removeprefix("torch.")
        inplace = False
        if spec.inplace_kwarg:
            given, flag = keywords.get(spec.inplace_kwarg, (None, None))
            # By position, where the constructor's signature puts it: `nn.ReLU(True)` and
            # `nn.Dropout(p, True)` are in place; `nn.LeakyReLU(True)` is a slope of True.
            signature = spec.init_params or ()
            index = signature.index(spec.inplace_kwarg) \
                if spec.inplace_kwarg in signature else getattr(spec, "inplace_index", None)
            if flag is None and index is not None and len(node.args) > index \
                    and not any(arg.star for arg in node.args[:index + 1]) \
                    and node.args[index].keyword is None:
                flag = node.args[index].value
            # `inplace=True`, or `inplace=inplace` where the call site passed True.
            inplace = is_literal(flag, TRUE) or is_true(given)
        children = None
        keys: tuple | None = None
        params: frozenset = frozenset()
        named: dict[str, object] = {}
        element = None
        label = f"`{short}(inplace=True)`" if inplace else f"`{short}()`"
        if spec.container:
            if any(arg.star for arg in node.args):
                built = spread_modules(ordered)
                if not built or "Sequential" not in qualname:
                    # `nn.Sequential(*layers)` of a list not known here: a stack of modules
                    # not known here.
                    return ModuleValue(origin=node, module=ModuleInfo(label=label))
                # `nn.Sequential(*layers)` of a list of modules built by code (beside other
                # layers: `nn.Sequential(*block(c), nn.Flatten())`): its layers.
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
            elif len(positional) == 1 and "Sequential" in qualname and \
                    isinstance(positional[0], ContainerValue) and positional[0].mapping and \
                    positional[0].items and (items := module_items(positional[0])):
                # `nn.Sequential(OrderedDict(...))`: its layers in the dict's order.
                children = items
                params = frozenset().union(*(child.module.params for child in items))
            elif len(positional) == 1 and "ModuleDict" in qualname and \
                    (entries := dict_of_modules(positional[0])) is not None:
                # `nn.ModuleDict({task: build_head(task, d) for task in tasks})` of modules
                # under literal keys: its modules, in insertion order, with their keys.
                keys, children = entries
                params = frozenset().union(*(child.module.params for child in children))
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
                          label=label, named=named, element=element, keys=keys)
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

    def construct_local_module(self, cls_value: ClassValue, node: cst.Call, args: Args,
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
            return self.construct_module(spec, spec.name, node, positional, keywords,
                                         ordered_positional(args))
        init = cls.method("__init__")
        if init is not None:
            self.functions.record_call(init, cls, node, args, env)
        self.functions.learn_now(cls, args)
        token = ("instance", id(node))
        info = ModuleInfo(cls=cls, params=frozenset({token}), label=f"`{cls.name}`")
        return ModuleValue(origin=node, module=info)

    def rebased(self, module: ModuleValue, node: cst.Call,
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
            info, params=frozenset(token(t) for t in info.params), hooks=list(info.hooks),
            named={name: token(t) for name, t in info.named.items()},
            children=None if info.children is None else tuple(
                self.rebased(child, node, keep_origin=True) for child in info.children),
            element=None if info.element is None else self.rebased(info.element, node))
        return replace(module, module=copy, origin=module.origin if keep_origin else node,
                       snapshot=None)

    def construct_object(self, cls: ClassInfo, node: cst.Call, args: Args,
                         env: Env) -> Value:
        """An instance of a plain class of this file: its attributes are what `__init__`
        sets."""
        init = cls.method("__init__")
        if init is not None:
            self.functions.record_call(init, cls, node, args, env)
            self.functions.learn_now(cls, args)
        return ObjectValue(qualname=cls.name, cls=cls, origin=node)

    def module_method(self, module: ModuleValue, attr: str, node: cst.Call, args: Args,
                      env: Env) -> Value:
        info = module.module
        if attr in HOOK_METHODS:
            return self.protocol.register_hook(module, attr, node, args, env)
        if attr in MODULE_ITERATORS and not args:
            return self.protocol.module_members(module, attr, node)
        if attr in DICT_VIEWS and not args and (view := dict_view(module, attr, node)):
            return view
        if attr == "apply" and len(args) == 1 and args[0][0].keyword is None and \
                not args[0][0].star and self.protocol.apply_to_modules(module, node, args[0], env):
            return module
        if attr == "manual_backward" and info.cls is not None and info.cls.lightning and \
                info.cls.method(attr) is None and args and isinstance(args[0][1], TensorValue):
            self.autograd.consume(args[0][1], node, None, env)  # Lightning: `loss.backward()`
            return OTHER
        if attr == "optimizers" and info.cls is not None and info.cls.lightning and \
                info.cls.method(attr) is None and not args:
            # Lightning: what `configure_optimizers` returned (the optimizers it built).
            configure = info.cls.method("configure_optimizers")
            summary = self.protocol.summary(configure, info.cls, ()) if configure else None
            return summary.result if summary is not None else UNKNOWN
        if attr in ("register_buffer", "register_parameter") and len(args) >= 2 and \
                args[0][0].keyword is None and args[1][0].keyword is None:
            # `self.register_buffer("scale", t)`: the module holds `t` itself (no copy) as
            # `self.scale`.
            name = literal_constant(args[0][0].value)
            owner = name_key(node.func.value) if type(node.func) is cst.Attribute else None
            if isinstance(name, str) and name.isidentifier() and owner is not None:
                value = args[1][1]
                env.names[f"{owner}.{name}"] = value if isinstance(value, TensorValue) \
                    else UNKNOWN
                return OTHER
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
            self.training.zero_grad(info.params, node, env)
            return OTHER
        if attr == "load_state_dict" and info.params:
            self.training.write_parameters(info.params, node, env)
            return UNKNOWN
        if info.cls is not None and info.cls.method(attr) is not None:
            return UNKNOWN
        self.autograd.unknown_call(args, env)
        return UNKNOWN

    def call_module(self, module: ModuleValue, node: cst.Call, positional: list[Value],
                    args: Args, env: Env) -> Value:
        info = module.module
        given = spread(args)
        if given is None or not given and info.cls is None:
            return UNKNOWN
        if info.cls is None and (len(positional) != len(given) or info.spec is not None and
                                 len(positional) != len(info.spec.inputs)):
            return UNKNOWN
        return self._run_module(module, given, node, env, self.state.unroll_place)

    def _run_module(self, module: ModuleValue, given: list[Given], node: cst.Call,
                    env: Env, place: tuple[int, ...] = ()) -> Value:
        """Call ``module`` on the arguments ``given`` (see protocol.Given): its forward
        pre-hooks, its forward, then its forward hooks.  ``place`` is where the module sits
        in the containers the call runs through: a module repeated in a stack makes a new
        tensor at each place."""
        if module.module.members is not None:
            return UNKNOWN  # which of several modules runs is not known
        if self.protocol.hooks_of(module):
            return self.protocol.run_hooked(module, given, node, env)
        return self.run_forward(module, given, node, env, place)

    def run_forward(self, module: ModuleValue, given: list[Given], node: cst.Call,
                    env: Env, place: tuple[int, ...] = ()) -> Value:
        """``module``'s forward on the arguments ``given``."""
        info = module.module
        if info.cls is not None and info.children is None:
            return self._call_local_module(module, info.cls, given, node, env, place)
        inputs = [value for _, value, _ in given]
        arg_node = given[0][2] if given else None
        x = inputs[0]
        if info.children is not None:
            value = x
            for index, child in enumerate(info.children):
                value = self._run_module(child, [(None, value, arg_node)], node, env,
                                         (*place, index))
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
        token = ("alloc", id(node), id(module.origin), *place)
        fresh = TensorValue(origin=node, storage=token, counter=token, graph=graph)
        if spec is None and info.assumed and env.flow.grad is True and not info.frozen \
                and not info.escaped and not self.state.freezes:
            # A model the file trains but did not build (see ModuleInfo.assumed).
            made = frozenset(self.autograd.save(t, t, node, info.label, "its parameters", env,
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
        if functional is not None and not info.inplace and \
                functional.kind in ("view", "sometimes_alias") and \
                not functional.extra.get("returns_input"):
            # `nn.Flatten` runs `input.flatten(self.start_dim, self.end_dim)`: its result is
            # what that op returns, a view of a contiguous input.  (A module whose op returns
            # its input only in eval mode, `nn.Dropout`, makes a new tensor in training.)
            forwarded: Args = [(cst.Arg(value=cst.Name(name)), UNKNOWN)
                               for name in spec.init_params or ()]
            if functional.kind == "view":
                return self.expressions.view(x, node, functional, None, env)
            requires = self.autograd.requires_grad([x], env)
            return self.outcomes.sometimes_alias(functional, x, forwarded, {}, node, env,
                                                 fresh.storage, requires, graph, x.pending)
        params = self.statements.parameter(info.params, module.origin) if info.params else None
        bound: dict[str, Value] = {"input": x}
        bound.update(zip(spec.inputs[1:], inputs[1:]))  # a loss's target
        if params is not None:
            bound["weight"] = params
        refused: frozenset[int] = frozenset()
        if info.inplace:
            refused = self.autograd.slope_save(spec.inplace(), _slope_arguments(spec,
                                                                                module.origin),
                                               x, node, info.label, env)
            result = self.autograd.write(x, arg_node, node, info.label, env, activation=True,
                                         defined_at=module.origin, visible=False)
            result = replace(result, graph=graph | refused)
        else:
            result = fresh
        requires = self.autograd.requires_grad(list(bound.values()), env)
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
                saved = [self.autograd.new_save(result, node, info.label, "its result", env)]
            elif name == "input" and input_saved("input", bound, saved_when):
                saved = [self.autograd.new_save(x, node, info.label, "its input", env)]
            elif name == "weight" and params is not None and input_saved("weight", bound):
                saved = [self.autograd.save(token, token, node, info.label, "its parameters", env)
                         for token in info.params]
            elif name in spec.inputs[1:] and input_saved(name, bound, saved_when):
                saved = [self.autograd.new_save(bound[name], node, info.label, f"its {name}", env)]
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
            and not info.frozen and not info.escaped and not self.state.freezes

    def _call_local_module(self, module: ModuleValue, cls: ClassInfo, given: list[Given],
                           node: cst.Call, env: Env, place: tuple[int, ...] = ()) -> Value:
        # An instance attribute `forward` hides the class's (`Module.__call__` looks it up
        # on the instance): a bound method kept there runs; anything else is not known.
        kept = cls.attr("self.forward")
        forward = kept.definition if isinstance(kept, MethodValue) else \
            cls.method("forward") if kept is None else None
        bound = bind(forward, 1, given) if forward is not None else None
        if forward is None or bound is None:
            return UNKNOWN
        summary = self.protocol.summary(forward, cls, bound.values, bound.layout,
                                        exact=exact(module))
        if summary is None:
            return UNKNOWN
        return self.apply_summary(summary, bound.slots,
                                  self.effects.param_mapping(cls, module.module.params), node,
                                  None, env, forward, receiver=module, place=place)

    def receiver_mapping(self, receiver: Value | None) -> dict[object, frozenset]:
        cls = local_class(receiver) if receiver is not None else None
        if isinstance(receiver, ModuleValue) and cls is not None:
            return self.effects.param_mapping(cls, receiver.module.params)
        return {}

    def call_function(self, function: FunctionValue, receiver: Value | None, node: cst.Call,
                      args: Args, env: Env, *, may: bool = False,
                      first: Value | None = None) -> Value:
        """Call a function of the file through its summary; ``receiver`` is bound to its
        first parameter (`self`), or ``first`` is (a class method's `cls`)."""
        definition = function.definition
        cls = local_class(receiver) if receiver is not None else None
        given = spread(args)
        # A class method's `cls` (``first``) takes the first parameter.
        bound = bind(definition, 1 if cls is not None or first is not None else 0, given) \
            if given is not None else None
        if bound is None:
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        self.functions.record_call(definition, cls, node, args, env)
        slots, values, layout = bound.slots, bound.values, bound.layout
        if first is not None:
            slots, values = ((first, None), *slots), (first, *values)
            layout = (bound.named + 1, bound.star, bound.keywords)
        summary = self.protocol.summary(definition, cls, values, layout,
                                        exact=exact(receiver) if receiver is not None else True)
        if summary is None:
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        mapping = self.receiver_mapping(receiver)
        return self.apply_summary(summary, slots, mapping, node, None, env, definition,
                                  receiver=receiver, may=may)

    def summarise(self, function: cst.FunctionDef, cls: ClassInfo | None,
                  args: tuple[Value, ...], layout: tuple | None = None,
                  exact: bool = True) -> Summary | None:
        env = Env(self.functions.outer_env(self.imports.home(function)))
        env.flow.grad = self.functions.decorated_grad_mode(function, env)
        env.flow.done = frozenset()
        if not self.protocol.bind_parameters(function, cls, args, layout, env, exact):
            return None
        outer_log, self.state.write_log = self.state.write_log, []
        outer_consumed, self.state.consume_log = self.state.consume_log, []
        outer_state, self.state.state_log = self.state.state_log, {}
        try:
            returns = self.functions.run_body(function, env)
            log = self.state.write_log
            consumed = self.state.consume_log
            state = self.state.state_log
        finally:
            self.state.write_log = outer_log
            self.state.consume_log = outer_consumed
            self.state.state_log = outer_state
        if not returns:
            returns = [(OTHER, env.flow)]
        # A path that ends in a recursive call not yet summarised returns nothing in
        # this round of the fixed point (see protocol.py).
        settled = [(value, other) for value, other in returns if value is not BOTTOM] or \
            returns[:1]
        result, flow = settled[0][0], returns[0][1].copy()
        for value, _ in settled[1:]:
            result = join(result, value)
        for _, other in returns[1:]:
            flow.merge(other)
        writes: dict[int, Write] = {}
        element_writes: dict[object, Write] = {}
        reached: list[Write] = []
        inside = self.effects.made_inside(function)
        kept = attribute_storages(cls) if cls is not None else frozenset()
        attr_writes: list[Write] = []
        for write in log:
            token = write.target.storage if write.target is not None else None
            if isinstance(token, tuple) and token[0] == "arg":
                if write.via in ("data", "detach"):
                    # Through `.data` or a detached alias autograd does not see the write
                    # (`value.data.uniform_(-a, a)` in an initialiser): re-applied to the
                    # caller's tensor it would look like a write autograd refuses.
                    continue
                writes.setdefault(token[1], write)
            elif containers.element_token(token) is not None:
                element_writes.setdefault(token, write)
            elif token is not None and (token in kept or is_state(token)):
                # A method that writes its object's state in place (a buffer, a cache,
                # `self.weight.data`): the caller's object is written.
                if all(w.node is not write.node for w in attr_writes):
                    attr_writes.append(write)
            elif write.target is None and write.params or \
                    write.target is not None and self.effects.held_by_caller(token, inside):
                reached.append(write)
        saves = tuple((token, save) for token, pending in flow.saves.items() for save in pending)
        if cls is not None and state:
            saves = _keep_state(cls, state, saves, kept)
        returns_arg = view_of = None
        if isinstance(result, TensorValue) and isinstance(result.storage, tuple) \
                and result.storage[0] == "arg" and result.counter == result.storage:
            if result.via is None:
                returns_arg = result.storage[1]
            elif result.via == "view":
                view_of = result.storage[1]
        # What every path to a return did (a body that always raises did nothing).
        done = [other.done for _, other in returns if other.done is not None]
        must = frozenset.intersection(*done) if done else frozenset()
        marks = frozenset().union(*consumed) if consumed else frozenset()
        return Summary(result, writes, saves, returns_arg, element_writes=element_writes,
                       attr_writes=tuple(attr_writes), dirty=flow.dirty, kept=kept,
                       view_of=view_of, must=must, reached=tuple(reached),
                       backward=bool(consumed), consumed=frozenset(
                           index for index in range(len(args)) if arg_mark(index) in marks))

    def apply_summary(self, summary: Summary,
                      args: Sequence[tuple[Value, cst.BaseExpression | None]],
                      mapping: dict[object, frozenset], node: cst.CSTNode, label: str | None,
                      env: Env, function: cst.FunctionDef, *,
                      receiver: Value | None = None, may: bool = False,
                      place: tuple[int, ...] = ()) -> Value:
        """What the call at ``node`` does, from the callee's summary: its writes to the
        arguments, to their elements, to its object's state and to memory the caller holds,
        the saves it left pending (moved onto the caller's storages), the saves it wrote
        before returning, and its result.  ``may``: one of several definitions that may run
        (see dispatch.py), so its events are `low`."""
        for event, low in summary.events:
            self.state.emit(event, low=low or may)
        if summary.backward:
            # The body ran a backward pass: through the graphs of the arguments it reached,
            # which are then no longer pending.
            for index in sorted(summary.consumed):
                if index < len(args) and isinstance(args[index][0], TensorValue):
                    self.autograd.consume(args[index][0], node, label, env)
        for index, write in summary.writes.items():
            if index < len(args) and isinstance(args[index][0], TensorValue):
                value, arg_node = args[index]
                inner, callee, declared = self.effects.innermost(write, function)
                with self.effects.grad_of(write, env), self.effects.may(write, summary):
                    # A module of the callee that writes in place (`nn.ReLU(inplace=True)`)
                    # is reported at its constructor, and named as the writer.
                    self.autograd.write(value, arg_node, node,
                                        label if label is not None or write.defined_at is None
                                        else write.label, env, activation=write.activation,
                                        defined_at=inner, visible=False, callee=callee,
                                        declared=declared, may=may, assumed=write.assumed)
        for token, write in summary.element_writes.items():
            with self.effects.grad_of(write, env), self.effects.may(write, summary):
                self.effects.write_elements(token, write, args, node, label, env, function)
        if summary.reached:
            self.effects.apply_reached(summary, args, mapping, node, env, function,
                                       ordered=self.effects.reaches(summary, args, receiver))
        for write in summary.attr_writes:
            target = write.target
            assert isinstance(target, TensorValue)
            # The tensor as the class's code names it, and the instance's parameter tokens
            # a parameter's saves are moved onto when a call returns.
            tokens = set(state_tokens(target.storage, mapping)) if is_state(target.storage) \
                else {target.storage} | set(mapping.get(target.storage, ()))
            for token in sorted(tokens, key=repr):
                written = target if token == target.storage else replace(
                    target, storage=token,
                    counter=token if target.counter == target.storage else target.counter)
                # A method writing its own object's state is what methods do: not an
                # argument written behind the caller's back.
                with self.effects.grad_of(write, env):
                    self.autograd.write(written, write.target_node, node, label, env,
                                        activation=write.activation,
                                        defined_at=innermost(write), visible=False,
                                        callee=function.name.value, declared=True,
                                        may=may or write.may, assumed=write.assumed)
        graph: frozenset[int] = frozenset().union(
            *(t.graph for v, _ in args for t in containers.tensors_in(v)))
        result = summary.result
        if result is BOTTOM:
            return BOTTOM
        kept_result = False
        if summary.returns_arg is not None and summary.returns_arg < len(args):
            result = args[summary.returns_arg][0]
        elif isinstance(result, TensorValue) and containers.element_token(
                result.storage) is not None:
            found = self.effects.caller_elements(result.storage, args)
            return found[0] if len(found) == 1 else UNKNOWN
        elif summary.view_of is not None and summary.view_of < len(args) and \
                isinstance(base := args[summary.view_of][0], TensorValue) and \
                base.storage is not None:
            # A view of the caller's tensor: a write through it writes that tensor.  One the
            # callee made with grad mode off (`@torch.no_grad()` on it) of a tensor that
            # requires grad stays a view autograd forbids writing with grad mode on.
            result = self.expressions.view(base, node, None)
            made = summary.result.forbidden if isinstance(summary.result, TensorValue) \
                else None
            if result.forbidden is None and made is not None:
                result = replace(result, forbidden=(made[0], node, made[2]))
        elif isinstance(result, TensorValue) and result.storage in summary.kept and \
                result.storage not in mapping:
            # The object's own tensor or a view of it (a property's `self.w[:, :1]`).
            kept_result = True
        elif isinstance(result, TensorValue):
            alloc = ("alloc", id(node), *place)
            # A leaf made in the callee is still a leaf in the caller, and its dtype is
            # the callee's (a summary's arguments carry none: see `CallProtocol.bind_parameters`).
            result = TensorValue(origin=node, storage=alloc, counter=alloc,
                                 requires_grad=result.requires_grad, leaf=result.leaf,
                                 dtype=result.dtype)
        elif isinstance(result, ArrayValue) and self.effects.made_by(result.storage, function) \
                and result.storage not in summary.kept:
            # An array the callee made (`np.zeros(..., dtype=np.uint8)` returned by a
            # loader): a new one at each call, of the dtype it was made with.
            alloc = ("alloc", id(node), *place)
            return ArrayValue(origin=node, storage=alloc, dtype=result.dtype)
        elif isinstance(result, ModuleValue):
            given = next((value for value, _ in args if isinstance(value, ModuleValue)
                          and value.module is result.module), None)
            if given is not None:
                # The module it was given (`unwrap_model(model)`), not a new one.
                return given
            return self.rebased(result, node) if type(node) is cst.Call else UNKNOWN
        elif isinstance(result, ParamsValue) and type(node) is cst.Call:
            return self.effects.kept_by_call(result, node, function)
        elif (layers := module_items(result)) is not None and \
                isinstance(result, ContainerValue) and result.items is not None and \
                type(node) is cst.Call:
            # A factory's list of layers (`def make_layers(cfg): ... return layers`): new
            # modules at each call.
            return replace(result, items=tuple(self.rebased(m, node, keep_origin=True)
                                               for m in layers), origin=node)
        elif isinstance(result, ContainerValue) and result.replicated is None:
            return self.effects.returned_container(summary, result, args, mapping, node, label,
                                                   env,
                                                   graph, function)
        elif isinstance(result, (RefValue, LambdaValue)) or isinstance(
                result, PartialValue) and not any(
                    isinstance(value, (TensorValue, ContainerValue))
                    for _, value in result.args):
            return result  # a function made or chosen by the callee (a factory of them)
        elif isinstance(result, FunctionValue):
            return result  # a closure (`def hook(...)` made by a factory): its definition
        elif result.kind is not Kind.OTHER:
            return UNKNOWN
        def result_saves(token: object) -> list[Save | None] | None:
            """The saves the callee left on the tensor it returns, on the caller's."""
            if isinstance(summary.result, TensorValue) and token == summary.result.storage \
                    and not kept_result:
                return [self.autograd.new_save(result, node, label, "its result", env)]
            if isinstance(summary.result, ContainerValue):
                return [self.autograd.new_save(mine, node, label, "its result", env)
                        for theirs, mine in zip(_items(summary.result), _items(result))
                        if isinstance(theirs, TensorValue) and theirs.storage == token
                        and not _of_argument(theirs)]
            return None

        renamed: dict[int, list[Save]] = {}
        self.effects.move_saves(summary, args, mapping, node, label, env, renamed, function,
                                may=may,
                                result_saves=result_saves)
        # Kept as they are: autograd holds the very tensor (its object's state, a tensor
        # the callee returns inside a tuple); the others are new saves of the caller's.
        carried = {old for old, copies in renamed.items() if any(c.id == old for c in copies)}
        new = {c.id for copies in renamed.values() for c in copies} - carried
        if isinstance(result, TensorValue):
            theirs_graph = summary.result.graph if isinstance(summary.result, TensorValue) \
                else frozenset()
            result = replace(result, graph=result.graph | graph | frozenset(new)
                             | (theirs_graph & frozenset(carried)))
        elif isinstance(result, ContainerValue):
            # Each tensor the callee made holds the graphs of what it was given.
            items = tuple(
                replace(item, graph=item.graph | graph | frozenset(new))
                if isinstance(item, TensorValue) and not (
                    isinstance(theirs, TensorValue) and _of_argument(theirs)) else item
                for item, theirs in zip(_items(result), _items(summary.result)))
            result = replace(result, items=items) if result.items is not None else \
                replace(result, each=items[0]) if items else result
        return result


def _keep_state(cls: ClassInfo, state: dict[str, tuple[object, TensorValue]], saves: tuple,
                kept: frozenset) -> tuple:
    """The tensors a method left on its object (`self.last_attn = attn`) become the object's
    state: what the method saved of one is a save of that state (state_token), which the
    caller's object holds after the call, and every method reads it there."""
    renamed: dict[object, object] = {}
    for key, (owner, value) in state.items():
        storage = value.storage
        if storage is None or storage in kept or is_state(storage) or \
                isinstance(storage, tuple) and storage[0] == "arg":
            continue  # not a tensor the method made (the caller's own, or known already)
        renamed[storage] = state_token(owner, key)
        cls.state[key] = TensorValue(origin=value.origin, requires_grad=value.requires_grad)
    return tuple((renamed.get(token, token), save) for token, save in saves)


def _grad_at(write: Write, caller: bool | None) -> bool | None:
    """The grad mode a callee's write runs under, seen from the caller: off where the
    callee turned it off (`nn.init.*_`, `with torch.no_grad()`), else the caller's."""
    if write.grad_enabled is False or caller is False:
        return False
    return None if write.grad_enabled is None or caller is None else True


def innermost(write: Write) -> cst.CSTNode:
    """Where a write happens: in the deepest callee, for a write a summary re-applied."""
    return write.defined_at if write.callee is not None and write.defined_at is not None \
        else write.node


def _slope_arguments(spec: ops.ModuleOp, origin: cst.CSTNode | None) -> dict[str,
                                                                             cst.BaseExpression]:
    """The slope arguments of an in-place activation module's constructor, by the names
    of the in-place op it runs: `nn.LeakyReLU(-0.2, inplace=True)`, `nn.ELU(alpha=-1.0)`.
    Modules that choose their mode when called (`nn.RReLU` samples slopes in training
    mode) give none."""
    inplace = spec.inplace()
    if inplace is None or len(inplace.negative_slope) != 1 or type(origin) is not cst.Call:
        return {}
    name = inplace.negative_slope[0]
    for position, arg in enumerate(origin.args):
        if arg.keyword is not None and arg.keyword.value == name or \
                arg.keyword is None and position == 0 and not arg.star:
            return {name: arg.value}
    return {}
