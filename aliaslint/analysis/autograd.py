"""Autograd's bookkeeping: in-place writes, saves for backward, backward passes."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.dispatch import kept_modules
from aliaslint.analysis.events import (
    InplaceWrite,
    LostWrite,
    Save,
    SavedWrite,
    Write,
    WriteInputs,
)
from aliaslint.analysis.opfacts import chosen_saves, input_saved, refused_slope, tensor_inputs
from aliaslint.analysis.scopes import Env
from aliaslint.analysis.syntax import (
    FALSE,
    TRUE,
    attr_key,
    discards,
    is_literal,
    names_assigned_by,
    names_of,
)
from aliaslint.analysis.values import (
    replace,
    Args,
    ContainerValue,
    Kind,
    GradModeValue,
    ObjectValue,
    TensorValue,
    Value,
    Written,
    refers_to,
)


class Autograd(Part):
    """Records writes, saves and backward passes on the path's flow."""

    calls: api.Calls

    def write(self, target: Written, target_node: cst.CSTNode | None, node: cst.CSTNode,
              label: str | None, env: Env, *, activation: bool = False,
              defined_at: cst.CSTNode | None = None, visible: bool = True, fill: bool = False,
              callee: str | None = None, declared: bool = False, inputs: WriteInputs = (),
              region: tuple | None = None, index: tuple | None = (),
              cover: tuple | None = None, may: bool = False,
              assumed: bool = False) -> Written:
        """An in-place write to ``target``'s storage; returns the written tensor's value.

        ``visible``: the code at the write names what it writes (`x.relu_()`,
        `inplace=True` at the call), so reading that name later is intended; a
        module built with `inplace=True` elsewhere, or a helper function that
        writes its argument, gives no such hint.
        """
        cover = cover if cover is not None else getattr(target, "cover", None)
        write = Write(node=node, stmt=self.state.stmt, target=target, target_node=target_node,
                      label=label, via=target.via, activation=activation,
                      grad_enabled=env.flow.grad, defined_at=defined_at, fill=fill,
                      callee=callee, declared=declared, inputs=inputs,
                      region=region if region is not None else target.region, index=index,
                      cover=cover, joint=self._joint(cover, env),
                      may=may or self.state.may_write,
                      checkpoint=self.state.checkpointed.get(id(self.state.function)),
                      guessed=getattr(target, "guessed", False),
                      assumed=assumed or self.state.may_effect)
        self.state.emit(InplaceWrite(node, self.state.stmt, write))
        self.log_write(write, env)
        self.dirty(target.storage, write, env)
        for token in sorted(getattr(target, "among", ()), key=repr):
            # Some element of a container of several tensors: any of them may be written.
            self.dirty(token, write, env)
        if target.copied_at is not None and target.copied_at is target_node and \
                (fill and node is self.state.stmt or discards(self.state.stmt, node)
                 or type(node) is cst.AugAssign):
            # `x[idx][m] = v`, a bare `x[mask].add_(1)`: the copy is dropped at once.
            self.state.emit(LostWrite(node, self.state.stmt, write,
                                      self._leading_index(target_node)))
        exclude = names_assigned_by(self.state.stmt)
        if visible:
            exclude |= names_of(target_node)
        self.mark_stale({target.storage, target.maybe_of}, write, exclude, env)
        return target

    def log_write(self, write: Write, env: Env) -> None:
        """While a function is summarised: the write is one of its effects, made on this
        path (see Flow.done)."""
        if self.state.write_log is None:
            return
        self.state.write_log.append(write)
        env.flow.done = (env.flow.done or frozenset()) | {write}

    @staticmethod
    def _joint(cover: tuple | None, env: Env) -> frozenset | None:
        """Write.joint for a write that reaches ``cover`` of its root: this cover and those
        of the earlier writes to the root that names still see (each stale name keeps the
        last write it has not read), when the root is a tensor made here (an allocation
        token: an out-of-place op, a factory, a clone; not an argument, a parameter, an
        attribute, nor a tensor an earlier iteration made) that no attribute or container
        holds, so no one outside the code sees it while it is filled."""
        if cover is None or not cover[2]:
            return None
        token = cover[0][0]
        if not (isinstance(token, tuple) and token and token[0] == "alloc"):
            return None
        scope: Env | None = env
        while scope is not None:
            for name, value in scope.names.items():
                if "." in name and refers_to(value, {token}) or \
                        isinstance(value, ContainerValue) and _holds(value, token):
                    return None
            scope = scope.parent
        joint = {cover}
        for earlier in env.flow.stale.values():
            if earlier.joint and earlier.cover is not None and earlier.cover[0] == cover[0]:
                joint |= earlier.joint
        return frozenset(joint)

    def _leading_index(self, copy: cst.CSTNode) -> bool:
        """Is ``copy`` `x[i]` with ``i`` proven one-dimensional (see LostWrite)?"""
        if type(copy) is not cst.Subscript or len(copy.slice) != 1 or \
                type(copy.slice[0].slice) is not cst.Index:
            return False
        index = copy.slice[0].slice.value
        if type(index) is cst.List:
            return bool(index.elements) and all(
                type(e) is cst.Element and type(e.value) is cst.Integer
                for e in index.elements)
        value = self.state.index_values.get(id(index))
        return isinstance(value, TensorValue) and value.layout is not None and \
            len(value.layout.shape) == 1

    def absorb(self, target: TensorValue, result: TensorValue, env: Env) -> None:
        """After an in-place write (`t.copy_(v)`, `t[i] = v`, `t.mul_(w)`) whose result
        requires grad: autograd rebased the written tensor onto the write's graph
        (CopyBackwards, CopySlices, MulBackward0…), so every name for it, and for its
        views, now requires grad and a backward through it reads the write's saves."""
        if target.storage is None:
            return
        requires = result.requires_grad is True
        if not requires and result.graph <= target.graph and result.pending <= target.pending:
            return
        for name, value in env.names.items():
            if isinstance(value, TensorValue) and value.storage == target.storage and \
                    value.counter == target.counter and value.via in (None, "view"):
                env.names[name] = replace(
                    value, requires_grad=True if requires else value.requires_grad,
                    leaf=value.leaf and value.requires_grad is True,
                    graph=value.graph | result.graph, pending=value.pending | result.pending)

    def rebind_tensor(self, node: cst.CSTNode | None, value: TensorValue, env: Env) -> None:
        """A method changed the tensor a name holds in place (`t.requires_grad_()`):
        the name now holds ``value``."""
        key = node.value if type(node) is cst.Name else attr_key(node) if type(node) is cst.Attribute else None
        if key is not None and key in env.names:
            env.names[key] = value

    def mark_stale(self, tokens: set, write: Write, exclude: set, env: Env) -> None:
        """Every other name that shares memory with ``tokens`` now sees new values."""
        tokens.discard(None)
        if not tokens:
            return
        for name, value in env.names.items():
            if name in exclude:
                continue
            if refers_to(value, tokens):
                env.flow.stale[name] = write
            elif write.callee is not None and isinstance(value, ContainerValue) and any(
                    tensor.storage in tokens for tensor in containers.tensors_in(value)):
                # A function the code calls wrote a tensor this container holds: reading
                # that element (`batch["image"]`) sees the change (see _read_element).
                env.flow.stale[containers.element_key(name)] = write
            elif isinstance(value, ObjectValue):
                # A module an object keeps (`self.module = model` in its `__init__`):
                # `ema.module` sees the new values too.
                for attr, kept in kept_modules(value.cls):
                    if refers_to(kept, tokens):
                        env.flow.stale[f"{name}.{attr}"] = write

    def dirty(self, token: object, write: Write, env: Env) -> None:
        if token is None:
            return
        for save in env.flow.saves.get(token, ()):
            pair = (write, save)
            if pair not in env.flow.dirty:
                env.flow.dirty = env.flow.dirty + (pair,)

    def new_save(self, value: Value, node: cst.CSTNode, label: str | None, what: str,
                 env: Env, what_node: cst.CSTNode | None = None, *,
                 conditional: bool = False) -> Save | None:
        if not isinstance(value, TensorValue) or value.storage is None:
            return None
        return self.save(value.storage, value.counter, node, label, what, env, what_node,
                         conditional=conditional)

    def save(self, storage: object, counter: object, node: cst.CSTNode, label: str | None,
             what: str, env: Env, what_node: cst.CSTNode | None = None, *,
             conditional: bool = False, assumed: bool = False,
             slope: cst.CSTNode | None = None) -> Save:
        """Record that autograd now holds ``storage`` for a pending backward pass."""
        save_id = self.state.save_ids.recent((storage, counter, id(node), label, what,
                                              id(what_node),
                                              conditional, assumed, id(slope)))
        if self.state.loops:  # aged when the pass hands its state back to the loop's head
            self.state.loops[-1].made.add(save_id)
        save = Save(save_id, storage, counter, node, label, what, what_node, conditional,
                    assumed, slope)
        self.state.saves_log.append(node)
        if "unchecked" in self.state.save_modes or "autocast" in self.state.save_modes and \
                what != "its result":
            return save  # made, but not the tensor the program holds: see training.py
        pending = env.flow.saves.get(storage, ())
        if save not in pending:
            env.flow.saves[storage] = pending + (save,)
        return save

    def slope_save(self, op: ops.Op | None, nodes: dict[str, cst.BaseExpression],
                   target: TensorValue, node: cst.CSTNode, label: str | None,
                   env: Env) -> frozenset[int]:
        """Before an in-place activation writes ``target``: when its slope is a negative
        literal, its backward will refuse to run.  Modelled as a save of the result that the
        write itself dirties, so a backward pass that reaches it reports the write."""
        slope = refused_slope(op, nodes)
        if slope is None or target.requires_grad is not True or env.flow.grad is not True \
                or target.storage is None:
            return frozenset()
        save = self.save(target.storage, target.counter, node, label, "its result", env,
                         slope=slope)
        return frozenset({save.id})

    def consume(self, value: TensorValue, node: cst.CSTNode, label: str | None, env: Env, *,
                returned: bool = False, retain: bool = False) -> None:
        """A backward pass through ``value``'s graph (or its return to the caller)."""
        graph = value.graph
        if self.state.consume_log is not None and not returned:
            self.state.consume_log.append(graph)
        if not graph:
            return
        for write, save in env.flow.dirty:
            # A conditional save is proven made only by a backward pass from a value
            # that follows from it; returning the value proves nothing.
            if save.id in graph and (not save.conditional or save.id in value.pending
                                     and not returned):
                self.state.emit(SavedWrite(write.node, write.stmt, write, save, node, label,
                                           returned))
        if retain:
            return
        env.flow.dirty = tuple(d for d in env.flow.dirty if d[1].id not in graph)
        for token in list(env.flow.saves):
            kept = tuple(s for s in env.flow.saves[token] if s.id not in graph)
            if kept:
                env.flow.saves[token] = kept
            else:
                del env.flow.saves[token]

    def requires_grad(self, inputs: Sequence[Value], env: Env) -> bool | None:
        if env.flow.grad is False:
            return False
        tensors = [v for v in inputs if isinstance(v, TensorValue)]
        if any(v.requires_grad for v in tensors):
            return True if env.flow.grad else None
        if all(v.requires_grad is False for v in tensors):
            return False
        return None

    def record_saves(self, op: ops.Op, bound: dict[str, Value], result: TensorValue,
                     node: cst.CSTNode, env: Env,
                     nodes: dict[str, cst.BaseExpression] | None = None) -> TensorValue:
        """Autograd's saves for ``op`` at ``node``; returns ``result`` with its graph."""
        inputs, unknown = tensor_inputs(bound)
        graph: frozenset[int] = frozenset().union(*(v.graph for v in inputs))
        # An element not known here may require grad.
        requires = self.requires_grad([*inputs, *([TensorValue()] if unknown else [])], env)
        result = replace(result, requires_grad=requires, graph=graph | result.graph)
        # One input that may be a tensor (others are numbers, strings, None): if the
        # result requires grad, that input does.
        sole = inputs[0] if len(inputs) == 1 and not any(
            v.kind is Kind.UNKNOWN for v in bound.values()) else None
        conditional = requires is None and sole is not None and sole.requires_grad is None \
            and env.flow.grad is True
        if sole is not None and requires is None:
            result = replace(result, pending=sole.pending)
        if requires is not True and not conditional:
            return result
        saves = chosen_saves(op, bound, nodes)
        if not saves:
            return result
        new = set()
        for name in sorted(saves):
            if name == "result":
                save = self.new_save(result, node, None, "its result", env,
                                     conditional=conditional)
            elif name in bound and (conditional and bound[name] is sole or
                                    input_saved(name, bound, op.saved_when)):
                save = self.new_save(bound[name], node, None, "its input", env,
                                     (nodes or {}).get(name), conditional=conditional)
            else:
                save = None
            if save is not None:
                new.add(save.id)
        result = replace(result, graph=result.graph | new)
        return replace(result, pending=result.pending | new) if conditional else result

    def unknown_call(self, args: Args, env: Env) -> None:
        # An unknown function given a tensor may run its backward: forget the
        # hazards of that graph rather than report them later.
        self.calls.escape(args)
        for _, value in args:
            if isinstance(value, TensorValue) and value.graph:
                env.flow.dirty = tuple(d for d in env.flow.dirty if d[1].id not in value.graph)

    def grad_mode(self, op: ops.Op, args: Args) -> GradModeValue:
        enabled = op.extra.get("grad_enabled")
        if enabled is None and args:
            # set_grad_enabled(flag) / inference_mode(mode): a literal says which.
            node = args[0][0].value
            enabled = True if is_literal(node, TRUE) else False if is_literal(
                node, FALSE) else None
            if op.extra.get("mode_arg") and enabled is not None:
                enabled = not enabled  # inference_mode(True) disables grad
        elif enabled is False and args and op.extra.get("mode_arg"):
            node = args[0][0].value
            enabled = is_literal(node, FALSE)  # inference_mode(False) keeps grad on
        return GradModeValue(enabled=enabled)


def _holds(container: ContainerValue, token: object) -> bool:
    """Does a tuple or list hold a tensor of this storage (at any depth it knows)?"""
    elements = ([container.each] if container.each is not None else []) + \
        list(container.items or ())
    return any(isinstance(element, ContainerValue) and _holds(element, token)
               or refers_to(element, {token}) for element in elements)
