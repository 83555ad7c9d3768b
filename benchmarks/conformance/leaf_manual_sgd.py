# source: https://github.com/BaiTheBest/SparseLLM/issues/13 (a hand-written SGD update outside no_grad)
# expect: AL102 at line 10
# torch: raises RuntimeError "a leaf Variable that requires grad"
import torch

w = torch.randn(3, 1, requires_grad=True)
x, y = torch.randn(10, 3), torch.randn(10, 1)
loss = ((x @ w - y) ** 2).mean()
loss.backward()
w -= 0.1 * w.grad
