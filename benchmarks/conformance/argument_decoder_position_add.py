# source: https://github.com/thuanz123/enhancing-transformers/issues/11 (a decoder adds its position embedding to its input in place; a second decoder reads the same input)
# expect: AL208 at line 15
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, tokens, dim):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(tokens, dim) * 0.02)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        x += self.pos
        return self.out(x)


torch.manual_seed(0)
encoder = nn.Linear(8, 8)
quant = encoder(torch.randn(2, 4, 8))
rec_a = Decoder(4, 8)(quant)
rec_b = Decoder(4, 8)(quant)
(rec_a.sum() + rec_b.sum()).backward()
