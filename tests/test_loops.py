"""Loops run to a fixed point: hazards carried around a loop, `break`, `continue`, `else`,
and nesting that costs a few passes per level, not twice the level inside it."""

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from conftest import lint

from aliaslint import check_source
from aliaslint.analysis import analyse, loops
from aliaslint.analysis.scopes import Env, identical
from aliaslint.analysis.values import TensorValue


def _analysis(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source)))


# A running state decayed in place at the top of each step and saved by the matmul
# below it: the write dirties the save of the step before, which `total` still holds.
DECAYED_STATE = """
    import torch


    def train(batches):
        w = torch.randn(16, 16, requires_grad=True)
        state = torch.zeros(16)
        total = torch.zeros(())
        for x in batches:
            state.mul_(0.9)
            total = total + (state @ w).sum()
        total.backward()
    """

# Delayed updates: the loss of step k is backpropagated at step k + 2, after step
# k + 1 refilled the buffer its matmul saved.  `lagged` holds that graph only on
# the third pass.
DELAYED_BACKWARD = """
    import torch


    def train(batches):
        w = torch.randn(16, 16, requires_grad=True)
        buf = torch.zeros(16)
        lagged = recent = torch.zeros(())
        for x in batches:
            buf.copy_(x)
            lagged.backward()
            lagged = recent
            recent = (buf @ w).sum()
    """


def test_a_write_in_the_next_iteration_dirties_the_save_of_this_one():
    assert lint(DECAYED_STATE) == [(10, "AL101")]


def test_a_hazard_that_needs_three_iterations_to_meet_its_backward():
    assert lint(DELAYED_BACKWARD) == [(10, "AL101")]
    # Three passes to the fixed point, then the second iteration from the first's end.
    assert _analysis(DELAYED_BACKWARD).stats.loop_passes == 3 + 1


def test_a_while_loop_carries_the_hazard_too():
    source = """
        import torch


        def train(n):
            w = torch.randn(16, 16, requires_grad=True)
            state = torch.zeros(16)
            total = torch.zeros(())
            step = 0
            while step < n:
                state.mul_(0.9)
                total = total + (state @ w).sum()
                step += 1
            total.backward()
        """
    assert lint(source) == [(11, "AL101")]


def test_a_graph_abandoned_in_one_iteration_is_not_the_next_iterations_graph():
    """The save made on this pass is not the one made on the pass before: zeroing a
    result whose graph is then dropped does not taint the next step's backward."""
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, 16, requires_grad=True)
            for x in batches:
                out = torch.sigmoid(x @ w)
                if out.isnan().any():
                    out.zero_()
                else:
                    out.sum().backward()
        """
    assert lint(source) == []


def test_continue_skips_the_rest_of_the_body():
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, 16, requires_grad=True)
            for x in batches:
                out = torch.sigmoid(x @ w)
                if out.isnan().any():
                    out.zero_()
                    continue
                out.sum().backward()
        """
    assert lint(source) == []


def test_break_leaves_the_loop_with_its_hazard():
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, 16, requires_grad=True)
            loss = torch.zeros(())
            for x in batches:
                h = torch.sigmoid(x @ w)
                loss = loss + h.sum()
                if h.max() > 10:
                    h.mul_(0.1)
                    break
                h.sum().backward()
            loss.backward()
        """
    # Reported once, for the backward after the loop: the one in the body never
    # runs after the write.
    (finding,) = [d for d in _checked(source) if d.code == "AL101"]
    assert finding.location.row == 12
    assert [r.location.row for r in finding.related][-1] == 15


def _checked(source: str):
    from aliaslint import check_source

    return check_source(textwrap.dedent(source), "example.py", ["AL101"])


def test_for_else_runs_only_when_the_loop_did_not_break():
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, 16, requires_grad=True)
            buf = torch.zeros(16)
            total = torch.zeros(())
            for x in batches:
                total = total + (buf @ w).sum()
                if x is None:
                    buf.zero_()
                    break
            else:
                total = total.detach()
            total.backward()
        """
    assert lint(source) == [(12, "AL101")]


def test_for_else_sees_every_iterations_saves():
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, 16, requires_grad=True)
            buf = torch.zeros(16)
            total = torch.zeros(())
            for x in batches:
                total = total + (buf @ w).sum()
            else:
                buf.zero_()
            total.backward()
        """
    assert lint(source) == [(12, "AL101")]


def test_break_inside_no_grad_leaves_the_grad_mode_behind():
    source = """
        import torch


        def train(batches):
            w = torch.randn(16, requires_grad=True)
            for x in batches:
                with torch.no_grad():
                    if x is None:
                        break
            y = torch.sigmoid(w)
            y.mul_(2)
            y.sum().backward()
        """
    assert lint(source) == [(12, "AL101")]


def _nested(depth: int) -> str:
    """A sweep over `depth` nested loops whose innermost body has the hazard of
    DECAYED_STATE: found only once an iteration has run before."""
    lines = ["import torch", "", "", "def sweep(batches):",
             "    w = torch.randn(8, 8, requires_grad=True)",
             "    buf = torch.zeros(8)",
             "    total = torch.zeros(())"]
    for level in range(depth):
        lines.append("    " * (level + 1) + f"for i{level} in range(2):")
    indent = "    " * (depth + 1)
    lines += [f"{indent}buf.mul_(0.5)", f"{indent}total = total + (buf @ w).sum()",
              "    total.backward()"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth", [1, 2, 6, 12])
def test_nested_loops_find_the_hazard(depth):
    assert lint(_nested(depth)) == [(8 + depth, "AL101")]


def test_each_nesting_level_adds_passes_instead_of_doubling_them():
    """Running each body twice per pass of the loop around it took 2**(d+1) - 2 passes
    at depth d (8190 at depth 12).  An inner loop restarts from its last fixed point."""
    passes = {d: _analysis(_nested(d)).stats.loop_passes for d in range(1, 13)}
    growth = [passes[d] - passes[d - 1] for d in range(2, 13)]
    assert all(0 < step <= d + 3 for d, step in zip(range(2, 13), growth)), passes
    assert passes[12] <= 12 * 12
    visits = {d: _analysis(_nested(d)).stats.statements for d in (6, 12)}
    assert visits[12] < 3 * visits[6], visits


def test_an_inner_loop_whose_entry_is_covered_is_not_run_again():
    # The benchmark's module: the inner loops' fixed points cover their later entries.
    lines = ["import torch", "", "", "def step(x):", "    y = torch.zeros(3)"]
    for level in range(12):
        lines.append("    " * (level + 1) + f"for i{level} in range(2):")
    lines += ["    " * 13 + "z = y[0]", "    " * 13 + "z.mul_(x)", "    return y"]
    stats = _analysis("\n".join(lines) + "\n").stats
    # The outermost loop's second iteration runs the inner loops once more, from entries
    # their fixed points cover: one pass more, one reuse more.
    assert stats.loop_passes == 24 + 1 and stats.loops_reused == 11 + 1


def test_passes_report_each_event_once():
    events = _analysis(_nested(4)).events
    assert len(events) == len(set(events))


def test_widening_stops_a_loop_whose_names_keep_changing(monkeypatch):
    monkeypatch.setattr(loops, "WIDEN_AFTER", 1)
    analysis = _analysis(DELAYED_BACKWARD)
    assert analysis.stats.loops_widened == 1
    assert analysis.stats.loop_passes <= 3 + 1  # the second iteration


def test_a_name_rebound_each_iteration_is_written_at_the_top_of_the_next():
    """`x = block(x)` makes a new tensor each iteration; the next iteration's first write of
    `x` writes what the previous one saved.  The fixed point joins the loop's entry `x` with
    it; the second iteration, run from exactly what the first left, sees it."""
    source = """
        import torch


        def run(steps):
            w = torch.randn(16, 16, requires_grad=True)
            x = torch.randn(10, 16, requires_grad=True) * 2
            for _ in range(steps):
                h = torch.relu_(x)
                x = torch.tanh(h @ w)
            x.sum().backward()
        """
    assert lint(source) == [(9, "AL105")]
    fine = source.replace("torch.relu_(x)", "torch.relu(x)")
    assert lint(fine) == []


# Blocks registered under names a loop over a literal range computes, then run by name in
# another loop.  Each iteration's name picks its own block: the second block's leading
# in-place ReLU rewrites the first block's output, which `feats` keeps.
NAMED_BLOCKS = """
    import torch
    from torch import nn


    class Stages(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.depth = depth
            for i in range(2):
                if i == 0:
                    act = nn.Identity()
                else:
                    act = nn.ReLU(inplace=True)
                setattr(self, f"block{i}", nn.Sequential(act, nn.Linear(4, 4)))

        def forward(self, x):
            feats = {}
            for i in {range}:
                x = getattr(self, f"block{i}")(x)
                feats[i] = x
            return feats


    Stages(2)(torch.randn(3, 4))
    """


def test_a_loop_over_a_literal_range_that_registers_by_name_runs_once_per_element():
    assert lint(NAMED_BLOCKS.replace("{range}", "range(2)")) == [(14, "AL105")]


def test_a_loop_over_a_range_not_known_is_not_unrolled():
    # `self.depth` is no literal the analysis holds: which blocks run is not known.
    assert lint(NAMED_BLOCKS.replace("{range}", "range(self.depth)")) == []


def test_registering_by_name_decides_the_loop_is_unrolled():
    body = cst.parse_statement("for i in range(2):\n    self.add_module(str(i), m)\n")
    other = cst.parse_statement("for i in range(2):\n    x = x + i\n")
    assert isinstance(body, cst.For) and isinstance(other, cst.For)
    assert loops.registers_by_name(body.body)
    assert not loops.registers_by_name(other.body)


def test_the_second_iteration_is_the_second_pass_when_both_start_alike(monkeypatch):
    """Where the second pass starts exactly where the second iteration does (the loop's
    entry added nothing to where the first pass left it, nearly always), the second
    iteration is that pass's end, not run again: the same findings, every related location
    and message, on every fixture and conformance case, as when it runs."""
    root = Path(__file__).resolve().parent.parent
    sources = {path: path.read_text(encoding="utf-8") for path in
               [*sorted((root / "fixtures").rglob("*.py")),
                *sorted((root / "benchmarks" / "conformance").glob("*.py"))]}
    sources = {path: text for path, text in sources.items() if "for " in text or "while " in text}
    reused = {path: check_source(text, path.name) for path, text in sources.items()}
    monkeypatch.setattr(Env, "identical", lambda self, other: False)
    run = {path: check_source(text, path.name) for path, text in sources.items()}
    assert reused == run
    assert sum(len(found) for found in run.values()) > 50
    # A training step: nothing the loop's entry holds is new to its end.
    step = """
        import torch


        def train(model, optimizer, batches):
            for inputs, targets in batches:
                optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
                loss.backward()
                optimizer.step()
        """
    assert _analysis(step).stats.loop_passes == 3  # two passes and the second iteration
    monkeypatch.undo()
    assert _analysis(step).stats.loop_passes == 2


def test_states_are_identical_only_in_every_field_and_order():
    here, there = cst.Name("x"), cst.Name("x")
    a = TensorValue(origin=here, storage=("alloc", 1))
    assert identical(a, TensorValue(origin=here, storage=("alloc", 1)))
    # Equal (equality leaves out where a value was made), yet not the same to a reader.
    assert a == TensorValue(origin=there, storage=("alloc", 1))
    assert not identical(a, TensorValue(origin=there, storage=("alloc", 1)))
    assert not identical(here, there) and identical(here, here)  # nodes are themselves
    first, second = Env(), Env()
    first.names.update(a=a, b=a)
    second.names.update(b=a, a=a)
    assert first.same(second) and not first.identical(second)
    second.names = {"a": a, "b": a}
    assert first.identical(second)
    second.flow.dirty = (("w", "s"),)
    assert not first.identical(second)


def test_paths_that_meet_with_one_value_keep_that_value():
    # A name both paths left alone holds the very value it held (no join made); a container
    # is still joined element by element, into an equal one.
    from aliaslint.analysis.values import ContainerValue, join

    node = cst.Name("x")
    tensor = TensorValue(origin=node, storage=("alloc", 1))
    listed = ContainerValue(origin=node, items=(tensor, tensor))
    here, there = Env(), Env()
    here.names.update(x=tensor, xs=listed)
    there.names.update(x=tensor, xs=listed)
    here.merge(there)
    assert here.names["x"] is tensor and join(tensor, tensor) is tensor
    assert here.names["xs"] == listed and here.names["xs"] == join(listed, listed)
