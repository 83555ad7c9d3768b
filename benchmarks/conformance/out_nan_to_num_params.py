# source: pytorch/pytorch test/cpp/api/inference_mode.cpp InferenceModeTest.TestMixInferenceAndNormalTensorInplaceOp (an out= call whose out requires grad; here a parameter cleaned in place)
# expect: AL102 at line 19
# torch: raises RuntimeError "functions with out=... arguments don't support automatic differentiation"
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)

for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    # Scrub any NaN an unstable step left in the weights.
    for p in model.parameters():
        torch.nan_to_num(p, nan=0.0, posinf=1.0, neginf=-1.0, out=p)
print(loss.item())
