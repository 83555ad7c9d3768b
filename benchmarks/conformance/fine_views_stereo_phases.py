# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_basic_indexing_slice_view (a step slice is a view), here the left channel of interleaved stereo samples scaled in place and the right channel, the other phase, read afterwards: no element is shared
# expect: none
# torch: ok
import torch


def loudness(samples):
    return samples.pow(2).mean().sqrt()


torch.manual_seed(0)
frames = torch.randn(2 * 4000)  # interleaved stereo: L R L R ...
left = frames[0::2]
left.mul_(0.5)  # duck the left channel of the stream
right = frames[1::2]
ratio = (loudness(left) / loudness(right)).item()
if not 0.4 < ratio < 0.6:
    raise SystemExit(1)
