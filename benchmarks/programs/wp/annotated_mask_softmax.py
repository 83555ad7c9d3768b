# source: https://github.com/karpathy/nanoGPT/blob/04a1d697ddc57aadb2edbe95816bf86c6b8918b0/model.py @ 04a1d697ddc57aadb2edbe95816bf86c6b8918b0
# expect: AL101 at line 11
# torch: raises RuntimeError "modified by an inplace operation"
import math

import torch
from torch import nn


def drop_attention(att: torch.Tensor, keep: torch.Tensor, p: float) -> torch.Tensor:
    att.mul_(keep).div_(1.0 - p)
    return att


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, block_size: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T, C = x.shape[1], x.shape[2]
        q, k, v = self.c_attn(x).split(C, dim=2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C)
        att = att.masked_fill(self.bias[:T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        if self.training:
            keep = (torch.rand_like(att) > self.dropout).to(att.dtype)
            att = drop_attention(att, keep, self.dropout)
        return self.c_proj(att @ v)


torch.manual_seed(0)
block = CausalSelfAttention(8, block_size=6)
block(torch.randn(2, 6, 8)).sum().backward()
