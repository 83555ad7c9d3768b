# source: pytorch/pytorch test/test_view_ops.py (view() works on a non-contiguous tensor when the merged dimensions are contiguous with each other)
# expect: none
# torch: ok
import torch

fmap = torch.randn(2, 3, 4, 5)
channels_last = fmap.permute(0, 2, 3, 1)
tokens = channels_last.view(2, 20, 3)
assert tokens.untyped_storage().data_ptr() == fmap.untyped_storage().data_ptr()
