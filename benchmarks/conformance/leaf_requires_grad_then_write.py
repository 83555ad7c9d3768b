# source: user report pattern: 'a leaf Variable that requires grad is being used in an in-place operation'
# expect: AL102 at line 7
# torch: raises RuntimeError "a leaf Variable that requires grad"
import torch

codes = torch.zeros(6).requires_grad_()
codes -= 0.1
