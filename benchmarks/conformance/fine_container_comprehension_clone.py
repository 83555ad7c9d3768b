# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_contiguous_nonview (a copy does not write back), here each clip cloned before augmentation
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
frames = torch.rand(4, 6)
clean = frames.clone()
clips = [frames[i].clone() for i in range(frames.shape[0])]
for clip in clips:
    clip.add_(torch.randn_like(clip) * 0.1)
target = frames.mean(dim=1)
if not torch.equal(frames, clean):
    raise SystemExit(1)
