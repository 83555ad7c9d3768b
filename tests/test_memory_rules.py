"""AL201–AL208 and AL301: shared memory that looks separate, separate memory that looks shared."""

import pytest

from conftest import lint

RULES = {"AL201", "AL202", "AL203", "AL204", "AL205", "AL206", "AL207", "AL208", "AL301"}

FIRES = [
    pytest.param("""
        import torch
        a = torch.rand(4, 4)
        b = a.t()
        b.mul_(2)
        print(a.sum())
        """, [(5, "AL201")], id="AL201-transpose-written-base-read"),
    pytest.param("""
        import torch
        x = torch.rand(8)
        head = x[:2]
        x.add_(1)
        print(head)
        """, [(5, "AL201")], id="AL201-base-written-view-read"),
    pytest.param("""
        import torch
        x = torch.rand(2, 3, 4)
        y = x.transpose(1, 2)
        z = y.view(2, -1)
        w = x.permute(0, 2, 1).view(2, -1)
        """, [(5, "AL202"), (6, "AL202")], id="AL202-merge-after-transpose"),
    pytest.param("""
        import torch
        pos = torch.arange(6).expand(2, -1)
        pos.add_(1)
        x = torch.rand(10)
        x[1:] = x[:-1]
        a = torch.rand(3, 3)
        a.copy_(a.t())
        """, [(4, "AL203"), (6, "AL203"), (8, "AL203")], id="AL203-expand-shift-transpose"),
    pytest.param("""
        import torch
        x = torch.rand(5, 3)
        idx = torch.tensor([0, 2])
        mask = x > 0.5
        x[idx][mask[idx]] = 0.0
        x[[0, 1]].zero_()
        x.index_select(0, idx).fill_(1.0)
        x[mask].add_(1)
        """, [(6, "AL204"), (7, "AL204"), (8, "AL204"), (9, "AL204")], id="AL204-lost-copies"),
    pytest.param("""
        import torch
        def scale(images: torch.Tensor) -> torch.Tensor:
            x = images.float()
            x.div_(255.0)
            return x
        t = torch.rand(3)
        flat = t.reshape(-1)
        flat.clamp_(0.1)
        print(t)
        """, [(5, "AL205"), (9, "AL205")], id="AL205-argument-and-read-later"),
    pytest.param("""
        import itertools
        import torch
        acc = [torch.zeros(3)] * 4
        acc[1].add_(1)
        table = dict.fromkeys(["a", "b"], torch.zeros(2))
        table["a"].zero_()
        for t in list(itertools.repeat(torch.ones(2), 3)):
            t.mul_(2)
        """, [(5, "AL206"), (7, "AL206"), (9, "AL206")], id="AL206-repeated"),
    pytest.param("""
        import torch
        from torch import nn
        model = nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        best = model.state_dict()
        old = list(model.parameters())
        opt.step()
        model.load_state_dict(best)
        print(old)
        """, [(6, "AL207"), (7, "AL207")], id="AL207-state-dict-and-parameter-list"),
    pytest.param("""
        import torch
        w = torch.rand(3)
        prev = w
        w.add_(0.1)
        print((w - prev).abs().max())
        """, [(4, "AL207")], id="AL207-plain-alias"),
    pytest.param("""
        import torch
        def bump(t: torch.Tensor) -> torch.Tensor:
            return t.add_(1)
        b, c = torch.randn(4, 5), 3
        out = bump(b)
        print(b.sum(), c)
        """, [(4, "AL208")], id="AL208-after-tuple-assignment"),
    pytest.param("""
        import torch
        class History:
            def __init__(self, n: int):
                self.frames = torch.zeros(n)
            def push(self, x: float):
                self.frames[1:] = self.frames[:-1]
        """, [(7, "AL203")], id="AL203-attribute-of-plain-class"),
    pytest.param("""
        import torch
        def normalize(img: torch.Tensor) -> torch.Tensor:
            return img.sub_(0.5).div_(0.25)
        batch = torch.rand(2, 3)
        out = normalize(batch)
        print(batch.mean(), out.mean())
        """, [(4, "AL208")], id="AL208-helper-writes-argument"),
    pytest.param("""
        import numpy as np
        import torch
        raw = np.ones((2, 2), dtype=np.float32)
        t = torch.from_numpy(raw)
        t.div_(2)
        print(raw)
        x = torch.ones(3)
        arr = x.numpy()
        arr *= 2
        print(x)
        """, [(6, "AL301"), (10, "AL301")], id="AL301-both-directions"),
]

QUIET = [
    pytest.param("""
        import torch
        out = torch.empty(4, 6)
        left = out[:, :3]
        left.copy_(torch.ones(4, 3))
        view = out[:, 1:-1]
        view.add_(1)
        out.clamp_(0, 1)
        print(out)
        """, id="AL201-filling-a-buffer-through-views"),
    pytest.param("""
        import torch
        x = torch.rand(3, 4)
        r, g, b = x.unbind(0)
        g.add_(1)
        print(r, b)
        x[:, 0] = 0
        x[1].zero_()
        print(x)
        """, id="AL201-disjoint-pieces-and-direct-part-writes"),
    pytest.param("""
        import torch
        x = torch.rand(2, 5, 4)
        a = x.transpose(1, 2).view(2, 4, 5)
        b = x.transpose(1, 2).contiguous().view(2, -1)
        c = x.transpose(1, 2).reshape(2, -1)
        d = x.transpose(1, 2).view(torch.int32)
        e = x.permute(0, 2, 1).view(2, 2, 2, 5)
        img = torch.rand(2, 3, 4, 4)
        patches = img.permute(0, 2, 3, 1).view(2, 4 * 4, 3)
        """, id="AL202-split-contiguous-reshape-dtype-and-mergeable"),
    pytest.param("""
        import torch
        x = torch.rand(10)
        x[2:] = x[:2].sum()
        x[:5] = x[5:]
        x.add_(x)
        m = torch.rand(4, 6)
        m[:, :3] = m[:, 3:]
        pos = torch.arange(6).expand(2, -1).clone()
        pos.add_(1)
        """, id="AL203-disjoint-and-cloned"),
    pytest.param("""
        import torch
        x = torch.rand(5, 3)
        idx = torch.tensor([0, 2])
        x[idx] = 0.0
        x[1:3].zero_()
        x.index_fill_(0, idx, 0.0)
        y = x[idx]
        y.add_(1)
        counts = torch.ones_like(x)
        counts.cumsum_(1).remainder_(2)
        """, id="AL204-direct-writes-and-kept-copies"),
    pytest.param("""
        import torch
        def to_float(image: torch.Tensor, dtype) -> torch.Tensor:
            return image.to(dtype).mul_(2)
        def scale(images: torch.Tensor) -> torch.Tensor:
            return images.float().div(255.0)
        t = torch.rand(3)
        y = t.reshape(-1).clone().clamp_(0.1)
        """, id="AL205-explicit-conversion-and-out-of-place"),
    pytest.param("""
        import torch
        acc = [torch.zeros(3) for _ in range(4)]
        acc[1].add_(1)
        zeros = [torch.zeros(3)] * 4
        print(zeros[0].sum())
        """, id="AL206-comprehension-and-read-only"),
    pytest.param("""
        import copy
        import torch
        from torch import nn
        model = nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        best = copy.deepcopy(model.state_dict())
        clones = {k: v.clone() for k, v in model.state_dict().items()}
        opt.step()
        model.load_state_dict(best)
        w = torch.rand(3)
        prev = w.clone()
        w.add_(0.1)
        print(prev, clones)
        """, id="AL207-real-copies"),
    pytest.param("""
        import torch
        def normalize_(img: torch.Tensor) -> torch.Tensor:
            return img.sub_(0.5)
        def standardize(img: torch.Tensor) -> torch.Tensor:
            \"\"\"Standardize the batch in place.\"\"\"
            return img.sub_(0.5)
        def shift(img: torch.Tensor, inplace: bool) -> torch.Tensor:
            if inplace:
                img.sub_(0.5)
            return img
        def add_bias(x: torch.Tensor, b: torch.Tensor) -> None:
            x.add_(b)
        batch = torch.rand(2, 3)
        out = normalize_(batch)
        out = standardize(batch)
        out = shift(batch, False)
        add_bias(batch, torch.ones(3))
        print(batch)
        """, id="AL208-declared-or-called-for-effect"),
    pytest.param("""
        import numpy as np
        import torch
        raw = np.ones((2, 2), dtype=np.float32)
        t = torch.tensor(raw)
        t.div_(2)
        u = torch.from_numpy(raw.copy())
        u.div_(2)
        v = torch.as_tensor(raw, dtype=torch.float64)
        v.div_(2)
        print(raw)
        """, id="AL301-copies"),
]


@pytest.mark.parametrize(("source", "expected"), FIRES)
def test_fires(source, expected):
    assert sorted(set(lint(source, RULES))) == expected


@pytest.mark.parametrize("source", QUIET)
def test_quiet(source):
    assert lint(source, RULES) == []
