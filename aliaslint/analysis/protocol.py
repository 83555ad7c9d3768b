"""How Python calls the file's functions and modules: summaries over recursion (a bounded
fixed point), arguments bound by the callee's signature (keywords, defaults, `*args` and
`**kwargs` passed on), and the module call protocol (`module(x)` runs its forward
pre-hooks, `forward`, then its forward hooks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.dispatch import class_of
from aliaslint.analysis.syntax import is_classmethod
from aliaslint.analysis.opfacts import MODULE_BASES
from aliaslint.nodes import code_children
from aliaslint.analysis.scopes import ClassInfo, Env, Given, Hook, Summary, arg_mark
from aliaslint.analysis.syntax import FALSE, NO_LITERAL, TRUE, is_literal, literal_constant
from aliaslint.analysis.records import quick
from aliaslint.analysis.values import (
    BOTTOM,
    OTHER,
    UNKNOWN,
    Args,
    ClassValue,
    ConstValue,
    ContainerValue,
    FunctionValue,
    HandleValue,
    KeywordsValue,
    Kind,
    ModuleInfo,
    ModuleValue,
    is_int,
    module_items,
    ParamsValue,
    ObjectValue,
    RefValue,
    TensorValue,
    Value,
    local_class,
    replace,
)

# Rounds of a recursive function's fixed point before its summary widens to unknown.
RECURSION_ROUNDS = 4
# Summaries being computed at once (a chain of callers): deeper calls are unknown.
SUMMARY_DEPTH = 8
# Bodies one analysis may run to summarise calls: a file whose helpers call each other in
# deep, recursive webs (a test-utilities module) stops there, its later calls unknown, so
# its time stays that of a few passes over it.
SUMMARY_BUDGET = 200
# Calls with different literal arguments one function is summarised for, each exactly,
# before the literals that vary between its calls are taken as unknown (_within_contexts).
CONTEXTS = 4



# nn.Module's hook registrations: which kind each registers.
HOOK_METHODS = {"register_forward_pre_hook": "pre", "register_forward_hook": "forward"}
# nn.Module methods that iterate its submodules: (itself included, names yielded).
MODULE_ITERATORS = {"modules": (True, False), "named_modules": (True, True),
                    "children": (False, False), "named_children": (False, True)}


@dataclass
class _Frame:
    """A summary being computed."""

    key: tuple
    approximation: Summary | None = None  # what a recursive call sees this round
    recursive: bool = False  # a call inside it reached it again
    provisional: bool = False  # it used a summary still being computed
    # The events of its body, with whether each is `low`: kept for a function of another
    # file, whose body runs nowhere else with the caller's values (None: not kept).
    events: list | None = None
    level: int = 0  # the silence depth its own body runs at


class CallProtocol(Part):
    """Summaries as Python calls: recursion, signatures, the module call protocol."""

    expressions: api.Expressions
    functions: api.Functions
    modules: api.Modules

    def __init__(self, state: State) -> None:
        super().__init__(state)
        self._summaries: dict[tuple, Summary | None] = {}
        self._contexts: dict[tuple, list[tuple]] = {}  # literal contexts summarised
        self._summaries_run = 0  # callee bodies run to summarise calls (see protocol.py)

    def summary(self, function: cst.FunctionDef, cls: ClassInfo | None,
                args: tuple[Value, ...], layout: tuple | None = None, *,
                exact: bool = True) -> Summary | None:
        """What calling ``function`` (a method of ``cls``) with ``args`` does.  A recursive
        call meets the summary being computed: it sees the previous round's (first none: a
        path through it returns nothing), and the body runs again until the summary stops
        changing; after RECURSION_ROUNDS rounds it widens to unknown.  A summary computed from
        another one still in progress is not kept: it is recomputed when next needed."""
        if self.state.loading is not None:
            # Another file's module body runs for the names it binds; what its top-level
            # calls (`default_cfgs = {name: _cfg(...), ...}`) return is not needed of it.
            return None
        args = self._within_contexts((id(function), id(cls), exact, layout), args)
        key = (id(function), id(cls), exact, tuple(_summary_key(a) for a in args), layout)
        if key in self._summaries:
            return self._summaries[key]
        stack = self.state.summary_stack
        for depth, frame in enumerate(stack):
            if frame.key == key:
                frame.recursive = True
                for inner in stack[depth + 1:]:
                    inner.provisional = True
                return frame.approximation or Summary(BOTTOM, {}, (), None)
        if len(stack) > SUMMARY_DEPTH or self._summaries_run >= SUMMARY_BUDGET:
            return None
        frame = _Frame(key)
        stack.append(frame)
        self.state.silent += 1
        frame.level = self.state.silent
        foreign = id(function) in self.state.homes
        outer_stmt = self.state.stmt
        summary: Summary | None = None
        try:
            for _ in range(RECURSION_ROUNDS):
                frame.recursive = False
                frame.events = [] if foreign else None
                self._summaries_run += 1
                summary = self.modules.summarise(function, cls, args, layout, exact)
                if not frame.recursive or summary is None or (
                        frame.approximation is not None and
                        _same_effects(summary, frame.approximation)):
                    break
                frame.approximation = summary
            else:
                summary = None  # no fixed point within the bound: unknown
        finally:
            self.state.silent -= 1
            stack.pop()
            self.state.stmt = outer_stmt
        if summary is not None and frame.events:
            summary = replace(summary, events=tuple(dict.fromkeys(frame.events)))
        if frame.provisional:
            for outer in stack:
                outer.provisional = True
        else:
            self._summaries[key] = summary
        return summary

    def _within_contexts(self, where: tuple, args: tuple[Value, ...]) -> tuple[Value, ...]:
        """The arguments a summary of the callee ``where`` names is computed for.  A function
        called with many different literals (`_cfg(url=...)` for each of hundreds of
        weights) would be summarised once per call; after CONTEXTS of them, an argument whose
        literal has differed between its calls is summarised as an unknown value instead,
        once for all later calls.  A literal that is the same at every call (`inplace=True`)
        stays."""
        keys = tuple(_summary_key(a) for a in args)
        seen = self._contexts.setdefault(where, [])
        if keys in seen or len(seen) < CONTEXTS:
            if keys not in seen:
                seen.append(keys)
            return args
        varying = {i for i, k in enumerate(keys)
                   if isinstance(k, tuple) and k and k[0] in ("literal", "container") and
                   any(i >= len(other) or other[i] != k for other in seen)}
        # A container keeps its tensors; only the literals it holds are let go.
        return tuple(containers.without_literals(a) if i in varying else a
                     for i, a in enumerate(args))

    def bind_parameters(self, function: cst.FunctionDef, cls: ClassInfo | None,
                        args: tuple[Value, ...], layout: tuple | None, env: Env,
                        exact: bool = True) -> bool:
        """Bind a summarised body's parameters: `self`, then ``args`` by ``layout`` (see
        Bound; None: ``args`` are the leading positional parameters, the rest take their
        defaults).  A tensor argument is the token ("arg", i) of its slot.  False when
        the arguments do not fit."""
        params = list(function.params.params)
        offset = 1 if cls is not None else 0
        if cls is not None and params:
            env.names[params[0].name.value] = ClassValue(
                qualname=cls.name, origin=cls.node, module=ModuleInfo(cls=cls)
                if cls.is_module else None, info=cls) \
                if is_classmethod(function) else self.functions.self_value(cls, exact=exact)

        def slot(index: int, param: cst.CSTNode | None) -> Value:
            value = args[index]
            if type(param) is cst.Param and param.default is not None and \
                    value.kind is Kind.UNKNOWN and value.origin is param.default:
                return self._default_reference(param.default, env)  # a default taken
            if isinstance(value, TensorValue):
                # Its graph holds a mark of its own (not a save id): a backward pass through
                # it in the body runs through the caller's graph (Summary.consumed).
                return TensorValue(storage=("arg", index), counter=("arg", index),
                                   requires_grad=value.requires_grad, origin=param,
                                   graph=frozenset({arg_mark(index)}))
            if isinstance(value, ContainerValue) and value.replicated is None:
                return containers.tokenised(value, index)
            return value

        if layout is None:
            if len(params) - offset < len(args) or any(
                    p.default is None for p in params[offset + len(args):]):
                return False
            for index, param in enumerate(params[offset:offset + len(args)]):
                env.names[param.name.value] = slot(index, param)
            for param in params[offset + len(args):]:
                env.names[param.name.value] = constant_of(param.default) or \
                    self._default_reference(param.default, env)
            return True
        if layout[0] == "hook":
            return self._bind_hook(function, offset, args, layout, slot, env)
        count, star, keywords = layout
        named = named_params(function, offset)
        if len(named) != count or len(args) != count + star + len(keywords):
            return False
        for index, param in enumerate(named):
            env.names[param.name.value] = slot(index, param)
        star_arg, star_kwarg = function.params.star_arg, function.params.star_kwarg
        if type(star_arg) is cst.Param:
            env.names[star_arg.name.value] = ContainerValue(
                origin=star_arg, items=tuple(slot(count + i, star_arg) for i in range(star)))
        if star_kwarg is not None:
            env.names[star_kwarg.name.value] = KeywordsValue(origin=star_kwarg, items=tuple(
                (name, slot(count + star + i, star_kwarg)) for i, name in enumerate(keywords)))
        return True

    def _default_reference(self, default: cst.BaseExpression | None, env: Env) -> Value:
        """A default that names a class or function (`act_layer=nn.Tanh`): what it names.
        Evaluating a dotted name has no effect; anything else is unknown."""
        if isinstance(default, (cst.Name, cst.Attribute)):
            value = self.expressions.eval(default, env)
            if isinstance(value, (RefValue, ClassValue, FunctionValue)):
                return value
        return UNKNOWN

    def _bind_hook(self, function: cst.FunctionDef, offset: int, args: tuple[Value, ...],
                   layout: tuple, slot: Callable[[int, cst.CSTNode | None], Value],
                   env: Env) -> bool:
        """A hook's parameters as torch passes them: the module, the tuple of positional
        arguments, the keyword arguments (`with_kwargs=True`), the result (forward hooks).
        ``args`` holds the module, each argument, then the result."""
        _, count, with_kwargs, has_output = layout
        named = named_params(function, offset)
        wanted = 2 + with_kwargs + has_output
        if len(named) < wanted or any(p.default is None for p in named[wanted:]):
            return False
        values: list[Value] = [
            args[0], ContainerValue(origin=named[1], items=tuple(
                slot(1 + i, named[1]) for i in range(count)))]
        if with_kwargs:
            values.append(UNKNOWN)
        if has_output:
            values.append(slot(1 + count, named[len(values)]))
        for param, value in zip(named, values):
            env.names[param.name.value] = value
        for param in named[wanted:]:
            env.names[param.name.value] = constant_of(param.default) or UNKNOWN
        return True

    # The module call protocol.

    def hooks_of(self, module: ModuleValue) -> list[Hook]:
        """The hooks calling ``module`` runs: those its class registers on every instance
        (in `__init__`), then those registered on it."""
        info = module.module
        return (list(info.cls.hooks) if info.cls is not None else []) + list(info.hooks)

    def register_hook(self, module: ModuleValue, attr: str, node: cst.Call, args: Args,
                      env: Env) -> Value:
        """`m.register_forward_hook(hook, prepend=…, with_kwargs=…)` and the pre-hook twin:
        remembered on the module (on its class for `self.register_…` in a method), in
        the order torch keeps them (`prepend=True` puts a hook before the others)."""
        positional = [(arg, value) for arg, value in args if arg.keyword is None]
        if len(positional) != 1 or any(arg.star for arg, _ in args):
            return UNKNOWN
        flags: dict[str, bool | None] = {}
        for arg, _ in args:
            if arg.keyword is not None:
                flags[arg.keyword.value] = True if is_literal(arg.value, TRUE) else \
                    False if is_literal(arg.value, FALSE) else None
        if None in (flags.get("prepend", False), flags.get("with_kwargs", False)):
            return UNKNOWN  # the order or the signature is not known
        target = self._hook_function(positional[0][0], positional[0][1], env)
        if target is None:
            return UNKNOWN
        may = self.state.branches > 0 or self.state.assuming
        owner = node.func.value.value if type(node.func) is cst.Attribute and \
            type(node.func.value) is cst.Attribute else None
        holder = self.functions.eval_silently(owner, env) if owner is not None else None
        if isinstance(holder, ModuleValue) and holder.module.cls is not None and \
                holder.origin is not holder.module.cls.node and \
                self._instances(holder.module.cls) != 1:
            # `block.out` of an instance: what `self.out` holds is known per class, not per
            # instance, so the hook is on the others' too; right only for a class made once.
            may = True
        hook = Hook(HOOK_METHODS[attr], target[0], target[1], bool(flags.get("with_kwargs")),
                    node, may=may)
        added = self._add_hook(module, hook, bool(flags.get("prepend")))
        return HandleValue(origin=node, hooks=added, hook=hook) if len(added) == 1 else OTHER

    def _instances(self, cls: ClassInfo) -> int:
        """How many calls in the file name the class (its construction sites); a call in a
        loop or a comprehension counts twice."""
        return self.state.module_instances().calls.get(cls.name, 0)

    def remove_hook(self, handle: HandleValue) -> None:
        """`handle.remove()`: the hook no longer runs."""
        hooks, removed = handle.hooks[0], handle.hook
        for index, known in enumerate(hooks):
            if isinstance(removed, Hook) and known.site is removed.site:
                del hooks[index]
                return

    def _hook_function(self, arg: cst.Arg, value: Value,
                       env: Env) -> tuple[cst.FunctionDef, ClassInfo | None] | None:
        """The definition a hook argument runs, and the class of its `self`."""
        if isinstance(value, FunctionValue):
            return value.definition, None
        if isinstance(value, ObjectValue):
            call = value.cls.method("__call__")
            return (call, value.cls) if call is not None else None
        if type(arg.value) is cst.Attribute:  # `self._clamp`, `monitor.record`
            cls = local_class(self.functions.eval_silently(arg.value.value, env))
            method = cls.method(arg.value.attr.value) if cls is not None else None
            if method is not None and not any(
                    type(d.decorator) is cst.Name and d.decorator.value in (
                        "staticmethod", "classmethod", "property")
                    for d in method.decorators):
                return method, cls
        return None

    def _add_hook(self, module: ModuleValue, hook: Hook, prepend: bool) -> list[list[Hook]]:
        """Put ``hook`` on ``module``'s list; the lists it went on."""
        info = module.module
        if info.members is not None:
            # Registered on each module an iteration yields that passed the tests.
            lists: list[list[Hook]] = []
            for index, member in enumerate(info.members):
                lists += self._add_hook(
                    member, replace(hook, may=hook.may or index in info.uncertain), prepend)
            return lists
        if info.cls is not None and module.origin is info.cls.node:
            hooks = info.cls.hooks  # on `self`: every instance of the class
        else:
            hooks = info.hooks
        for index, known in enumerate(hooks):
            if known.site is hook.site and known.function is hook.function:
                # The same registration met again (another run of its body): a may-effect
                # if any run found it one.
                hooks[index] = replace(known, may=known.may or hook.may)
                return [hooks]
        if prepend:
            hooks.insert(0, hook)
        else:
            hooks.append(hook)
        return [hooks]

    def run_hooked(self, module: ModuleValue, given: list[Given], node: cst.Call,
                   env: Env) -> Value:
        """``module(*given)`` with its hooks, as `Module._call_impl` runs them: each forward
        pre-hook on the positional arguments (a result other than None replaces them), the
        forward, then each forward hook on the arguments and the result (a result other than
        None replaces it).  What a hook writes in place is part of the call's effect."""
        hooks = self.hooks_of(module)
        positional = [(value, expr) for keyword, value, expr in given if keyword is None]
        keywords = [entry for entry in given if entry[0] is not None]
        for hook in hooks:
            if hook.kind != "pre":
                continue
            result = self._run_hook(hook, module, positional, None, node, env)
            if result is None:
                return UNKNOWN
            if result is OTHER:
                continue
            items = result.items if isinstance(result, ContainerValue) and \
                result.items is not None else (result,)
            positional = [(item, None) for item in items]
        output = self.modules.run_forward(
            module, [(None, value, expr) for value, expr in positional] + keywords, node, env)
        for hook in hooks:
            if hook.kind != "forward":
                continue
            result = self._run_hook(hook, module, positional, output, node, env)
            if result is None:
                return UNKNOWN
            if result is not OTHER:
                output = result
        return output

    def _run_hook(self, hook: Hook, module: ModuleValue,
                  positional: list[tuple[Value, cst.BaseExpression | None]],
                  output: Value | None, node: cst.Call, env: Env) -> Value | None:
        """One hook's effects applied at the module's call: OTHER when it returns None,
        else what it returns (None: not known)."""
        slots: list[tuple[Value, cst.BaseExpression | None]] = [(module, None), *positional]
        if output is not None:
            slots.append((output, None))
        layout = ("hook", len(positional), hook.with_kwargs, output is not None)
        summary = self.summary(hook.function, hook.cls, tuple(v for v, _ in slots), layout)
        if summary is None:
            return None
        outer = self.state.may_effect
        self.state.may_effect = outer or hook.may
        try:
            kind = "forward pre-hook" if hook.kind == "pre" else "forward hook"
            label = f"the {kind} `{hook.function.name.value}` of {module.module.label}"
            result = self.modules.apply_summary(summary, slots, {}, node, label, env,
                                                hook.function)
        finally:
            self.state.may_effect = outer
        if summary.result is OTHER or summary.result is BOTTOM:
            # None, unless the hook returns something on some path (a tuple of new
            # arguments, whose tensors a summary does not keep): then not known.
            return None if _returns_something(hook.function) else OTHER
        if isinstance(summary.result, ContainerValue) and summary.result.items is not None:
            # A pre-hook's new arguments: the caller's tensors where it returns them.
            indices = [_argument_index(item) for item in summary.result.items]
            return ContainerValue(origin=node, items=tuple(
                slots[i][0] if i is not None and i < len(slots) else UNKNOWN for i in indices))
        return result if result.kind is not Kind.OTHER else None

    def module_members(self, module: ModuleValue, attr: str, node: cst.Call) -> Value:
        """`model.modules()`, `children()` and their `named_` twins: the submodules the file
        shows (a container's layers, a class's `self.<attr>` modules, a ModuleList's
        element), each element being one of them (see ModuleInfo.members)."""
        itself, named = MODULE_ITERATORS[attr]
        members: list[ModuleValue] = [module] if itself else []
        shared: set[int] = set()
        seen = {id(module.module)}
        recursive = attr in ("modules", "named_modules")

        def visit(parent: ModuleValue, per_class: bool) -> None:
            # What `self.<attr>` holds is known per class: the submodule of one instance
            # is that of every other instance too, right only for a class made once.
            cls = parent.module.cls
            per_class = per_class or cls is not None and self._instances(cls) != 1
            for child in _children(parent):
                if id(child.module) in seen or len(members) > 256:
                    continue
                seen.add(id(child.module))
                if per_class:
                    shared.add(len(members))
                members.append(child)
                if recursive:
                    visit(child, per_class)

        visit(module, False)
        info = module.module
        # `children()` of a torch container whose layers are known (`nn.Sequential(...)`):
        # exactly those layers, each once, in order.
        ordered = not recursive and not itself and info.cls is None and info.element is None \
            and info.children is not None and len(members) == len(info.children) and \
            not shared
        one = ModuleValue(origin=node, module=ModuleInfo(
            members=tuple(members), label=f"a module of {module.module.label}",
            uncertain=frozenset(shared), ordered=ordered))
        each: Value = ContainerValue(origin=node, items=(OTHER, one)) if named else one
        return ContainerValue(origin=node, each=each)

    def apply_to_modules(self, module: ModuleValue, node: cst.Call,
                         given: tuple[cst.Arg, Value], env: Env) -> bool:
        """`model.apply(fn)`: ``fn`` called on each submodule and on the model, so on one of
        the modules `model.modules()` yields (a hook it registers is on those its tests
        pick).  False when ``fn`` is not a function of this file."""
        target = self._hook_function(given[0], given[1], env)
        if target is None:
            return False
        function, cls = target
        elements = self.module_members(module, "modules", node)
        one = elements.each if isinstance(elements, ContainerValue) else None
        bound = bind(function, 1 if cls is not None else 0, [(None, one, None)]) \
            if isinstance(one, ModuleValue) else None
        summary = self.summary(function, cls, bound.values, bound.layout) \
            if bound is not None else None
        if bound is None or summary is None:
            return False
        self.modules.apply_summary(summary, bound.slots, {}, node, None, env, function)
        return True

    def narrow(self, test: cst.BaseExpression, env: Env) -> tuple | None:
        """`isinstance(m, C)` on one of several modules: (the name, what it is where the
        test holds, what it is where it fails); a member the test cannot decide stays on
        both sides as uncertain.  None for other tests."""
        if not (type(test) is cst.Call and type(test.func) is cst.Name and
                test.func.value == "isinstance" and len(test.args) == 2 and
                type(test.args[0].value) is cst.Name and
                not any(arg.star or arg.keyword for arg in test.args)):
            return None
        name = test.args[0].value.value
        value = env.lookup(name)
        if not isinstance(value, ModuleValue) or value.module.members is None:
            return None
        wanted = self.functions.eval_silently(test.args[1].value, env)
        info = value.module
        sides: tuple[list[int], list[int]] = ([], [])
        unsure: set[int] = set()
        for index, member in enumerate(info.members or ()):
            decided = _is_instance(member, wanted)
            if decided is None or index in info.uncertain:
                unsure.add(index)
            if decided is not False:
                sides[0].append(index)
            if decided is not True:
                sides[1].append(index)

        def side(indices: list[int]) -> ModuleValue:
            members = tuple((info.members or ())[i] for i in indices)
            return ModuleValue(origin=value.origin, module=ModuleInfo(
                members=members, label=info.label,
                uncertain=frozenset(k for k, i in enumerate(indices) if i in unsure)))

        return name, side(sides[0]), side(sides[1])


def _summary_key(value: Value) -> object:
    """What of an argument a summary depends on: a tensor's requirement for grad, a
    literal, which function or module (hooks and forwarding reach into them), else its
    kind."""
    if isinstance(value, TensorValue):
        return value.requires_grad
    if isinstance(value, ConstValue):
        return ("literal", type(value.literal), value.literal)
    if isinstance(value, FunctionValue):
        return ("function", id(value.definition))
    if isinstance(value, ModuleValue):
        # Compared by identity (and kept alive by the key); the summary names its
        # parameters' tokens (Summary.reached).
        return ("module", value.module, value.module.params)
    if isinstance(value, ClassValue):
        return ("class", id(class_of(value)))
    if isinstance(value, RefValue):
        return ("ref", value.qualname)
    items = module_items(value)
    if items:
        return ("modules", tuple(id(m.origin) for m in items))
    if isinstance(value, ParamsValue):
        return ("params", value.kind, value.params)
    return containers.signature(value)


def _same_effects(a: Summary, b: Summary) -> bool:
    """Do two rounds of a recursive summary say the same?"""
    def shape(summary: Summary) -> tuple:
        result = summary.result
        described = ("bottom",) if result is BOTTOM else (
            "tensor", result.requires_grad, result.leaf) if isinstance(result, TensorValue) \
            else (type(result).__name__, result.kind)
        return (described, summary.returns_arg,
                frozenset((index, id(write.defined_at or write.node))
                          for index, write in summary.writes.items()),
                frozenset((str(token), id(save.node)) for token, save in summary.saves))
    return shape(a) == shape(b)

@quick
@dataclass(frozen=True)
class Bound:
    """A call's arguments bound to the callee's parameters, as Python binds them.

    ``slots`` holds one value (and its expression, None for a default) per named parameter
    after `self` (positional-only, positional-or-keyword, keyword-only, in that order), then
    the arguments `*args` collects, then the values of `**kwargs`.  Inside the callee a
    tensor in slot i is the token ("arg", i), so a summary's effects map back to slots."""

    slots: tuple[tuple[Value, cst.BaseExpression | None], ...]
    named: int  # how many named parameters lead the slots
    star: int  # how many arguments `*args` collects (after the named ones)
    keywords: tuple[str, ...]  # the names `**kwargs` collects, in order (last slots)

    @property
    def layout(self) -> tuple:
        return (self.named, self.star, self.keywords)

    @property
    def values(self) -> tuple[Value, ...]:
        return tuple(value for value, _ in self.slots)


def named_params(function: cst.FunctionDef, offset: int) -> list[cst.Param]:
    """The parameters a call binds by position or name, after ``offset`` leading ones."""
    params = function.params
    return (list(params.posonly_params) + list(params.params))[offset:] + \
        list(params.kwonly_params)


def spread(args: Args) -> list[Given] | None:
    """``args`` with `*seq` and `**mapping` spread out, when what they hold is known (a
    tuple display, what a `*args` or `**kwargs` parameter collected); None when not."""
    given: list[Given] = []
    for arg, value in args:
        if arg.star == "*":
            if not isinstance(value, ContainerValue) or value.items is None:
                return None
            given.extend((None, item, None) for item in value.items)
        elif arg.star == "**":
            if not isinstance(value, KeywordsValue):
                return None
            given.extend((name, item, None) for name, item in value.items)
        else:
            given.append((arg.keyword.value if arg.keyword is not None else None, value,
                          arg.value))
    return given


def bind(function: cst.FunctionDef, offset: int, given: Sequence[Given]) -> Bound | None:
    """Bind the arguments ``given`` to ``function``'s parameters after ``offset``; None
    when Python would raise TypeError (a missing or unexpected argument), which a summary
    cannot describe."""
    params = function.params
    named = named_params(function, offset)
    positional_count = len(params.posonly_params) + len(params.params) - offset
    positional_count = max(positional_count, 0)
    values: dict[int, tuple[Value, cst.BaseExpression | None]] = {}
    extra: list[tuple[Value, cst.BaseExpression | None]] = []
    keywords: list[tuple[str, tuple[Value, cst.BaseExpression | None]]] = []
    index = {param.name.value: i for i, param in enumerate(named)
             if i >= len(params.posonly_params) - offset}
    position = 0
    for keyword, value, node in given:
        argument = (constant_of(node) or value, node)
        if keyword is None:
            if position < positional_count:
                values[position] = argument
                position += 1
            elif type(params.star_arg) is cst.Param:
                extra.append(argument)
            else:
                return None
            continue
        slot = index.get(keyword)
        if slot is not None and slot not in values:
            values[slot] = argument
        elif slot is None and params.star_kwarg is not None:
            keywords.append((keyword, argument))
        else:
            return None
    slots: list[tuple[Value, cst.BaseExpression | None]] = []
    for i, param in enumerate(named):
        if i in values:
            slots.append(values[i])
        elif param.default is not None:
            # A default the literal does not give: marked by its expression, for the body
            # to evaluate where it is defined (`act_layer=nn.Tanh`).
            slots.append((constant_of(param.default) or
                          Value(Kind.UNKNOWN, origin=param.default), None))
        else:
            return None
    return Bound(tuple(slots + extra + [argument for _, argument in keywords]), len(named),
                 len(extra), tuple(name for name, _ in keywords))


def constant_of(node: cst.BaseExpression | None) -> ConstValue | None:
    """A literal argument or default (`"copy"`, `False`, `None`) as a value."""
    literal = literal_constant(node)
    return None if literal is NO_LITERAL else ConstValue(origin=node, literal=literal)


def literal_argument(node: cst.BaseExpression, value: Value) -> Value:
    """What a call passes for a parameter the body runs with: a literal as that literal
    (`norm="none"`, `inplace=True`: a branch it decides), an int as an int (an index)."""
    return value if is_int(value) else constant_of(node) or value


def _argument_index(value: Value) -> int | None:
    """The slot of a summarised body's tensor argument, when ``value`` is that tensor
    itself (not a view of it)."""
    storage = value.storage
    if isinstance(value, TensorValue) and value.via is None and isinstance(storage, tuple) \
            and len(storage) == 2 and storage[0] == "arg" and isinstance(storage[1], int):
        return storage[1]
    return None


def _children(module: ModuleValue) -> list[ModuleValue]:
    """The submodules of ``module`` the file shows."""
    info = module.module
    found: list[ModuleValue] = list(info.children or ())
    if info.element is not None:
        found.append(info.element)
    cls = info.cls
    classes = [cls] if cls is not None else []
    while classes:
        current = classes.pop(0)
        found.extend(value for key, value in current.attrs.items()
                     if key.count(".") == 1 and isinstance(value, ModuleValue))
        classes.extend(current.bases)
    return found


def _is_instance(member: ModuleValue, wanted: Value) -> bool | None:
    """Is the module ``member`` an instance of the class(es) ``wanted``?  None: not known
    (torch.nn classes subclass each other in ways the tables do not say)."""
    if isinstance(wanted, ContainerValue) and wanted.items is not None:
        answers = [_is_instance(member, item) for item in wanted.items]
        return True if True in answers else False if all(
            a is False for a in answers) else None
    info = member.module
    if isinstance(wanted, RefValue):
        if wanted.qualname in MODULE_BASES:
            return True
        spec = ops.module(wanted.qualname)
        return True if spec is not None and info.spec is spec else None
    target = wanted.module.cls if isinstance(wanted, ClassValue) and \
        wanted.module is not None else None
    if target is None:
        return None
    if info.cls is not None:
        # Its other bases are not of this file, so not subclasses of ``target``.
        return _derives(info.cls, target)
    return False if info.spec is not None else None


def _derives(cls: ClassInfo, target: ClassInfo) -> bool:
    return cls is target or any(_derives(base, target) for base in cls.bases)


def _returns_something(function: cst.FunctionDef) -> bool:
    """Does ``function`` (not a function inside it) return a value other than None?"""
    def visit(node: cst.CSTNode) -> bool:
        for child in code_children(node):
            if isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            if type(child) is cst.Return and child.value is not None and not (
                    type(child.value) is cst.Name and child.value.value == "None"):
                return True
            if visit(child):
                return True
        return False
    return visit(function.body)
