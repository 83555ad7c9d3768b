# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_view_view (a write through view() reaches the base)
# expect: AL201 at line 8
# torch: wrong "the raw image was rescaled through its flattened view"
import torch

image = torch.arange(12.0).reshape(3, 4)
pixels = image.view(-1)
pixels.div_(255.0)
# The histogram below wants the raw intensities.
if image.max().item() != 11.0:
    raise SystemExit(1)
