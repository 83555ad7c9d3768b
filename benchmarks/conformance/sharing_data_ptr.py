# source: pytorch/pytorch test/test_view_ops.py TestViewOps.is_view_of (storage identity, not data_ptr)
# expect: AL403 at line 8
# torch: wrong "data_ptr() said a view at an offset does not share memory"
import torch

base = torch.arange(6.0)
tail = base[2:]
if tail.data_ptr() == base.data_ptr():
    raise SystemExit(0)
raise SystemExit(1)
