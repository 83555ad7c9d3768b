# source: pytorch/pytorch test/test_torch.py TestTorchDeviceType.test_copy_mem_overlap
# expect: AL203 at line 7
# torch: raises RuntimeError "refer to a single memory location"
import torch

m = torch.arange(9.0).reshape(3, 3)
m.copy_(m.t())
