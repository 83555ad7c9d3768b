# source: pytorch/pytorch test/test_view_ops.py TestOldViewOps.test_reshape (x.data_ptr() == x.reshape(-1).data_ptr(): did reshape return x's memory?)
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
x = torch.randn(3, 3)
flat = x.reshape(-1)
reused = flat.data_ptr() == x.data_ptr()
if not reused:
    raise SystemExit(1)
