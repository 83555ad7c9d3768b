"""AL201 write-through-view: its positive and negative cases (format: tests/test_rules.py)."""


# case: transpose written base read
import torch
a = torch.rand(4, 4)
b = a.t()
b.mul_(2)  # error: AL201
print(a.sum())


# case: base written view read
import torch
x = torch.rand(8)
head = x[:2]
x.add_(1)  # error: AL201
print(head)


# case: filling a buffer through views
import torch
out = torch.empty(4, 6)
left = out[:, :3]
left.copy_(torch.ones(4, 3))
view = out[:, 1:-1]
view.add_(1)
out.clamp_(0, 1)
print(out)


# case: disjoint pieces and direct part writes
import torch
x = torch.rand(3, 4)
r, g, b = x.unbind(0)
g.add_(1)
print(r, b)
x[:, 0] = 0
x[1].zero_()
print(x)


# case: clips collected by a comprehension are views of the frames
# runs: raises AssertionError
import torch
torch.manual_seed(0)
frames = torch.rand(4, 6)
clean = frames.clone()
clips = [frames[i] for i in range(frames.shape[0])]
for clip in clips:
    clip.add_(torch.randn_like(clip) * 0.1)  # error: AL201
assert torch.equal(frames, clean)


# case: attention maps scaled through a slice, their device read after
import torch
def max_attention(maps: torch.Tensor, indices: list[int]) -> list[torch.Tensor]:
    text = maps[:, :, 1:-1]
    text *= 100
    text = torch.softmax(text, dim=-1)
    return [text[:, :, i].max().to(maps.device) for i in indices]
print(max_attention(torch.rand(4, 4, 6), [0, 2]))


# case: attention maps scaled through a slice, their values read after
import torch
def max_attention(maps: torch.Tensor, indices: list[int]) -> list[torch.Tensor]:
    text = maps[:, :, 1:-1]
    text *= 100  # error: AL201
    peak = maps.amax()
    return [text[:, :, i].max() / peak for i in indices]
print(max_attention(torch.rand(4, 4, 6), [0, 2]))
