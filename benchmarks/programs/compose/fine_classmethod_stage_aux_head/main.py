# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/backbone/resnet.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: none
# torch: ok
# The stage's activations run out of place.
import torch
import torch.nn.functional as F

from models import DeepSupervisedNet


def train_step(model, opt, images, labels, aux_weight=0.4):
    logits, aux_logits = model(images)
    loss = F.cross_entropy(logits, labels) + aux_weight * F.cross_entropy(aux_logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


torch.manual_seed(0)
model = DeepSupervisedNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
print(train_step(model, opt, torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))))
