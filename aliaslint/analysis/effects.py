"""How a callee's effects land in the caller, beyond its writes to tensor arguments: the
values it returns (an argument, a view of one, a tensor it made, memory one object holds,
a container of them), its writes to elements of container arguments and to memory the
caller holds by identity (parameters of a module it was given, an optimizer it steps), the
grad mode and must/may status those writes keep.  Used by the summaries of modules.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
import libcst as cst
from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State
from aliaslint.analysis import containers
from aliaslint.analysis.events import Save, Write
from aliaslint.nodes import Facts, walk_code
from aliaslint.analysis.scopes import ClassInfo, Env, Summary, is_state, state_tokens
from aliaslint.analysis.syntax import declares_mutation
from aliaslint.analysis.values import UNKNOWN, ClassValue, ConstValue, ContainerValue, FunctionValue, Kind, ModuleValue, ParamsValue, TensorValue, Value, join, replace


# The ids of each function's nodes (while it is kept: see Facts).
_INSIDE: Facts[frozenset[int]] = Facts()


class Effects(Part):
    """Maps a summary's effects onto the caller's values."""

    autograd: api.Autograd
    expressions: api.Expressions
    loops: api.Loops

    def __init__(self, state: State) -> None:
        super().__init__(state)

    @staticmethod
    def param_mapping(info: ClassInfo, params: frozenset) -> dict[object, frozenset]:
        """Parameter tokens seen inside a class's methods → the instance's tokens."""
        mapping: dict[object, frozenset] = {info.self_token: params}
        for token in info.all_params():
            mapping[token] = params
        for base in info.bases:
            mapping[base.self_token] = params
        return mapping

    def _outer_item(self, item: Value, position: object,
                    args: Sequence[tuple[Value, cst.BaseExpression | None]], node: cst.CSTNode,
                    env: Env, function: cst.FunctionDef) -> Value:
        """An element of a tuple a callee returns, as the caller sees it: an argument it
        returned (itself, or a view of it), a tensor it made (new at each call), a module
        or an optimizer; anything else is not known."""
        if isinstance(item, (ModuleValue, ParamsValue)):
            return item
        if not isinstance(item, TensorValue):
            return UNKNOWN
        if _of_argument(item) and isinstance(item.storage, tuple):
            index = item.storage[1]
            value = args[index][0] if index < len(args) else UNKNOWN
            if not isinstance(value, TensorValue):
                return UNKNOWN
            if item.via is None:
                return value
            return self.expressions.view(value, node, None) if item.via == "view" and \
                value.storage is not None else UNKNOWN
        if not _allocated(item.storage):
            return UNKNOWN  # a parameter: kept by identity elsewhere
        if not self._in(item.storage, function):
            # Memory one object holds (a cache on `self`, a global) is the same memory for
            # the caller; a token of a class built several times stands for no one object.
            return item if self._single(item.storage) else UNKNOWN
        token = ("alloc", id(node), position)
        if self.state.loops:
            self.loops.renew(token, env)  # the call runs again: a new tensor each time
        return TensorValue(origin=node, storage=token, counter=token,
                           requires_grad=item.requires_grad, leaf=item.leaf)

    def made_inside(self, function: cst.FunctionDef) -> frozenset[int]:
        """The ids of the nodes of ``function``: a storage token made at one of them is the
        callee's own (a tensor or module it built), not the caller's."""
        found = _INSIDE.get(function)
        if found is None:
            found = _INSIDE.put(function, frozenset(map(id, walk_code(function))))
        return found

    def _in(self, token: object, function: cst.FunctionDef) -> bool:
        """Was ``token`` made by code of ``function``?"""
        return isinstance(token, tuple) and len(token) >= 2 and \
            token[1] in self.made_inside(function)

    def made_by(self, token: object, function: cst.FunctionDef) -> bool:
        """Was ``token`` allocated by code of ``function`` (in this iteration of a loop of it,
        or an earlier one)?"""
        if isinstance(token, tuple) and len(token) == 2 and token[0] == "earlier":
            token = token[1]
        return _allocated(token) and self._in(token, function)

    def _single(self, token: object) -> bool:
        return self.state.module_instances().single(token)

    def held_by_caller(self, token: object, inside: frozenset[int]) -> bool:
        """Memory made outside the callee that the caller reaches by identity: a parameter
        of a module (built by the caller, or by the class: `self.fc`), or a tensor one
        object holds (a cache on `self`, a global; see instances.py)."""
        if not (isinstance(token, tuple) and len(token) >= 2 and isinstance(token[1], int)) \
                or token[1] in inside:
            return False
        return token[0] in ("params", "instance") or _allocated(token) and self._single(token)

    @staticmethod
    def innermost(write: Write, function: cst.FunctionDef) -> tuple[cst.CSTNode, str, bool]:
        """Where a called function's write to its argument is written, which function
        writes there, and whether that function says it writes: a helper that passes its
        argument on to another that writes it silently names the inner write; one that
        hands it to a function that says so (`normalize_`) is itself the silent writer."""
        if write.callee is not None and write.defined_at is not None and not write.declared:
            return write.defined_at, write.callee, False
        if write.activation and write.callee is None and write.defined_at is not None:
            # An in-place module it calls (`self.act = nn.ReLU(inplace=True)`): where that
            # module is built is where the write is written (and fixed).
            return write.defined_at, function.name.value, declares_mutation(function)
        return write.node, function.name.value, declares_mutation(function)

    @contextmanager
    def grad_of(self, write: Write, env: Env) -> Iterator[None]:
        """A write the callee made with grad mode off (`@torch.no_grad()` on it, a `with`
        block in it) is made with grad mode off wherever it is called."""
        grad = env.flow.grad
        if write.grad_enabled is False:
            env.flow.grad = False
        try:
            yield
        finally:
            env.flow.grad = grad

    @contextmanager
    def may(self, write: Write, summary: Summary) -> Iterator[None]:
        """A may-effect (one of several definitions that may run, a hook perhaps
        registered): what follows is `low`.  A write the callee makes on some of its paths
        only is not one: like a branch of the caller's own code, one concrete path through
        the callee makes it (a branch a literal argument switches off is not run at all)."""
        may, self.state.may_write = self.state.may_write, self.state.may_write or write.may
        try:
            yield
        finally:
            self.state.may_write = may

    @staticmethod
    def reaches(summary: Summary, args: Sequence[tuple[Value, cst.BaseExpression | None]],
                receiver: Value | None) -> bool:
        """Are the callee's writes to memory the caller holds by identity known to come
        after any backward pass it runs through the caller's graphs?  Only when every
        graph it was given is one of its tensor arguments' (a torch.nn module or an
        optimizer holds none): a list, a dict, an object, a module of this file or the
        receiver (`self.loss`) may hold the loss whose backward it runs before stepping."""
        if not summary.backward:
            return True
        return receiver is None and all(
            isinstance(value, (TensorValue, ParamsValue, ConstValue, FunctionValue,
                               ClassValue))
            or isinstance(value, ModuleValue) and value.module.cls is None
            for value, _ in args)

    def apply_reached(self, summary: Summary,
                      args: Sequence[tuple[Value, cst.BaseExpression | None]],
                      mapping: dict[object, frozenset], node: cst.CSTNode, env: Env,
                      function: cst.FunctionDef, *, ordered: bool = True) -> None:
        """The callee wrote parameters of a module it was given, or stepped an optimizer it
        was given: those storages, by the caller's tokens, are written at the call.  Only
        the saves of them are dirtied (AL101): what the caller's names see is left to the
        body's own run, which reports the write itself.  Not ``ordered`` (see `reaches`): a
        backward pass it runs may come before the write, so no save is dirtied; a step still
        changes what every reference to the parameters sees."""
        mappings = [mapping] + [
            self.param_mapping(value.module.cls, value.module.params)
            for value, _ in args if isinstance(value, ModuleValue)
            and value.module.cls is not None]
        for write in summary.reached:
            tokens = write.params if write.target is None else frozenset(
                {write.target.storage})
            outer: set[object] = set()
            for token in tokens:
                # Two instances of one class given (`update_ema(model, ema)`): the class's
                # token names either one's parameters, so neither is claimed.
                mapped = {m[token] for m in mappings if token in m}
                if len(mapped) > 1:
                    continue
                outer.update(next(iter(mapped)) if mapped else (token,))
            applied = replace(
                write, node=node, stmt=self.state.stmt, defined_at=write.defined_at or write.node,
                callee=write.callee or function.name.value, label=None,
                grad_enabled=False if write.grad_enabled is False else env.flow.grad,
                may=write.may, params=frozenset(outer))
            if ordered:
                self.autograd.log_write(applied, env)
                for token in outer:
                    self.autograd.dirty(token, applied, env)
            if write.target is None:
                # An optimizer step (or `load_state_dict`) inside the callee writes every
                # parameter: the caller's references to them (a kept `state_dict()`) see
                # the new values, as after a step of its own.
                self.autograd.mark_stale(outer, applied, set(), env)


    def kept_by_call(self, value: ModuleValue | ParamsValue, node: cst.CSTNode,
                     function: cst.FunctionDef) -> ModuleValue | ParamsValue:
        """A snapshot the callee took (`return model.state_dict()`, `{"model":
        model.state_dict()}`) is taken, for the caller, by the call it keeps."""
        snapshot = value.snapshot
        if snapshot is None or id(snapshot) not in self.made_inside(function):
            return value
        return replace(value, snapshot=node)

    def caller_elements(self, token: object, args: Sequence[
            tuple[Value, cst.BaseExpression | None]]) -> list[Value]:
        """The caller's elements an element token of the callee stands for."""
        found = containers.element_token(token)
        if found is None or found[0] >= len(args):
            return []
        return containers.at_path(args[found[0]][0], found[1])

    def write_elements(self, token: object, write: Write,
                       args: Sequence[tuple[Value, cst.BaseExpression | None]],
                       node: cst.CSTNode, label: str | None, env: Env,
                       function: cst.FunctionDef) -> None:
        """A callee's write to elements of a container argument, on the caller's tensors."""
        found = containers.element_token(token)
        assert found is not None
        elements = self.caller_elements(token, args)
        for element in elements:
            if not isinstance(element, TensorValue):
                continue
            if write.guessed:  # which element is not known, here or in the caller
                element = replace(element, guessed=True)
            self.autograd.write(element, args[found[0]][1], node, label, env,
                                activation=write.activation, defined_at=write.node, visible=False,
                                callee=function.name.value, declared=declares_mutation(function))

    def returned_container(self, summary: Summary, result: ContainerValue,
                           args: Sequence[tuple[Value, cst.BaseExpression | None]],
                           mapping: dict[object, frozenset], node: cst.CSTNode,
                           label: str | None, env: Env, graph: frozenset[int],
                           function: cst.FunctionDef) -> Value:
        """A container the callee returns, in the caller's terms: its argument's elements
        are the caller's; a tensor it made is a new tensor per path, holding the saves the
        callee left on it, and its graph is the callee's graph of it, moved onto the
        caller's saves (`return self.pi(h), h`: the logits' graph holds what tanh saved of
        `h` and what the Linears saved of their inputs and parameters)."""
        renamed: dict[int, list[Save]] = {}  # a callee's save → the caller's
        made: dict[tuple, TensorValue] = {}  # path → the callee's tensor made there

        def moved(value: Value, path: tuple) -> Value:
            if isinstance(value, ContainerValue):
                items = None if value.items is None else tuple(
                    moved(v, (*path, k)) for k, v in enumerate(value.items))
                each = None if value.each is None else moved(value.each, (*path, "each"))
                return replace(value, items=items, each=each, origin=node)
            if isinstance(value, (ModuleValue, ParamsValue)):
                # A factory's model and its optimizer keep their identity.
                return self.kept_by_call(value, node, function)
            if not isinstance(value, TensorValue):
                return value if value.kind is Kind.OTHER else UNKNOWN
            if containers.element_token(value.storage) is not None:
                found = self.caller_elements(value.storage, args)
                if not found:
                    return UNKNOWN
                result = found[0]
                for other in found[1:]:
                    result = join(result, other)
                return result
            if value.storage is None and value.among:
                # Some element of several tensors (a loop's outputs): one new tensor per
                # path for the caller, holding the saves of each, when the callee made
                # them all.
                if not all(self.made_by(token, function) for token in value.among):
                    return UNKNOWN
                token = ("alloc", id(node), path)
                if self.state.loops:
                    self.loops.renew(token, env)
                tensor = TensorValue(origin=node, storage=token, counter=token,
                                     requires_grad=value.requires_grad)
                tokens = value.among
            else:
                # An argument (itself or a view of it), memory one object holds, a tensor
                # the callee made (new at each call), as _outer_item says.
                outer = self._outer_item(value, path, args, node, env, function)
                if not (isinstance(outer, TensorValue) and
                        outer.storage == ("alloc", id(node), path)):
                    return outer
                tensor, tokens = outer, frozenset({value.storage})
            for stored, save in summary.saves:
                if stored in tokens:
                    copy = self.autograd.new_save(tensor, node, label, save.what, env)
                    if copy is not None:
                        renamed.setdefault(save.id, []).append(copy)
            made[path] = value
            return tensor

        moved_result = moved(result, ())
        self.move_saves(summary, args, mapping, node, label, env, renamed, function)

        def with_graphs(value: Value, path: tuple) -> Value:
            if isinstance(value, ContainerValue):
                items = None if value.items is None else tuple(
                    with_graphs(v, (*path, k)) for k, v in enumerate(value.items))
                each = None if value.each is None else with_graphs(value.each, (*path, "each"))
                return replace(value, items=items, each=each)
            theirs = made.get(path)
            if theirs is None or not isinstance(value, TensorValue):
                return value
            return replace(value, graph=graph | frozenset(
                copy.id for old in theirs.graph for copy in renamed.get(old, ())))
        return with_graphs(moved_result, ())

    def move_saves(self, summary: Summary,
                   args: Sequence[tuple[Value, cst.BaseExpression | None]],
                   mapping: dict[object, frozenset], node: cst.CSTNode, label: str | None,
                   env: Env, renamed: dict[int, list[Save]],
                   function: cst.FunctionDef, *, may: bool = False,
                   result_saves: Callable[[object], list[Save | None] | None] | None = None
                    ) -> None:
        """The saves a callee left pending, moved onto the caller's storages (its tensor
        arguments and their elements, the parameters of its modules, what ``result_saves``
        says of the tensor it returns, memory one object holds) or kept as they are (what
        only the callee held); and the pairs of a save the callee wrote after it, on those
        saves.  ``renamed`` maps each callee save's id to the caller's saves."""
        for token, save in summary.saves:
            if save.id in renamed:
                continue
            copies: list[Save | None] = []
            made = None
            if isinstance(token, tuple) and token[0] == "arg" and token[1] < len(args):
                value, arg_node = args[token[1]]
                copies.append(self.autograd.new_save(value, node, label, "its input", env,
                                                     arg_node))
            elif containers.element_token(token) is not None:
                index = token[1]
                copies.extend(self.autograd.new_save(element, node, label, "its input", env,
                                                     args[index][1])
                              for element in self.caller_elements(token, args)
                              if isinstance(element, TensorValue))
            elif is_state(token):
                # A tensor the callee left on its object (`self.last_attn = attn`): the
                # caller's object holds it, saved.
                copies.extend(self.autograd.save(t, t, node, label, save.what, env)
                              for t in state_tokens(token, mapping))
            elif token in mapping:
                copies.extend(self.autograd.save(t, t, node, label, "its parameters", env)
                              for t in mapping[token])
            elif result_saves is not None and (made := result_saves(token)) is not None:
                copies.extend(made)
            elif _allocated(token) and self._single(token) and not self._in(token, function):
                # A tensor one object holds (a cache on `self`, a global): the same memory
                # for the caller, saved by the call.
                copies.append(self.autograd.save(token, save.counter, node, label, save.what, env))
            elif not save.conditional:
                # A tensor only the callee held (the state a loop in it passed along):
                # autograd holds it still, and what the callee wrote of it after saving it
                # is read by the caller's backward.
                pending = env.flow.saves.get(token, ())
                if save not in pending:
                    env.flow.saves[token] = pending + (save,)
                copies.append(save)
            renamed[save.id] = [copy for copy in copies if copy is not None]
        for write, save in summary.dirty:
            if save.conditional:
                continue
            for copy in renamed.get(save.id, ()):
                pair = (replace(write, may=True) if may and not write.may else write, copy)
                if pair not in env.flow.dirty:
                    env.flow.dirty = env.flow.dirty + (pair,)


def _items(value: Value) -> tuple[Value, ...]:
    """The elements a tuple or list holds: its items, or the one value every element is."""
    if not isinstance(value, ContainerValue):
        return ()
    if value.items is not None:
        return value.items
    return (value.each,) if value.each is not None else ()


def _allocated(token: object) -> bool:
    return isinstance(token, tuple) and len(token) >= 2 and token[0] == "alloc" and \
        isinstance(token[1], int)


def _of_argument(value: TensorValue) -> bool:
    """The callee's argument itself or a view of it (not a `.data` or a detached alias)."""
    storage = value.storage
    return isinstance(storage, tuple) and len(storage) == 2 and storage[0] == "arg" and \
        value.counter == storage and value.via in (None, "view")
