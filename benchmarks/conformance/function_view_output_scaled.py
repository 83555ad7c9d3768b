# source: pytorch/pytorch torch/csrc/autograd/variable.cpp handle_view_on_rebase (CreationMeta::IN_CUSTOM_FUNCTION); user reports of `logits.div_(temperature)` on a custom Function's output
# expect: AL106 at line 27
# torch: raises RuntimeError "created inside a custom Function"
import torch
from torch import nn


class LastToken(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits):
        ctx.shape = logits.shape
        return logits[:, -1]

    @staticmethod
    def backward(ctx, grad):
        full = grad.new_zeros(ctx.shape)
        full[:, -1] = grad
        return full


torch.manual_seed(0)
head = nn.Linear(8, 16)
hidden = torch.randn(2, 5, 8)
logits = head(hidden)
last = LastToken.apply(logits)
temperature = 0.7
last.div_(temperature)
last.softmax(dim=-1)[:, 0].sum().backward()
print(head.bias.grad.shape)
