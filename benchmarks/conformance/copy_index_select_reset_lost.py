# source: https://github.com/pytorch/pytorch/issues/2599 (an in-place fill of an indexed copy), as a recurrent state reset
# expect: AL204 at line 9
# torch: wrong "the finished episodes' hidden states were not reset"
import torch

torch.manual_seed(0)
hidden = torch.randn(4, 6)
done = torch.tensor([1, 3])
hidden.index_select(0, done).zero_()
if hidden[done].abs().sum().item() != 0.0:
    raise SystemExit(1)
