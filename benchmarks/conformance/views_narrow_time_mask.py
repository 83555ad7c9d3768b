# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_narrow_view (torch.narrow returns a view), here a SpecAugment-style time mask meant for an augmented copy
# expect: AL201 at line 10
# torch: wrong "the clean waveform was masked too"
import torch

torch.manual_seed(0)
waveform = torch.randn(1, 16)
clean = waveform.clone()
masked = torch.narrow(waveform, 1, 4, 6)
masked.zero_()
clean_energy = waveform.pow(2).sum()
if not torch.equal(waveform, clean):
    raise SystemExit(1)
