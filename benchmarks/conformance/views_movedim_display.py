# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_movedim_view (movedim returns a view), here a CHW image moved to HWC and scaled for display
# expect: AL201 at line 10
# torch: wrong "the model input was scaled to 0..255 by the display code"
import torch

torch.manual_seed(0)
image = torch.rand(3, 4, 4)
before = image.clone()
hwc = torch.movedim(image, 0, -1)
hwc.mul_(255.0)
batch = image.unsqueeze(0)
if not torch.equal(image, before):
    raise SystemExit(1)
