# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_leaky_relu_inplace_with_neg_slope
# expect: AL105 at line 8
# torch: raises RuntimeError "negative slope"
import torch
import torch.nn.functional as F

a = torch.tensor([-1.0, 1.0], requires_grad=True)
b = F.leaky_relu_(a.clone(), -2)
b.backward(torch.ones(2))
