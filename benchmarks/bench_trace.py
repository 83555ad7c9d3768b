"""How much slower is a CPU training step under ``aliaslint trace``?

Run from the repository root::

    python benchmarks/bench_trace.py [--steps N] [--repeat R] [--threads T]

Two realistic workloads (a small CNN on 32×32 images and a pre-norm transformer
block on token sequences) each run several optimizer steps untraced and traced in
one process, alternating, and the best of ``--repeat`` rounds is compared.  The
ratio is traced time / untraced time; the tracer's target on the CNN is ≤ 1.5×.

A third column runs the steps under an empty ``TorchDispatchMode`` (one Python call
per ATen op, nothing else): the part of the cost any dispatch-mode tracer pays,
against which the tracer's own bookkeeping can be read.  ``--clock cpu`` (the
default) measures this process's CPU time, which a busy machine disturbs less than
wall time.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import aliaslint


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


class Block(nn.Module):
    """A pre-norm transformer block: self-attention and an MLP, each with a residual."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int = 256, dim: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(layers)])
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(self.blocks(self.embed(tokens)))


def cnn_workload():
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))

    def step() -> None:
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()

    return step


def transformer_workload():
    torch.manual_seed(0)
    model = TinyTransformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 256, (16, 32))

    def step() -> None:
        optimizer.zero_grad()
        logits = model(tokens[:, :-1])
        F.cross_entropy(logits.reshape(-1, 256), tokens[:, 1:].reshape(-1)).backward()
        optimizer.step()

    return step


def empty_mode():
    from torch.utils._python_dispatch import TorchDispatchMode

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return PassThrough()


def timed(step, steps: int, how: str, clock) -> float:
    start = clock()
    if how == "traced":
        with aliaslint.trace() as tracer:
            for _ in range(steps):
                step()
        assert not tracer.findings, tracer.findings
    elif how == "mode":
        with empty_mode():
            for _ in range(steps):
                step()
    else:
        for _ in range(steps):
            step()
    return clock() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.clock} time, "
          f"{args.steps} steps, best of {args.repeat}")
    for name, make in (("cnn", cnn_workload), ("transformer", transformer_workload)):
        step = make()
        step()  # warm up every path (allocator, schema facts)
        timed(step, 1, "traced", clock)
        best = {"plain": float("inf"), "mode": float("inf"), "traced": float("inf")}
        for _ in range(args.repeat):
            for how in best:
                best[how] = min(best[how], timed(step, args.steps, how, clock))
        per_step = {how: 1000 * seconds / args.steps for how, seconds in best.items()}
        print(f"{name:12} untraced {per_step['plain']:7.2f} ms/step   "
              f"empty mode {per_step['mode']:7.2f} ({best['mode'] / best['plain']:.2f}x)   "
              f"traced {per_step['traced']:7.2f} ms/step   "
              f"ratio {best['traced'] / best['plain']:.2f}x")


if __name__ == "__main__":
    main()
