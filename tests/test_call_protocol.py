"""How calls run: a module's forward hooks and pre-hooks around its forward, arguments bound by
the callee's signature (keywords, `*args`/`**kwargs` passed on), and recursive helpers.

Each hazard runs under torch to show that it raises (or silently changes the caller's tensor)
and each twin that it does not."""

import textwrap

import pytest

from aliaslint import check_source, registry

RAISES = "one of the variables needed for gradient computation has been modified"


def _findings(source: str, confidence: str = "high") -> list[tuple[str, int, str]]:
    return [(d.code, d.location.row, d.confidence)
            for d in check_source(source, "model.py", registry.rules(), confidence=confidence)]


def _run(source: str) -> dict:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(source, "model.py", "exec"), namespace)
    return namespace


def _raises(source: str) -> None:
    with pytest.raises(RuntimeError, match=RAISES):
        _run(source)


# A gated block whose activation a hook keeps in range (fp16 overflow guards, as in
# timm and transformers blocks): the hook is registered in `__init__` on a child.
CLAMP_IN_INIT = textwrap.dedent('''\
    import torch
    from torch import nn


    def _clamp_activation(module, inputs, output):
        {hook_body}


    class GatedBlock(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.gate = nn.Sigmoid()
            self.out = nn.Linear(dim, dim)
            self.gate.register_forward_hook(_clamp_activation)

        def forward(self, x):
            return self.out(self.gate(self.proj(x)))


    block = GatedBlock(8)
    block(torch.randn(4, 8)).sum().backward()
    ''')


def test_a_hook_registered_in_init_on_a_child_writes_the_saved_output():
    source = CLAMP_IN_INIT.format(hook_body="output.clamp_(0.05, 0.95)")
    assert _findings(source) == [("AL101", 6, "high")]
    _raises(source)


def test_a_hook_that_returns_a_replacement_is_fine():
    source = CLAMP_IN_INIT.format(hook_body="return output.clamp(0.05, 0.95)")
    assert _findings(source, "low") == []
    _run(source)


# A module that rescales its own output through a bound method registered on `self`.
SELF_HOOK = textwrap.dedent('''\
    import torch
    from torch import nn


    class Renormalized(nn.Module):
        def __init__(self, dim, target=1.0):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.target = target
            self.register_forward_hook(self._renormalize)

        def _renormalize(self, module, args, output):
            {hook_body}

        def forward(self, x):
            return torch.exp(self.fc(x))


    model = Renormalized(6)
    model(torch.randn(3, 6)).mean().backward()
    ''')


def test_a_bound_method_hook_on_self_writes_the_saved_output():
    source = SELF_HOOK.format(hook_body="output.div_(output.sum(-1, keepdim=True))")
    assert _findings(source) == [("AL101", 13, "high")]
    _raises(source)


def test_a_bound_method_hook_returning_a_new_tensor_is_fine():
    source = SELF_HOOK.format(hook_body="return output / output.sum(-1, keepdim=True)")
    assert _findings(source, "low") == []
    _run(source)


# Two hooks: one replaces the output by a copy, the other scales what it is given in place.
# torch runs them in registration order, `prepend=True` first: the in-place one writes the
# saved tanh output only when it runs first.
ORDER = textwrap.dedent('''\
    import torch
    from torch import nn


    def detach_copy(module, args, output):
        return output.clone()


    def damp(module, args, output):
        output.mul_(0.5)


    encoder = nn.Sequential(nn.Linear(5, 5), nn.Tanh())
    encoder[1].register_forward_hook(detach_copy)
    encoder[1].register_forward_hook(damp{prepend})
    encoder(torch.randn(2, 5)).sum().backward()
    ''')


def test_hooks_run_in_registration_order():
    source = ORDER.format(prepend="")
    assert _findings(source, "low") == []
    _run(source)


def test_a_prepended_hook_runs_first():
    source = ORDER.format(prepend=", prepend=True")
    assert _findings(source) == [("AL101", 10, "high")]
    _raises(source)


# A pre-hook called with the keyword arguments too (`with_kwargs=True`), which scales the
# input a previous layer saved.
KWARGS_PREHOOK = textwrap.dedent('''\
    import torch
    from torch import nn


    def scale_inputs(module, args, kwargs):
        {hook_body}


    class Head(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.hidden = nn.Linear(dim, dim)
            self.classifier = nn.Linear(dim, 3)
            self.classifier.register_forward_pre_hook(scale_inputs, with_kwargs=True)

        def forward(self, x):
            return self.classifier(torch.sigmoid(self.hidden(x)))


    Head(4)(torch.randn(2, 4)).sum().backward()
    ''')


def test_a_pre_hook_with_kwargs_writes_the_saved_input():
    source = KWARGS_PREHOOK.format(hook_body="args[0].mul_(2.0)")
    assert _findings(source) == [("AL101", 6, "high")]
    _raises(source)


def test_a_pre_hook_with_kwargs_returning_new_arguments_is_fine():
    source = KWARGS_PREHOOK.format(hook_body="return (args[0] * 2.0,), kwargs")
    assert _findings(source, "low") == []
    _run(source)


# Hooks put on every layer of one type found by iterating the model (a training script's
# `attach` helper); `isinstance` picks which ones.
ITERATED = textwrap.dedent('''\
    import torch
    from torch import nn


    def clip_output(module, inputs, output):
        output.clamp_(-0.9, 0.9)


    def attach(model):
        for name, layer in model.named_modules():
            if {test}:
                layer.register_forward_hook(clip_output)


    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    attach(model)
    model(torch.randn(4, 6)).sum().backward()
    ''')


def test_hooks_put_on_the_layers_an_isinstance_test_picks():
    source = ITERATED.format(test="isinstance(layer, nn.Tanh)")
    assert _findings(source) == [("AL101", 6, "high")]
    _raises(source)


def test_hooks_put_on_layers_picked_by_name_are_a_may_effect():
    # Which names `named_modules` yields is not followed: the hook may be on the tanh.
    source = ITERATED.format(test='name.endswith("1")')
    assert _findings(source) == []
    assert _findings(source, "low") == [("AL101", 6, "low")]
    _raises(source)


def test_hooks_on_layers_of_another_type_are_fine():
    source = ITERATED.format(test="isinstance(layer, nn.Linear)")
    assert _findings(source) == []
    _run(source)


CONDITIONAL = textwrap.dedent('''\
    import sys

    import torch
    from torch import nn


    def clip_output(module, inputs, output):
        output.clamp_(-0.9, 0.9)


    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    if "--clip" in sys.argv or True:
        handle = model[1].register_forward_hook(clip_output)
    model(torch.randn(4, 6)).sum().backward()
    ''')


def test_a_hook_registered_on_one_branch_is_a_may_effect():
    assert _findings(CONDITIONAL) == []
    assert _findings(CONDITIONAL, "low") == [("AL101", 8, "low")]
    _raises(CONDITIONAL)


REMOVED = textwrap.dedent('''\
    import torch
    from torch import nn


    def clip_output(module, inputs, output):
        output.clamp_(-0.9, 0.9)


    def probe(model):
        {probe}


    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    probe(model)
    model(torch.randn(4, 6)).sum().backward()
    ''')


@pytest.mark.parametrize("probe", [
    "handle = model[1].register_forward_hook(clip_output)\n"
    "    with torch.no_grad():\n"
    "        model(torch.randn(4, 6))\n"
    "    handle.remove()",
    "with model[1].register_forward_hook(clip_output), torch.no_grad():\n"
    "        model(torch.randn(4, 6))",
])
def test_a_removed_hook_no_longer_runs(probe):
    source = REMOVED.format(probe=probe)
    assert _findings(source, "low") == []
    _run(source)
    kept = source.replace("handle.remove()", "pass")
    if kept != source:
        assert _findings(kept) == [("AL101", 6, "high")]
        _raises(kept)


# A wrapper that passes any arguments on (detectron2's and timm's wrappers, a profiler):
# the wrapped module's write to its argument, bound by its own signature, is the call's.
FORWARDED = textwrap.dedent('''\
    import torch
    from torch import nn


    class Center(nn.Module):
        def forward(self, x, dim=0, keepdim=True):
            {body}


    class Traced(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            self.calls = 0

        def forward(self, *args, **kwargs):
            self.calls += 1
            return self.module(*args, **kwargs)


    def reconstruction(prep, x):
        z = prep(x, dim=0)
        return (z - x).abs().mean()


    batch = torch.randn(8, 3) + 4.0
    before = batch.clone()
    err = reconstruction(Traced(Center()), batch)
    changed = not torch.equal(batch, before)
    ''')


def test_args_and_kwargs_pass_through_a_wrapper():
    source = FORWARDED.format(body="return x.sub_(x.mean(dim, keepdim=keepdim))")
    assert _findings(source) == [("AL208", 7, "high")]
    assert _run(source)["changed"]


def test_a_wrapped_module_that_copies_is_fine():
    source = FORWARDED.format(body="return x - x.mean(dim, keepdim=keepdim)")
    assert _findings(source, "low") == []
    assert not _run(source)["changed"]


def test_a_tensor_passed_by_keyword_binds_to_its_parameter():
    source = textwrap.dedent('''\
        import torch


        def whiten(features, *, eps=1e-5):
            features -= features.mean(0)
            return features / (features.std(0) + eps)


        def embed(batch):
            return whiten(eps=1e-6, features=batch), batch


        out, kept = embed(torch.randn(5, 3))
        ''')
    assert _findings(source) == [("AL208", 5, "high")]


# A recursive helper that shrinks its argument in place once per level.
RECURSIVE = textwrap.dedent('''\
    import torch
    from torch import nn


    def decay(values, depth, rate=0.5):
        if depth == 0:
            return values
        {step}


    critic = nn.Linear(4, 1)
    values = torch.sigmoid(critic(torch.randn(5, 4)))
    values = decay(values, 3)
    values.sum().backward()
    ''')


def test_a_recursive_helper_that_writes_its_argument_is_summarised():
    source = RECURSIVE.format(step="values.mul_(rate)\n    return decay(values, depth - 1, rate)")
    assert _findings(source) == [("AL101", 8, "high")]
    _raises(source)


def test_a_recursive_helper_that_copies_is_fine():
    source = RECURSIVE.format(step="return decay(values * rate, depth - 1, rate)")
    assert _findings(source, "low") == []
    _run(source)


def test_mutual_recursion_reaches_a_fixed_point():
    source = textwrap.dedent('''\
        import torch


        def even(t, n):
            if n == 0:
                return t
            return odd(t, n - 1)


        def odd(t, n):
            t.clamp_(min=0.1)
            return even(t, n - 1)


        w = torch.randn(3, requires_grad=True)
        out = torch.exp(w)
        out = even(out, 4)
        out.sum().backward()
        ''')
    assert _findings(source) == [("AL101", 11, "high")]
    _raises(source)


def test_a_hook_on_a_submodule_of_one_of_two_instances_is_a_may_effect():
    # What `self.gate` holds is known per class: the hook registered on the first block's
    # gate is taken for every block's, so what it does is a may-effect.
    two = CLAMP_IN_INIT.format(hook_body="output.clamp_(0.05, 0.95)").replace(
        "        self.gate.register_forward_hook(_clamp_activation)\n", "").replace(
        "block = GatedBlock(8)\n",
        "block = GatedBlock(8)\nother = GatedBlock(8)\n"
        "block.gate.register_forward_hook(_clamp_activation)\n")
    assert _findings(two) == []
    assert _findings(two, "low") == [("AL101", 6, "low")]
    _raises(two)
    one = two.replace("other = GatedBlock(8)\n", "")
    assert _findings(one) == [("AL101", 6, "high")]
    _raises(one)


def test_a_script_s_main_block_registers_for_certain():
    source = CONDITIONAL.replace('if "--clip" in sys.argv or True:', 'if __name__ == "__main__":')
    assert _findings(source) == [("AL101", 8, "high")]
    _raises(source)


# A debugging aid that walks the model with `apply` and hooks the layers of one type
# (transformers' `DebugUnderflowOverflow` walks it so); its hook is a bound method.
APPLIED = textwrap.dedent('''\
    import torch
    from torch import nn


    class ActivationGuard:
        def __init__(self, model, limit=0.95):
            self.limit = limit
            model.apply(self._attach)

        def _attach(self, module):
            if isinstance(module, nn.Sigmoid):
                module.register_forward_hook(self.clamp)

        def clamp(self, module, inputs, output):
            {hook_body}


    model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 1))
    guard = ActivationGuard(model)
    model(torch.randn(3, 4)).sum().backward()
    ''')


def test_a_function_applied_to_every_module_registers_hooks():
    source = APPLIED.format(hook_body="output.clamp_(1 - self.limit, self.limit)")
    assert _findings(source) == [("AL101", 15, "high")]
    _raises(source)


def test_a_function_applied_to_every_module_with_a_copying_hook_is_fine():
    source = APPLIED.format(hook_body="return output.clamp(1 - self.limit, self.limit)")
    assert _findings(source, "low") == []
    _run(source)
