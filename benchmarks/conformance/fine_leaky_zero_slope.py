# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_leaky_relu_inplace_with_zero_slope
# expect: none
# torch: ok
import torch
import torch.nn.functional as F

a = torch.tensor([-2.0, 0.0, 2.0], requires_grad=True)
b = F.leaky_relu_(a.clone(), 0.0)
b.backward(torch.ones(3))
