# source: https://pytorch.org/tutorials/beginner/pytorch_with_examples.html (updating weights by hand under torch.no_grad())
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
w = torch.zeros(3, 1, requires_grad=True)
lr = 0.1
for _ in range(20):
    loss = (x @ w - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None
if (x @ w - y).pow(2).mean().item() >= y.pow(2).mean().item():
    raise SystemExit(1)
