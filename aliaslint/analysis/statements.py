"""Statements: assignments, imports, branches, loops, `with` and `try`."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.events import DataOnTemporary, PackHookWrite, WriteInputs
from aliaslint.analysis.geometry import index_cover, index_regions, slice_region
from aliaslint.analysis.scopes import Env, is_self_token
from aliaslint.analysis.training import AUTOCASTS, UNCHECKED_SAVES
from aliaslint.analysis.syntax import (
    alias_name,
    attr_key,
    optional_of,
    dotted,
    expressions_in,
    is_alias_expression,
    NO_LITERAL,
    is_literal,
    literal_constant,
    names_bound_in,
)
from aliaslint.analysis.values import (
    replace,
    HandleValue,
    root_of,
    FALSE_VALUE,
    TRUE_VALUE,
    OTHER,
    UNKNOWN,
    ArrayValue,
    ConstValue,
    ContainerValue,
    GradModeValue,
    HooksValue,
    Kind,
    ModuleValue,
    ParamsValue,
    RefValue,
    TensorValue,
    Value,
    any_element,
    kept_as_copy,
    kept_attribute,
)

_AUG_DUNDERS = {
    cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul",
    cst.DivideAssign: "truediv", cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod",
    cst.PowerAssign: "pow", cst.MatrixMultiplyAssign: "matmul", cst.BitAndAssign: "and",
    cst.BitOrAssign: "or", cst.BitXorAssign: "xor", cst.LeftShiftAssign: "lshift",
    cst.RightShiftAssign: "rshift",
}


class Statements(Part):
    """Interprets statements in an environment."""

    autograd: api.Autograd
    builders: api.Builders
    expressions: api.Expressions
    functions: api.Functions
    imports: api.Imports
    loops: api.Loops
    protocol: api.CallProtocol

    def block(self, body: Sequence[cst.CSTNode], env: Env) -> None:
        for stmt in body:
            if env.flow.dead:  # after `break` / `continue`
                return
            self.statement(stmt, env)

    def statement(self, stmt: cst.CSTNode, env: Env) -> None:
        self.state.stats.statements += 1
        self.state.raised_in = None
        handler = self.state.stmt_dispatch.get(type(stmt))
        if handler is not None:
            handler(stmt, env)
        else:
            # Match and other compound statements: evaluate what they contain,
            # then forget what they bound.
            self.state.stmt = stmt
            for expr in expressions_in(stmt):
                self.expressions.eval(expr, env)
            for name in names_bound_in(stmt):
                self.assign_name(name, UNKNOWN, env)

    def simple_line(self, line: cst.SimpleStatementLine, env: Env) -> None:
        self.state.stmt = line
        for small in line.body:
            if env.flow.dead:
                return
            self.small(small, env)

    def small(self, small: cst.BaseSmallStatement, env: Env) -> None:
        # Tested by exact type: libcst's nodes are ABCs, whose isinstance costs a call
        # through the ABC machinery for every test that fails.
        if type(small) is cst.Assign:
            value = self.expressions.eval(small.value, env)
            if value.kind in (Kind.TENSOR, Kind.MODULE) and is_alias_expression(small.value) \
                    or kept_attribute(small.value, value):
                # `prev = w`, `best_model = model`, `previous = model.weight`: a second name,
                # not a copy.
                value = kept_as_copy(value, small.value)
            for target in small.targets:
                self.bind(target.target, value, env)
        elif type(small) is cst.AnnAssign:
            declared = self.expressions.annotation(small.annotation, env)
            value = self.expressions.eval(small.value,
                                          env) if small.value is not None else declared
            if value.kind is Kind.UNKNOWN:
                value = declared
            self.bind(small.target, value, env)
        elif type(small) is cst.AugAssign:
            self._aug_assign(small, env)
        elif type(small) is cst.Expr:
            self.expressions.eval(small.value, env)
        elif type(small) is cst.Return:
            returned = small.value
            if type(returned) is cst.Tuple:
                # `return h, codes`: the caller gets each tensor.
                values = []
                for element in returned.elements:
                    value = self.expressions.eval(element.value, env)
                    values.append(UNKNOWN if type(element) is cst.StarredElement else value)
                    if isinstance(value, TensorValue):
                        self.autograd.consume(value, small, "the tensor returned here", env,
                                              returned=True, retain=True)
                # Optimizers and modules keep their identity through the tuple (Lightning's
                # `configure_optimizers`, factories returning a model and its optimizer);
                # the caller's summary maps each tensor to its memory (modules.py).
                kept = tuple(v if isinstance(v, (ParamsValue, ModuleValue, TensorValue))
                             else UNKNOWN for v in values)
                self._return(ContainerValue(origin=returned, items=kept)
                             if any(v is not UNKNOWN for v in kept) else OTHER, small, env)
            else:
                self._return(self.expressions.eval(returned,
                                                   env) if returned is not None else OTHER,
                             small, env)
            if self.state.function is not None:
                # The path ends at its return: code after it (after the `if` whose branch
                # returned) runs only on the other paths.
                env.flow.dead = True
        elif type(small) is cst.Import:
            for alias in small.names:
                name = dotted(alias.name)
                if alias.asname is not None:
                    self.assign_name(alias_name(alias), RefValue(qualname=name,
                                                                 importer=self.state.path), env)
                else:
                    top = name.split(".")[0]
                    self.assign_name(top, RefValue(qualname=top, importer=self.state.path), env)
        elif type(small) is cst.ImportFrom:
            base = self.imports.absolute_import(small) if small.relative else \
                None if small.module is None else dotted(small.module)
            if isinstance(small.names, cst.ImportStar):
                for name, value in self.imports.star_names(small, base).items():
                    self.assign_name(name, value, env)
                return
            for alias in small.names:
                name = alias_name(alias)
                if base is None:
                    self.assign_name(name, UNKNOWN, env)
                else:
                    qualname = f"{base}.{dotted(alias.name)}"
                    if self.state.type_checking:
                        # Only a type checker runs it: nothing is imported at run time.
                        self.assign_name(name, RefValue(qualname=qualname,
                                                        importer=self.state.path), env)
                        continue
                    self.assign_name(name, RefValue(qualname=qualname, origin=alias,
                                                    importer=self.state.path), env)
                    self.state.emit_reference(alias, qualname)
        elif type(small) is cst.Del:
            self._forget(small.target, env)
        elif type(small) is cst.Break or type(small) is cst.Continue:
            self.loops.leave(env, to_head=type(small) is cst.Continue)
        elif type(small) is cst.Global or type(small) is cst.Nonlocal:
            for item in small.names:
                self.state.rebound.add(item.name.value)
                self.assign_name(item.name.value, UNKNOWN, env)
        else:
            for expr in expressions_in(small):
                self.expressions.eval(expr, env)

    def assign_name(self, name: str, value: Value, env: Env) -> None:
        env.names[name] = value
        env.flow.stale.pop(name, None)
        env.flow.stale.pop(containers.element_key(name), None)
        if env is self.state.top:
            self.state.bindings.setdefault(name, set()).add(id(self.state.stmt))

    def bind(self, target: cst.BaseExpression, value: Value, env: Env,
             evaluate_base: bool = True) -> None:
        if type(target) is cst.Name:
            self.assign_name(target.value, value, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            container = value if isinstance(value, ContainerValue) else None
            if container is not None and container.items is not None and \
                    len(container.items) == len(elements) and not any(
                        type(part) is cst.StarredElement for part in elements):
                for part, item in zip(elements, container.items):
                    self.bind(part.value, item, env, evaluate_base)
                return
            each = container.each if container is not None else None
            for part in elements:
                self.bind(part.value, each or UNKNOWN, env, evaluate_base)
        elif type(target) is cst.StarredElement:
            self.bind(target.value, OTHER, env, evaluate_base)
        elif type(target) is cst.Attribute:
            key = attr_key(target)
            owner = self.expressions.eval(target.value, env) if evaluate_base else UNKNOWN
            if isinstance(owner, TensorValue) and target.attr.value == "requires_grad":
                self._set_requires_grad(owner, target, value, env)
            elif isinstance(owner, TensorValue) and target.attr.value == "data" and \
                    isinstance(target.value, (cst.Subscript, cst.Call)) and \
                    owner.origin is target.value:
                # A tensor object made by this very expression (not a list element, not
                # what a function hands back).
                self.state.emit(DataOnTemporary(target, self.state.stmt, target.value))
            elif key is not None:
                self.assign_name(key, value, env)
                if self.state.state_log is not None and isinstance(value, TensorValue) and \
                        isinstance(owner, ModuleValue) and len(owner.module.params) == 1 \
                        and is_self_token(next(iter(owner.module.params))):
                    # A summarised method keeps a tensor on its object (`self.attn = a`).
                    self.state.state_log[f"self.{target.attr.value}"] = (
                        next(iter(owner.module.params)), value)
        elif type(target) is cst.Subscript:
            base = self.eval_target(target.value, env) if evaluate_base else UNKNOWN
            self.expressions.slices(target, env)
            if isinstance(base, ContainerValue) and len(target.slice) == 1 and \
                    type(target.slice[0].slice) is cst.Index and base.replicated is None:
                # `c[i] = v`: that element replaced (an element not known: some element).
                changed = containers.with_item(
                    base, containers.literal_key(target.slice[0].slice.value), value, target)
                if type(target.value) is cst.Name or attr_key(target.value) is not None:
                    self.bind(target.value, changed, env, evaluate_base=False)
            if evaluate_base and isinstance(base, (TensorValue, ArrayValue)):
                assigned = value if isinstance(value, (TensorValue, ArrayValue)) else None
                index = _subscript_index_value(target, self.state.index_values)
                inputs: WriteInputs = tuple(
                    (v, role) for v, role in ((assigned, "value"), (index, "index"))
                    if v is not None)
                root = root_of(base) if isinstance(base, TensorValue) else None
                written = self.autograd.write(base, target.value, self.state.stmt, None, env,
                                              fill=True,
                                              inputs=inputs, region=slice_region(target) or (),
                                              index=index_regions(target),
                                              cover=(root, *index_cover(target)) if root else None)
                if isinstance(written, TensorValue) and isinstance(assigned, TensorValue):
                    # CopySlices: the base now carries the assigned value's graph.
                    self.autograd.absorb(written, replace(
                        written, requires_grad=self.autograd.requires_grad([assigned], env),
                        graph=assigned.graph), env)

    def _set_requires_grad(self, tensor: TensorValue, target: cst.Attribute, flag: Value,
                           env: Env) -> None:
        """`t.requires_grad = flag`: like `t.requires_grad_(flag)`."""
        if flag == TRUE_VALUE:
            leaf = tensor.leaf or tensor.requires_grad is False
            value = replace(tensor, requires_grad=True, leaf=leaf,
                            origin=self.state.stmt if leaf and not tensor.leaf else tensor.origin)
        elif flag == FALSE_VALUE:
            value = replace(tensor, requires_grad=False, leaf=True)
        else:
            value = replace(tensor, requires_grad=None, leaf=False)
        self.autograd.rebind_tensor(target.value, value, env)

    def _forget(self, target: cst.BaseExpression, env: Env) -> None:
        if type(target) is cst.Name:
            self.assign_name(target.value, UNKNOWN, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._forget(element.value, env)

    def eval_target(self, node: cst.BaseExpression, env: Env) -> Value:
        """Evaluate the expression an in-place write is about to change."""
        outer, self.state.rewriting = self.state.rewriting, True
        try:
            return self.expressions.eval(node, env)
        finally:
            self.state.rewriting = outer

    def _aug_assign(self, node: cst.AugAssign, env: Env) -> None:
        target = self.eval_target(node.target, env)
        other = self.expressions.eval(node.value, env)
        joined = self.builders.concat_modules(target, other, node) if type(node.operator) is cst.AddAssign else None
        if joined is not None:
            # `layers += [conv, nn.ReLU(inplace=True)]`: the list grows (same object).
            self.bind(node.target, joined, env, evaluate_base=False)
            return
        base = self.state.subscript_bases.get(id(node.target)) if type(node.target) is cst.Subscript else None
        if isinstance(base, TensorValue) and type(node.target) is cst.Subscript and \
                base.copied_at is node.target.value:
            # `x[idx][:, 0] += v` is `t = x[idx]; t[:, 0] = t[:, 0] + v`: the item assignment
            # writes the copy advanced indexing made, which nothing keeps.
            self.autograd.write(base, node.target.value, node, None, env)
            return
        if isinstance(base, TensorValue) and (
                not isinstance(target, TensorValue) or target.storage is None
                or target.copied_at is node.target):
            # `x[i] op= v` is `x[i] = x[i].__iop__(v)`: whatever the index (a copy for an
            # advanced one), the item assignment writes x.
            target = self.expressions.view(base, node.target, None, env=env)
        if isinstance(target, ArrayValue):
            self.autograd.write(target, node.target, node, None, env)
            return
        if not isinstance(target, TensorValue):
            self.bind(node.target, UNKNOWN, env, evaluate_base=False)
            return
        # `t += x` on a tensor is the in-place `__iadd__`: it writes t's storage.
        dunder = _AUG_DUNDERS.get(type(node.operator))
        op = ops.method(f"__i{dunder}__") if dunder else None
        written = self.autograd.write(target, node.target, node, None, env)
        result = written
        if op is not None:
            result = self.autograd.record_saves(op, {"self": result, "other": other}, result, node,
                                                env,
                                                {"self": node.target, "other": node.value})
        self.autograd.absorb(written, result, env)
        self.bind(node.target, result, env, evaluate_base=False)

    def _decided_type_test(self, test: cst.BaseExpression, env: Env) -> bool | None:
        """`isinstance(layer, nn.Conv2d)` on a torch.nn module whose class is known (a
        layer of a container iterated layer by layer): True for its own class, False for a
        class that runs another op (no subclass of one runs the other's op); in `a and b`,
        a side decided False decides the test.  None when not decided."""
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            sides = (self._decided_type_test(test.left, env),
                     self._decided_type_test(test.right, env))
            return False if False in sides else None
        if not (type(test) is cst.Call and type(test.func) is cst.Name and
                test.func.value == "isinstance" and len(test.args) == 2 and
                not any(arg.star or arg.keyword for arg in test.args)):
            return None
        value = self.functions.eval_silently(test.args[0].value, env)
        tested = self.functions.eval_silently(test.args[1].value, env)
        if not isinstance(value, ModuleValue) or value.module.spec is None or \
                value.module.cls is not None or not isinstance(tested, RefValue):
            return None
        spec, target = value.module.spec, ops.module(tested.qualname)
        if target is None:
            return None
        if target.name == spec.name:
            return True
        return False if spec.op is not None and target.op is not None and \
            spec.op != target.op else None

    def if_statement(self, node: cst.If, env: Env) -> None:
        self.state.stmt = node
        self.expressions.eval(node.test, env)
        test = node.test
        # A branch a literal argument switches off is not run at all: its writes are not
        # this call's.
        decided = decided_by_constant(test, env)
        if decided is None:
            decided = self._decided_type_test(test, env)
        taken = env.copy()
        other = env.copy()
        # `isinstance(m, C)` over the modules an iteration yields picks its members.
        members = self.protocol.narrow(test, env) if decided is None else None
        if members is not None:
            taken.names[members[0]], other.names[members[0]] = members[1], members[2]
        narrowed = _tested_for_none(test, env)
        if narrowed is not None:
            # `if mask is None:` / `is not None`: the None branch holds the None.
            (taken if narrowed[1] else other).names[narrowed[0]] = NONE_VALUE
        # A script's `if __name__ == "__main__":` block is what running it runs.
        branching = decided is None and members is None and not (
            type(test) is cst.Comparison and type(test.left) is cst.Name and
            test.left.value == "__name__" and len(test.comparisons) == 1 and
            type(test.comparisons[0].operator) is cst.Equal and
            literal_constant(test.comparisons[0].comparator) == "__main__")
        self.state.branches += branching
        checking = type(test) is cst.Name and test.value == "TYPE_CHECKING" or \
            type(test) is cst.Attribute and test.attr.value == "TYPE_CHECKING"
        state = self.state
        outer, state.type_checking = state.type_checking, state.type_checking or checking
        try:
            if decided is not False:
                self.block(node.body.body, taken)
        finally:
            self.state.type_checking = outer
            self.state.branches -= branching
        if decided is not True:
            self.state.branches += branching
            try:
                if type(node.orelse) is cst.If:
                    self.if_statement(node.orelse, other)
                elif type(node.orelse) is cst.Else:
                    self.block(node.orelse.body.body, other)
            finally:
                self.state.branches -= branching
        if narrowed is not None:
            # A `return` does not end a path here, so the None the test narrowed would join
            # the tensor after the `if` and lose its memory: where the branch left the None
            # bound, the name holds the tensor again (no tensor op runs on the None).
            name, tensor = narrowed[0], env.names[narrowed[0]]
            for branch in (taken, other):
                if branch.names.get(name) is NONE_VALUE:
                    branch.names[name] = tensor
        if decided is None:
            taken.merge(other)
        elif decided is False:
            taken = other
        env.adopt(taken)

    def element_of(self, iterable: Value, node: cst.CSTNode, env: Env | None = None) -> Value:
        if isinstance(iterable, ParamsValue) and iterable.kind is Kind.PARAMS and iterable.params:
            return self.parameter(iterable.params, node)
        if isinstance(iterable, ContainerValue):
            if iterable.mapping:
                return OTHER  # a dict's keys
            if iterable.replicated is not None:
                return any_element(iterable) or UNKNOWN
            # Every element in turn: each is written, each is read.
            return containers.some_element(iterable) or UNKNOWN
        if isinstance(iterable, ModuleValue) and iterable.module.element is not None:
            return iterable.module.element  # `for block in self.blocks:`
        if isinstance(iterable, TensorValue):
            # Iterating a tensor unbinds it: each element is a view, an output of `unbind`.
            return self.expressions.view(iterable, node, ops.method("unbind"), env=env)
        return UNKNOWN

    def parameter(self, tokens: frozenset, origin: cst.CSTNode | None) -> TensorValue:
        token = next(iter(tokens)) if len(tokens) == 1 else None
        return TensorValue(origin=origin, storage=token, counter=token, requires_grad=True,
                           leaf=True)

    def with_statement(self, node: cst.With, env: Env) -> None:
        self.state.stmt = node
        saved_grad = env.flow.grad
        hooks: list[tuple[HooksValue, cst.BaseExpression]] = []
        handles: list[HandleValue] = []
        modes = len(self.state.save_modes)
        for item in node.items:
            value = self.expressions.eval(item.item, env)
            self.state.save_modes += self._save_mode(item.item, env)
            if isinstance(value, GradModeValue):
                env.flow.grad = value.enabled
            elif isinstance(value, HooksValue):
                hooks.append((value, item.item))
            elif isinstance(value, HandleValue):
                handles.append(value)  # `with m.register_forward_hook(h):`
            if item.asname is not None:
                self.bind(item.asname.name, UNKNOWN, env)
        saves_before = len(self.state.saves_log)
        frame = self.state.loops[-1] if self.state.loops else None
        marks = (len(frame.breaks), len(frame.continues)) if frame is not None else (0, 0)
        try:
            self.block(node.body.body, env)
        finally:
            del self.state.save_modes[modes:]
        for handle in handles:
            self.protocol.remove_hook(handle)
        if env.flow.raised:
            # The context manager may swallow the exception (`pytest.raises`, `suppress`):
            # the code after the block then runs from where the body raised.
            env.flow = env.flow.revived()
        env.flow.grad = saved_grad
        if len(self.state.saves_log) > saves_before:
            for value, call in hooks:
                self.state.emit(PackHookWrite(value.pack_write, value.pack_stmt, call,
                                              self.state.saves_log[saves_before]))
        if frame is not None:
            # A `break` or `continue` in the body leaves the block, and the grad mode with it.
            for state in frame.breaks[marks[0]:] + frame.continues[marks[1]:]:
                state.flow.grad = saved_grad

    def _save_mode(self, item: cst.BaseExpression, env: Env) -> list[str]:
        """How a `with` item changes what the ops in its block save: "unchecked" (saved
        tensor hooks), "autocast" (inputs cast to copies), or nothing."""
        if type(item) is not cst.Call:
            return []
        func = self.functions.eval_silently(item.func, env)
        qualname = func.qualname if isinstance(func, RefValue) else None
        if qualname in UNCHECKED_SAVES:
            return ["unchecked"]
        if qualname in AUTOCASTS and not any(
                arg.keyword is not None and arg.keyword.value == "enabled"
                and is_literal(arg.value, "False") for arg in item.args):
            return ["autocast"]
        return []

    def try_statement(self, node: cst.Try | cst.TryStar, env: Env) -> None:
        before = env.copy()
        self.block(node.body.body, env)
        # A handler may start anywhere in the body: from what both ends agree on.
        start = before.copy()
        start.merge(env)
        if env.flow.raised:  # or where the body raised for certain
            start.merge(Env(env.parent, env.names, env.flow.revived()))
        outcomes = []
        for handler in node.handlers:
            handler_env = start.copy()
            self.state.stmt = handler
            if handler.type is not None:
                self.expressions.eval(handler.type, handler_env)
            if handler.name is not None:
                self.bind(handler.name.name, UNKNOWN, handler_env)
            self.block(handler.body.body, handler_env)
            outcomes.append(handler_env)
        if node.orelse is not None:
            self.block(node.orelse.body.body, env)
        for outcome in outcomes:
            env.merge(outcome)
        if node.finalbody is not None:
            self.block(node.finalbody.body.body, env)

    def _dict_loss(self, node: cst.CSTNode, env: Env) -> Value | None:
        entry = _loss_entry(node)
        return env.lookup(entry.value) if type(entry) is cst.Name else None

    def _return(self, value: Value, node: cst.CSTNode, env: Env) -> None:
        if self.state.returns is not None:
            self.state.returns.append((value, env.flow.copy()))
        function = self.state.function
        if function is not None and id(function) in self.state.lightning_steps:
            # Lightning's automatic optimisation runs backward on the loss `training_step`
            # returns (a tensor, or the "loss" of a dict), then steps the optimizers.
            loss = value if isinstance(value, TensorValue) else self._dict_loss(node, env)
            if isinstance(loss, TensorValue):
                self.autograd.consume(loss, node, "Lightning's backward of the returned loss", env)
                return
        # The caller will run backward through a returned tensor: a dirty save
        # in its graph makes that backward raise.
        if isinstance(value, TensorValue) and self.state.function is not None:
            self.autograd.consume(value, node, "the tensor returned here", env, returned=True,
                                  retain=True)
        elif isinstance(value, ContainerValue) and self.state.function is not None:
            # `return {"mask": m, "box": b}`: the caller gets each tensor, as from a tuple.
            for tensor in containers.tensors_in(value):
                self.autograd.consume(tensor, node, "the tensor returned here", env, returned=True,
                                      retain=True)


def _loss_entry(node: cst.CSTNode) -> cst.BaseExpression | None:
    """`x` in `return {"loss": x, ...}`."""
    if type(node) is cst.Return and type(node.value) is cst.Dict:
        for element in node.value.elements:
            if type(element) is cst.DictElement and type(element.key) is cst.SimpleString \
                    and element.key.evaluated_value == "loss":
                return element.value
    return None


def _subscript_index_value(node: cst.Subscript,
                           values: dict[int, Value]) -> TensorValue | ArrayValue | None:
    if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        value = values.get(id(node.slice[0].slice.value))
        if isinstance(value, (TensorValue, ArrayValue)):
            return value
    return None


# What a name an `is None` test narrowed holds in the branch where it is None.
NONE_VALUE = ConstValue(literal=None)


def _tested_for_none(test: cst.BaseExpression, env: Env) -> tuple[str, bool] | None:
    """`x is None` (the name, True) or `x is not None` (False), where ``x`` is a name of this
    scope holding a tensor only an `Optional[Tensor]` annotation declared: the branch where
    it is None holds None (as pyright narrows it)."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1 and
            type(test.left) is cst.Name and
            type(test.comparisons[0].comparator) is cst.Name and
            test.comparisons[0].comparator.value == "None"):
        return None
    operator = test.comparisons[0].operator
    if not isinstance(operator, (cst.Is, cst.IsNot)):
        return None
    value = env.names.get(test.left.value)
    origin = value.origin if isinstance(value, TensorValue) else None
    if not (type(origin) is cst.Annotation and optional_of(origin.annotation) is not None):
        return None
    return test.left.value, type(operator) is cst.Is


def decided_by_constant(test: cst.BaseExpression, env: Env) -> bool | None:
    """The outcome of an `if` test that a parameter's literal decides (`if inplace:`,
    `if mode == "inplace":`, `if out is not None:`) where the call passed or defaulted it
    to a literal; None when the test is not decided."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = decided_by_constant(test.expression, env)
        return None if inner is None else not inner
    if type(test) is cst.Name:
        value = env.lookup(test.value)
        return bool(value.literal) if isinstance(value, ConstValue) else None
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1 and
            type(test.left) is cst.Name):
        return None
    value = env.lookup(test.left.value)
    right = literal_constant(test.comparisons[0].comparator)
    if not isinstance(value, ConstValue) or right is NO_LITERAL:
        return None
    operator = test.comparisons[0].operator
    if isinstance(operator, (cst.Equal, cst.NotEqual)):
        return (value.literal == right) == (type(operator) is cst.Equal)
    if isinstance(operator, (cst.Is, cst.IsNot)) and (right is None or isinstance(right, bool)):
        return (value.literal is right) == (type(operator) is cst.Is)
    return None
