"""Calls: resolving the callee and applying what the op tables say it does."""

from __future__ import annotations


import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.factories import dtype_named, literal_ints
from aliaslint.analysis.outcomes import sole_handle
from aliaslint.analysis.builders import walked_together
from aliaslint.analysis.container_calls import (
    CONTAINER_METHODS,
    MAPPING_COPIES,
    builtin_container)
from aliaslint.analysis.events import NonContiguousView, Write
from aliaslint.analysis.geometry import (
    COVER_OPS,
    dtype_view,
    op_cover,
    slice_region)
from aliaslint.analysis.opfacts import (
    PARAMETER_TYPES,
    TENSOR_TYPES,
    bind_arguments,
    is_activation,
    is_nn_class,
    returns_value,
    short_name,
    tensor_inputs,
    storage_kind,
)
from aliaslint.analysis.dispatch import MethodValue, SuperValue
from aliaslint.analysis.scopes import ClassInfo, Env
from aliaslint.analysis.shapes import (
    dense,
    nested_shape,
    scalar_kind)
from aliaslint.analysis.training import (
    CHECKPOINTS,
    SAVED_TENSORS_HOOKS,
    GRAD_TRANSFORMS,
    INSTANCES,
    MODULE_COPIES,
    MODULE_WRAPPERS,
)
from aliaslint.analysis.syntax import (
    FALSE,
    TRUE,
    attr_key,
    is_literal,
    literal_int,
    name_key,
)
from aliaslint.analysis.values import (
    root_of,
    INT,
    OTHER,
    SHAPE,
    UNKNOWN,
    Args,
    ArrayValue,
    ClassValue,
    ConstValue,
    ContainerValue,
    module_items,
    FunctionValue,
    Keywords,
    Kind,
    ModuleInfo,
    HandleValue,
    HooksValue,
    InstanceValue,
    ModuleValue,
    ObjectValue,
    ParamsValue,
    LambdaValue,
    PartialValue,
    RefValue,
    TensorValue,
    Value,
    is_true,
    kept_as_copy,
    local_class,
    ordered_positional,
    replace,
)


class Calls(Part):
    """Evaluates calls."""

    autograd: api.Autograd
    builders: api.Builders
    container_calls: api.ContainerCalls
    dispatch: api.Dispatch
    expressions: api.Expressions
    factories: api.Factories
    functions: api.Functions
    imports: api.Imports
    modules: api.Modules
    outcomes: api.Outcomes
    protocol: api.CallProtocol
    statements: api.Statements
    training: api.Training

    def call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        receiver: Value | None = None
        receiver_node = None
        qualname = None
        callee: Value | None = None
        dispatched = False  # `obj.f(...)` runs a method of the file's classes
        if type(func) is cst.Attribute:
            attr = func.attr.value
            method = ops.method(attr) if attr.endswith("_") else None
            owner = self.statements.eval_target(func.value, env) if method is not None and \
                method.kind == "inplace" else self.expressions.receiver(func, env)
            key = name_key(func.value)
            if type(owner) is Value and owner.kind is Kind.UNKNOWN and key is not None and \
                    attr in ops.parameter_methods():
                # `opt = SGD(model.parameters())` with `model` built elsewhere: from here
                # on `model` is taken for a module (see ModuleInfo.assumed).
                owner = ModuleValue(origin=func.value, module=ModuleInfo(
                    params=frozenset({("params", id(node))}), assumed=True, label=f"`{key}`"))
                env.names[key] = owner
            if isinstance(owner, RefValue) and isinstance(found := self.imports.linked(owner),
                                                          ClassValue):
                owner = found  # `Stage.from_config(cfg)`, `Stage` imported from another file
            if isinstance(owner, RefValue):
                qualname = f"{owner.qualname}.{attr}"
                self.state.emit_reference(func, qualname)
                linked = self.imports.linked(RefValue(qualname=qualname, origin=func,
                                                      importer=owner.importer))
                if not isinstance(linked, RefValue):
                    callee, qualname = linked, None
            elif isinstance(owner, InstanceValue):
                receiver, receiver_node = owner, func.value
            elif isinstance(owner, HandleValue) and attr == "remove":
                self.protocol.remove_hook(owner)
                return OTHER
            elif owner.is_tensor_like:
                receiver, receiver_node = owner, func.value
                prefix = "torch.Tensor" if owner.kind is Kind.TENSOR else "torch.UntypedStorage"
                qualname = f"{prefix}.{attr}"
            elif owner.kind is Kind.NDARRAY:
                receiver, receiver_node = owner, func.value
                qualname = f"numpy.ndarray.{attr}"
            elif isinstance(owner, ParamsValue) and owner.kind is Kind.OTHER and \
                    attr == "copy" and owner.snapshot is not None:
                # `state.copy()` of a state dict: a new dict of the same tensors.
                self.expressions.eval_args(node, env)
                return kept_as_copy(owner, node, origin=node)
            elif isinstance(owner, ParamsValue) and owner.kind is Kind.OTHER and \
                    attr in ("items", "values") and not node.args:
                # `state.items()`: the same tensors, to be iterated.
                return ParamsValue(Kind.OTHER, origin=node, params=owner.params)
            elif isinstance(owner, ContainerValue) and attr in ("append", "extend") and \
                    module_items(owner) is not None:
                # `layers.append(nn.ReLU())`: a list of modules grows.
                receiver, receiver_node = owner, func.value
            elif isinstance(owner, ContainerValue) and attr in CONTAINER_METHODS:
                args = [(arg, self.expressions.eval(arg.value, env)) for arg in node.args]
                result = self.container_calls.container_method(owner, func.value, attr, node, args,
                                                               env)
                self.state.emit_call(node, None, None, None, result)
                return result
            elif isinstance(owner, ClassValue) and owner.info is not None and \
                    owner.info.autograd_function and attr == "apply":
                args = [(arg, self.expressions.eval(arg.value, env)) for arg in node.args]
                result = self._apply_function(owner.info, node, args, env)
                self.state.emit_call(node, None, None, None, result)
                return result
            elif isinstance(owner, (ClassValue, SuperValue)):
                # `Base.forward(self, x)`, `Cls.make(…)`, `super().forward(x)`.
                args = [(arg, self.expressions.eval(arg.value, env)) for arg in node.args]
                bound = self.dispatch.method_call(owner, attr, node, args, env)
                if bound is None:
                    self.autograd.unknown_call(args, env)
                    bound = UNKNOWN
                self.state.emit_call(node, None, None, None, bound)
                return bound
            elif isinstance(owner, (ModuleValue, ParamsValue, ObjectValue)):
                receiver, receiver_node = owner, func.value
                self.expressions.stale_attribute(func, env)  # `ema.module(x)` after a step
                key = attr_key(func)
                callee = env.names.get(key) if key else None
                cls = local_class(owner)
                if callee is None and cls is not None:
                    callee = cls.attr(f"self.{attr}")
                    method_def = cls.method(attr)
                    if callee is None and method_def is not None:
                        callee = FunctionValue(qualname=attr, origin=method_def,
                                               definition=method_def)
                        dispatched = True
                if isinstance(callee, (RefValue, PartialValue, LambdaValue)):
                    # A function kept in an attribute (`self.act_fn = act_fn`): called
                    # as it is, not bound to the object.
                    receiver, receiver_node = None, None
                    qualname = callee.qualname if isinstance(callee, RefValue) else None
        else:
            callee = self.imports.linked(self.expressions.eval(func, env))
            if isinstance(callee, RefValue):
                qualname = callee.qualname
                if qualname == "builtins.super":
                    return self.dispatch.super_call(node, env)
        args = [(arg, self.expressions.eval(arg.value, env)) for arg in node.args]
        for arg, value in args[:-1]:
            self.expressions.read_at_the_op(arg.value, value, env)
        if dispatched and receiver is not None:
            bound = self.dispatch.dispatch(receiver, node.func.attr.value if type(node.func) is cst.Attribute else "", node, args, env)
            if bound is not None:
                self.state.emit_call(node, qualname, receiver, receiver_node, bound)
                return bound
        while isinstance(callee, PartialValue) and len(args) < 64:
            # `partial(F.leaky_relu, negative_slope=0.1, inplace=True)(h)`: the function
            # with the bound arguments first.
            args = [*callee.args, *args]
            callee = callee.func
            qualname = callee.qualname if isinstance(callee, RefValue) else None
        if isinstance(callee, LambdaValue):
            result = self.container_calls.call_lambda(callee, node, args, env)
        else:
            result = self._call_result(node, qualname, callee, receiver, receiver_node, args,
                                       env)
        self.state.emit_call(node, qualname, receiver, receiver_node, result)
        return result

    def _call_result(self, node: cst.Call, qualname: str | None, callee: Value | None,
                     receiver: Value | None, receiver_node: cst.BaseExpression | None,
                     args: Args, env: Env) -> Value:
        positional = [value for arg, value in args if arg.keyword is None and not arg.star]
        keywords: Keywords = {arg.keyword.value: (value, arg.value) for arg, value in args
                              if arg.keyword is not None}
        # A method's name (the receiver is set only for `x.method(...)`).
        attr = node.func.attr.value if type(node.func) is cst.Attribute else ""
        built = self.builders.named_submodule(node, qualname, attr, receiver, receiver_node, args,
                                              env)
        if built is None and isinstance(receiver, ContainerValue):
            built = self.builders.grow_module_list(receiver, receiver_node, attr, positional, env)
            if built is None and attr in CONTAINER_METHODS and receiver_node is not None:
                # Not a list of modules after all (`feats = []` then a tensor appended).
                return self.container_calls.container_method(receiver, receiver_node, attr, node,
                                                             args, env)
        if built is None and isinstance(receiver, ModuleValue) and qualname is None:
            built = self.builders.grow_container(receiver, receiver_node, attr, positional, env)
        if built is not None:
            return built
        if isinstance(callee, ModuleValue):
            return self.modules.call_module(callee, node, positional, args, env)
        if isinstance(callee, ClassValue) and callee.module is not None:
            return self.modules.construct_local_module(callee, node, args, env)
        if isinstance(callee, MethodValue):  # `self.forward = self.forward_slicing`
            return self.dispatch.bound_call(callee.definition, receiver if receiver is not None
                                            else callee.receiver, node, args, env)
        if isinstance(callee, FunctionValue):
            return self.modules.call_function(callee, receiver, node, args, env)
        if isinstance(callee, ClassValue) and callee.info is not None:
            return self.modules.construct_object(callee.info, node, args, env)
        if isinstance(callee, ObjectValue):
            method_def = callee.cls.method("__call__")
            if method_def is not None:
                return self.modules.call_function(FunctionValue(qualname="__call__",
                                                                origin=method_def,
                                                                definition=method_def),
                                                  callee, node, args, env)
        if isinstance(receiver, InstanceValue):
            if receiver.qualname == GENERATOR:
                # Any other method (`rng.shuffle(x)`) is a call not known, as before the
                # generator was.
                self.autograd.unknown_call(args, env)
                return _sample(attr, node, args, keywords)
            return self._instance_method(receiver, attr, node, positional, env)
        if isinstance(receiver, ModuleValue) and qualname is None:
            return self.modules.module_method(receiver, attr, node, args, env)
        if isinstance(receiver, ParamsValue) and receiver.kind is Kind.OPTIMIZER:
            op = ops.lookup(f"torch.optim.Optimizer.{attr}")
            if op is not None and op.kind == "optimizer_step" and "params" in op.writes:
                self.training.optimizer_step(receiver, node, env)
            elif op is not None and op.kind == "optimizer_step" and "grads" in op.writes:
                self.training.zero_grad(receiver.params, node, env)
            return UNKNOWN
        if qualname is None:
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        method = qualname.rpartition(".")[2]
        if isinstance(receiver, ArrayValue):
            if method == "astype" and not is_literal(keywords.get("copy", (None, None))[1],
                                                     FALSE):
                # A new array (NumPy's default `copy=True`) of the named dtype.
                token = ("alloc", id(node))
                named = positional[0] if positional else keywords.get("dtype", (UNKNOWN,))[0]
                return ArrayValue(origin=node, storage=token, dtype=dtype_named(named))
            writes_out = "out" in keywords and keywords["out"][0] is receiver
            if method in ops.ndarray_writers() or writes_out:
                self.autograd.write(receiver, receiver_node, node, None, env)
            return UNKNOWN
        if receiver is not None and not isinstance(receiver, TensorValue):
            # Methods of storages: nothing here returns a tensor.
            return Value(Kind.OTHER, derived=(method, receiver), origin=node)
        if receiver is not None:
            storage = storage_kind(method)
            if storage is not None:
                return Value(storage, derived=(method, receiver), origin=node)
            if returns_value(method):
                if method in _INT_METHODS and (positional or method not in ("size", "stride")):
                    return INT
                if method in ("size", "shape"):
                    return SHAPE
                return Value(Kind.OTHER, derived=(method, receiver), origin=node)
            if method == "requires_grad_":
                return self._requires_grad_(receiver, receiver_node, node, env)
        if qualname == "builtins.id" and len(positional) == 1:
            return Value(Kind.OTHER, derived=("id", positional[0]), origin=node)
        if qualname == "builtins.len":
            return INT
        if qualname.startswith("torch.distributions.") and \
                qualname.rpartition(".")[2][:1].isupper() and any(
                    isinstance(value, TensorValue) for _, value in args):
            # `Normal(mu, std)`: a distribution's log_prob, rsample and entropy are
            # differentiable in its parameters, so it holds them as a container holds its
            # elements (returned, a backward through it is to come).
            return ContainerValue(origin=node, items=tuple(
                value for _, value in args if isinstance(value, TensorValue)))
        if qualname == "functools.partial" and positional and args[0][0].keyword is None \
                and not args[0][0].star:
            return PartialValue(origin=node, func=positional[0], site=id(node),
                                args=tuple(args[1:]))
        if qualname == "builtins.getattr" and len(positional) in (2, 3) and \
                isinstance(positional[0], RefValue) and len(positional) == len(args):
            # `getattr(torch, "relu_")`: the attribute a literal name names.
            name = containers.literal_key(node.args[1].value)
            if isinstance(name, str) and name.isidentifier():
                return RefValue(origin=node, qualname=f"{positional[0].qualname}.{name}")
        if qualname == "builtins.sum" and len(positional) == 1 and \
                isinstance(positional[0], ContainerValue):
            return containers.summed(positional[0], node)
        if qualname == "builtins.range":
            return ContainerValue(origin=node, each=INT)
        walked = walked_together(qualname, positional, args, node)
        if walked is not None:
            return walked  # `enumerate(self.layers)`, `zip(self.blocks, self.norms)`
        shown = positional[0] if qualname == "builtins.str" and len(args) == 1 and \
            positional else None
        if isinstance(shown, ConstValue):
            # `str(i)` of an int a loop over a literal range binds: a name `add_module` takes.
            return ConstValue(origin=node, literal=str(shown.literal))
        if qualname == "builtins.enumerate" and positional:
            element = self.statements.element_of(positional[0], node, env)
            return ContainerValue(origin=node, each=ContainerValue(origin=node,
                                                                   items=(INT, element)))
        if qualname == "builtins.zip" and positional and len(positional) == len(args) and \
                not any(arg.star for arg, _ in args):
            # `zip(ema.parameters(), model.parameters())`: tuples of their elements.  A file
            # that freezes parameters somewhere may have frozen one side (an EMA copy).
            items = []
            for value in positional:
                element = self.statements.element_of(value, node, env)
                if isinstance(value, ParamsValue) and isinstance(element, TensorValue) \
                        and self.state.freezes:
                    element = replace(element, requires_grad=None)
                items.append(element)
            return ContainerValue(origin=node, each=ContainerValue(origin=node,
                                                                   items=tuple(items)))
        if qualname in MAPPING_COPIES and len(args) == 1 and args[0][0].star == "**" and \
                isinstance(args[0][1], ContainerValue) and args[0][1].mapping:
            # `dict(**d)`: a new dict of the same values, as `dict(d)`.
            return containers.copied(args[0][1], node, mapping=True)
        container = builtin_container(qualname, positional, node)
        if container is not None:
            return container
        if qualname == "torch.tensor":  # always copies its data
            token = ("alloc", id(node))
            requires = is_literal(keywords.get("requires_grad", (None, None))[1], TRUE)
            literal = node.args[0].value if node.args and node.args[0].keyword is None else None
            shape = nested_shape(literal) if literal is not None else None
            dtype = self.factories.dtype_argument(keywords) if "dtype" in keywords else \
                self.factories.scalar_dtype(scalar_kind(literal)) if literal is not None else None
            return TensorValue(origin=node, storage=token, counter=token,
                               requires_grad=requires, leaf=requires, contiguous=True,
                               layout=dense(shape) if shape is not None else None, dtype=dtype)
        numpy_default = (ops.dtype_fact("numpy factories") or {}).get(qualname)
        if numpy_default is not None and not any(arg.star for arg, _ in args):
            token = ("alloc", id(node))
            return ArrayValue(origin=node, storage=token, dtype=self.factories.dtype_argument(
                keywords) if "dtype" in keywords else numpy_default)
        out_array, out_node = keywords.get("out", (None, None))
        if qualname.startswith("numpy.") and isinstance(out_array, ArrayValue):
            self.autograd.write(out_array, out_node, node, None, env, fill=True)
            return out_array
        if qualname in VARIABLE and positional and isinstance(positional[0], TensorValue):
            # `Variable(t, requires_grad=True)`: a new leaf over t's data.
            wrapped = positional[0]
            flag = keywords.get("requires_grad", (None, None))[1]
            wanted = True if is_literal(flag, TRUE) else False if flag is None or is_literal(
                flag, FALSE) else None
            return TensorValue(origin=node, storage=wrapped.storage, counter=("alloc", id(node)),
                               requires_grad=wanted, leaf=True)
        if qualname in TENSOR_TYPES:
            data = positional[0] if positional else UNKNOWN
            if qualname in PARAMETER_TYPES:
                no_grad = "requires_grad" in keywords and is_literal(
                    keywords["requires_grad"][1], FALSE)
                token = ("alloc", id(node))
                return TensorValue(origin=node, storage=token, counter=token,
                                   requires_grad=not no_grad, leaf=True)
            if isinstance(data, TensorValue):
                return TensorValue(origin=node, storage=data.storage, counter=data.counter)
            return self.factories.legacy_new(node, None)
        legacy = ops.dtype_fact(f"constructor {qualname}")
        if legacy is not None:
            # `torch.LongTensor([1, 2])`, `torch.FloatTensor(3, 4)`: a new tensor of that
            # dtype (given a tensor of that type, the tensor itself).
            given = positional[0] if positional else UNKNOWN
            if isinstance(given, TensorValue):
                return given
            return self.factories.legacy_new(node, legacy)
        if qualname in INSTANCES:
            return InstanceValue(qualname=INSTANCES[qualname], origin=node)
        if qualname in (ops.dtype_fact("numpy generator makers") or ()):
            return InstanceValue(qualname=GENERATOR, origin=node)  # `np.random.default_rng(0)`
        if qualname in SAVED_TENSORS_HOOKS and isinstance(first_arg := positional[0] if
                                                          positional else None, FunctionValue):
            return self._pack_hook(first_arg, node)
        if isinstance(positional[0] if positional else None, FunctionValue) and (
                qualname in GRAD_TRANSFORMS or qualname in CHECKPOINTS):
            self._pass_function(qualname, positional, node, args, keywords, env)
            return UNKNOWN
        first = positional[0] if positional else None
        if isinstance(first, ModuleValue):
            if qualname in MODULE_WRAPPERS:
                return first
            if qualname in MODULE_COPIES:
                return self.modules.rebased(first, node)
        module_spec = ops.module(qualname)
        if module_spec is not None:
            return self.modules.construct_module(module_spec, qualname, node, positional, keywords,
                                                 ordered_positional(args))
        if qualname.endswith(".from_pretrained"):
            spec = ops.module(qualname.removesuffix(".from_pretrained"))
            if spec is not None:
                # `nn.Embedding.from_pretrained(w)`: frozen unless `freeze=False`.
                module = self.modules.construct_module(spec,
                                                       qualname.removesuffix(".from_pretrained"),
                                                       node, [], {})
                if isinstance(module, ModuleValue):
                    module.module.frozen = not is_literal(keywords.get("freeze", (None, None))[1],
                                                          FALSE)
                return module
        if is_nn_class(qualname) and ops.lookup(qualname) is None:
            label = f"`{qualname.removeprefix('torch.')}()`"
            return ModuleValue(origin=node, module=ModuleInfo(label=label))
        if qualname.startswith("torch.optim.") and positional and \
                isinstance(positional[0], ParamsValue) and positional[0].kind is Kind.PARAMS:
            return ParamsValue(Kind.OPTIMIZER, origin=node, params=positional[0].params)
        op = ops.lookup(qualname)
        if op is None:
            self.escape(args)
            return UNKNOWN
        return self._apply(op, qualname, receiver, receiver_node, args, keywords, node, env)

    def _instance_method(self, instance: InstanceValue, attr: str, node: cst.Call,
                         positional: list[Value], env: Env) -> Value:
        """A method of a training API object (see training.py)."""
        first = positional[0] if positional else UNKNOWN
        if instance.qualname == "GradScaler":
            if attr == "scale" and isinstance(first, TensorValue):
                return replace(first, origin=node)  # loss * scale: the same graph
            if attr == "step" and isinstance(first, ParamsValue) and \
                    first.kind is Kind.OPTIMIZER:
                self.training.optimizer_step(first, node, env)
            return UNKNOWN
        if instance.qualname == "Accelerator":
            if attr == "prepare" and positional and len(positional) == len(node.args):
                return positional[0] if len(positional) == 1 else ContainerValue(
                    origin=node, items=tuple(positional))
            if attr == "backward" and isinstance(first, TensorValue):
                self.autograd.consume(first, node, None, env)
        return UNKNOWN

    def _apply(self, op: ops.Op, qualname: str, receiver: Value | None,
               receiver_node: cst.BaseExpression | None, args: Args, keywords: Keywords,
               node: cst.Call, env: Env) -> Value:
        kind = op.kind
        if kind == "grad_mode":
            return self.autograd.grad_mode(op, args)
        if kind == "backward":
            self.training.backward(op, receiver, args, node, env)
            return UNKNOWN if op.returns != "none" else OTHER
        bound, nodes = bind_arguments(op, receiver, receiver_node, args)
        # `inplace=True` at the call, or a parameter the call site gave a literal True
        # (`partial(F.leaky_relu, inplace=inplace)` in a factory called with True).
        inplace_flag = op.inplace_kwarg and (
            is_literal(nodes.get(op.inplace_kwarg), TRUE) or
            is_true(bound.get(op.inplace_kwarg)))
        if inplace_flag:
            twin = op.twin_op() or ops.lookup(f"torch.{op.twin}") if op.twin else None
            first = op.params[0] if op.params else None
            target = bound.get(first) if first is not None else None
            if first is not None and isinstance(target, TensorValue):
                refused = self.autograd.slope_save(twin, nodes, target, node, None, env)
                result = self.autograd.write(target, nodes.get(first), node, None, env,
                                             activation=True)
                result = self.autograd.record_saves(twin or op, bound, result, node, env, nodes)
                result = replace(result, graph=result.graph | refused)
                self.autograd.absorb(target, result, env)
                return result
        if kind == "inplace":
            if op.metadata_only:
                # t_, unsqueeze_, detach_: no data is written, but most of them
                # bump the version counter, which a pending backward checks.
                target = bound.get("self") if receiver is not None else bound.get(
                    op.params[0] if op.params else "")
                if not isinstance(target, TensorValue):
                    return UNKNOWN
                if op.bumps_version:
                    self.autograd.dirty(target.storage, Write(
                        node=node, stmt=self.state.stmt, target=target,
                        target_node=nodes.get("self"), via=target.via,
                        grad_enabled=env.flow.grad), env)
                return target
            name = op.writes[0] if op.writes else None
            target = bound.get(name) if name else None
            if name is None or not isinstance(target, TensorValue):
                return UNKNOWN
            inputs = tuple((v, nodes.get(key)) for key, v in bound.items()
                           if key != name and isinstance(v, (TensorValue, ArrayValue)))
            refused = self.autograd.slope_save(op, nodes, target, node, None, env)
            grad, no_grad = env.flow.grad, bool(op.extra.get("no_grad"))
            if no_grad:
                env.flow.grad = False  # `nn.init.*_` write under no_grad
            activation = is_activation(op)
            try:
                # An activation called through a value (`self.act = torch.relu_`, a
                # parameter given `F.relu_`) writes as an in-place module does: nothing at
                # the call says so, so the name it writes is not read as intended later.
                result = self.autograd.write(target, nodes.get(name), node, None, env,
                                             activation=activation, fill=op.fills, inputs=inputs,
                                             visible=not activation or _spells(node.func, op))
            finally:
                env.flow.grad = grad
            if no_grad:
                return result
            if op.returns == "none":
                return OTHER
            result = self.autograd.record_saves(op, {**bound, name: result}, result, node, env,
                                                nodes)
            result = replace(result, graph=result.graph | refused)
            self.autograd.absorb(target, result, env)
            return result
        out = nodes.get("out")
        if out is not None and op.has_out:
            target = bound.get("out")
            if isinstance(target, TensorValue):
                inputs = tuple((v, nodes.get(key)) for key, v in bound.items()
                               if key != "out" and isinstance(v, TensorValue))
                result = self.autograd.write(target, out, node, None, env, fill=True,
                                             inputs=inputs,
                                             region=slice_region(out) if type(out) is cst.Subscript and slice_region(out) else None)
                result = self.autograd.record_saves(op, bound, result, node, env, nodes)
                self.autograd.absorb(target, result, env)
                return result
            return UNKNOWN
        if kind == "numpy_share":
            return self._numpy_share(op, bound, nodes, node, env)
        if op.returns != "tensor":
            if op.returns == "tensors" and kind == "view":
                base = bound.get(op.aliases or "self")
                if isinstance(base, TensorValue):
                    return ContainerValue(origin=node, each=self.expressions.view(base, node, op,
                                                                                  env=env))
            if op.returns == "tensors" or kind in ("numpy_share", "reference"):
                return UNKNOWN
            return OTHER if op.returns in ("none", "other") and kind == "functional" else UNKNOWN
        if kind == "view":
            base = bound.get(op.aliases or "self")
            if not isinstance(base, TensorValue):
                return TensorValue(origin=node)
            base_node = nodes.get(op.aliases or "self")
            rest = [(arg, value) for arg, value in args if arg.value is not base_node]
            if short_name(op.name) == "view" and not dtype_view(args) and \
                    self.factories.view_fails(base, rest):
                self.state.emit(NonContiguousView(node, self.state.stmt, base, nodes.get("self")))
                if base.layout_origin is not None:  # reported: it raises for certain
                    self.state.raises(node, env)
            made = self.expressions.view(base, node, op, literal_ints(rest), env)
            root, name = root_of(base), op.name.rsplit(".", 1)[-1]
            if root is not None and name in COVER_OPS:
                literals = {param: literal_int(nodes[param]) for param in op.params
                            if param in nodes and param != (op.aliases or "self")}
                rank = len(base.layout.shape) if base.layout is not None else None
                if None not in literals.values():
                    constraints = op_cover(name, literals, rank)
                    made = replace(made, cover=(root, constraints, True)) if constraints else made
            return sole_handle(made, base, base_node)
        if kind == "functional":
            first = op.params[0] if op.params else None
            if first in ("input", "self") and first in bound and type(bound[first]) is Value \
                    and bound[first].kind is Kind.UNKNOWN:
                # torch.exp(u): the schema's `input` is a Tensor, so `u` is one.
                bound[first] = TensorValue(origin=nodes.get(first))
            token = ("alloc", id(node))
            tensors, unknown = tensor_inputs(bound)
            if unknown and not tensors:
                tensors = [TensorValue(origin=node)]  # `torch.stack(outs)`: not a factory
            requires = None
            if op.no_grad_result:
                # `zeros_like(w)`, `x > 0`, `argmax`: made from no differentiable input, so
                # a new leaf (requiring grad only when asked to).
                tensors = []
            if not tensors:
                flag = nodes.get("requires_grad")
                requires = is_literal(flag, TRUE) if flag is not None else False
                if flag is not None and not is_literal(flag, TRUE) and not is_literal(
                        flag, FALSE):
                    requires = None
            result = TensorValue(origin=node, storage=token, counter=token,
                                 requires_grad=requires, leaf=bool(requires) and not tensors,
                                 contiguous=True if not tensors else None,
                                 copied_at=node if tensors else None)
            if not tensors:
                shape, dtype = self.factories.factory_facts(op, args, keywords)
                return replace(result, layout=dense(shape) if shape is not None else None,
                               dtype=dtype, blank=bool(op.extra.get("constant")))
            return self.autograd.record_saves(op, bound, result, node, env, nodes)
        requires = self.autograd.requires_grad(list(bound.values()), env)
        # Whatever the result shares, a backward pass through it goes on into the inputs'
        # graphs (`loss.float().backward()`, `x[idx].sum().backward()`).
        tensors, _ = tensor_inputs(bound)
        graph: frozenset[int] = frozenset().union(*(v.graph for v in tensors))
        pending = tensors[0].pending if len(tensors) == 1 else frozenset()
        if kind == "sometimes_alias":
            return self.outcomes.sometimes_alias(op, bound.get(op.aliases or "self"), args,
                                                 keywords,
                                                 node, env, ("alloc", id(node)), requires, graph,
                                                 pending)
        # Indexing and the rest: a tensor, its storage not proven.
        return TensorValue(origin=node, requires_grad=requires, graph=graph, pending=pending)

    def _requires_grad_(self, receiver: TensorValue, receiver_node: cst.BaseExpression | None,
                        node: cst.Call, env: Env) -> Value:
        """`t.requires_grad_(flag)`: sets the flag on ``t`` itself and returns ``t``.
        A tensor that did not require grad is a leaf, so turning the flag on makes a
        leaf that requires grad; turning it off is allowed on leaves only."""
        flag = _flag_argument(node, "requires_grad")
        if flag is False:
            result = replace(receiver, requires_grad=False, leaf=True, origin=node)
        elif flag is True:
            leaf = receiver.leaf or receiver.requires_grad is False
            result = replace(receiver, requires_grad=True, leaf=leaf,
                             origin=node if leaf and not receiver.leaf else receiver.origin)
        else:
            result = replace(receiver, requires_grad=None, leaf=False)
        self.autograd.rebind_tensor(receiver_node, result, env)
        return result

    def _pass_function(self, qualname: str, positional: list[Value], node: cst.Call,
                       args: Args, keywords: Keywords, env: Env) -> None:
        """A function of this file handed to autograd: a grad transform calls it on inputs
        that require grad; `checkpoint` calls it on the arguments given after it."""
        function = positional[0]
        assert isinstance(function, FunctionValue)
        definition = function.definition
        if qualname in CHECKPOINTS:
            reentrant = keywords.get("use_reentrant", (None, None))[1]
            if is_literal(reentrant, FALSE):
                self.state.checkpointed[id(definition)] = node
            rest = [(arg, value) for arg, value in args[1:] if arg.keyword is None]
            self.functions.record_call(definition, None, node, rest, env)
            return
        params = [p for p in definition.params.params if p.default is None]
        if GRAD_TRANSFORMS[qualname] == "first":
            params = params[:1]
        differentiable: Args = [(cst.Arg(value=p.name), TensorValue(origin=p, requires_grad=True))
                                for p in params]
        self.functions.record_call(definition, None, node, differentiable, env)

    def _apply_function(self, cls: ClassInfo, node: cst.Call, args: Args, env: Env) -> Value:
        """`Fn.apply(*args)` of a custom autograd.Function: its `forward(ctx, *args)` runs;
        a result that is an input, or a view of one, is a view that autograd forbids
        writing in place when that input requires grad."""
        forward = cls.method("forward")
        values = [value for arg, value in args if arg.keyword is None and not arg.star]
        if forward is None or len(values) != len(args):
            self.autograd.unknown_call(args, env)
            return UNKNOWN
        summary = self.protocol.summary(forward, None, (OTHER, *values))
        if summary is None or not isinstance(summary.result, TensorValue):
            return UNKNOWN
        result = summary.result
        token = result.storage
        index = token[1] - 1 if isinstance(token, tuple) and token[0] == "arg" else None
        if index is None or not 0 <= index < len(values) or \
                not isinstance(values[index], TensorValue):
            requires = self.autograd.requires_grad(values, env)
            token = ("alloc", id(node))
            return TensorValue(origin=node, storage=token, counter=token, requires_grad=requires)
        source = values[index]
        assert isinstance(source, TensorValue)
        view = self.expressions.view(source, node, None, env=env)
        if source.requires_grad is True and env.flow.grad is True:
            view = replace(view, forbidden=("custom", node, cls.name))
        return view

    def _pack_hook(self, pack: FunctionValue, node: cst.Call) -> Value:
        """`saved_tensors_hooks(pack, unpack)`: remembers a write `pack` makes to its
        argument, for the `with` block that installs it."""
        summary = self.protocol.summary(pack.definition, None, (TensorValue(requires_grad=True),))
        write = summary.writes.get(0) if summary is not None else None
        if write is None:
            return OTHER
        return HooksValue(origin=node, pack_write=write.node, pack_stmt=write.stmt)

    def escape(self, args: Args) -> None:
        """Modules handed to a function this file does not define may be frozen,
        re-parametrized (`weight_norm`) or replaced: their parameters are unknown now."""
        for _, value in args:
            if isinstance(value, ModuleValue):
                value.module.escaped = True

    def _numpy_share(self, op: ops.Op, bound: dict[str, Value],
                     nodes: dict[str, cst.BaseExpression], node: cst.Call, env: Env) -> Value:
        """from_numpy / as_tensor / .numpy() / np.asarray: one buffer, two objects."""
        source_name = op.aliases or "self"
        source = bound.get(source_name, UNKNOWN)
        source_node = nodes.get(source_name)
        converts = any(key in nodes for key in ("dtype", "device"))
        if set(nodes) & {"dtype", "device"} == {"dtype"} and isinstance(source, (
                TensorValue, ArrayValue)) and source.dtype is not None and \
                dtype_named(bound["dtype"]) == source.dtype:
            converts = False  # `as_tensor(a, dtype=<a's own dtype>)` still shares
        copy_kwarg = op.extra.get("copy_kwarg")
        if copy_kwarg and not is_literal(nodes.get(copy_kwarg), FALSE):
            converts = True  # numpy.array copies unless told not to
        to_numpy = op.returns != "tensor"
        if to_numpy and isinstance(source_node, (cst.List, cst.Tuple)):
            # `np.array([0.2, -1.7])`: a new array made from Python data.
            token = ("alloc", id(node))
            return ArrayValue(origin=node, storage=token,
                              dtype=dtype_named(bound["dtype"]) if "dtype" in bound else None)
        if converts:
            return UNKNOWN
        if to_numpy:
            if isinstance(source, TensorValue) and source.maybe_of is not None and \
                    type(source.origin) is cst.Call and \
                    _method_name(source.origin) == "cpu":
                # `t.cpu().numpy()`: `.cpu()` returns t itself when t is on the CPU already,
                # which the code does not prove.
                return ArrayValue(origin=node, storage=source.maybe_of, view_origin=node,
                                  dtype=source.dtype, device_assumed=True)
            if not isinstance(source, TensorValue) or source.storage is None:
                return UNKNOWN
            return ArrayValue(origin=node, storage=source.storage, view_origin=node,
                              dtype=source.dtype)
        if isinstance(source, TensorValue):
            return source  # as_tensor(t) with nothing to convert is t itself
        if source.kind is Kind.UNKNOWN and type(source_node) is cst.Name \
                and short_name(op.name) == "torch.from_numpy":
            # from_numpy accepts only an ndarray: the name holds one from here on.
            source = ArrayValue(origin=source_node, storage=("alloc", id(source_node)))
            self.statements.assign_name(source_node.value, source, env)
        if not isinstance(source, ArrayValue) or source.storage is None:
            return TensorValue(origin=node, requires_grad=False)
        return TensorValue(origin=node, storage=source.storage, counter=("alloc", id(node)),
                           requires_grad=False, view_origin=node, dtype=source.dtype)


# What an InstanceValue of a NumPy random Generator is called (see _sample).
GENERATOR = "numpy.random.Generator"

# The deprecated `Variable(t, requires_grad=…)` constructor (a Tensor since 0.4).
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

# Tensor methods that return an int (`size` only when given a dim).
_INT_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "element_size",
                          "get_device", "stride"})


def _sample(attr: str, node: cst.Call, args: Args, keywords: Keywords) -> Value:
    """`rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8)`: a new array of the NumPy dtype
    named, for a method the tables say makes one when given a size (without one, or with an
    `out=`, it returns a scalar or that array: not known here)."""
    at = (ops.dtype_fact("numpy generator samplers") or {}).get(attr)
    if at is None or any(arg.star for arg, _ in args) or "out" in keywords:
        return UNKNOWN
    positional = [(arg.value, value) for arg, value in args if arg.keyword is None]
    size = keywords["size"][1] if "size" in keywords else \
        positional[at["size"]][0] if at["size"] < len(positional) else None
    dtype = keywords["dtype"][0] if "dtype" in keywords else \
        positional[at["dtype"]][1] if at["dtype"] < len(positional) else None
    if size is None or is_literal(size, "None") or not isinstance(dtype, RefValue) or \
            not dtype.qualname.startswith("numpy."):
        return UNKNOWN
    named = dtype_named(dtype)
    if named is None:
        return UNKNOWN
    token = ("alloc", id(node))
    return ArrayValue(origin=node, storage=token, dtype=named)


def _flag_argument(node: cst.Call, keyword: str) -> bool | None:
    """A boolean flag given as the first positional argument or by keyword; True when
    it is absent (its default); None when it is not a literal."""
    for arg in node.args:
        if arg.keyword is None or arg.keyword.value == keyword:
            return True if is_literal(arg.value, TRUE) else False if is_literal(
                arg.value, FALSE) else None
    return True


def _method_name(call: cst.Call) -> str | None:
    """`cpu` for `t.cpu()`."""
    return call.func.attr.value if type(call.func) is cst.Attribute else None


def _spells(func: cst.BaseExpression, op: ops.Op) -> bool:
    """Does the called expression name the op itself (`torch.relu_`, `x.relu_`, `F.relu_`),
    rather than a value that holds it (`self.act`, a parameter)?"""
    name = func.attr.value if type(func) is cst.Attribute else \
        func.value if type(func) is cst.Name else None
    return name == op.name.rsplit(".", 1)[-1]
