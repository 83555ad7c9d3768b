"""Function and class definitions: deferred bodies, what `self` holds, grad-mode decorators."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.core import Interpreter
from aliaslint.analysis.opfacts import MODULE_BASES
from aliaslint.analysis.scopes import ClassInfo, Deferred, Env, Flow
from aliaslint.analysis.syntax import all_params
from aliaslint.analysis.values import (
    UNKNOWN,
    ClassValue,
    FunctionValue,
    GradModeValue,
    ModuleInfo,
    ModuleValue,
    ObjectValue,
    RefValue,
    TensorValue,
    Value,
)


class Functions(Interpreter):
    """Defines functions and classes; runs deferred bodies."""

    def _function_def(self, node: cst.FunctionDef, env: Env, *, cls: ClassInfo | None = None,
                      scope: Env | None = None) -> None:
        """Bind the function in ``env``; its body later sees ``scope`` (default ``env``)."""
        self._stmt = node
        for decorator in node.decorators:
            self._eval(decorator.decorator, env)
        for param in all_params(node.params):
            if param.default is not None:
                self._eval(param.default, env)
        env.names[node.name.value] = FunctionValue(qualname=node.name.value, origin=node,
                                                   definition=node)
        if cls is not None:
            cls.methods[node.name.value] = node
        parent = scope or env
        key = (id(node), id(parent), id(cls))
        if key not in self._deferred_keys:  # a loop's passes define it again
            self._deferred_keys.add(key)
            self._deferred.append(Deferred(node, parent, cls))

    def _stable(self, name: str, env: Env) -> bool:
        return env is self._top and len(self._bindings.get(name, ())) == 1 \
            and name not in self._rebound

    def _outer_env(self, env: Env) -> Env:
        """Names a function body sees from its definition scope.

        Imports, functions and classes are stable, and so is a module-level
        name bound once; other variables may change before the function runs,
        so they are not trusted.  Deferred bodies run once their defining scope
        is complete, so one view per scope serves every function in it.
        """
        cached = self._outer_cache.get(id(env))
        if cached is not None and cached[0] is env:
            return cached[1]
        chain = []
        scope: Env | None = env
        while scope is not None:
            chain.append(scope)
            scope = scope.parent
        visible = {}
        for scope in reversed(chain):
            for name, value in scope.names.items():
                if isinstance(value, (RefValue, FunctionValue, ClassValue)) or self._stable(
                        name, scope):
                    visible[name] = value
                else:
                    visible[name] = UNKNOWN
        outer = Env(None, visible)
        if self._deferring:  # the module body may still bind names before that
            self._outer_cache[id(env)] = (env, outer)
        return outer

    def _function_body(self, deferred: Deferred) -> None:
        node = deferred.function
        cls = deferred.cls
        env = Env(self._outer_env(deferred.parent))
        env.flow.grad = self._decorated_grad_mode(node, env)
        params = all_params(node.params)
        for index, param in enumerate(params):
            value = UNKNOWN
            if param.annotation is not None:
                value = self._annotation(param.annotation, env)
            elif (cls is not None and cls.is_module and node.name.value == "forward"
                  and index > 0 and param.default is None and param.star == ""
                  and param in node.params.params):
                # nn.Module.forward receives tensors unless it says otherwise.
                value = TensorValue(origin=param, storage=("arg", index), counter=("arg", index))
            if cls is not None and index == 0 and param in node.params.params:
                value = self._self_value(cls)
            if isinstance(value, TensorValue) and value.storage is None:
                value = replace(value, storage=("arg", index), counter=("arg", index))
            env.names[param.name.value] = value
        self._run_body(node, env)
        if cls is not None and node.name.value == "__init__":
            self._learn_class(cls, env)

    def _run_body(self, node: cst.FunctionDef, env: Env) -> list[tuple[Value, Flow]]:
        """Run a function's body; what each `return` returned, with its path's facts."""
        # A summarised callee may run inside a loop's pass: its own loops
        # neither break out of the caller's nor reuse its fixed points.
        outer = (self._returns, self._function, self._loops, self._loop_cache,
                 self._loop_events)
        returns: list[tuple[Value, Flow]] = []
        self._returns, self._function = returns, node
        self._loops, self._loop_cache, self._loop_events = [], None, None
        try:
            body = node.body
            if isinstance(body, cst.IndentedBlock):
                self._block(body.body, env)
            elif isinstance(body, cst.SimpleStatementSuite):  # `def f(x): return x`
                self._stmt = body
                for small in body.body:
                    self._small(small, env)
            return returns
        finally:
            (self._returns, self._function, self._loops, self._loop_cache,
             self._loop_events) = outer

    def _decorated_grad_mode(self, node: cst.FunctionDef, env: Env) -> bool | None:
        grad: bool | None = True
        for decorator in node.decorators:
            value = self._eval_silently(decorator.decorator, env)
            if isinstance(value, GradModeValue):
                grad = value.enabled
            elif isinstance(value, RefValue):
                op = ops.lookup(value.qualname)
                if op is not None and op.kind == "grad_mode":
                    grad = op.extra.get("grad_enabled")
        return grad

    def _eval_silently(self, node: cst.BaseExpression, env: Env) -> Value:
        self._silent += 1
        try:
            return self._eval(node, env)
        finally:
            self._silent -= 1

    def _self_value(self, cls: ClassInfo) -> Value:
        if not cls.is_module:
            # A plain object: its attributes are known, nothing else is.
            return ObjectValue(qualname=cls.name, cls=cls)
        info = ModuleInfo(cls=cls, params=frozenset({cls.self_token}), label=f"`{cls.name}`")
        return ModuleValue(module=info, origin=cls.node)

    def _learn_class(self, cls: ClassInfo, env: Env) -> None:
        """After __init__: what `self.<attr>` holds in the other methods."""
        params: set[object] = set()
        for key, value in env.names.items():
            if not key.startswith("self."):
                continue
            cls.attrs[key] = value
            if isinstance(value, ModuleValue):
                params |= value.module.params
            elif isinstance(value, TensorValue) and value.leaf and value.requires_grad:
                params.add(value.storage)
        cls.params = frozenset(params)

    def _class_def(self, node: cst.ClassDef, env: Env) -> None:
        self._stmt = node
        is_module = False
        bases: list[ClassInfo] = []
        for base in node.bases:
            value = self._eval(base.value, env)
            if isinstance(value, RefValue) and value.qualname in MODULE_BASES:
                is_module = True
            elif isinstance(value, ClassValue) and value.module is not None \
                    and value.module.cls is not None:
                is_module = True
                bases.append(value.module.cls)
            elif isinstance(value, RefValue) and value.qualname.startswith(
                    "torch.nn.") and ops.module(value.qualname) is not None:
                is_module = True
        cls = ClassInfo(node.name.value, node, is_module, self_token=("self", id(node)),
                        bases=tuple(bases))
        class_env = Env(env)
        # __init__ first: the other methods need to know the attributes it sets.
        methods = sorted(
            (stmt for stmt in node.body.body if isinstance(stmt, cst.FunctionDef)),
            key=lambda f: f.name.value != "__init__",
        )
        for stmt in node.body.body:
            if not isinstance(stmt, cst.FunctionDef):
                self._statement(stmt, class_env)
        for stmt in methods:
            # Methods do not see the class body's names (Python's scoping).
            self._function_def(stmt, class_env, cls=cls, scope=env)
        info = ModuleInfo(cls=cls) if is_module else None
        env.names[node.name.value] = ClassValue(qualname=node.name.value, origin=node,
                                                module=info)
