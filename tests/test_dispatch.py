"""Method calls as Python makes them: static and class methods, properties, `super()`,
methods reached through the class, inherited `__init__` and `forward`, mixins by their MRO,
overrides of a method a base class calls on `self`, and methods that write their object's
state.  Each hazard is made of a save in one definition and a write in another.

The findings are asserted exactly (code, line, confidence); each hazard is run under torch
to show it raises, and its corrected twin to show it runs and is not reported."""

import textwrap

import pytest

from aliaslint import check_source
from aliaslint.analysis.dispatch import c3
from aliaslint.analysis.scopes import ClassInfo

torch = pytest.importorskip("torch")


def _findings(source: str, confidence: str = "high") -> list[tuple[str, int, str]]:
    text = textwrap.dedent(source)
    return sorted((d.code, d.location.row, d.confidence)
                  for d in check_source(text, "m.py", confidence=confidence))  # type: ignore[arg-type]


def _line(source: str, text: str) -> int:
    (row,) = [i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1)
              if text in line]
    return row


def _error(source: str) -> str | None:
    """Run the program; the message of what it raised, or None."""
    scope: dict = {"__name__": "case"}
    torch.manual_seed(0)
    try:
        exec(compile(textwrap.dedent(source), "<case>", "exec"), scope)  # noqa: S102
    except RuntimeError as error:
        return str(error)
    return None


INPLACE = "modified by an inplace operation"

# Actor-critic policy (pytorch/examples' actor_critic shape): a static helper floors the
# action probabilities in place, after softmax saved them for its backward.
POLICY = '''
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Policy(nn.Module):
        def __init__(self, n_obs=4, n_actions=2):
            super().__init__()
            self.affine = nn.Linear(n_obs, 16)
            self.action_head = nn.Linear(16, n_actions)
            self.value_head = nn.Linear(16, 1)

        @staticmethod
        def floor_probs(probs, eps=1e-3):
            return probs.clamp_(min=eps)

        def forward(self, x):
            h = F.relu(self.affine(x))
            probs = F.softmax(self.action_head(h), dim=-1)
            return {call}, self.value_head(h)


    def finish_episode(model, states, actions, returns):
        probs, values = model(states)
        log_probs = probs.gather(1, actions[:, None]).log().squeeze(1)
        advantage = returns - values.squeeze(1).detach()
        loss = -(log_probs * advantage).sum() + F.smooth_l1_loss(values.squeeze(1), returns)
        loss.backward()


    finish_episode(Policy(), torch.randn(5, 4), torch.randint(0, 2, (5,)), torch.randn(5))
    '''


@pytest.mark.parametrize("call", ["self.floor_probs(probs)", "Policy.floor_probs(probs)"])
def test_a_static_method_writes_what_its_caller_saved(call):
    source = POLICY.format(call=call)
    assert _findings(source) == [("AL101", _line(source, "probs.clamp_("), "high")]
    assert INPLACE in _error(source)
    twin = source.replace("probs.clamp_(", "probs.clamp(")
    assert _findings(twin) == [] and _error(twin) is None


# A squeeze-excite gate whose squashing is a class method, called through `cls` by a
# class-method constructor's instance and through the class name.
GATE = '''
    import torch
    from torch import nn


    class Gate(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.fc = nn.Linear(channels, channels)

        @classmethod
        def halve(cls, g):
            return g.mul_(0.5)

        @classmethod
        def squash(cls, g):
            return cls.halve(g)

        @classmethod
        def build(cls, channels):
            return cls(channels)

        def forward(self, x):
            g = torch.tanh(self.fc(x.mean(dim=(2, 3))))
            return x * self.squash(g)[:, :, None, None]


    block = Gate.build(4)
    block(torch.randn(2, 4, 3, 3)).sum().backward()
    '''


def test_a_class_method_reached_through_cls_writes_a_saved_result():
    assert _findings(GATE) == [("AL101", _line(GATE, "g.mul_(0.5)"), "high")]
    assert INPLACE in _error(GATE)
    twin = GATE.replace("g.mul_(0.5)", "g.mul(0.5)")
    assert _findings(twin) == [] and _error(twin) is None


# ViT patch embedding (timm/torchvision shape): the class token's position is a property,
# a view of the position parameter; resetting it in place outside no_grad raises.
PATCH_EMBED = '''
    import torch
    from torch import nn


    class PatchEmbed(nn.Module):
        def __init__(self, dim=8, patches=4):
            super().__init__()
            self.proj = nn.Linear(12, dim)
            self.pos_embed = nn.Parameter(torch.randn(1, patches + 1, dim) * 0.02)

        @property
        def cls_pos(self):
            return self.pos_embed[:, :1]

        def forward(self, x):
            return self.proj(x) + self.pos_embed[:, 1:]


    def init_weights(model):
        model.cls_pos.zero_()


    def build():
        model = PatchEmbed()
        init_weights(model)
        return model


    build()(torch.randn(2, 4, 12)).sum().backward()
    '''


def test_a_property_returns_the_view_its_getter_makes():
    assert _findings(PATCH_EMBED) == [("AL102", _line(PATCH_EMBED, "cls_pos.zero_()"), "high")]
    assert "leaf Variable" in _error(PATCH_EMBED)
    twin = PATCH_EMBED.replace("        model.cls_pos.zero_()",
                               "        with torch.no_grad():\n            model.cls_pos.zero_()")
    assert _findings(twin) == [] and _error(twin) is None


# detectron2's ASPP pooling shape: a subclass runs its base's forward by each spelling of
# the call, then writes the result in place.
POOLING = '''
    import torch
    from torch import nn


    class Pooling(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 1)

        def forward(self, x):
            return torch.sigmoid(self.conv(x))


    class ScaledPooling(Pooling):
        def forward(self, x):
            y = {call}
            y.mul_(2.0)
            return y


    model = ScaledPooling(3)
    model(torch.randn(1, 3, 4, 4)).sum().backward()
    '''


@pytest.mark.parametrize("call", ["super().forward(x)", "super(ScaledPooling, self).forward(x)",
                                  "Pooling.forward(self, x)"])
def test_a_base_forward_reached_from_the_subclass(call):
    source = POOLING.format(call=call)
    assert _findings(source) == [("AL101", _line(source, "y.mul_(2.0)"), "high")]
    assert INPLACE in _error(source)
    twin = source.replace("y.mul_(2.0)", "y = y * 2.0")
    assert _findings(twin) == [] and _error(twin) is None


# An encoder whose in-place renormalisation comes from a mixin (the MRO finds it after the
# class); with a base from another module first in the MRO, that base may define it.
ENCODER = '''
    import torch
    from torch import nn
    {extra}

    class RenormMixin:
        eps = 1e-6

        def renorm(self, z):
            return z.div_(z.norm(dim=-1, keepdim=True) + self.eps)


    class Encoder({bases}nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(10, 4)

        def forward(self, x):
            return self.renorm(torch.tanh(self.fc(x)))


    enc = Encoder()
    enc(torch.randn(6, 10)).sum().backward()
    '''


def test_a_mixin_method_is_found_by_the_mro():
    source = ENCODER.format(extra="", bases="RenormMixin, ")
    assert _findings(source) == [("AL101", _line(source, "z.div_("), "high")]
    assert INPLACE in _error(source)


def test_a_base_defined_elsewhere_first_in_the_mro_stops_the_lookup():
    source = ENCODER.format(extra="from collections import OrderedDict as Registry\n",
                            bases="Registry, RenormMixin, ")
    assert _findings(source, "low") == []


# timm's squeeze-excite shape: the base's forward calls `self.gate(g)`, a subclass
# overrides the gate with an in-place squash.
SE = '''
    import torch
    from torch import nn


    class SEBase(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.fc1 = nn.Linear(channels, channels // 2)
            self.fc2 = nn.Linear(channels // 2, channels)

        def gate(self, g):
            return g

        def forward(self, x):
            s = x.mean(dim=(2, 3))
            g = torch.tanh(self.fc2(torch.relu(self.fc1(s))))
            return x * self.gate(g)[:, :, None, None]


    class HardSE(SEBase):
        def gate(self, g):
            return g.add_(1.0).mul_(0.5)


    class PlainSE(SEBase):
        pass
    {run}'''


def test_an_override_on_an_instance_of_known_class_is_high():
    source = SE.format(run="\n\n    HardSE(8)(torch.randn(2, 8, 5, 5)).sum().backward()\n")
    assert _findings(source) == [("AL101", _line(source, "g.add_(1.0)"), "high")]
    assert INPLACE in _error(source)
    twin = SE.format(run="\n\n    PlainSE(8)(torch.randn(2, 8, 5, 5)).sum().backward()\n")
    assert _findings(twin) == [] and _error(twin) is None
    # SEBase.forward itself may still run HardSE's gate: that stays a may-effect.
    assert _findings(twin, "low") == [("AL101", _line(source, "g.add_(1.0)"), "low")]


def test_an_override_the_base_may_run_on_self_is_low():
    # No instance is built: `self` in SEBase.forward may be a HardSE.
    source = SE.format(run="")
    assert _findings(source) == []
    assert _findings(source, "low") == [("AL101", _line(source, "g.add_(1.0)"), "low")]


# detectron2's frozen batch norm shape: a buffer registered by the base's __init__, used by
# the base's forward, and folded in place by a method the subclass's forward calls after.
NORM = '''
    import torch
    from torch import nn


    class FrozenAffine(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.register_buffer("scale", torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))

        def forward(self, x):
            return x * self.scale + self.bias


    class TrackedAffine(FrozenAffine):
        def track(self, x):
            self.scale.mul_(0.9).add_(0.1 * x.detach().std(dim=0))

        def forward(self, x):
            out = super().forward(x)
            self.track(x)
            return out


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 4)
            self.norm = TrackedAffine(4)

        def forward(self, x):
            return self.norm(self.fc(x))


    Head()(torch.randn(5, 6)).pow(2).sum().backward()
    '''


def test_a_method_that_writes_a_buffer_dirties_what_forward_saved():
    assert _findings(NORM) == [("AL101", _line(NORM, "self.scale.mul_(0.9)"), "high")]
    assert INPLACE in _error(NORM)
    # Rebinding the attribute leaves the saved tensor alone.
    twin = NORM.replace("self.scale.mul_(0.9).add_(0.1 * x.detach().std(dim=0))",
                        "self.scale = self.scale * 0.9 + 0.1 * x.detach().std(dim=0)")
    assert _findings(twin, "low") == [] and _error(twin) is None


def _info(name: str, *bases: ClassInfo) -> ClassInfo:
    import libcst as cst
    info = ClassInfo(name, cst.ClassDef(cst.Name(name), cst.IndentedBlock([])), False,
                     bases=bases)
    info.mro = c3(info, bases) or ()
    return info


def test_c3_orders_a_diamond_as_python_does():
    a = _info("A")
    b, c = _info("B", a), _info("C", a)
    d = _info("D", b, c)
    assert [k.name for k in d.mro] == ["D", "B", "C", "A"]
    assert c3(_info("E"), [a, b]) is None  # Python refuses `class E(A, B)` with B(A)


# A subclass that rebinds the method's name in its class body (`gate = staticmethod(fn)`):
# the base's in-place gate no longer runs, on the subclass nor on `self` in the base.
HIDDEN = '''
    import torch
    from torch import nn


    def keep(g):
        return g


    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def gate(self, g):
            return g.mul_(0.5)

        def forward(self, x):
            return self.gate(torch.tanh(self.fc(x)))


    class Sub(Base):
        gate = staticmethod(keep)


    Sub()(torch.randn(2, 3)).sum().backward()
    '''


def test_a_name_bound_in_a_subclass_body_hides_the_base_method():
    assert _findings(HIDDEN, "low") == [] and _error(HIDDEN) is None
    hazard = HIDDEN.replace("Sub()(", "Base()(")
    assert _findings(hazard, "low") == [("AL101", _line(hazard, "g.mul_(0.5)"), "high")]
    assert INPLACE in _error(hazard)


# A weight-normalised linear layer (the shape of timm's and detectron2's renorm helpers):
# forward renormalises its weight through `.data` in a method, after the matmul saved the
# weight for the input's gradient.  Nothing raises; the input's gradient is computed with
# the renormalised weight.
RENORM = '''
    import torch
    from torch import nn


    class NormLinear(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(d, d))

        def renorm(self):
            self.weight.data.div_(self.weight.data.norm(dim=1, keepdim=True))

        def forward(self, x):
            out = torch.tanh(x @ self.weight)
            self.renorm()
            return out


    def input_grad():
        x = torch.randn(2, 3, requires_grad=True)
        layer = NormLinear(3)
        out = layer(x)
        out.sum().backward()
        return x.grad, out, layer.weight.detach()


    grad, out, weight = input_grad()
    '''


def test_a_method_writing_a_parameter_through_data_is_a_silent_wrong_gradient():
    assert _findings(RENORM) == [("AL103", _line(RENORM, "self.renorm()"), "high")]
    scope: dict = {}
    torch.manual_seed(0)
    exec(compile(textwrap.dedent(RENORM), "<case>", "exec"), scope)  # noqa: S102
    # The right gradient of sum(tanh(x @ W)) uses the W forward ran with; autograd's used
    # the renormalised W.
    out, weight = scope["out"].detach(), scope["weight"]
    used = (1 - out ** 2) @ weight.t()
    assert torch.allclose(scope["grad"], used)
    twin = RENORM.replace("            self.renorm()\n", "")
    assert _findings(twin, "low") == []
    clean: dict = {}
    torch.manual_seed(0)
    exec(compile(textwrap.dedent(twin), "<case>", "exec"), clean)  # noqa: S102
    assert torch.equal(clean["out"], scope["out"])  # the same forward
    assert not torch.allclose(clean["grad"], scope["grad"])  # another gradient


# A LightningModule whose shared step smooths the probabilities with a static helper that
# writes them in place; Lightning runs backward on the loss `training_step` returns.
LIGHTNING = '''
    import torch
    import torch.nn.functional as F
    from torch import nn
    import lightning as L


    class Classifier(L.LightningModule):
        def __init__(self, classes=3):
            super().__init__()
            self.fc = nn.Linear(8, classes)

        def forward(self, x):
            return self.fc(x)

        @staticmethod
        def smooth(probs, eps=0.05):
            return probs.mul_(1 - eps).add_(eps / probs.shape[-1])

        def _shared_step(self, batch):
            x, y = batch
            probs = self(x).softmax(dim=-1)
            probs = self.smooth(probs)
            return F.nll_loss(probs.log(), y)

        def training_step(self, batch, batch_idx):
            return self._shared_step(batch)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)
    '''


def test_a_lightning_step_reaches_a_static_helper_through_a_shared_step():
    assert _findings(LIGHTNING) == [("AL101", _line(LIGHTNING, "probs.mul_(1 - eps)"), "high")]
    # What Lightning's automatic optimisation runs, with a plain module standing in.
    run = LIGHTNING.replace("import lightning as L\n", "").replace(
        "L.LightningModule", "nn.Module") + textwrap.indent(textwrap.dedent('''

        batch = (torch.randn(4, 8), torch.tensor([0, 1, 2, 0]))
        Classifier().training_step(batch, 0).backward()
        '''), "    ")
    assert INPLACE in _error(run)
    twin = LIGHTNING.replace("probs.mul_(1 - eps).add_(", "probs.mul(1 - eps).add(")
    assert _findings(twin, "low") == []
    assert _error(twin.replace("import lightning as L\n", "").replace(
        "L.LightningModule", "nn.Module") + textwrap.indent(textwrap.dedent('''

        batch = (torch.randn(4, 8), torch.tensor([0, 1, 2, 0]))
        Classifier().training_step(batch, 0).backward()
        '''), "    ")) is None


def test_a_lightning_module_that_steps_its_optimizers_itself_has_no_automatic_backward():
    def backward_of(source: str) -> str:
        (finding,) = check_source(textwrap.dedent(source), "m.py")
        return finding.message.split(" will raise")[0].rsplit("; ", 1)[1]

    def with_line(line: str) -> str:
        return LIGHTNING.replace("super().__init__()\n",
                                 f"super().__init__()\n            {line}\n")

    step = _line(LIGHTNING, "return self._shared_step(batch)")
    assert backward_of(LIGHTNING) == f"backward at line {step}"  # Lightning's, of the loss
    # Manual optimisation: the returned loss is only what the step gives back.
    for manual in ("self.automatic_optimization = False",
                   "self.automatic_optimization: bool = False"):
        assert backward_of(with_line(manual)).startswith("backward of the output")
    # Only mentioned, in a comment or a docstring: still Lightning's automatic backward.
    for mention in ("# self.automatic_optimization = False",
                    '"""Set automatic_optimization = False to step by hand."""'):
        assert backward_of(with_line(mention)) == f"backward at line {step + 1}"


# A reparameterisable block (RepVGG / FasterNet shape): `__init__` binds `self.forward` to
# one of two methods by a mode literal given at construction; calling the module runs the
# bound method, which writes into the channels its conv saved.
BOUND_FORWARD = '''
    import torch
    from torch import nn


    class PartialMixer(nn.Module):
        def __init__(self, dim, n_div=4, mode="split_cat"):
            super().__init__()
            self.part = dim // n_div
            self.rest = dim - self.part
            self.conv = nn.Conv2d(self.part, self.part, 3, 1, 1, bias=False)
            if mode == "slicing":
                self.forward = self.forward_slicing
            elif mode == "split_cat":
                self.forward = self.forward_split_cat
            else:
                raise ValueError(mode)

        def forward_slicing(self, x):
            x = x.clone()
            x[:, : self.part] = self.conv(x[:, : self.part])
            return x

        def forward_split_cat(self, x):
            x1, x2 = torch.split(x, [self.part, self.rest], dim=1)
            return torch.cat((self.conv(x1), x2), 1)


    class Stage(nn.Module):
        def __init__(self, dim, mode):
            super().__init__()
            self.mixer = PartialMixer(dim, mode=mode)
            self.proj = nn.Conv2d(dim, dim, 1)

        def forward(self, x):
            return x + self.proj(self.mixer(x))


    stem = nn.Conv2d(3, 8, 3, padding=1)
    stage = Stage(8, mode="slicing")
    stage(stem(torch.randn(2, 3, 6, 6))).mean().backward()
    '''


def test_a_forward_bound_in_init_is_what_calling_the_module_runs():
    assert _findings(BOUND_FORWARD) == [
        ("AL101", _line(BOUND_FORWARD, "x[:, : self.part] = self.conv"), "high")]
    assert INPLACE in _error(BOUND_FORWARD)
    twin = BOUND_FORWARD.replace('Stage(8, mode="slicing")', 'Stage(8, mode="split_cat")')
    assert _findings(twin, "low") == []
    assert _error(twin) is None


# A bound method kept in an attribute and called through it (`self.act = self.act_inplace`),
# and a name bound to a method (`step = self.update`): each call runs that method.
KEPT_METHOD = '''
    import torch
    from torch import nn


    class Head(nn.Module):
        def __init__(self, dim, fast=False):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.act = self.squash_inplace if fast else self.squash

        def squash(self, h):
            return h.sigmoid()

        def squash_inplace(self, h):
            return h.sigmoid_()

        def forward(self, x):
            return self.act(torch.exp(self.fc(x)))


    head = Head(4, fast=True)
    head(torch.randn(3, 4)).sum().backward()
    '''


def test_a_method_kept_in_an_attribute_runs_when_called_through_it():
    assert _findings(KEPT_METHOD) == [("AL101", _line(KEPT_METHOD, "h.sigmoid_()"), "high")]
    assert INPLACE in _error(KEPT_METHOD)
    twin = KEPT_METHOD.replace("Head(4, fast=True)", "Head(4)")
    assert _findings(twin, "low") == []
    assert _error(twin) is None


def test_an_unknown_forward_kept_on_the_instance_hides_the_class_forward():
    # `self.forward = wrap(self.forward)` by a function the file does not define: what
    # calling the module runs is not known, so the class's `forward` is not assumed.
    source = '''
        import torch
        from torch import nn
        from tools import wrap


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.forward = wrap(self.forward)

            def forward(self, x):
                return self.fc(x.mul_(0.5))


        stem = nn.Linear(4, 4)
        h = torch.exp(stem(torch.randn(2, 4)))
        Net()(h).sum().backward()
        '''
    assert _findings(source, "low") == []
    # The class's forward, run when nothing hides it, writes the saved `exp` output.
    shown = source.replace("        self.forward = wrap(self.forward)\n", "")
    assert _findings(shown) == [("AL101", _line(shown, "x.mul_(0.5)"), "high")]


# A stateful recurrent cell (truncated-BPTT shape): `forward` keeps its hidden state on
# the object, `reset_state` zeroes that tensor in place between sequences.  The state is
# `tanh`'s output, which `tanh` saved: zeroing it before the backward raises.
STATEFUL_CELL = '''
    import torch
    from torch import nn


    class Cell(nn.Module):
        def __init__(self, n_in, n_hidden):
            super().__init__()
            self.inp = nn.Linear(n_in, n_hidden)
            self.rec = nn.Linear(n_hidden, n_hidden)
            self.h = None

        def forward(self, x):
            pre = self.inp(x) if self.h is None else self.inp(x) + self.rec(self.h)
            self.h = torch.tanh(pre)
            return self.h

        def reset_state(self):
            if self.h is not None:
                self.h.zero_()


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = Cell(3, 8)
            self.out = nn.Linear(8, 2)

        def forward(self, x):
            return self.out(self.cell(x))

        def new_sequence(self):
            self.cell.reset_state()


    model = Tagger()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(4, 3)).pow(2).mean()
    model.new_sequence()
    opt.zero_grad()
    loss.backward()
    opt.step()
    '''


def test_a_method_writes_the_tensor_forward_kept_on_the_object():
    assert _findings(STATEFUL_CELL) == [("AL101", _line(STATEFUL_CELL, "self.h.zero_()"), "high")]
    assert INPLACE in _error(STATEFUL_CELL)
    # The reset after the step: nothing saved is pending any more.
    twin = STATEFUL_CELL.replace("    model.new_sequence()\n", "").replace(
        "    opt.step()\n", "    opt.step()\n    model.new_sequence()\n")
    assert _findings(twin, "low") == []
    assert _error(twin) is None


# Attention maps kept on each block for visualisation (timm's `Attention` with a cache),
# read by a helper function in the training script: scaling them in place before the
# step's backward writes what `softmax` saved.
KEPT_ATTENTION = '''
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = nn.Linear(dim, dim * 3)
            self.attn_map = None

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            self.attn_map = attn
            return attn @ v


    class Encoder(nn.Module):
        def __init__(self, dim=8, depth=2):
            super().__init__()
            self.blocks = nn.ModuleList([Attention(dim) for _ in range(depth)])

        def forward(self, x):
            for blk in self.blocks:
                x = x + blk(x)
            return x.mean(dim=1)


    def attention_maps(model, temperature):
        maps = []
        for blk in model.blocks:
            maps.append(blk.attn_map.div_(temperature))
        return maps


    model = Encoder()
    loss = model(torch.randn(2, 5, 8)).pow(2).sum()
    maps = attention_maps(model, 0.5)
    loss.backward()
    '''


def test_a_helper_writes_attention_a_module_kept_on_itself():
    assert _findings(KEPT_ATTENTION) == [
        ("AL101", _line(KEPT_ATTENTION, "blk.attn_map.div_(temperature)"), "high")]
    assert INPLACE in _error(KEPT_ATTENTION)
    twin = KEPT_ATTENTION.replace("blk.attn_map.div_(temperature)",
                                  "blk.attn_map.div(temperature)")
    assert _findings(twin, "low") == []
    assert _error(twin) is None
    # Read after the backward: what softmax saved is no longer needed.
    after = KEPT_ATTENTION.replace(
        "    maps = attention_maps(model, 0.5)\n    loss.backward()\n",
        "    loss.backward()\n    maps = attention_maps(model, 0.5)\n")
    assert _findings(after, "low") == []
    assert _error(after) is None


def test_a_mode_given_at_two_constructions_decides_neither():
    # The attributes a constructor sets are the class's, learned from one construction: a
    # class built at two places with different modes has its bound forward from neither.
    source = BOUND_FORWARD.replace(
        '''    stage = Stage(8, mode="slicing")
    stage(stem(torch.randn(2, 3, 6, 6))).mean().backward()
''', '''    preview = Stage(8, mode="slicing")
    stage = Stage(8, mode="split_cat")
    stage(stem(torch.randn(2, 3, 6, 6))).mean().backward()
    with torch.no_grad():
        preview(torch.randn(1, 8, 6, 6))
''')
    assert source != BOUND_FORWARD
    assert _findings(source, "low") == []
    assert _error(source) is None
