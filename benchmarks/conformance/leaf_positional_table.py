# source: https://github.com/Atcold/NYU-DLSP20/issues/765 (filling a sinusoidal position table that requires grad)
# expect: AL102 at line 10
# torch: raises RuntimeError "a view of a leaf Variable that requires grad"
import torch

max_len, dim = 16, 8
table = torch.zeros(max_len, dim, requires_grad=True)
pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
freq = torch.exp(torch.arange(0, dim, 2) * (-4.0 / dim))
table[:, 0::2] = torch.sin(pos * freq)
table[:, 1::2] = torch.cos(pos * freq)
