# source: user report pattern: editing the .detach().numpy() view of an activation for a report while its graph is still to be backpropagated
# expect: AL301 at line 11
# torch: wrong "the gradient was computed from the zeroed values"
import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
h = w * 3.0
loss = (h * h).sum()
shown = h.detach().numpy()
# Hide small activations in the printed report.
shown[abs(shown) < 4.0] = 0.0
loss.backward()
if not torch.allclose(w.grad, torch.tensor([18.0, 36.0])):
    raise SystemExit(1)
