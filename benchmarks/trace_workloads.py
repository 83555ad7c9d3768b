"""The training steps ``bench_trace.py`` times, and a way to time them as a program.

Two workloads, each built from a fixed seed:

* ``gpt``: the pinned model: a GPT with 2 transformer blocks (d=64, 4 heads, masked causal
  attention written out as in minGPT), batch 16, sequence 32, ``cross_entropy``, gradient
  clipping and AdamW.
* ``cnn``: a small CNN on 32×32 images (three conv / batch-norm / in-place ReLU stages), SGD
  with momentum.

Run as a program (``python trace_workloads.py WORKLOAD STEPS OUT``) it builds the workload,
takes one warm-up step, times STEPS steps in CPU time and appends the seconds per step to OUT:
that is how ``check --trace`` is timed, since it runs a whole program.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

Step = Callable[[], None]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, context: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(context, context))
                             .view(1, 1, context, context))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, length, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(self.mask[:, :, :length, :length] == 0, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(batch, length, dim))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, context: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int = 128, dim: int = 64, heads: int = 4, context: int = 32,
                 layers: int = 2) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.zeros(1, context, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads, context) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tokens(idx) + self.positions[:, :idx.shape[1]]
        return self.head(self.norm(self.blocks(x)))


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


def gpt() -> Step:
    torch.manual_seed(0)
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, 128, (16, 33))

    def step() -> None:
        inputs, targets = data[:, :-1], data[:, 1:]
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def cnn() -> Step:
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))

    def step() -> None:
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()

    return step


WORKLOADS: dict[str, Callable[[], Step]] = {"gpt": gpt, "cnn": cnn}


def seconds_per_step(name: str, steps: int) -> float:
    """Build the workload, take one warm-up step, and time ``steps`` steps in CPU time."""
    step = WORKLOADS[name]()
    step()
    start = time.process_time()
    for _ in range(steps):
        step()
    return (time.process_time() - start) / steps


if __name__ == "__main__":
    workload, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    torch.set_num_threads(1)
    per_step = seconds_per_step(workload, count)
    with open(out, "a", encoding="utf-8") as stream:
        stream.write(f"{per_step!r}\n")
