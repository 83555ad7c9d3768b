# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/data/mixup.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL208 at augment.py:11
# torch: wrong "the weak and the strong view are the same tensor, so the consistency loss is zero"
# copy.copy of the batch dict shares its tensors: the public augmentation writes the caller's weak-view images in place.
import torch
import torch.nn.functional as F
from torch import nn

from augment import strong_view


def consistency_loss(model, batch):
    strong = strong_view(batch)
    weak_logits = model(batch["image"]).detach()
    strong_logits = model(strong["image"])
    pseudo = weak_logits.softmax(dim=-1)
    return F.kl_div(strong_logits.log_softmax(dim=-1), pseudo, reduction="batchmean")


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 5))
batch = {"image": torch.rand(6, 3, 8, 8), "label": torch.randint(0, 5, (6,))}
loss = consistency_loss(model, batch)
loss.backward()
print(loss.item())
if loss.item() < 1e-6:
    raise SystemExit(1)
