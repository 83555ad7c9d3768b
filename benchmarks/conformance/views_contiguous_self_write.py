# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_contiguous_self (contiguous() of a contiguous tensor is that tensor)
# expect: AL205 at line 9
# torch: wrong "the caller's features were scaled too"
import torch


def prepare(feats):
    packed = feats.contiguous()
    packed.mul_(2.0)
    return packed


feats = torch.ones(2, 3)
out = prepare(feats)
if feats.sum().item() != 6.0:
    raise SystemExit(1)
