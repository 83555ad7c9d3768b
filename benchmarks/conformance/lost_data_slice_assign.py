# source: user report pattern: assigning .data of a slice (x[1:3].data = v) to overwrite part of a tensor; the slice is a temporary tensor object
# expect: AL209 at line 7
# torch: wrong "the activations were not overwritten"
import torch

acts = torch.zeros(4, 4)
acts[1:3].data = torch.ones(2, 4)
if acts.sum().item() != 8.0:
    raise SystemExit(1)
