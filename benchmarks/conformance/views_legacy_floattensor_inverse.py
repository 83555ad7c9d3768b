# source: user report pattern: a matrix built with the legacy torch.FloatTensor([...]) constructor, its transpose taken and inverted element-wise in place
# expect: AL201 at line 8
# torch: wrong "the scale matrix was replaced by its reciprocals"
import torch

scales = torch.FloatTensor([[0.5, 1.0], [2.0, 4.0]])
inverse = scales.t()
inverse.reciprocal_()
scaled = torch.ones(2, 2) @ scales
if scales[0, 0].item() != 0.5:
    raise SystemExit(1)
