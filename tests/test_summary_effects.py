"""What a called function of the file does, applied where it is called: a view of its argument
returned, a tuple of tensors it made, parameters of a module it was given written in place
(with grad mode off inside it), an optimizer it steps after a backward pass it runs, a tensor
one object keeps across calls, and writes made on some paths only (low confidence).

Each hazard runs under torch to show that it raises; each twin runs cleanly and is not
reported."""

import textwrap

import pytest

from aliaslint import check_source


def _findings(source: str) -> list[tuple[str, int, str]]:
    return sorted((d.code, d.location.row, d.confidence)
                  for d in check_source(source, "m.py", confidence="low"))


def _line(source: str, text: str) -> int:
    (number,) = [i for i, line in enumerate(source.splitlines(), 1) if text in line]
    return number


def _runs(source: str) -> str | None:
    """None when the program runs cleanly, else the error torch raised."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    try:
        exec(compile(source, "m.py", "exec"), {"__name__": "__main__"})
    except RuntimeError as error:
        return str(error)
    return None


# A ViT-style head that pools the class token through a helper (timm's `x[:, 0]`): the helper
# returns a view, so scaling the pooled token in place writes the tanh output autograd saved.
CLS_POOL = textwrap.dedent('''\
    import torch
    from torch import nn


    def class_token(tokens):
        return tokens[:, 0]


    class Head(nn.Module):
        def __init__(self, dim=8, classes=3):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.fc = nn.Linear(dim, classes)

        def forward(self, tokens):
            h = torch.tanh(self.proj(tokens))
            pooled = class_token(h)
            {scale}
            return self.fc(pooled)


    head = Head()
    head(torch.randn(2, 5, 8)).sum().backward()
    ''')


def test_a_view_a_helper_returns_is_the_caller_tensor():
    source = CLS_POOL.format(scale="pooled.mul_(0.5)")
    assert _findings(source) == [("AL101", _line(source, "pooled.mul_"), "high")]
    assert "modified by an inplace operation" in _runs(source)
    twin = CLS_POOL.format(scale="pooled = pooled * 0.5")
    assert _findings(twin) == []
    assert _runs(twin) is None


# A weight renormalisation helper (max-norm constraints, as in pytorch/examples and the
# DCGAN/WGAN scripts) run between the forward pass and its backward: it writes the weight
# `fc2` saved to compute its input's gradient.  Grad mode is off inside it, so the write is no
# leaf error; the finding is at the write inside the helper.
RENORM = textwrap.dedent('''\
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))


    def renorm_rows(model, limit=1.0):
        with torch.no_grad():
            weight = model.fc2.weight
            weight.div_(weight.norm(dim=1, keepdim=True).clamp(min=limit))


    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        {before}
        loss.backward()
        optimizer.step()
        {after}
        return loss.item()


    net = Net()
    train_step(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(6, 10),
               torch.randint(0, 4, (6,)))
    ''')


def test_a_helper_that_writes_a_module_parameter_under_no_grad():
    source = RENORM.format(before="renorm_rows(model)", after="")
    assert _findings(source) == [("AL101", _line(source, "weight.div_("), "high")]
    assert "modified by an inplace operation" in _runs(source)
    twin = RENORM.format(before="", after="renorm_rows(model)")
    assert _findings(twin) == []
    assert _runs(twin) is None


def test_a_parameter_write_on_some_paths_only_is_found_like_a_branch():
    # Only in training mode: one concrete path through the helper makes the write, as a
    # branch of the caller's own code would (the run shows it raising).
    source = RENORM.replace(
        "    with torch.no_grad():\n",
        "    if not model.training:\n        return\n    with torch.no_grad():\n").format(
        before="renorm_rows(model)", after="")
    assert _findings(source) == [("AL101", _line(source, "weight.div_("), "high")]
    assert "modified by an inplace operation" in _runs(source)


# DDPG's update order bug: the actor's loss goes through the critic, and a helper that runs
# the critic's backward and steps its optimizer changes the critic weights that graph saved.
DDPG = textwrap.dedent('''\
    import torch
    from torch import nn


    def optimise(optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


    def update(actor, critic, actor_opt, critic_opt, state, target):
        action = actor(state)
        q = critic(torch.cat([state, action.detach()], dim=1))
        critic_loss = (q - target).pow(2).mean()
        {early}
        optimise(critic_opt, critic_loss)
        {late}
        optimise(actor_opt, actor_loss)


    actor = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    critic = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    update(actor, critic, torch.optim.Adam(actor.parameters()),
           torch.optim.Adam(critic.parameters()), torch.randn(4, 3), torch.randn(4, 1))
    ''')
ACTOR_LOSS = "actor_loss = -critic(torch.cat([state, actor(state)], dim=1)).mean()"


def test_an_optimizer_step_inside_a_helper_between_forward_and_backward():
    source = DDPG.format(early=ACTOR_LOSS, late="")
    assert _findings(source) == [("AL101", _line(source, "optimizer.step()"), "high")]
    assert "modified by an inplace operation" in _runs(source)
    twin = DDPG.format(early="", late=ACTOR_LOSS)
    assert _findings(twin) == []
    assert _runs(twin) is None


# An encoder helper that returns two tensors it made: the caller's in-place edit of the first
# (the sigmoid output, saved by sigmoid itself) breaks the backward pass.
ENCODE = textwrap.dedent('''\
    import torch
    from torch import nn


    class Gate(nn.Module):
        def __init__(self, dim=6):
            super().__init__()
            self.lin = nn.Linear(dim, dim)

        def encode(self, x):
            gate = torch.sigmoid(self.lin(x))
            return gate, gate.detach().mean()

        def forward(self, x):
            gate, level = self.encode(x)
            {edit}
            return gate * x


    Gate()(torch.randn(3, 6)).sum().backward()
    ''')


def test_each_tensor_of_a_returned_tuple_keeps_its_saves():
    source = ENCODE.format(edit="gate.clamp_(min=0.1)")
    assert _findings(source) == [("AL101", _line(source, "gate.clamp_("), "high")]
    assert "modified by an inplace operation" in _runs(source)
    twin = ENCODE.format(edit="gate = gate.clamp(min=0.1)")
    assert _findings(twin) == []
    assert _runs(twin) is None


# A key/value cache one object keeps and hands out (litgpt's shape): what the caller writes
# into it at one step, the next step's matmul has saved.
CACHE = textwrap.dedent('''\
    import torch
    from torch import nn


    class Cache(nn.Module):
        def __init__(self, slots, dim):
            super().__init__()
            self.keys = torch.zeros(slots, dim)

        def slots(self):
            return [{held}]


    class Attention(nn.Module):
        def __init__(self, dim, slots):
            super().__init__()
            self.qk = nn.Linear(dim, 2 * dim)
            self.cache = Cache(slots, dim)

        def forward(self, x, pos):
            q, k = self.qk(x).chunk(2, dim=-1)
            keys = self.cache.slots()[0]
            keys[pos] = k
            return torch.softmax(q @ keys.t(), dim=-1)


    attn = Attention(4, slots=3)
    total = 0
    for pos in range(3):
        total = total + attn(torch.randn(4), pos).sum()
    total.backward()
    ''')


def test_a_cache_an_object_hands_out_is_the_same_tensor_at_the_next_call():
    source = CACHE.format(held="self.keys")
    assert _findings(source) == [("AL101", _line(source, "keys[pos] = k"), "high")]
    assert "modified by an inplace operation" in _runs(source)
    twin = CACHE.format(held="self.keys.clone()")
    assert _findings(twin) == []
    assert _runs(twin) is None


def test_a_cache_of_a_class_built_several_times_is_no_one_tensor():
    # Two attention layers, each with its own cache: the shared allocation site stands
    # for two tensors, so nothing is claimed about them.
    source = CACHE.format(held="self.keys").replace(
        "attn = Attention(4, slots=3)\n",
        "layers = [Attention(4, slots=3) for _ in range(2)]\nattn = layers[0]\n")
    assert _findings(source) == []


# A helper that normalises through another helper: the write is the inner one's.
NESTED = textwrap.dedent('''\
    import torch


    def center(values):
        values -= values.mean()
        return values


    def advantages(returns):
        return center(returns) / (returns.std() + 1e-6)


    rewards = torch.tensor([1.0, 2.0, 3.0])
    adv = advantages(rewards)
    print(rewards.sum())
    ''')


def test_a_write_through_two_helpers_points_at_the_inner_write():
    (finding,) = check_source(NESTED, "m.py")
    assert (finding.code, finding.location.row) == ("AL208", _line(NESTED, "values -= "))
    assert "inside `center`" in finding.message


# A pooling helper run without grad (`@torch.no_grad()` on the def) returns a view of the
# hidden states: writing it with grad mode on raises at the write, as the same view made
# inline under `with torch.no_grad()` does.
NO_GRAD_VIEW = textwrap.dedent('''\
    import torch
    from torch import nn


    {decorator}
    def last_hidden(states):
        return states[:, -1]


    class Pool(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            h = self.proj(x)
            last = last_hidden(h)
            last.mul_(2)
            return last.sum()


    Pool()(torch.randn(2, 3, 4)).backward()
    ''')


def test_a_view_returned_by_a_no_grad_function_cannot_be_written_with_grad_on():
    source = NO_GRAD_VIEW.format(decorator="@torch.no_grad()")
    assert _findings(source) == [("AL106", _line(source, "last.mul_(2)"), "high")]
    assert "view was created in no_grad mode" in _runs(source)
    twin = NO_GRAD_VIEW.format(decorator="")
    assert _findings(twin) == []
    assert _runs(twin) is None


# `Optional[Tensor]` narrowed by an `is None` test (pyright's reading): the early return
# leaves the tensor, with its memory, for the rest of the body.
OPTIONAL = textwrap.dedent('''\
    from typing import Optional

    import torch


    def scaled_head(x: {annotation}) -> Optional[torch.Tensor]:
        if x is None:
            return None
        head = x[:, :2]
        {write}
        return head.sum()


    print(scaled_head(torch.ones(2, 3)))
    ''')


@pytest.mark.parametrize("annotation", ["Optional[torch.Tensor]", "torch.Tensor | None",
                                        "torch.Tensor"])
def test_an_optional_tensor_keeps_its_memory_after_an_is_none_return(annotation):
    source = OPTIONAL.format(annotation=annotation, write="x.mul_(2)")
    assert _findings(source) == [("AL201", _line(source, "x.mul_(2)"), "high")]
    twin = OPTIONAL.format(annotation=annotation, write="x = x * 2")
    assert _findings(twin) == []


# Mean-teacher EMA: a helper given the model and its EMA copy (two instances of one class)
# writes the copy's weights between the model's forward pass and its backward.  Which of the
# two the class's `fc2.weight` names is not known, so nothing is claimed; the program is fine.
EMA = textwrap.dedent('''\
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))


    def ema_update(model, ema, decay=0.9):
        with torch.no_grad():
            ema.fc2.weight.mul_(decay).add_(model.fc2.weight, alpha=1 - decay)


    model, teacher = Net(), Net()
    loss = F.cross_entropy(model(torch.randn(6, 10)), torch.randint(0, 4, (6,)))
    ema_update(model, teacher)
    loss.backward()
    ''')


def test_a_write_to_one_of_two_instances_of_a_class_is_not_claimed():
    assert _findings(EMA) == []
    assert _runs(EMA) is None
