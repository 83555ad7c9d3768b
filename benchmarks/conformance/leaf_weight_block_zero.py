# source: https://github.com/official-stockfish/nnue-pytorch/pull/75 (zeroing part of a layer's weight outside torch.no_grad)
# expect: AL102 at line 15
# torch: raises RuntimeError "a view of a leaf Variable that requires grad"
import torch
from torch import nn


class FeatureTransformer(nn.Module):
    def __init__(self, real, virtual, out):
        super().__init__()
        self.real = real
        self.input = nn.Linear(real + virtual, out)

    def zero_virtual(self):
        self.input.weight[:, self.real:] = 0.0


ft = FeatureTransformer(6, 2, 4)
ft.zero_virtual()
print(torch.count_nonzero(ft.input.weight).item())
