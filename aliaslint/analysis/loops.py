"""Loops: the body runs until the state at the loop's head stops changing.

The state at a loop's head is the join of the state before the loop and of
every state the body hands back to the head (its end, and each `continue`).
A pass runs the body from the current head state; the next head is the join of
that head and what the pass handed back.  Joins only lose name facts and only
add path facts, so the heads grow, and the loop stops at the first pass that
adds nothing: its head is a fixed point.  The loop's exit is the state before
it (no iteration) joined with the end of that last pass before its saves are
aged: after the final iteration the saves it made are the most recent ones, so
a value bound in the body holds this iteration's graph, and a write that
dirtied an earlier iteration's save does not dirty it.

Each iteration's allocation is a tensor of its own.  An allocation site in the
body (`output = torch.zeros(...)`) has one storage token, standing for the
tensor it made in the current iteration; when the site runs again, whatever
still holds that token (a name carried round the loop, `x = output`, and the
saves made of it) moves to the site's "earlier iterations" token
(`Loops.renew`).  A write to the new tensor does not reach those names, and a
tensor allocated before the loop and written in it is still one tensor.

Events are reported during every pass, not only on the last: the first pass
runs from the exact state before the loop (the first iteration, with the most
precise names), the later ones from joins that also see what earlier
iterations left (a save in iteration k written in iteration k+1).  A pass
repeats most of the previous pass's events; `State.emit` drops exact
repeats while a loop runs, and the engine keeps one finding per rule and node.

Termination.  Save ids are fixed per save site (`Autograd.save`), so a pass
run again makes the same facts, and every fact names a site, a storage token
or a name of the file: finitely many.  Values that keep changing around a loop
(a chain `h = h.detach()` nests deeper on every pass) are the one way the
state could grow forever: after `WIDEN_AFTER` passes a name whose value still
changes becomes unknown for the rest of the loop.  `MAX_PASSES` bounds the
rest, should a join ever oscillate.

Cost.  An inner loop runs again on every pass of the loop around it, so
restarting it from its entry state each time would multiply the passes of each
nesting level (2 per level before: 2**12 passes of the innermost body at depth
12).  While the outermost loop of a nest runs, each inner loop keeps its last
fixed point.  The outer loop's passes only add facts, so an inner loop's later
entry states are joins of its earlier ones with new facts: an entry the last
fixed point already covers reuses it without a pass (its events were reported
when it was computed), and any other entry starts from that fixed point joined
with the entry, which is usually one pass from converging.  Each nesting level
then costs a constant number of passes of its own body.  A summarised callee
runs its body with its own loops and cache (`Functions.run_body`).
"""

from __future__ import annotations

import libcst as cst

from aliaslint.analysis import interfaces as api
from aliaslint.analysis.core import Part
from aliaslint.analysis import containers
from aliaslint.analysis.builders import REGISTER_METHODS, UNROLL_LAYERS, visited_in_order
from aliaslint.analysis.scopes import Converged, Env, LoopFrame
from aliaslint.analysis.syntax import literal_int
from aliaslint.analysis.values import (
    INT,
    OTHER,
    UNKNOWN,
    ConstValue,
    ContainerValue,
    ModuleValue,
    Value,
    earlier,
)
from aliaslint.nodes import walk

# Loops over literals are unrolled inside at most this many unrolled loops: the iterations
# multiply.
UNROLL_DEPTH = 2


def unrolled_layers(iterable: Value, node: cst.For) -> tuple[Value, ...] | None:
    """The elements `for layer in container:` visits one by one: the `children()` /
    `named_children()` of a container whose layers are known (each a `(name, layer)` pair
    for the latter), or what builders.visited_in_order gives (a layer bound to a plain
    name, or a tuple carrying one unpacked: `for task, head in self.heads.items():`).  A
    container of one repeated element (`[Block() for _ in range(n)]`) runs as a loop."""
    if isinstance(iterable, ContainerValue) and iterable.items is None:
        one = iterable.each
        named = isinstance(one, ContainerValue) and one.items is not None and \
            len(one.items) == 2
        if named:
            assert isinstance(one, ContainerValue) and one.items is not None
            one = one.items[1]
        if not isinstance(one, ModuleValue) or not one.module.ordered or \
                not one.module.members or len(one.module.members) > UNROLL_LAYERS:
            return None
        return tuple(ContainerValue(origin=node, items=(OTHER, member)) if named else member
                     for member in one.module.members)
    elements = visited_in_order(iterable)
    if elements is None or type(node.target) is not cst.Name and not (
            isinstance(node.target, (cst.Tuple, cst.List)) and
            all(isinstance(element, ContainerValue) for element in elements)):
        return None
    return elements


def registers_by_name(body: cst.BaseSuite) -> bool:
    """Does a loop body register or look up submodules by name (`add_module`,
    `register_module`, `setattr`, `getattr`)?  Which module each name holds, and the order
    they run in, is one per iteration: no join of iterations says it."""
    for found in walk(body):
        if type(found) is cst.Call and (
                type(found.func) is cst.Attribute and
                found.func.attr.value in REGISTER_METHODS or
                type(found.func) is cst.Name and found.func.value in ("getattr", "setattr")):
            return True
    return False


def literal_elements(iterable: Value, node: cst.For, env: Env) -> tuple[Value, ...] | None:
    """What `for i in range(3)`, `for i in range(1, n)` (`n` a literal a call passed) or
    `for name in ("res2", "res3")` (a display of literals, also one held by a name or an
    attribute) binds, in order, each a literal; None for another iterable or more than
    ``UNROLL_LAYERS`` elements."""
    if not isinstance(iterable, ContainerValue) or type(node.target) is not cst.Name:
        return None
    origin = iterable.origin
    if origin is None:
        return None
    found: list[object] = []
    if origin is node.iter and type(origin) is cst.Call and \
            type(origin.func) is cst.Name and origin.func.value == "range" and \
            iterable.each == INT:
        bounds = [_int_argument(arg, env) for arg in origin.args]
        if not 1 <= len(bounds) <= 3 or None in bounds or bounds[-1] == 0 and len(bounds) == 3:
            return None
        found.extend(range(*(b for b in bounds if b is not None))[:UNROLL_LAYERS + 1])
    elif isinstance(origin, (cst.List, cst.Tuple)) and iterable.items is not None and \
            len(iterable.items) == len(origin.elements):
        found = [containers.literal_key(element.value) if type(element) is cst.Element
                 else containers.NO_KEY for element in origin.elements]
        if containers.NO_KEY in found:
            return None
    else:
        return None
    if len(found) > UNROLL_LAYERS:
        return None
    return tuple(ConstValue(origin=node.iter, literal=literal,
                            qualname="int" if type(literal) is int else None)
                 for literal in found)


def _int_argument(arg: cst.Arg, env: Env) -> int | None:
    """A positional int argument: a literal, or a name holding one a call passed."""
    if arg.keyword is not None or arg.star:
        return None
    if type(arg.value) is cst.Name:
        held = env.lookup(arg.value.value)
        return held.literal if isinstance(held, ConstValue) and \
            type(held.literal) is int else None
    return literal_int(arg.value)


WIDEN_AFTER = 8  # passes before names that still change are widened to unknown
MAX_PASSES = 32  # a bound on passes should widening not settle a loop


class Loops(Part):
    """Interprets `for` and `while` loops, `break` and `continue`."""

    expressions: api.Expressions
    statements: api.Statements

    def loop(self, node: cst.For | cst.While, env: Env) -> None:
        self.state.stmt = node
        element = None
        if type(node) is cst.For:
            # The iterable is evaluated once, before the first iteration.
            iterable = self.expressions.eval(node.iter, env)
            layers: tuple[Value, ...] | None = unrolled_layers(iterable, node)
            if layers is None and len(self.state.unroll_place) < UNROLL_DEPTH:
                layers = literal_elements(iterable, node, env)
                if layers is not None and not registers_by_name(node.body):
                    layers = None
            if layers is not None:
                self._unroll(node, env, layers)
                return
            element = self.statements.element_of(iterable, node, env)
        outermost = self.state.loop_cache is None
        if outermost:
            self.state.loop_cache, self.state.loop_events = {}, set()
        aligned = containers.aligned_index(node) if type(node) is cst.For else None
        if aligned is not None:
            self.state.aligned.append(aligned)
        # The body may not run, except over a module's submodules (the module itself
        # first): see protocol.py.
        one = element.items[-1] if isinstance(element, ContainerValue) and element.items \
            else element
        branching = not (isinstance(one, ModuleValue) and bool(one.module.members))
        self.state.branches += branching
        try:
            head, breaks = self._fixed_point(node, env, element)
        finally:
            self.state.branches -= branching
            if aligned is not None:
                self.state.aligned.pop()
            if outermost:
                self.state.loop_cache = self.state.loop_events = None
        env.restore(head)
        if node.orelse is not None:  # runs when the loop ends without `break`
            self.statements.block(node.orelse.body.body, env)
        if breaks is not None:
            env.merge(breaks)

    def _fixed_point(self, node: cst.For | cst.While, env: Env,
                     element: Value | None) -> tuple[Env, Env | None]:
        """The state at the loop's head once no pass changes it, and the join of
        the states `break` leaves with on the pass that found it."""
        assert self.state.loop_cache is not None
        entry = env.copy()
        cached = self.state.loop_cache.get(id(node))
        if cached is not None and cached.env is env and cached.element == element:
            if cached.head.covers(entry):
                self.state.stats.loops_reused += 1
                return cached.exit, cached.breaks
            head = cached.head.copy()
            head.merge(entry)
        else:
            head = entry
        widened: set[str] = set()
        level = len(self.state.loops) + 1
        first: Env | None = None  # where the first pass left the names, before any join
        # The second pass's end where that pass ran from exactly where the second iteration
        # starts (the loop's entry added nothing to the first pass's end: nearly always).
        second_pass: Env | None = None
        for passes in range(1, MAX_PASSES + 1):
            like_second = passes == 2 and first is not None and head.identical(first)
            frame = self._pass(node, env, head, element)
            for state in frame.continues:
                env.merge(state)
            end = env.copy()
            if like_second:
                second_pass = end
            aged = [env, *frame.breaks]
            if passes == 1:
                first = end.copy()  # aged below, as the head of the next iteration is
                aged.append(first)
            self._age(frame, level, aged)
            env.merge(head)
            if passes >= WIDEN_AFTER:
                self._widen(env, head, widened)
            converged = env.same(head)
            head = env.copy()
            if converged:
                break
        # (For the outermost loop of a body only: the loops inside it run again in its second
        # iteration; a second iteration of each of them would multiply the passes.)
        second: Env | None = None
        if first is not None and not first.flow.dead and not self.state.loops:
            # The second pass's end is the iteration's only as the last pass: later passes
            # leave other fixed points of the loops inside it.
            second = second_pass if second_pass is not None and passes == 2 else \
                self._second_iteration(node, env, first, element)
        breaks = _join(frame.breaks)
        if passes >= WIDEN_AFTER:
            end = head  # widened: the last pass's end may still hold what changed
        exit_state = entry.copy()
        exit_state.merge(end)
        if second is not None and not second.flow.dead and not exit_state.flow.dead:
            # Its facts only: the names keep the fixed point's values (a list of layers a
            # loop grows is known by how the fixed point built it).
            exit_state.flow.merge(second.flow)
        # A summary's must-effects count the body as run (a loop over a batch, over
        # `range(x.shape[0])`): the writes of every pass's path are made on the way out.
        exit_state.flow.done = end.flow.done
        self.state.loop_cache[id(node)] = Converged(env, element, head, breaks, exit_state)
        return exit_state, breaks

    def _second_iteration(self, node: cst.For | cst.While, env: Env, first: Env,
                          element: Value | None) -> Env:
        """The second iteration as Python runs it, from exactly what the first left.  The
        passes above start from the join of the loop's entry and each pass's end, where a
        name rebound to a new tensor each iteration (`x = torch.tanh(h)`, `x = block(x)`)
        is either tensor, so a write at the top of the next iteration (`torch.relu_(x)`) of
        what the previous one saved is not seen on it; here it is.  The facts it ends with
        are ones the loop may leave with (what it dirtied, a backward after the loop reads)."""
        frame = self._pass(node, env, first, element)  # in ``env``: inner loops reuse
        for state in frame.continues:
            env.merge(state)
        return env.copy()

    def _unroll(self, node: cst.For, env: Env, layers: tuple[Value, ...]) -> None:
        """`for layer in self.layers: x = layer(x)` over a container whose layers are known
        and different, or a loop over literals that registers modules by name (`for i in
        range(3): self.slice1.add_module(str(i), features[i])`): one iteration per element,
        in order, as Python runs it (no fixed point is needed, each iteration sees exactly
        what the one before left)."""
        breaks: list[Env] = []
        outer_place = self.state.unroll_place
        for index, layer in enumerate(layers):
            frame = LoopFrame()
            self.state.loops.append(frame)
            # A module called in this iteration makes a tensor of its own: the same layer
            # object may sit at several places (`layers.append(nn.ReLU(inplace=True))` in a
            # loop), and each place's output is another tensor.
            self.state.unroll_place = (*outer_place, index)
            try:
                self.state.stmt = node
                self.statements.bind(node.target, layer, env)
                self.statements.block(node.body.body, env)
            finally:
                self.state.loops.pop()
                self.state.unroll_place = outer_place
            for state in frame.continues:
                env.merge(state)
            breaks.extend(frame.breaks)
            if self.state.loops:  # the enclosing loop's pass made these saves too
                self.state.loops[-1].made |= frame.made
        if node.orelse is not None:
            self.statements.block(node.orelse.body.body, env)
        joined = _join(breaks)
        if joined is not None:
            env.merge(joined)

    def _pass(self, node: cst.For | cst.While, env: Env, head: Env,
              element: Value | None) -> LoopFrame:
        """One iteration from ``head``: leaves ``env`` where the body's end left it."""
        self.state.stats.loop_passes += 1
        env.restore(head)
        frame = LoopFrame()
        self.state.loops.append(frame)
        try:
            self.state.stmt = node
            if isinstance(node, cst.For):
                self.statements.bind(node.target, element or UNKNOWN, env)
            else:
                self.expressions.eval(node.test, env)
            self.statements.block(node.body.body, env)
        finally:
            self.state.loops.pop()
        return frame

    def _age(self, frame: LoopFrame, level: int, states: list[Env]) -> None:
        """The saves this pass made are an earlier iteration's from now on."""
        if not frame.made:
            return
        mapping = self.state.save_ids.aging(frame.made, level)
        for state in states:
            state.rename_saves(mapping)
        if self.state.loops:  # the enclosing loop's pass made them too
            self.state.loops[-1].made |= frame.made

    def _widen(self, env: Env, head: Env, widened: set[str]) -> None:
        """Names still changing after many passes: unknown from now on."""
        changing = {name for name, value in env.names.items()
                    if value != head.names.get(name)}
        if changing - widened and not widened:
            self.state.stats.loops_widened += 1
        widened |= changing
        for name in widened & env.names.keys():
            env.names[name] = UNKNOWN

    def renew(self, token: object, env: Env) -> None:
        """An allocation site inside a loop runs again: the tensor it made in an earlier
        iteration is another tensor than the one it makes now.

        The site keeps its token for the tensor it makes in this iteration (the most recent
        one); whatever still holds the token the site made before (a name bound in an earlier
        iteration, `x = output` carried round the loop, the saves made of it) is moved to the
        site's "earlier iterations" token, one per site, so finitely many.  A write to the
        new tensor then leaves those names alone, and a write through them still reaches
        their saves and their other names.  A tensor allocated before the loop is not an
        allocation site of the loop: what the loop writes to it is carried round as before.
        """
        before = earlier(token)
        for name, value in env.names.items():
            renamed = value.with_storage_renamed(token, before)
            if renamed is not value:
                env.names[name] = renamed
        saves = env.flow.saves.pop(token, None)
        if saves:
            kept = env.flow.saves.get(before, ())
            env.flow.saves[before] = kept + tuple(s for s in saves if s not in kept)

    def leave(self, env: Env, *, to_head: bool) -> None:
        """`continue` (back to the head) or `break` (past the loop): this path ends here."""
        if not self.state.loops:
            return
        frame = self.state.loops[-1]
        (frame.continues if to_head else frame.breaks).append(env.copy())
        env.flow.dead = True


def _join(states: list[Env]) -> Env | None:
    if not states:
        return None
    joined = states[0].copy()
    for state in states[1:]:
        joined.merge(state)
    return joined
