"""AL208 argument-written: its positive and negative cases (format: tests/test_rules.py)."""


# case: after tuple assignment
import torch
def bump(t: torch.Tensor) -> torch.Tensor:
    return t.add_(1)  # error: AL208
b, c = torch.randn(4, 5), 3
out = bump(b)
print(b.sum(), c)


# case: helper writes argument
import torch
def normalize(img: torch.Tensor) -> torch.Tensor:
    return img.sub_(0.5).div_(0.25)  # error: AL208
batch = torch.rand(2, 3)
out = normalize(batch)
print(batch.mean(), out.mean())


# case: declared or called for effect
import torch
def normalize_(img: torch.Tensor) -> torch.Tensor:
    return img.sub_(0.5)
def standardize(img: torch.Tensor) -> torch.Tensor:
    """Standardize the batch in place."""
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


# case: a stack of layers built from a list is not an identity
import torch
from torch import nn
layers = [nn.Linear(4, 4), nn.ReLU()]
stack = nn.Sequential(*layers)
x = torch.randn(2, 4)
y = stack(x)
y.add_(1.0)
print(x)


# case: a buffer made for the helper to fill
import torch
def _fill_pairs(out, rows):
    for i in range(len(rows)):
        out[i] += rows[i]
    return len(rows)
rows = [torch.ones(3), torch.ones(3)]
out = torch.zeros(2, 3)
count = _fill_pairs(out, rows)
print(out, count)


# case: a branch the call site switches off with a literal
# runs: ok
import torch


def scale(x, mode="copy", out=None):
    if mode == "inplace":
        x.mul_(2)
        return x
    if out is not None:
        out.copy_(x * 2)
        return out
    return x * 2


t = torch.ones(4)
doubled = scale(t)
also = scale(t, "copy")
assert torch.equal(t, torch.ones(4)) and torch.equal(doubled, also)


# case: the same helper switched on
# runs: raises AssertionError
import torch


def scale(x, mode="copy"):
    if mode == "inplace":
        x.mul_(2)  # error: AL208
        return x
    return x * 2


t = torch.randn(4)
before = t.clone()
doubled = scale(t, "inplace")
assert torch.equal(t, before)


# case: a helper that centres each row of the batch it was given
# runs: raises AssertionError
import torch


def center(batch):
    for sample in batch:
        sample.sub_(sample.mean())  # error: AL208
    return batch


torch.manual_seed(0)
images = torch.rand(4, 3, 2, 2)
centered = center(images)
assert (images.mean(dim=(1, 2, 3)) > 0.1).all()


# case: forward and dunder methods are called by name: declared in their docstrings instead
import torch
from torch import nn
class Normalize(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalizes `x` in place (it is large; the caller no longer needs it)."""
        return x.sub_(x.mean())
class Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul_(2)  # error: AL208
images = torch.rand(4, 3)
out = Normalize()(images)
out = Scale()(images)
print(images)


# case: the caller reads only the shape of what the helper corrected
import torch
def chi_squared(confmat: torch.Tensor, correct: bool) -> torch.Tensor:
    expected = confmat.sum(0, keepdim=True) * confmat.sum(1, keepdim=True) / confmat.sum()
    if correct:
        confmat += (expected - confmat).sign() * 0.5
    return ((confmat - expected) ** 2 / expected).sum()
def cramers_v(confmat: torch.Tensor) -> torch.Tensor:
    confmat = confmat[confmat.sum(1) != 0]
    total = confmat.sum()
    chi2 = chi_squared(confmat, True)
    rows, cols = confmat.shape
    return torch.sqrt(chi2 / total / (min(rows, cols) - 1))
print(cramers_v(torch.tensor([[3.0, 1.0], [2.0, 4.0]])))


# case: the caller reads the values the helper corrected
import torch
def chi_squared(confmat: torch.Tensor, correct: bool) -> torch.Tensor:
    expected = confmat.sum(0, keepdim=True) * confmat.sum(1, keepdim=True) / confmat.sum()
    if correct:
        confmat += (expected - confmat).sign() * 0.5  # error: AL208
    return ((confmat - expected) ** 2 / expected).sum()
def cramers_v(confmat: torch.Tensor) -> torch.Tensor:
    confmat = confmat[confmat.sum(1) != 0]
    chi2 = chi_squared(confmat, True)
    rows, cols = confmat.shape
    return torch.sqrt(chi2 / confmat.sum() / (min(rows, cols) - 1))
print(cramers_v(torch.tensor([[3.0, 1.0], [2.0, 4.0]])))


# case: the caller reads only the size of the sparse matrix the helper marked coalesced
import torch
def edge_index_of(adj: torch.Tensor):
    adj = adj._coalesced_(True)
    return adj.indices(), adj.values()
def pool(adj: torch.Tensor) -> torch.Tensor:
    index, _ = edge_index_of(adj)
    return torch.zeros(adj.size(0)).index_add_(0, index[0], torch.ones(index.size(1)))
print(pool(torch.eye(3).to_sparse().coalesce()))
