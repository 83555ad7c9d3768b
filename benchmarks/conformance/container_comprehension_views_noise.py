# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_basic_indexing_slice_view (integer indexing is a view), here a list of clips built with a comprehension and augmented in place
# expect: AL201 at line 11
# torch: wrong "the clean frames got the augmentation noise"
import torch

torch.manual_seed(0)
frames = torch.rand(4, 6)
clean = frames.clone()
clips = [frames[i] for i in range(frames.shape[0])]
for clip in clips:
    clip.add_(torch.randn_like(clip) * 0.1)
target = frames.mean(dim=1)
if not torch.equal(frames, clean):
    raise SystemExit(1)
