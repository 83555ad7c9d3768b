# source: pytorch/pytorch test/test_numpy_interop.py TestNumPyInterop (Tensor.numpy() shares memory)
# expect: AL301 at line 8
# torch: wrong "the tensor changed through the array"
import torch

weights = torch.ones(3)
snapshot = weights.numpy()
weights.mul_(2.0)
if snapshot.sum() != 3.0:
    raise SystemExit(1)
