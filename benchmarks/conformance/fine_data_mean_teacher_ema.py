# source: https://github.com/CuriousAI/mean-teacher/issues/28 (the teacher as an exponential moving average of the student, `ema_param.data.mul_(alpha).add_(...)` after the student's step; "gradients don't flow across training steps", issue 29); the teacher's own graph is never backpropagated
# expect: none
# torch: ok
import copy

import torch
import torch.nn.functional as F
from torch import nn


def update_teacher(teacher, student, decay):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.data.mul_(decay).add_(s.data, alpha=1.0 - decay)


torch.manual_seed(0)
student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 6)
    teacher_logits = teacher(x + 0.1 * torch.randn_like(x))
    target = teacher_logits.softmax(dim=1).detach()
    loss = -(F.log_softmax(student(x), dim=1) * target).sum(dim=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_teacher(teacher, student, 0.99)
