# source: https://github.com/thuml/Anomaly-Transformer/issues/1 (minimax training: a step between two backward passes over one graph)
# expect: AL101 at line 18
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
x = torch.randn(32, 5)
recon = model(x)
rec_err = (recon - x).pow(2).mean()
prior = recon.softmax(-1)
series = x.softmax(-1)
loss1 = rec_err - (prior * series.log()).sum(-1).mean()
loss2 = rec_err + (prior * series.log()).sum(-1).mean()
loss1.backward(retain_graph=True)
optimizer.step()
loss2.backward()
optimizer.step()
