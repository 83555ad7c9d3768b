# source: https://github.com/pytorch/pytorch/issues/69204 (writing an expanded tensor); .float() of a float32 tensor returns that same expanded tensor, not a copy
# expect: AL203 at line 7
# torch: raises RuntimeError "unsupported operation: more than one element of the written-to tensor refers to a single memory location"
import torch

row = torch.arange(4.0)
table = row.expand(3, 4).float().add_(1.0)
print(table)
