"""Expressions other than calls: names, attributes, operators, subscripts, displays."""

from __future__ import annotations


import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part, State
from aliaslint import ops
from aliaslint.analysis import containers
from aliaslint.analysis.builders import literal_items, visited_in_order
from aliaslint.analysis.events import Compare, StaleRead, Write
from aliaslint.analysis.geometry import (
    COVER_OPS,
    covers_disjoint,
    index_cover,
    index_regions,
    slice_region,
)
from aliaslint.analysis.opfacts import TENSOR_TYPES, short_name
from aliaslint.analysis.scopes import ClassInfo, Env, state_token
from aliaslint.analysis.shapes import Layout, after_view
from aliaslint.analysis.shapes import index as index_layout
from aliaslint.analysis.syntax import (
    evaluated,
    literal_int,
    all_params,
    attr_key,
    basic_index,
    optional_of,
    type_name,
    basic_index_element,
    child_expressions,
    name_key,
    yields_loop_element,
)
from aliaslint.analysis.values import (
    replace,
    INT,
    OTHER,
    FALSE_VALUE,
    SHAPE,
    TRUE_VALUE,
    UNKNOWN,
    ConstValue,
    ContainerValue,
    Kind,
    ClassValue,
    ModuleInfo,
    ModuleValue,
    ObjectValue,
    ParamsValue,
    LambdaValue,
    RefValue,
    TensorValue,
    Value,
    ArrayValue,
    any_element,
    grad_token,
    is_int,
    join,
    kept_as_copy,
    local_class,
    refers_to,
    root_of,
)
from aliaslint.analysis.dispatch import taken_at
from aliaslint.nodes import walk

_COMPARE_OPS = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_NON_TENSOR_COMPARE = {"is", "is not", "in", "not in"}
# Operators that give an int from two ints (true division gives a float).
_INT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo,
                  cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
_BINARY_DUNDERS = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "truediv",
    cst.FloorDivide: "floordiv", cst.Modulo: "mod", cst.Power: "pow",
    cst.MatrixMultiply: "matmul", cst.BitAnd: "and", cst.BitOr: "or", cst.BitXor: "xor",
    cst.LeftShift: "lshift", cst.RightShift: "rshift",
}


class Expressions(Part):
    """Evaluates expressions to abstract values."""

    autograd: api.Autograd
    builders: api.Builders
    dispatch: api.Dispatch
    functions: api.Functions
    imports: api.Imports
    loops: api.Loops
    statements: api.Statements

    def __init__(self, state: State) -> None:
        super().__init__(state)
        # Allocation sites met inside a loop → the storage token they make (see
        # `Loops.renew`).
        self._allocations: dict[int, object] = {}

    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        handler = self.state.expr_dispatch.get(type(node))
        if handler is None:
            return self._generic_unknown(node, env)
        held = self._hold_base(node, env) if env.flow.stale else None
        if self.state.loops:
            token = self._allocations.get(id(node))
            if token is not None:
                self.loops.renew(token, env)
            value = handler(node, env)
            storage = value.storage
            if isinstance(storage, tuple) and storage[:2] == ("alloc", id(node)):
                self._allocations[id(node)] = storage
        else:
            value = handler(node, env)
        if held is not None:
            self._settle(held, value, env)
        return value

    def _hold_base(self, node: cst.BaseExpression, env: Env) -> tuple | None:
        """A view with literal offsets of a name just written through another view
        (`m.diagonal(1)`, `x[1::2]`, `torch.narrow(x, 0, 2, 2)`): the read of the name waits
        until the view says which elements it reaches (see _settle)."""
        base: cst.BaseExpression | None = None
        if type(node) is cst.Subscript:
            base = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and \
                node.func.attr.value in COVER_OPS:
            receiver = node.func.value  # `m.diagonal(1)`, else `torch.diagonal(m, 1)`
            base = receiver if type(receiver) is cst.Name and \
                receiver.value in env.flow.stale else \
                node.args[0].value if node.args and node.args[0].keyword is None else None
        if type(base) is not cst.Name or base.value not in env.flow.stale:
            return None
        return (base, env.flow.stale.pop(base.value))

    def _settle(self, held: tuple, view: Value, env: Env) -> None:
        """The held read of a view's base: none when the view reaches no element the write
        wrote (the name stays stale for later reads), else the read as `name` reports it."""
        base, write = held
        if isinstance(view, TensorValue) and covers_disjoint(write.cover, view.cover):
            env.flow.stale.setdefault(base.value, write)
            return
        self.state.emit(StaleRead(write.node, write.stmt, write, base.value, base,
                                  env.lookup(base.value), self.state.rewriting, self.state.stmt))

    def _eval_children(self, node: cst.CSTNode, env: Env) -> None:
        for child in child_expressions(node):
            self.eval(child, env)

    def _generic_unknown(self, node: cst.BaseExpression, env: Env) -> Value:
        self._eval_children(node, env)
        return UNKNOWN

    def literal(self, node: cst.BaseExpression, env: Env) -> Value:
        return INT if type(node) is cst.Integer else OTHER

    def boolean(self, node: cst.BooleanOperation, env: Env) -> Value:
        self.eval(node.left, env)
        self.eval(node.right, env)
        return UNKNOWN

    def concatenated(self, node: cst.ConcatenatedString, env: Env) -> Value:
        self.eval(node.left, env)
        self.eval(node.right, env)
        return OTHER

    def formatted(self, node: cst.FormattedString, env: Env) -> Value:
        # `f"stage{i}"` of literals (an int a loop over a literal range binds): its text, as
        # a name `add_module` or `getattr` takes.
        text: list[str] | None = []
        for part in node.parts:
            if type(part) is cst.FormattedStringExpression:
                value = self.eval(part.expression, env)
                if part.format_spec:
                    for spec in part.format_spec:
                        if type(spec) is cst.FormattedStringExpression:
                            self.eval(spec.expression, env)
                if text is not None and isinstance(value, ConstValue) and \
                        type(value.literal) in (int, str) and not part.format_spec and \
                        part.conversion is None and not part.equal:
                    text.append(str(value.literal))
                else:
                    text = None
            elif text is not None and type(part) is cst.FormattedStringText:
                text.append(part.value)
        return ConstValue(origin=node, literal="".join(text)) if text is not None and \
            "{" not in "".join(text) and "}" not in "".join(text) and "\\" not in "".join(text) \
            else OTHER

    def set_display(self, node: cst.Set, env: Env) -> Value:
        for element in node.elements:
            self.eval(element.value, env)
        return OTHER

    def dict_display(self, node: cst.Dict, env: Env) -> Value:
        """A dict display: its values by literal key (`{**d}` spreads `d`'s)."""
        parts: list[ContainerValue] = []
        keys: list[object] = []
        items: list[Value] = []
        known = True
        for element in node.elements:
            if type(element) is cst.DictElement:
                self.eval(element.key, env)
                value = self.eval(element.value, env)
                key = containers.literal_key(element.key)
                if key is containers.NO_KEY:
                    known = False
                keys.append(key)
                items.append(value)
            else:
                spread = self.eval(element.value, env)
                if not isinstance(spread, ContainerValue) or not spread.mapping:
                    return OTHER
                if keys:
                    parts.append(self._dict_part(keys, items, known, node))
                    keys, items, known = [], [], True
                parts.append(spread)
        if keys or not parts:
            parts.append(self._dict_part(keys, items, known, node))
        return parts[0] if len(parts) == 1 and parts[0].origin is node else \
            containers.merged(parts, node)

    @staticmethod
    def _dict_part(keys: list[object], items: list[Value], known: bool,
                   node: cst.Dict) -> ContainerValue:
        if known:
            return ContainerValue(origin=node, keys=tuple(keys), items=tuple(items), mapping=True)
        each = containers.some_element(ContainerValue(origin=node, items=tuple(items)))
        return ContainerValue(origin=node, each=each, mapping=True)

    def name(self, node: cst.Name, env: Env) -> Value:
        if node.value in ("None", "True", "False"):
            return TRUE_VALUE if node.value == "True" else FALSE_VALUE if \
                node.value == "False" else OTHER
        value = env.lookup(node.value)
        if isinstance(value, RefValue) and type(value.origin) is cst.ImportAlias:
            # A use of a name imported by `from m import name`: each use is a reference.
            self.state.emit_reference(node, value.qualname)
        write = env.flow.stale.pop(node.value, None)
        if write is not None:
            self.state.emit(StaleRead(write.node, write.stmt, write, node.value, node, value,
                                      self.state.rewriting, self.state.stmt))
        return value

    def receiver(self, node: cst.Attribute, env: Env) -> Value:
        """The value ``node`` reads an attribute of.  A read of metadata alone (`x.shape`,
        `x.device`, `x.size()`: ``ops.metadata()``) of a name whose values were just written
        in place sees none of the write, so the name stays written-but-unread for a later
        read of its values; not after a write that changes the metadata (`t_`, `resize_`)."""
        key = name_key(node.value)
        write = env.flow.stale.get(key) if key is not None else None
        if write is None or node.attr.value not in ops.metadata() or \
                not _writes_values_only(write):
            return self.eval(node.value, env)
        assert key is not None
        del env.flow.stale[key]
        try:
            return self.eval(node.value, env)
        finally:
            env.flow.stale.setdefault(key, write)

    def attribute(self, node: cst.Attribute, env: Env) -> Value:
        key = attr_key(node)
        if key is not None and key in env.names:
            write = env.flow.stale.pop(key, None)
            if write is not None:
                self.state.emit(StaleRead(write.node, write.stmt, write, key, node, env.names[key],
                                          self.state.rewriting))
            self.eval(node.value, env)
            return env.names[key]
        self.stale_attribute(node, env)
        base = self.receiver(node, env)
        attr = node.attr.value
        if isinstance(base, RefValue):
            qualname = f"{base.qualname}.{attr}"
            self.state.emit_reference(node, qualname)
            return RefValue(qualname=qualname, origin=node, importer=base.importer)
        cls = local_class(base)
        if cls is not None:
            value = cls.attr(f"self.{attr}")
            kept = self._kept_state(base, cls, f"self.{attr}", value, node)
            if kept is not None:
                return kept
            if value is not None:
                return value
            got = self.dispatch.property_value(base, attr, node, env)
            if got is None:
                got = self.dispatch.bound_method(base, attr, node)
            return got if got is not None else UNKNOWN
        if isinstance(base, ModuleValue):
            return self._module_attribute(base, attr)
        if isinstance(base, TensorValue):
            op = ops.lookup(f"torch.Tensor.{attr}")
            if op is None or op.returns != "tensor":
                if attr == "shape":
                    return SHAPE
                return INT if attr == "ndim" else OTHER if attr in ("dtype", "device") \
                    else UNKNOWN
            if op.kind == "detached_alias":  # .data: same storage, its own version counter
                return TensorValue(derived=(attr, base), origin=node, storage=base.storage,
                                   counter=("data", id(node)), requires_grad=False, via="data")
            if op.kind == "view":
                return self.view(base, node, op, env=env)
            if op.kind == "reference":  # .grad
                # A parameter's `.grad` is one tensor from step to step (backward accumulates
                # into it): give it a storage of its own, named after the parameter's.
                grad = grad_token(base.storage) if base.leaf and base.storage is not None \
                    and base.via is None else None
                return TensorValue(derived=(attr, base), origin=node, requires_grad=False,
                                   storage=grad, counter=grad)
            return TensorValue(derived=(attr, base), origin=node)
        return UNKNOWN

    def stale_attribute(self, node: cst.Attribute, env: Env) -> None:
        """`ema.module` read after a step wrote the parameters of the module the object
        keeps (`self.module = model` in its `__init__`): the object's module is the
        caller's, not a copy.  Keeping a module is what helpers do (a trainer's
        `self.model`), so it is a snapshot only where the statement sets it against the
        module itself (`torch.equal(ema.module.weight, model.weight)`); the snapshot is
        where `__init__` took it."""
        if not (env.flow.stale and type(node.value) is cst.Name):
            return
        key = f"{node.value.value}.{node.attr.value}"
        write = env.flow.stale.pop(key, None)
        if write is None:
            return
        owner = env.names.get(key.rsplit(".", 1)[0])
        kept = owner.cls.attr(f"self.{node.attr.value}") \
            if isinstance(owner, ObjectValue) else None
        taken = taken_at(owner.cls, f"self.{node.attr.value}") \
            if isinstance(owner, ObjectValue) else None
        if not isinstance(kept, ModuleValue) or taken is None or \
                not self._beside(kept, node, env):
            return
        self.state.emit(StaleRead(write.node, write.stmt, write, key, node,
                                  kept_as_copy(kept, taken), self.state.rewriting))

    def _beside(self, kept: ModuleValue, read: cst.CSTNode, env: Env) -> bool:
        """Does the statement being run name the module ``kept`` itself, apart from
        ``read`` (in an `if` or `while`, its test)?"""
        stmt = self.state.stmt
        scope = stmt.test if isinstance(stmt, (cst.If, cst.While)) else stmt
        if scope is None:
            return False
        inside = {id(sub) for sub in walk(read)}
        for sub in walk(scope):
            if id(sub) in inside or not isinstance(sub, (cst.Name, cst.Attribute)):
                continue
            name = name_key(sub)
            value = env.names.get(name) if name is not None else None
            if isinstance(value, ModuleValue) and value.module is kept.module and \
                    value.snapshot is None:
                return True
        return False

    @staticmethod
    def _kept_state(base: Value, cls: ClassInfo, key: str, value: Value | None,
                    node: cst.Attribute) -> TensorValue | None:
        """`obj.last_attn` where a method of its class keeps a tensor there (ClassInfo.state)
        and `__init__` left no tensor or module (`None`, nothing): that tensor, as the state
        of this object.  Where the object holds nothing yet, Python would not have let a
        tensor op run on it."""
        if value is not None and not (value.kind in (Kind.UNKNOWN, Kind.OTHER) and (
                not isinstance(value, ConstValue) or value.literal is None)):
            return None
        if not isinstance(base, ModuleValue) or len(base.module.params) != 1:
            return None
        kept = next((entry.state[key] for entry in cls.linearization()
                     if isinstance(entry, ClassInfo) and key in entry.state), None)
        if kept is None:
            return None
        token = state_token(next(iter(base.module.params)), key)
        return replace(kept, origin=node, storage=token, counter=token)

    def _module_attribute(self, module: ModuleValue, attr: str) -> Value:
        """`m.weight` / `m.bias` of a torch.nn module built here: leaf Parameters that
        require grad (unless the module was frozen or handed to an unknown function,
        which may re-parametrize it); `wrapper.module`: the module itself."""
        info = module.module
        if attr == "module" and info.spec is not None:
            return module  # DistributedDataParallel(m).module is m: see training.py
        token = info.named.get(attr)
        if token is None or info.escaped:
            return UNKNOWN
        # A file that freezes parameters somewhere may have frozen this one.
        requires = False if info.frozen else None if self.state.freezes else True
        return TensorValue(origin=module.origin, storage=token, counter=token,
                           requires_grad=requires, leaf=True)

    def view(self, base: TensorValue, node: cst.CSTNode, op: ops.Op | None,
             dims: tuple | None = None, env: Env | None = None,
             layout: Layout | None = None) -> TensorValue:
        """A view of ``base`` made at ``node`` by ``op`` (None: basic indexing, whose
        ``layout`` the caller knows) with these literal arguments."""
        name = short_name(op.name) if op is not None else None
        detach = name == "detach"
        if op is not None:
            layout = after_view(base.layout, name, dims)
        noncontiguous = op is not None and op.noncontiguous
        forbidden = None if detach else base.forbidden
        if forbidden is None and not detach and base.requires_grad is True:
            if op is not None and op.multi_output and env is not None and env.flow.grad:
                forbidden = ("multi-output", node, name or "")
            elif env is not None and env.flow.grad is False:
                forbidden = ("grad-off", node, name or "")
        contiguous = False if noncontiguous else (base.contiguous if detach else None)
        if layout is not None:
            contiguous = layout.contiguous
            noncontiguous = not contiguous
        return TensorValue(
            forbidden=forbidden,
            pending=frozenset() if detach else base.pending,
            origin=node, storage=base.storage, counter=base.counter,
            requires_grad=False if detach else base.requires_grad,
            # A view of a leaf is no leaf, but autograd forbids writing it in place all
            # the same ("a view of a leaf Variable that requires grad").
            leaf=False if detach else base.leaf,
            via="detach" if detach else (base.via or "view"),
            graph=frozenset() if detach else base.graph,
            derived=("detach", base) if detach else None,
            contiguous=contiguous,
            layout_origin=node if noncontiguous else (base.layout_origin if detach else None),
            layout_op=(name, dims) if noncontiguous and op is not None else (
                base.layout_op if detach else None),
            expanded=base.expanded or (op is not None and op.self_overlapping),
            view_origin=base.view_origin if detach else node,
            layout=layout, dtype=base.dtype, blank=base.blank,
            op_view=base.op_view or (op is not None and not detach and not op.multi_output),
        )

    def eval_args(self, node: cst.Call, env: Env) -> None:
        for arg in node.args:
            self.eval(arg.value, env)

    def display(self, node: cst.Tuple | cst.List, env: Env) -> Value:
        """A list or tuple display; `[t]` remembers its one element for `[t] * n`,
        and `a, b = x, y` binds element by element.  `[*a, b]` splices `a`'s elements."""
        values = [self.eval(element.value, env) for element in node.elements]
        for element, value in zip(node.elements[:-1], values):
            self.read_at_the_op(element.value, value, env)  # `torch.cat((x, act(x)))`
        # A string stays that literal (`["cls", "depth"]`): a comprehension over the list
        # binds each, and a factory given one picks the branch it names.
        values = [ConstValue(origin=element.value, literal=evaluated(element.value))
                  if type(element.value) is cst.SimpleString else value
                  for element, value in zip(node.elements, values)]
        if any(type(element) is cst.StarredElement for element in node.elements):
            spliced: list[Value] = []
            for element, value in zip(node.elements, values):
                if type(element) is not cst.StarredElement:
                    spliced.append(value)
                elif isinstance(value, ContainerValue) and value.items is not None and \
                        not value.mapping:
                    spliced.extend(value.items)
                elif isinstance(value, ContainerValue) and value.each is not None and \
                        not value.mapping:
                    return containers.appended(
                        containers.joined(value, node), tuple(spliced), node, False)
                else:
                    return OTHER
            return ContainerValue(origin=node, items=tuple(spliced))
        if len(values) == 1 and (isinstance(values[0], TensorValue) or isinstance(
                values[0], ContainerValue) and values[0].each is not None):
            return ContainerValue(origin=node, each=values[0], items=(values[0],))
        return ContainerValue(origin=node, items=tuple(values))

    def comparison(self, node: cst.Comparison, env: Env) -> Value:
        left_node = node.left
        left = self.eval(left_node, env)
        any_tensor = False
        for target in node.comparisons:
            right = self.eval(target.comparator, env)
            operator = _COMPARE_OPS.get(type(target.operator), "?")
            self.state.emit(
                Compare(node, self.state.stmt, operator, left, right, left_node, target.comparator)
            )
            if operator not in _NON_TENSOR_COMPARE and Kind.TENSOR in (left.kind, right.kind):
                any_tensor = True
            left, left_node = right, target.comparator
        # Element-wise comparison of a tensor is a tensor (only when chained once:
        # `a < b < c` is `(a < b) and (b < c)`).
        if any_tensor and len(node.comparisons) == 1:
            token = ("alloc", id(node))
            return TensorValue(origin=node, storage=token, counter=token, requires_grad=False)
        return UNKNOWN

    def binary(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        self.read_at_the_op(node.left, left, env)
        if type(node.operator) is cst.Multiply and Kind.TENSOR not in (left.kind, right.kind):
            # `[t] * n` / `n * [t]`: n references to one object.
            for container, count in ((left, node.right), (right, node.left)):
                if isinstance(container, ContainerValue) and container.each is not None \
                        and isinstance(count, (cst.Name, cst.Integer, cst.Attribute, cst.Call)):
                    return replace(container, replicated=node, origin=node, items=None)
        if type(node.operator) is cst.Add:
            joined = self.builders.concat_modules(left, right, node)  # `trunk + [nn.ReLU()]`
            if joined is not None:
                return joined
        if Kind.TENSOR not in (left.kind, right.kind):
            if is_int(left) and is_int(right) and isinstance(node.operator, _INT_OPERATORS):
                return INT
            if left.kind is Kind.OTHER and right.kind is Kind.OTHER:
                return OTHER
            return UNKNOWN
        token = ("alloc", id(node))
        result = TensorValue(origin=node, storage=token, counter=token)
        dunder = _BINARY_DUNDERS.get(type(node.operator))
        op = ops.method(f"__{dunder}__") if dunder else None
        if op is None:
            return replace(result, requires_grad=self.autograd.requires_grad([left, right], env))
        if left.kind is Kind.TENSOR:
            bound, nodes = {"self": left, "other": right}, {"self": node.left, "other": node.right}
        else:  # `2 * x` runs x.__rmul__(2)
            bound, nodes = {"self": right, "other": left}, {"self": node.right, "other": node.left}
        return self.autograd.record_saves(op, bound, result, node, env, nodes)

    def read_at_the_op(self, operand: cst.BaseExpression, value: Value, env: Env) -> None:
        """A tensor operand's values are read when the operation runs, after the operands to
        its right are evaluated: in `x + self.fc(self.act(x))` (or `torch.cat((x,
        self.act(x)))`, `f(x, self.act(x))`) the op reads what the in-place `act` left in
        `x`.  A name such an operand wrote in the meantime is read here (the write's own
        name, at a write the code spells, is not: see _write)."""
        key = name_key(operand)
        if key is None or not isinstance(value, TensorValue) or key not in env.flow.stale:
            return
        write = env.flow.stale.pop(key)
        self.state.emit(StaleRead(write.node, write.stmt, write, key, operand, value,
                                  self.state.rewriting, self.state.stmt))

    def unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        if type(node.operator) is cst.Not:
            return OTHER
        if is_int(operand) and isinstance(node.operator, (cst.Minus, cst.Plus, cst.BitInvert)):
            return INT
        if not isinstance(operand, TensorValue):
            return UNKNOWN
        token = ("alloc", id(node))
        return TensorValue(origin=node, storage=token, counter=token,
                           requires_grad=operand.requires_grad, graph=operand.graph)

    def subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        self.slices(node, env)
        self.state.subscript_bases[id(node)] = base
        if isinstance(base, ArrayValue) and base.storage is not None and self._basic(node) and (
                self.state.rewriting or any(type(e.slice) is cst.Slice for e in node.slice)):
            # NumPy's basic indexing makes a view; a slice always gives an array, and so does
            # an index whose result is written into (`buffer[0][1] = v`).
            return replace(base, origin=node)
        if not isinstance(base, TensorValue):
            if isinstance(base, ContainerValue):  # an element of a tuple, list or dict
                element = self._element_at(base, node)
                self._read_element(node, element, env)
                return element
            if isinstance(base, ModuleValue) and base.module.children is not None:
                # `self.features[0]`, `self.features[:4]`
                picked = self.builders.child_at(base, node)
                if picked is not None:
                    return picked
            if isinstance(base, ModuleValue) and base.module.element is not None:
                return base.module.element  # `self.blocks[i]`
            children = base.module.children if isinstance(base, ModuleValue) else None
            position = literal_int(node.slice[0].slice.value) if children and len(
                node.slice) == 1 and type(node.slice[0].slice) is cst.Index else None
            if children and position is not None and -len(children) <= position < len(children):
                return children[position]  # `block[1]` of `nn.Sequential(a, b)`
            if base == SHAPE:
                return INT if self._basic(node) and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index else OTHER
            return UNKNOWN
        if self._basic(node):
            layout = index_layout(base.layout, node) if base.layout is not None else None
            view = self.view(base, node, None, env=env, layout=layout)
            if base.via is None:
                root = root_of(base)
                view = replace(view, index=index_regions(node),
                               cover=(root, *index_cover(node)) if root is not None else None)
            region = slice_region(node)
            return replace(view, region=region) if region is not None and base.region is None \
                and base.via is None else view
        if self._advanced_index(node, env):
            token = ("alloc", id(node))
            return TensorValue(origin=node, storage=token, counter=token,
                               requires_grad=base.requires_grad, graph=base.graph, copied_at=node)
        return TensorValue(origin=node, requires_grad=base.requires_grad, graph=base.graph)

    def _read_element(self, node: cst.Subscript, element: Value, env: Env) -> None:
        """`batch["image"]` read after a called function wrote that tensor in place (through
        the container or another name for it): the read sees the write."""
        key = name_key(node.value)
        marker = containers.element_key(key) if key is not None else None
        write = env.flow.stale.get(marker) if marker is not None else None
        if write is None or not isinstance(element, TensorValue) or \
                write.target is None or not refers_to(element, {write.target.storage}):
            return
        assert marker is not None and key is not None
        del env.flow.stale[marker]
        # An element picked by an index the code does not pin down may be another one.
        self.state.emit(StaleRead(write.node, write.stmt, write, key, node, element,
                                  self.state.rewriting, self.state.stmt), low=element.guessed)

    def _element_at(self, base: ContainerValue, node: cst.Subscript) -> Value:
        """`c[0]`, `d["key"]`: that element; `c[a:b]`: a list of the same elements; `c[i]`
        with `i` not a literal: some element (which one is a guess)."""
        if len(node.slice) != 1:
            return UNKNOWN
        index = node.slice[0].slice
        if type(index) is cst.Slice:
            return containers.sliced(base, node) if not base.mapping else UNKNOWN
        if type(index) is not cst.Index:
            return UNKNOWN
        key = containers.literal_key(index.value)
        found = containers.item(base, key) if base.replicated is None else None
        if found is not None:
            return found
        if base.replicated is not None or base.items is None and key is containers.NO_KEY \
                and not base.mapping and base.each is not None and \
                base.each.kind is not Kind.TENSOR:
            return any_element(base) or UNKNOWN
        if key is not containers.NO_KEY and base.items is not None:
            return UNKNOWN  # a literal the layout does not have
        element = containers.some_element(base)
        if element is None:
            return UNKNOWN
        container_key = name_key(node.value)
        if type(index.value) is cst.Name and container_key is not None and \
                (index.value.value, container_key) in self.state.aligned:
            return element  # `feats[i]` in `for i in range(len(feats))`: each element in turn
        if base.items is None and not base.mapping and isinstance(element, TensorValue) and \
                element.via == "view" and element.storage is not None:
            return element  # `[frames[i] for i in ...][j]`: a view of the one base
        return containers.guessed(element)

    def _basic(self, node: cst.Subscript) -> bool:
        """Basic indexing (ints, slices, None, ...): a view.  An index is an int when
        it is a literal or the interpreter knows it holds one (`t[i - 1]` in a
        `for i in range(n)` loop)."""
        if basic_index(node):
            return True
        for element in node.slice:
            index = element.slice
            if type(index) is cst.Index and not basic_index_element(index.value) and \
                    not is_int(self.state.index_values.get(id(index.value), UNKNOWN)):
                return False
        return True

    def _advanced_index(self, node: cst.Subscript, env: Env) -> bool:
        """Indexing with a list, a tensor or a mask: always a copy."""
        for element in node.slice:
            index = element.slice
            if type(index) is cst.Index:
                value = index.value
                if isinstance(value, (cst.List, cst.Comparison)):
                    return True
                if self.state.index_values.get(id(value), UNKNOWN).kind is Kind.TENSOR:
                    return True
        return False

    def slices(self, node: cst.Subscript, env: Env) -> None:
        for element in node.slice:
            index = element.slice
            if type(index) is cst.Index:
                self.state.index_values[id(index.value)] = self.eval(index.value, env)
            elif type(index) is cst.Slice:
                for bound in (index.lower, index.upper, index.step):
                    if bound is not None:
                        self.eval(bound, env)

    def if_exp(self, node: cst.IfExp, env: Env) -> Value:
        from aliaslint.analysis.statements import decided_by_constant

        self.eval(node.test, env)
        # A literal argument decides it as it decides an `if` statement.
        decided = decided_by_constant(node.test, env)
        if decided is not None:
            return self.eval(node.body if decided else node.orelse, env)
        return join(self.eval(node.body, env), self.eval(node.orelse, env))

    def named_expr(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.statements.bind(node.target, value, env)
        return value

    def lambda_expression(self, node: cst.Lambda, env: Env) -> Value:
        inner = Env(env, flow=env.flow.copy())
        for param in all_params(node.params):
            if param.default is not None:
                self.eval(param.default, env)
            inner.names[param.name.value] = UNKNOWN
        self.functions.eval_silently(node.body, inner)
        return LambdaValue(origin=node, definition=node, site=id(node), scope=env)

    def comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp,
                      env: Env) -> Value:
        # The first iterable runs in the enclosing scope; targets, later
        # iterables, conditions and the element run in the comprehension's own.
        inner = Env(env, flow=env.flow)
        clause: cst.CompFor | None = node.for_in
        first = self.eval(node.for_in.iter, env)
        if node.for_in.inner_for_in is None and not node.for_in.ifs and \
                not isinstance(node, cst.SetComp) and (elements := visited_in_order(
                    first) or literal_items(first)) is not None:
            return self._unrolled_comprehension(node, elements, env)
        scope = env
        while clause is not None:
            iterable = first if clause is node.for_in else self.eval(clause.iter, scope)
            self.statements.bind(clause.target, self.statements.element_of(iterable, clause,
                                                                           scope), inner)
            for condition in clause.ifs:
                self.eval(condition.test, inner)
            clause, scope = clause.inner_for_in, inner
        if isinstance(node, cst.DictComp):
            self.eval(node.key, inner)
            element = self.eval(node.value, inner)
        else:
            element = self.eval(node.elt, inner)
        if isinstance(first, ParamsValue) and first.kind is not Kind.OPTIMIZER and \
                first.params and type(node) is not cst.GeneratorExp and \
                node.for_in.inner_for_in is None and \
                yields_loop_element(node.value if isinstance(node, cst.DictComp) else node.elt,
                                    node.for_in.target):
            # `{k: v for k, v in model.state_dict().items()}`, `[p.detach() for p in
            # model.parameters()]`: the parameters themselves, collected as `list(...)` does.
            return ParamsValue(Kind.OTHER, origin=node, params=first.params, snapshot=node)
        if type(node) is cst.DictComp:
            # `{name: torch.sigmoid(...) for name in levels}`: some value, one value.
            return ContainerValue(origin=node, each=element, mapping=True) \
                if isinstance(element, (TensorValue, ContainerValue)) else OTHER
        if isinstance(element, ModuleValue) and isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return ContainerValue(origin=node, each=element)  # ModuleList([... for ...])
        if isinstance(element, TensorValue) and element.via == "view" and \
                element.storage is not None and type(node) is cst.ListComp:
            # `[frames[i] for i in range(n)]`: every element is a view of the same base.
            return ContainerValue(origin=node, each=element)
        if isinstance(element, (TensorValue, ContainerValue)) and \
                type(node) is not cst.SetComp:
            # `[torch.softmax(g(x), -1) for g in self.gates]`: some element, one value.
            return ContainerValue(origin=node, each=element)
        return OTHER if type(node) is not cst.GeneratorExp else UNKNOWN

    def _unrolled_comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.DictComp,
                                elements: tuple[Value, ...], env: Env) -> Value:
        """A comprehension over elements known one by one (the heads of a `ModuleDict`,
        the layers of a `ModuleList`, a list of literals): its element runs once per
        element, in order, as Python runs it.  Modules it makes are kept one by one (by
        literal key for a dict), for a container to hold; tensors as "some element"."""
        keys: list[Value] = []
        values: list[Value] = []
        outer_place = self.state.unroll_place
        for index, element in enumerate(elements):
            inner = Env(env, flow=env.flow)
            # Each element's modules make tensors of their own (see Loops._unroll).
            self.state.unroll_place = (*outer_place, index)
            try:
                self.statements.bind(node.for_in.target, element, inner)
                if isinstance(node, cst.DictComp):
                    keys.append(self.eval(node.key, inner))
                    values.append(self.eval(node.value, inner))
                else:
                    values.append(self.eval(node.elt, inner))
            finally:
                self.state.unroll_place = outer_place
        mapping = type(node) is cst.DictComp
        if values and all(isinstance(value, ModuleValue) for value in values):
            # Modules, for a container to hold in order (by literal key for a ModuleDict).
            literals = [key.literal for key in keys if isinstance(key, ConstValue)
                        and isinstance(key.literal, str)]
            if not mapping:
                return ContainerValue(origin=node, items=tuple(values))
            if len(literals) == len(keys) and len(set(literals)) == len(literals):
                return ContainerValue(origin=node, keys=tuple(literals), items=tuple(values),
                                      mapping=True)
            return OTHER
        if values and all(isinstance(value, TensorValue) for value in values):
            # Tensors, one per element: one value stands for every element, as for a
            # comprehension run once ("some element"), with every element's graph.
            first = values[0]
            assert isinstance(first, TensorValue)
            graph = frozenset().union(*(v.graph for v in values if isinstance(v, TensorValue)))
            return ContainerValue(origin=node, each=replace(first, graph=graph),
                                  mapping=mapping)
        return OTHER if type(node) is not cst.GeneratorExp else UNKNOWN

    def annotation(self, annotation: cst.Annotation, env: Env) -> Value:
        """The kind an annotation declares (as pyright reads it): a tensor for `Tensor`
        and `Optional[Tensor]` / `Tensor | None` (narrowed where the code tests `is None`,
        statements.py), a list or tuple of tensors for `list[Tensor]`, `Sequence[Tensor]`,
        `tuple[Tensor, ...]`.  Nothing about `requires_grad`: a `Tensor` may be a
        Parameter.  A string annotation is not read."""
        node = optional_of(annotation.annotation) or annotation.annotation
        if self._is_tensor_type(node, env):
            return TensorValue(origin=annotation)
        element = _element_annotation(node)
        if element is not None and self._is_tensor_type(element, env):
            return ContainerValue(origin=annotation, each=TensorValue(origin=annotation))
        declared = self.imports.linked(self.eval(node, env)) \
            if isinstance(node, (cst.Name, cst.Attribute)) else None
        cls = declared.module.cls if isinstance(declared, ClassValue) and \
            declared.module is not None else None
        if cls is not None:
            # `model: Net`, a module class of the program: its children and forward are
            # known; whether its parameters require grad is not (whoever built it may
            # have frozen them), so what follows from them is `low`.
            self.functions.learn_now(cls, [])
            return ModuleValue(origin=annotation, module=ModuleInfo(
                cls=cls, params=frozenset({("instance", id(annotation))}),
                label=f"`{cls.name}`", assumed=True))
        return UNKNOWN

    def _is_tensor_type(self, node: cst.BaseExpression, env: Env) -> bool:
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        declared = self.eval(node, env)
        return isinstance(declared, RefValue) and declared.qualname in TENSOR_TYPES


def _item(container: ContainerValue, node: cst.Subscript) -> Value | None:
    """`pair[0]`, `cache[-1]`: the element a literal int picks from a display's items."""
    if container.items is None or len(node.slice) != 1 or \
            type(node.slice[0].slice) is not cst.Index:
        return None
    index = node.slice[0].slice.value
    digits = index.expression if type(index) is cst.UnaryOperation and type(index.operator) is cst.Minus else index
    if type(digits) is not cst.Integer:
        return None
    position = int(evaluated(digits)) * (-1 if digits is not index else 1)
    if not -len(container.items) <= position < len(container.items):
        return None
    return container.items[position]


# Generic aliases whose one argument (or first, for `tuple[T, ...]`) is the element type.
_SEQUENCES = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable", "tuple",
                        "Tuple"})


def _element_annotation(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`T` of `list[T]`, `Sequence[T]`, `tuple[T, ...]`."""
    if type(node) is not cst.Subscript or type_name(node.value) not in _SEQUENCES:
        return None
    types = [e.slice.value for e in node.slice if type(e.slice) is cst.Index]
    if len(types) == 1 and type_name(node.value) not in ("tuple", "Tuple"):
        return types[0]
    if len(types) == 2 and type(types[1]) is cst.Ellipsis:
        return types[0]
    return None


def _writes_values_only(write: Write) -> bool:
    """Does the write change a tensor's values and none of its metadata?  An augmented or an
    item assignment, or an in-place op the tables do not mark as changing sizes or strides
    (``metadata_only``: `t_`, `squeeze_`, `resize_`); a write of unknown kind may do both.
    A callee's write re-applied at its call is judged by the write inside the callee."""
    node = write.defined_at or write.node
    if isinstance(node, (cst.AugAssign, cst.Assign)):
        return True
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        op = ops.method(node.func.attr.value)
        return op is not None and op.kind == "inplace" and not op.metadata_only
    return False
