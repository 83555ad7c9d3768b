# source: pytorch/pytorch test/test_view_ops.py TestViewOps.is_view_of (compares the storages' data_ptr, not storage objects)
# expect: AL402 at line 10
# torch: wrong "the `is` test said a view does not share its base's storage"
import warnings
import torch

warnings.simplefilter("ignore")  # TypedStorage is deprecated; the check is what is under test
grid = torch.zeros(2, 3)
flat = grid.view(-1)
shares = grid.storage() is flat.storage()
if not shares:
    raise SystemExit(1)
