# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/roi_heads/roi_heads.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: AL105 at heads.py:9
# torch: raises RuntimeError "modified by an inplace operation"
# Heads in a ModuleDict share the trunk features; the classifier's Linear saves them, then the depth head's ReLU(inplace=True) rewrites them.
import torch
import torch.nn.functional as F

from models import MultiTaskNet


def multitask_loss(outputs, targets):
    loss = F.cross_entropy(outputs["cls"], targets["cls"])
    loss = loss + F.l1_loss(outputs["depth"].squeeze(-1), targets["depth"])
    loss = loss + (1 - F.cosine_similarity(outputs["normal"], targets["normal"], dim=-1)).mean()
    return loss


torch.manual_seed(0)
model = MultiTaskNet(12, 32, ["cls", "depth", "normal"])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 12)
targets = {"cls": torch.randint(0, 5, (8,)), "depth": torch.rand(8), "normal": torch.randn(8, 3)}
loss = multitask_loss(model(x), targets)
opt.zero_grad()
loss.backward()
opt.step()
print(loss.item())
