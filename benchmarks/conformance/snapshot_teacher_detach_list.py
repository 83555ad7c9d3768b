# source: https://github.com/google-research/fixmatch/issues/74 (is the teacher just the student?), here a frozen teacher taken as [p.detach() for p in model.parameters()]
# expect: AL207 at line 10
# torch: wrong "the teacher followed the student's updates"
import torch
from torch import nn

torch.manual_seed(0)
student = nn.Linear(4, 2)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
teacher = [p.detach() for p in student.parameters()]
x = torch.randn(16, 4)
for _ in range(3):
    with torch.no_grad():
        target = nn.functional.linear(x, teacher[0], teacher[1])
    loss = (student(x + 0.1 * torch.randn_like(x)) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
if torch.equal(teacher[0], student.weight):
    raise SystemExit(1)
