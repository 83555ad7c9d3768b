# source: user report pattern: 'view size is not compatible with input tensor's size and stride'
# expect: AL202 at line 8
# torch: raises RuntimeError "view size is not compatible"
import torch

x = torch.randn(2, 3, 4)
heads = x.transpose(1, 2)
merged = heads.view(2, 12)
