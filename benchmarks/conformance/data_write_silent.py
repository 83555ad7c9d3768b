# source: user report pattern: .data written while a backward pass still needs the tensor
# expect: AL103 at line 9
# torch: wrong "the gradient used the overwritten values"
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
h = w * 3.0
out = (h * h).sum()
h.data.mul_(0.0)
out.backward()
if not torch.allclose(w.grad, torch.tensor([18.0, 36.0])):
    raise SystemExit(1)
