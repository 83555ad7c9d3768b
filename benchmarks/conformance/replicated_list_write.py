# source: user report pattern: [torch.zeros(n)] * k shares one tensor
# expect: AL206 at line 7
# torch: wrong "every slot changed"
import torch

slots = [torch.zeros(2)] * 3
slots[0].add_(1.0)
if slots[2].sum().item() != 0.0:
    raise SystemExit(1)
