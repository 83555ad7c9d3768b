"""Function and class definitions: deferred bodies, what `self` holds, grad-mode decorators."""

from __future__ import annotations



import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State, Site
from aliaslint import ops
from aliaslint.nodes import walk_code
from aliaslint.analysis.opfacts import MODULE_BASES
from aliaslint.analysis.dispatch import TRANSPARENT_BASES, binding, c3, class_of
from aliaslint.analysis.protocol import constant_of, literal_argument
from aliaslint.analysis.scopes import ClassInfo, Deferred, Env, Flow
from aliaslint.analysis.training import AUTOGRAD_FUNCTIONS, LIGHTNING_MODULES
from aliaslint.analysis.syntax import (
    all_params, callee_name, called_names, is_literal, is_private,
)
from aliaslint.analysis.values import (
    replace,
    UNKNOWN,
    Args,
    Kind,
    ClassValue,
    FunctionValue,
    GradModeValue,
    ModuleInfo,
    ModuleValue,
    ObjectValue,
    RefValue,
    TensorValue,
    Value,
    join,
)



def _manual_optimization(node: cst.ClassDef) -> bool:
    """Does the class set `automatic_optimization = False` (an assignment to that name or
    attribute, with or without an annotation, or that keyword argument): a Lightning module
    that steps its optimizers itself?  (Read from the code: a comment or a docstring that
    mentions it does not make the module's steps manual.)"""
    value: cst.CSTNode | None
    for inner in walk_code(node):
        if type(inner) is cst.Assign:
            value, targets = inner.value, [target.target for target in inner.targets]
        elif type(inner) is cst.AnnAssign:
            value, targets = inner.value, [inner.target]
        elif type(inner) is cst.Arg:
            if inner.keyword is not None and inner.keyword.value == _MANUAL and \
                    is_literal(inner.value, "False"):
                return True
            continue
        else:
            continue
        if is_literal(value, "False") and any(
                type(target) is cst.Name and target.value == _MANUAL or
                type(target) is cst.Attribute and target.attr.value == _MANUAL
                for target in targets):
            return True
    return False


_MANUAL = "automatic_optimization"

class Functions(Part):
    """Defines functions and classes; runs deferred bodies."""

    expressions: api.Expressions
    imports: api.Imports
    statements: api.Statements

    def __init__(self, state: State) -> None:
        super().__init__(state)
        # Call sites of the file's functions: id(FunctionDef) → id(call) → the site.
        self._sites: dict[int, dict[int, Site]] = {}
        self._closed = False  # the body running is reached only from this file's code
        self._deferred_keys: set[tuple[int, int, int]] = set()
        self._outer_cache: dict[int, tuple[Env, Env]] = {}

    def function_def(self, node: cst.FunctionDef, env: Env, *, cls: ClassInfo | None = None,
                     scope: Env | None = None) -> None:
        """Bind the function in ``env``; its body later sees ``scope`` (default ``env``)."""
        self.state.stmt = node
        for decorator in node.decorators:
            self.expressions.eval(decorator.decorator, env)
        for param in all_params(node.params):
            if param.default is not None:
                self.expressions.eval(param.default, env)
        env.names[node.name.value] = FunctionValue(qualname=node.name.value, origin=node,
                                                   definition=node)
        if self.state.loading is not None:  # another checked file's function
            self.state.homes[id(node)] = self.state.loading
        elif self.state.function is not None and id(self.state.function) in self.state.homes:
            # defined inside one: it sees that file's module too
            self.state.homes[id(node)] = self.state.homes[id(self.state.function)]
        if cls is not None:
            cls.methods[node.name.value] = node
        parent = scope or env
        key = (id(node), id(parent), id(cls))
        # A def met while a callee is summarised (silently, once per call context) is not
        # deferred: its body runs when called, and as part of the enclosing body's own run.
        # A loop's passes define it again.
        if key not in self._deferred_keys and not self.state.silent:
            self._deferred_keys.add(key)
            self.state.deferred.append(Deferred(node, parent, cls, called_names(node)))
            self.state.pending_calls.update(self.state.deferred[-1].calls)
            if cls is not None and node.name.value == "__init__":
                self.state.pending_inits[id(cls)] += 1

    def next_deferred(self) -> Deferred:
        """The next body to run: the first one no other pending body calls, so that the
        call sites in callers are known when a callee runs (the first one in a cycle).  A
        class's other methods wait for its `__init__`, which tells what `self` holds."""
        chosen = 0
        for index, deferred in enumerate(self.state.deferred):
            function, cls = deferred.function, deferred.cls
            if cls is not None and function.name.value != "__init__" and \
                    self.state.pending_inits[id(cls)] > 0:
                continue
            name = callee_name(function, cls)
            if self.state.pending_calls[name] - deferred.calls.count(name) <= 0:
                chosen = index
                break
        deferred = self.state.deferred.pop(chosen)
        self.state.pending_calls.subtract(deferred.calls)
        if deferred.cls is not None and deferred.function.name.value == "__init__":
            self.state.pending_inits[id(deferred.cls)] -= 1
        return deferred

    def record_call(self, function: cst.FunctionDef, cls: ClassInfo | None, node: cst.Call,
                    args: Args, env: Env) -> None:
        """Remember what this call passes to ``function``, for the run of its body."""
        if self.state.silent or function.decorators:
            return
        params = list(function.params.params)
        if cls is not None and params:
            params = params[1:]  # self
        values: dict[str, Value] = {}
        position = 0
        for arg, value in args:
            if arg.star:
                values = {}
                break
            value = literal_argument(arg.value, value)  # `norm="none"`: a branch it decides
            if arg.keyword is not None:
                values[arg.keyword.value] = value
            elif position < len(params):
                values[params[position].name.value] = value
                position += 1
        closed = self.state.function is None or self._closed
        self._sites.setdefault(id(function), {})[id(node)] = Site(
            values, closed, self.state.assuming)

    def _site_values(self, function: cst.FunctionDef) -> tuple[dict[str, Value], bool, bool]:
        """What every call site passes, per parameter, where the sites agree on its kind;
        whether every site is closed (see Site), and whether one rests on assumptions."""
        sites = list(self._sites.get(id(function), {}).values())
        if not sites:
            return {}, False, False
        values: dict[str, Value] = {}
        for name in sites[0].values:
            seen = [site.values.get(name) for site in sites]
            known = [v for v in seen if v is not None]
            first = known[0]
            if len(known) != len(seen) or any(v.kind is not first.kind for v in known) or \
                    first.kind is Kind.UNKNOWN and not isinstance(first, ObjectValue):
                continue
            joined = first
            for other in known[1:]:
                joined = join(joined, other)
            values[name] = joined
        return values, all(site.closed for site in sites), any(site.assumed for site in sites)

    def _stable(self, name: str, env: Env) -> bool:
        state = self.state
        bindings = state.bindings if env is state.top else state.foreign_bindings.get(id(env))
        return bindings is not None and len(bindings.get(name, ())) == 1 \
            and name not in self.state.rebound

    def outer_env(self, env: Env) -> Env:
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
        if self.state.deferring:  # the module body may still bind names before that
            self._outer_cache[id(env)] = (env, outer)
        return outer

    def function_body(self, deferred: Deferred) -> None:
        """Run a deferred body: with its parameters unknown, and with what its call sites
        pass.  Findings that need the call sites' values are `low` confidence unless no
        other code calls the function with other kinds: a private name, or a script's
        function (its callers are module-level code or themselves script functions)."""
        node, cls = deferred.function, deferred.cls
        values, script, assumed = self._site_values(node)
        closed = is_private(node, cls) or script
        outer = self._closed, self.state.assuming
        try:
            # What this body calls is reached from a script only if it is: a private
            # function's own callees may be called from elsewhere.
            self._closed = script
            if not values:
                self.state.assuming = outer[1]
                self._run_deferred(deferred, {})
            elif closed and not assumed:
                self.state.assuming = outer[1]
                self._run_deferred(deferred, values)
            else:
                self.state.assuming = outer[1]
                self._run_deferred(deferred, {})
                self.state.assuming = True
                self._run_deferred(deferred, values, learn=False)
        finally:
            self._closed, self.state.assuming = outer

    def _run_deferred(self, deferred: Deferred, values: dict[str, Value], *,
                      learn: bool = True) -> None:
        node = deferred.function
        cls = deferred.cls
        env = Env(self.outer_env(deferred.parent))
        env.flow.grad = self.decorated_grad_mode(node, env)
        params = all_params(node.params)
        for index, param in enumerate(params):
            value = UNKNOWN
            if param.annotation is not None:
                value = self.expressions.annotation(param.annotation, env)
            elif (cls is not None and cls.is_module and node.name.value == "forward"
                  and binding(node) == "instance"
                  and index > 0 and param.default is None and param.star == ""
                  and param in node.params.params):
                # nn.Module.forward receives tensors unless it says otherwise.
                value = TensorValue(origin=param, storage=("arg", index), counter=("arg", index))
            if cls is not None and index == 0 and param in node.params.params and \
                    binding(node) != "static":
                value = self.self_value(cls) if binding(node) != "class" else ClassValue(
                    qualname=cls.name, origin=cls.node, info=cls)
            elif param.name.value in values and (
                    value.kind is Kind.UNKNOWN or isinstance(value, TensorValue)):
                value = values[param.name.value]
                if isinstance(value, TensorValue):
                    # The caller's tensor with its facts (requires grad, leaf, layout,
                    # dtype: every site agrees on it, see _site_values), but seen as this
                    # function's argument: what the body does to its argument is what the
                    # rules judge.
                    value = TensorValue(
                        origin=param, requires_grad=value.requires_grad, leaf=value.leaf,
                        contiguous=value.contiguous, layout_origin=value.layout_origin,
                        layout_op=value.layout_op, expanded=value.expanded,
                        dtype=value.dtype)
            if isinstance(value, TensorValue) and value.storage is None:
                value = replace(value, storage=("arg", index), counter=("arg", index))
            env.names[param.name.value] = value
        self.run_body(node, env)
        if cls is not None and node.name.value == "__init__" and learn:
            self._learn_class(cls, env)

    def run_body(self, node: cst.FunctionDef, env: Env) -> list[tuple[Value, Flow]]:
        """Run a function's body; what each `return` returned, with its path's facts."""
        # A summarised callee may run inside a loop's pass: its own loops
        # neither break out of the caller's nor reuse its fixed points.
        outer = (self.state.returns, self.state.function, self.state.loops, self.state.loop_cache,
                 self.state.loop_events)
        returns: list[tuple[Value, Flow]] = []
        self.state.returns, self.state.function = returns, node
        self.state.loops, self.state.loop_cache, self.state.loop_events = [], None, None
        try:
            body = node.body
            if type(body) is cst.IndentedBlock:
                self.statements.block(body.body, env)
            elif type(body) is cst.SimpleStatementSuite:  # `def f(x): return x`
                self.state.stmt = body
                for small in body.body:
                    self.statements.small(small, env)
            return returns
        finally:
            (self.state.returns, self.state.function, self.state.loops, self.state.loop_cache,
             self.state.loop_events) = outer

    def decorated_grad_mode(self, node: cst.FunctionDef, env: Env) -> bool | None:
        grad: bool | None = True
        for decorator in node.decorators:
            value = self.eval_silently(decorator.decorator, env)
            if isinstance(value, GradModeValue):
                grad = value.enabled
            elif isinstance(value, RefValue):
                op = ops.lookup(value.qualname)
                if op is not None and op.kind == "grad_mode":
                    grad = op.extra.get("grad_enabled")
        return grad

    def eval_silently(self, node: cst.BaseExpression, env: Env) -> Value:
        self.state.silent += 1
        try:
            return self.expressions.eval(node, env)
        finally:
            self.state.silent -= 1

    def self_value(self, cls: ClassInfo, *, exact: bool = False) -> Value:
        """`self` in a method of ``cls``: an instance of it or, unless ``exact``, of a
        subclass."""
        if not cls.is_module:
            # A plain object: its attributes are known, nothing else is.
            return ObjectValue(qualname=cls.name, cls=cls, exact=exact)
        info = ModuleInfo(cls=cls, params=frozenset({cls.self_token}), label=f"`{cls.name}`",
                          exact=exact)
        return ModuleValue(module=info, origin=cls.node)

    def learn_now(self, cls: ClassInfo, args: Args) -> None:
        """Module-level code builds an instance before the deferred `__init__` runs: run it
        now, silently, so that `model.fc.weight` is known there too."""
        if cls.learned:
            return
        cls.learned = True
        for base in cls.bases:
            self.learn_now(base, [])
        init = cls.method("__init__")
        if init is None:
            return
        env = Env(self.outer_env(self.imports.home(init)))
        params = list(init.params.params)
        # A literal default, or argument, decides the branches it switches (`if forward ==
        # "slicing": self.forward = self.forward_slicing`), where the class is built at one
        # place: the attributes learned here are every instance's.
        once = self.state.module_instances().calls.get(cls.name, 0) <= 1

        def literal(node: cst.BaseExpression | None) -> Value | None:
            return constant_of(node) if once else None

        def passed(node: cst.BaseExpression, value: Value) -> Value:
            return literal_argument(node, value) if once else value

        for param in all_params(init.params):
            env.names[param.name.value] = literal(param.default) or UNKNOWN \
                if param.star == "" else UNKNOWN
        if params:
            env.names[params[0].name.value] = self.self_value(cls)
        for param, (arg, value) in zip(params[1:], args):
            if arg.keyword is not None or arg.star:
                break
            env.names[param.name.value] = passed(arg.value, value)
        names = {param.name.value for param in all_params(init.params)[1:]}
        for arg, value in args:
            if arg.keyword is not None and arg.keyword.value in names:
                # `Head(dim, act_fn=relu_)`, `Block(dim, norm="none")`
                env.names[arg.keyword.value] = passed(arg.value, value)
        self.state.silent += 1
        outer_stmt = self.state.stmt
        try:
            self.run_body(init, env)
        finally:
            self.state.silent -= 1
            self.state.stmt = outer_stmt
        self._learn_class(cls, env)

    def _learn_class(self, cls: ClassInfo, env: Env) -> None:
        """After __init__: what `self.<attr>` holds in the other methods."""
        cls.learned = True
        params: set[object] = set()
        for key, value in env.names.items():
            if not key.startswith("self."):
                continue
            known = cls.attrs.get(key)
            if isinstance(known, ModuleValue) and isinstance(value, ModuleValue) and \
                    known.module is not value.module:
                # Another run of `__init__` made this submodule again: hooks registered
                # on the one made before stay registered (see protocol.py).
                value.module.hooks.extend(h for h in known.module.hooks
                                          if h not in value.module.hooks)
            cls.attrs[key] = value
            if isinstance(value, ModuleValue):
                params |= value.module.params
            elif isinstance(value, TensorValue) and value.leaf and value.requires_grad:
                params.add(value.storage)
        cls.params = frozenset(params)

    def class_def(self, node: cst.ClassDef, env: Env) -> None:
        self.state.stmt = node
        is_module = lightning = autograd_function = False
        bases: list[ClassInfo] = []
        entries: list[ClassInfo | str] = []  # the bases, for the MRO
        torch_base = None
        for base in node.bases:
            if base.keyword is not None or base.star:
                continue  # `metaclass=…`
            value = self.imports.linked(self.expressions.eval(base.value, env))
            local = class_of(value)
            if local is not None:
                entries.append(local)
            elif not (isinstance(value, RefValue) and (
                    value.qualname in MODULE_BASES or value.qualname in LIGHTNING_MODULES
                    or value.qualname in AUTOGRAD_FUNCTIONS
                    or value.qualname in TRANSPARENT_BASES)):
                entries.append(value.qualname if isinstance(value, RefValue) else
                               f"?{id(base)}")
            if isinstance(value, RefValue) and value.qualname in MODULE_BASES:
                is_module = True
            elif isinstance(value, RefValue) and value.qualname in LIGHTNING_MODULES:
                is_module = lightning = True
            elif isinstance(value, RefValue) and value.qualname in AUTOGRAD_FUNCTIONS:
                autograd_function = True
            elif isinstance(value, ClassValue) and value.module is not None \
                    and value.module.cls is not None:
                is_module = True
                lightning = lightning or value.module.cls.lightning
                bases.append(value.module.cls)
            elif isinstance(value, ClassValue) and value.info is not None:
                bases.append(value.info)  # a plain class: a mixin
            elif isinstance(value, RefValue) and value.qualname.startswith(
                    "torch.nn.") and ops.module(value.qualname) is not None:
                is_module = True
                torch_base = value.qualname
        cls = ClassInfo(node.name.value, node, is_module, self_token=("self", id(node)),
                        bases=tuple(bases), lightning=lightning,
                        autograd_function=autograd_function, torch_base=torch_base)
        cls.mro = c3(cls, entries) or (cls, *bases)
        self.state.classes_by_node[id(node)] = cls
        if lightning and not _manual_optimization(node):
            self.state.lightning_steps.update(
                id(stmt) for stmt in node.body.body
                if type(stmt) is cst.FunctionDef and stmt.name.value == "training_step")
        class_env = Env(env)
        # __init__ first: the other methods need to know the attributes it sets.
        methods = sorted(
            (stmt for stmt in node.body.body if type(stmt) is cst.FunctionDef),
            key=lambda f: f.name.value != "__init__",
        )
        for stmt in node.body.body:
            if type(stmt) is not cst.FunctionDef:
                self.statements.statement(stmt, class_env)
        cls.class_names = frozenset(class_env.names)
        for stmt in methods:
            # Methods do not see the class body's names (Python's scoping).
            self.function_def(stmt, class_env, cls=cls, scope=env)
            self.state.owners[id(stmt)] = cls
        info = ModuleInfo(cls=cls) if is_module else None
        env.names[node.name.value] = ClassValue(qualname=node.name.value, origin=node,
                                                module=info, info=cls)
