# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_view_as_real (view_as_real returns a view of the complex tensor)
# expect: AL201 at line 10
# torch: wrong "the spectrum lost its imaginary part"
import torch

torch.manual_seed(0)
spectrum = torch.fft.rfft(torch.randn(16))
original = spectrum.clone()
parts = torch.view_as_real(spectrum)
parts[:, 1] = 0.0
signal = torch.fft.irfft(spectrum, n=16)
if not torch.equal(spectrum, original):
    raise SystemExit(1)
