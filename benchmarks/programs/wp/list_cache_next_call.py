# source: https://github.com/Lightning-AI/litgpt/blob/981d0418516b34354e426feb547fe5830e620a84/litgpt/model.py @ 981d0418516b34354e426feb547fe5830e620a84
# expect: AL101 at line 28
# expect: AL101 at line 29
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class KVCache(nn.Module):
    def __init__(self, slots, dim):
        super().__init__()
        self.k = torch.zeros(slots, dim)
        self.v = torch.zeros(slots, dim)

    def buffers_for_step(self):
        return [self.k, self.v]


class Attention(nn.Module):
    def __init__(self, dim, slots):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.cache = KVCache(slots, dim)

    def forward(self, x, pos):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        cache = self.cache.buffers_for_step()
        cache[0][pos] = k
        cache[1][pos] = v
        att = torch.softmax(q @ cache[0].t(), dim=-1)
        return att @ cache[1]


torch.manual_seed(0)
attn = Attention(4, slots=3)
total = sum(attn(torch.randn(4), pos).sum() for pos in range(3))
total.backward()
