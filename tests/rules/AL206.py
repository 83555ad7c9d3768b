"""AL206 replicated-tensor: its positive and negative cases (format: tests/test_rules.py)."""


# case: repeated
import itertools
import torch
acc = [torch.zeros(3)] * 4
acc[1].add_(1)  # error: AL206
table = dict.fromkeys(["a", "b"], torch.zeros(2))
table["a"].zero_()  # error: AL206
for t in list(itertools.repeat(torch.ones(2), 3)):
    t.mul_(2)  # error: AL206


# case: comprehension and read only
import torch
acc = [torch.zeros(3) for _ in range(4)]
acc[1].add_(1)
zeros = [torch.zeros(3)] * 4
print(zeros[0].sum())
