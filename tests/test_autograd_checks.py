"""AL101–AL105: in-place writes that autograd needs to know about — and the code that is fine."""

import pytest

from conftest import lint

AUTOGRAD = {"AL101", "AL102", "AL103", "AL104", "AL105"}

FIRES = [
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(w)
        y.mul_(2)
        y.sum().backward()
        """,
        [(5, "AL101")],
        id="sigmoid-result-written",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = w.exp()
        view = y[1:]
        view.zero_()
        loss = y.sum()
        loss.backward()
        """,
        [(6, "AL101")],
        id="write-through-a-view",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.tanh(w)
        y[0] = 0.0
        y.sum().backward()
        """,
        [(5, "AL101")],
        id="item-assignment",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.exp(w)
        z = torch.empty(3)
        torch.add(w, 1, out=y)
        y.sum().backward()
        """,
        [(6, "AL101")],
        id="out-argument",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = w.sigmoid()
        loss = y.sum()
        loss.backward(retain_graph=True)
        y += 1
        loss.backward()
        """,
        [(7, "AL101")],
        id="retain-graph-keeps-the-saves",
    ),
    pytest.param(
        """
        import torch
        import torch.nn.functional as F
        w = torch.randn(3, requires_grad=True)
        s = torch.sigmoid(w)
        F.relu(s, inplace=True)
        s.sum().backward()
        """,
        [(6, "AL105")],
        id="functional-inplace-activation",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(inplace=True)
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                skip = x
                h = self.act(x)
                return self.fc(h) + skip
        """,
        [(7, "AL105")],
        id="inplace-module-clobbers-skip",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        w.zero_()
        w[0] = 1.0
        w += 1
        """,
        [(4, "AL102"), (5, "AL102"), (6, "AL102")],
        id="leaf-writes",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.gain = nn.Parameter(torch.ones(4))
            def forward(self, x):
                self.gain.clamp_(min=0.0)
                return x * self.gain
        """,
        [(9, "AL102")],
        id="parameter-written-in-forward",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        for p in model.parameters():
            p.mul_(0.5)
        """,
        [(6, "AL102")],
        id="parameters-loop-without-no-grad",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = w * w
        w.data.clamp_(-1, 1)
        y.sum().backward()
        """,
        [(5, "AL103")],
        id="data-write-between-forward-and-backward",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        e = w.exp()
        e.detach().mul_(0)
        e.sum().backward()
        """,
        [(5, "AL104")],
        id="detach-alias-write",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid())
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(4, 2, requires_grad=True)
        loss = net(x).sum()
        opt.step()
        loss.backward()
        """,
        [(8, "AL101")],
        id="optimizer-step-before-backward",
    ),
    pytest.param(
        """
        import torch
        def scale_(t):
            t.mul_(2)
        w = torch.randn(3, requires_grad=True)
        y = w.sigmoid()
        scale_(y)
        y.sum().backward()
        """,
        [(7, "AL101")],
        id="write-inside-a-local-function",
    ),
    pytest.param(
        """
        import torch
        W = torch.randn(4, 4, requires_grad=True)
        h = torch.zeros(4)
        for _ in range(3):
            h = torch.tanh(W @ h)
            h.add_(1)
        h.sum().backward()
        """,
        [(7, "AL101")],
        id="loop-carried",
    ),
]

FIRES.append(pytest.param(
    """
    import torch
    from torch import nn
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
            self.fc = nn.Linear(4, 4)
        def forward(self, x):
            x = self.act(self.fc(x))
            h = torch.relu_(x)
            return h + x
    """,
    [(11, "AL101")],
    id="second-inplace-op-on-a-saved-result",
))

QUIET = [
    pytest.param(
        """
        import torch
        x = torch.randn(3)
        y = torch.sigmoid(x)
        y.mul_(2)
        """,
        id="nothing-requires-grad",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(w)
        loss = y.sum()
        loss.backward()
        y.mul_(2)
        """,
        id="write-after-backward",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            y = torch.sigmoid(w)
            y.mul_(2)
            w.add_(1)
        """,
        id="no-grad-block",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        @torch.no_grad()
        def update(p: torch.Tensor):
            p.add_(1)
        @torch.inference_mode()
        def infer():
            y = torch.sigmoid(w)
            y.mul_(2)
            return y
        """,
        id="decorated-grad-off",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.exp(w)
        y.add_(1)
        """,
        id="no-backward-follows",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = w * 2
        y.mul_(3)
        y.sum().backward()
        """,
        id="op-that-saves-nothing-needed",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, 3, requires_grad=True)
        data = torch.randn(2, 3)
        out = data @ w
        w.data.clamp_(-1, 1)
        out.sum().backward()
        """,
        id="weight-not-saved-when-input-needs-no-grad",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for batch in [torch.randn(2, 4)]:
            opt.zero_grad()
            loss = model(batch).pow(2).mean()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for p in model.parameters():
                    p.clamp_(-1, 1)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-0.1)
        """,
        id="training-loop-in-order",
    ),
    pytest.param(
        """
        import torch
        def helper(loss):
            pass
        w = torch.randn(3, requires_grad=True)
        y = w.sigmoid()
        helper(y.sum())
        y.mul_(2)
        """,
        id="no-visible-backward",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(inplace=True)
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                x = self.act(self.fc(x))
                return x + 1
        """,
        id="inplace-on-fresh-tensors",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        w.detach().zero_()
        w.data.fill_(1.0)
        w.requires_grad_(True)
        w.grad = None
        """,
        id="leaf-written-through-detach-or-data",
    ),
    pytest.param(
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = w.sigmoid()
        if y.sum() > 0:
            y = y * 2
        else:
            y = y + 1
        y.add_(1)
        y.sum().backward()
        """,
        id="rebound-on-every-path",
    ),
]


@pytest.mark.parametrize(("source", "expected"), FIRES)
def test_fires(source, expected):
    assert lint(source, AUTOGRAD) == expected


@pytest.mark.parametrize("source", QUIET)
def test_quiet(source):
    assert lint(source, AUTOGRAD) == []


def test_message_and_related_locations():
    from aliaslint import check_source

    source = (
        "import torch\n"
        "w = torch.randn(3, requires_grad=True)\n"
        "y = torch.sigmoid(w)\n"
        "y.mul_(2)\n"
        "loss = y.sum()\n"
        "loss.backward()\n"
    )
    (finding,) = check_source(source, "m.py", {"AL101"})
    assert finding.message.startswith(
        "`y` was saved for backward by `torch.sigmoid(w)` (its result, line 3) · written in "
        "place by `y.mul_(2)` at line 4 · `loss.backward()` at line 6 will raise"
    )
    assert [(r.message, r.location.row) for r in finding.related] == [
        ("saved for backward here", 3), ("backward runs here", 6)]
