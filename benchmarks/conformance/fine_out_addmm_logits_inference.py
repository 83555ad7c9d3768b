# source: https://github.com/pytorch/pytorch/issues/93683 (out= calls are refused only where autograd would have to record them); the same preallocated-buffer head used by an inference function under torch.no_grad()
# expect: none
# torch: ok
import torch
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


@torch.no_grad()
def predict(head, batches):
    return [head(x).argmax(dim=1).tolist() for x in batches]


torch.manual_seed(0)
head = Head(8, 3, 4)
labels = predict(head, [torch.randn(4, 8) for _ in range(3)])
