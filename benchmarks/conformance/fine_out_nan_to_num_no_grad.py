# source: pytorch/pytorch test/cpp/api/inference_mode.cpp InferenceModeTest.TestMixInferenceAndNormalTensorInplaceOp (the same out= clean-up, made under no_grad)
# expect: none
# torch: ok
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
    with torch.no_grad():
        for p in model.parameters():
            torch.nan_to_num(p, nan=0.0, posinf=1.0, neginf=-1.0, out=p)
print(loss.item())
