# source: https://github.com/pytorch/pytorch/issues/69204 and the memory-overlap checks of pytorch/pytorch test/test_torch.py (writing an expanded tensor)
# expect: AL203 at line 8
# torch: raises RuntimeError "more than one element of the written-to tensor refers to a single memory location"
import torch

bias = torch.zeros(1, 4)
tiled = bias.expand(3, 4)
tiled.add_(torch.randn(3, 4))
