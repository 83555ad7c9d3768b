# source: https://github.com/pytorch/pytorch/issues/93683 ("addmm(): functions with out=... arguments don't support automatic differentiation"), here a classifier head writing into a preallocated logits buffer while training
# expect: AL106 at line 18
# torch: raises RuntimeError "don't support automatic differentiation"
import torch
import torch.nn.functional as F
from torch import nn


class Head(nn.Module):
    def __init__(self, dim, classes, batch):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, dim) * 0.1)
        self.bias = nn.Parameter(torch.zeros(classes))
        # Reused by every call, to avoid an allocation per batch.
        self.register_buffer("logits", torch.empty(batch, classes))

    def forward(self, x):
        torch.addmm(self.bias, x, self.weight.t(), out=self.logits)
        return self.logits


torch.manual_seed(0)
head = Head(8, 3, 4)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
loss = F.cross_entropy(head(torch.randn(4, 8)), torch.tensor([0, 1, 2, 0]))
opt.zero_grad()
loss.backward()
opt.step()
