"""The language server's latency: from the end of the debounce to ``publishDiagnostics``.

    python benchmarks/bench_server_latency.py [--edits 30] [--file PATH --root DIR]

``aliaslint server`` runs in a child process, driven over stdio by pygls' client as an
editor drives it: a workspace folder holding ``model.py`` (a 499-line model file: a
transformer, a convolutional stem, optimiser and data helpers, two findings) and
``train.py``, which imports it; both are open.  Each edit is what typing does: one
incremental ``didChange`` that replaces a number inside one function of ``model.py``, a
different function each time.  The server is started with ``ALIASLINT_SERVER_TIMING=1``
and logs, per re-check, the milliseconds from the moment its debounce timer fired to the
moment the edited document's diagnostics were sent (and of that, the check), and how long
re-checking the open documents that import it took afterwards; the next edit waits for
both.  Printed: the median and the slowest of each over the edits, and the CPU the server
and its worker process spent per edit.

``--file PATH --root DIR`` edits a real file instead (one number in each function in
turn), with DIR as the workspace folder: for instance a model file of a pinned corpus
(``--root CORPORA/timm --file CORPORA/timm/timm/models/fasternet.py``).  Nothing is
written to disk: the edits stay in the server's buffer.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

MODEL = '''\
"""A small decoder-only transformer and a convolutional stem, with the helpers a training
script imports: configuration, attention, blocks, the model, weight decay groups."""

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 50304
    block_size: int = 256
    n_layer: int = 6
    n_head: int = 8
    n_embd: int = 512
    dropout: float = 0.0
    bias: bool = True
    rotary: bool = False
    image_size: int = 64
    patch: int = 8
    channels: int = 3
    widths: list = field(default_factory=lambda: [32, 64, 128])


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotary_tables(length, dim, base=10000.0, device=None):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, device=device).float() / dim))
    positions = torch.arange(length, device=device).float()
    angles = torch.outer(positions, inv)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


def apply_rotary(q, k, cos, sin):
    q_out = q * cos + rotate_half(q) * sin
    k_out = k * cos + rotate_half(k) * sin
    return q_out, k_out


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias=True, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class RMSNorm(nn.Module):
    def __init__(self, ndim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.eps = eps

    def forward(self, x):
        scale = x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()
        return x * scale * self.weight


class SelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_drop = nn.Dropout(config.dropout)
        self.resid_drop = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.rotary = config.rotary
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size))
        if config.rotary:
            cos, sin = rotary_tables(config.block_size, config.n_embd // config.n_head)
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)

    def split_heads(self, x, B, T, C):
        return x.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def forward(self, x, cache=None):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(self.n_embd, dim=2)
        q = self.split_heads(q, B, T, C)
        k = self.split_heads(k, B, T, C)
        v = self.split_heads(v, B, T, C)
        if self.rotary:
            q, k = apply_rotary(q, k, self.cos[:T], self.sin[:T])
        if cache is not None:
            past_k, past_v = cache
            k = torch.cat((past_k, k), dim=2)
            v = torch.cat((past_v, v), dim=2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        S = k.size(2)
        att = att.masked_fill(self.mask[:, :, S - T:S, :S] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y)), (k, v)


class MLP(nn.Module):
    def __init__(self, config, hidden=None):
        super().__init__()
        hidden = hidden or 4 * config.n_embd
        self.fc = nn.Linear(config.n_embd, hidden, bias=config.bias)
        self.proj = nn.Linear(hidden, config.n_embd, bias=config.bias)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.fc(x)
        x = gelu_tanh(x)
        x = self.proj(x)
        return self.drop(x)


class GatedMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden = int(8 * config.n_embd / 3)
        self.gate = nn.Linear(config.n_embd, hidden, bias=False)
        self.up = nn.Linear(config.n_embd, hidden, bias=False)
        self.down = nn.Linear(hidden, config.n_embd, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, config, gated=False):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = SelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = GatedMLP(config) if gated else MLP(config)

    def forward(self, x, cache=None):
        attended, cache = self.attn(self.ln_1(x), cache)
        x = x + attended
        x = x + self.mlp(self.ln_2(x))
        return x, cache


class ConvStem(nn.Module):
    """Patches from a few strided convolutions, as hybrid vision models make them."""

    def __init__(self, config):
        super().__init__()
        layers = []
        channels = config.channels
        for width in config.widths:
            layers.append(nn.Conv2d(channels, width, 3, stride=2, padding=1, bias=False))
            layers.append(nn.BatchNorm2d(width))
            layers.append(nn.ReLU(inplace=True))
            channels = width
        self.body = nn.Sequential(*layers)
        self.proj = nn.Conv2d(channels, config.n_embd, 1)

    def forward(self, images):
        features = self.body(images)
        tokens = self.proj(features)
        return tokens.flatten(2).transpose(1, 2)


class Transformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList([Block(config, gated=i % 2 == 1)
                                     for i in range(config.n_layer)])
        self.ln_f = LayerNorm(config.n_embd, bias=config.bias)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for name, parameter in self.named_parameters():
            if name.endswith("proj.weight"):
                torch.nn.init.normal_(parameter, mean=0.0,
                                      std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self, non_embedding=True):
        total = sum(p.numel() for p in self.parameters())
        if non_embedding:
            total -= self.wpe.weight.numel()
        return total

    def embed(self, idx, offset=0):
        b, t = idx.size()
        assert offset + t <= self.config.block_size, "sequence longer than the block size"
        pos = torch.arange(offset, offset + t, dtype=torch.long, device=idx.device)
        return self.drop(self.wte(idx) + self.wpe(pos))

    def forward(self, idx, targets=None, caches=None):
        offset = 0 if caches is None else caches[0][0].size(2)
        x = self.embed(idx, offset)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, cache = block(x, None if caches is None else caches[i])
            new_caches.append(cache)
        x = self.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss, new_caches

    def crop_block_size(self, block_size):
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.wpe.weight = nn.Parameter(self.wpe.weight[:block_size])
        for block in self.blocks:
            block.attn.mask = block.attn.mask[:, :, :block_size, :block_size]

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        caches = None
        for _ in range(max_new_tokens):
            window = idx if idx.size(1) <= self.config.block_size \\
                else idx[:, -self.config.block_size:]
            logits, _, caches = self(window if caches is None else window[:, -1:],
                                     caches=caches)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


class VisionTransformer(nn.Module):
    def __init__(self, config, num_classes=1000):
        super().__init__()
        self.stem = ConvStem(config)
        tokens = (config.image_size // 2 ** len(config.widths)) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, config.n_embd))
        self.pos = nn.Parameter(torch.zeros(1, tokens + 1, config.n_embd))
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.norm = LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, num_classes)
        nn.init.trunc_normal_(self.pos, std=0.02)
        nn.init.trunc_normal_(self.cls, std=0.02)

    def features(self, images):
        x = self.stem(images)
        cls = self.cls.expand(x.size(0), -1, -1)
        x = torch.cat((cls, x), dim=1)
        x = x + self.pos[:, : x.size(1)]
        for block in self.blocks:
            x, _ = block(x)
        return self.norm(x)

    def forward(self, images):
        return self.head(self.features(images)[:, 0])

    def reset_classifier(self, num_classes):
        self.head = nn.Linear(self.head.in_features, num_classes)


def decay_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if parameter.dim() >= 2:
            decay.append(parameter)
        else:
            no_decay.append(parameter)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def configure_optimizer(model, weight_decay, learning_rate, betas):
    groups = decay_groups(model, weight_decay)
    return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)


def cosine_lr(step, warmup, total, peak, floor):
    if step < warmup:
        return peak * (step + 1) / (warmup + 1)
    if step > total:
        return floor
    ratio = (step - warmup) / (total - warmup)
    return floor + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (peak - floor)


def estimate_mfu(model, fwdbwd_per_iter, dt, peak_flops=312e12):
    config = model.config
    n = model.num_params()
    L, H, Q, T = config.n_layer, config.n_head, config.n_embd // config.n_head, config.block_size
    flops_per_token = 6 * n + 12 * L * H * Q * T
    flops = flops_per_token * T * fwdbwd_per_iter
    return flops / dt / peak_flops


def label_smoothing_loss(logits, targets, smoothing=0.1):
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(dim=-1, index=targets.unsqueeze(-1)).squeeze(-1)
    smooth = -log_probs.mean(dim=-1)
    return ((1.0 - smoothing) * nll + smoothing * smooth).mean()


def mixup(images, targets, alpha=0.2, num_classes=1000):
    lam = float(torch.distributions.Beta(alpha, alpha).sample())
    index = torch.randperm(images.size(0))
    mixed = images.mul(lam).add_(images[index].mul(1.0 - lam))
    one_hot = F.one_hot(targets, num_classes).float()
    return mixed, one_hot * lam + one_hot[index] * (1.0 - lam)


def normalize_(images, mean, std):
    mean = torch.as_tensor(mean, dtype=images.dtype).view(-1, 1, 1)
    std = torch.as_tensor(std, dtype=images.dtype).view(-1, 1, 1)
    images.sub_(mean).div_(std)
    return images


def center_crop(images, size):
    h, w = images.shape[-2:]
    top, left = (h - size) // 2, (w - size) // 2
    return images[..., top:top + size, left:left + size]


def clip_gradients(model, max_norm):
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    total = torch.stack(norms).norm() if norms else torch.tensor(0.0)
    if total > max_norm:
        scale = max_norm / (total + 1e-6)
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(scale)
    return total


class ExponentialMovingAverage:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = {name: p.detach().clone() for name, p in model.named_parameters()}

    @torch.no_grad()
    def update(self, model):
        for name, p in model.named_parameters():
            self.shadow[name].mul_(self.decay).add_(p.detach(), alpha=1.0 - self.decay)

    def copy_to(self, model):
        for name, p in model.named_parameters():
            p.data.copy_(self.shadow[name])


def warm_start(model, state, skip=("lm_head.weight",)):
    own = model.state_dict()
    for name, value in state.items():
        if name in skip or name not in own:
            continue
        if own[name].shape == value.shape:
            own[name].copy_(value)
    return model


def shift_tokens(tokens):
    shifted = tokens.new_zeros(tokens.shape)
    shifted[:, 1:] = tokens[:, :-1]
    return shifted


def causal_pad(lengths, block_size):
    mask = torch.zeros(len(lengths), block_size, dtype=torch.bool)
    for row, length in enumerate(lengths):
        mask[row, :length] = True
    return mask


def scale_embeddings(model, factor):
    weight = model.wte.weight
    head = weight.t()
    head.mul_(factor)
    return weight


def same_buffer(a, b):
    return id(a) == id(b)


def accumulate(grads, new):
    for g, n in zip(grads, new):
        g += n
    return grads


def running_stats(batches):
    mean = torch.zeros(3)
    count = 0
    for images in batches:
        mean += images.mean(dim=(0, 2, 3))
        count += 1
    return mean / max(count, 1)


class KVCache:
    """Keys and values of earlier positions, preallocated for the whole block."""

    def __init__(self, layers, batch, heads, length, dim, dtype=torch.float32):
        shape = (layers, batch, heads, length, dim)
        self.keys = torch.zeros(shape, dtype=dtype)
        self.values = torch.zeros(shape, dtype=dtype)
        self.length = 0

    def append(self, layer, k, v):
        t = k.size(2)
        self.keys[layer, :, :, self.length:self.length + t] = k
        self.values[layer, :, :, self.length:self.length + t] = v
        return self.keys[layer, :, :, :self.length + t], self.values[layer, :, :, :self.length + t]

    def advance(self, t):
        self.length += t

    def reset(self):
        self.length = 0


class PatchEmbed(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Conv2d(config.channels, config.n_embd, config.patch, stride=config.patch)
        self.norm = LayerNorm(config.n_embd)

    def forward(self, images):
        x = self.proj(images).flatten(2).transpose(1, 2)
        return self.norm(x)


def sample_top_p(probs, p=0.9):
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    sorted_probs[cumulative - sorted_probs > p] = 0.0
    sorted_probs.div_(sorted_probs.sum(dim=-1, keepdim=True))
    choice = torch.multinomial(sorted_probs, num_samples=1)
    return torch.gather(order, -1, choice)


def checkpoint_state(model, optimizer, step, config):
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "step": step, "config": config.__dict__}


def load_checkpoint(path, model, optimizer=None):
    state = torch.load(path, map_location="cpu")
    prefix = "_orig_mod."
    weights = {k[len(prefix):] if k.startswith(prefix) else k: v
               for k, v in state["model"].items()}
    model.load_state_dict(weights)
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return state.get("step", 0)


def topk_accuracy(logits, targets, ks=(1, 5)):
    best = logits.topk(max(ks), dim=-1).indices
    hits = best.eq(targets.unsqueeze(-1))
    return {k: hits[:, :k].any(dim=-1).float().mean().item() for k in ks}


def perplexity(loss):
    return math.exp(min(loss, 20.0))


def count_tokens(batches):
    total = 0
    for batch in batches:
        total += batch.numel()
    return total
'''

TRAIN = '''\
import torch

from model import (ModelConfig, Transformer, clip_gradients, configure_optimizer,
                   cosine_lr, mixup, normalize_, scale_embeddings, same_buffer)


def train(steps=10):
    config = ModelConfig(n_layer=2, n_head=2, n_embd=64, block_size=32, vocab_size=128)
    model = Transformer(config)
    optimizer = configure_optimizer(model, 0.1, 3e-4, (0.9, 0.95))
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(step, 2, steps, 3e-4, 3e-5)
        idx = torch.randint(0, 128, (4, 32))
        _, loss, _ = model(idx, idx)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        clip_gradients(model, 1.0)
        optimizer.step()
    images = torch.rand(2, 3, 8, 8)
    normalize_(images, [0.5] * 3, [0.2] * 3)
    mixed, soft = mixup(images, torch.tensor([1, 2]), num_classes=4)
    scale_embeddings(model, 0.5)
    return same_buffer(mixed, images)
'''

TIMING = re.compile(r"timing (?P<uri>\S+): published (?P<published>[\d.]+) ms after the check "
                    r"began \(check (?P<check>[\d.]+) ms\), dependents (?P<after>[\d.]+) ms more")
NUMBER = re.compile(r"(?<![\w.])\d+(\.\d+)?(?![\w.])")


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process and of its running children (the check worker), from
    /proc (Linux only)."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += _cpu_seconds(int(child))
    except OSError:
        pass
    return total


def edit_sites(text: str) -> list[tuple[int, int, str]]:
    """(row from 0, column, the number) of the first number in the body of each function
    and method, in order of their rows: where the edits go."""
    lines = text.splitlines()
    sites = []
    functions = [node for node in ast.walk(ast.parse(text))
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for function in sorted(functions, key=lambda f: f.lineno):
        for row in range(function.body[0].lineno, (function.end_lineno or 0) + 1):
            line = lines[row - 1]
            match = NUMBER.search(line)
            if match and not line.lstrip().startswith("#") and '"' not in line[:match.start()] \
                    and "'" not in line[:match.start()]:
                sites.append((row - 1, match.start(), match.group()))
                break
    return sites


async def measure(folder: Path, edited: Path, others: list[Path], edits: int) -> dict:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("bench", "1")
    client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: None)
    env = dict(os.environ, ALIASLINT_SERVER_TIMING="1")
    await client.start_io(sys.executable, "-m", "aliaslint", "server", env=env)
    server = client._server
    assert server is not None and server.stderr is not None
    timings: asyncio.Queue = asyncio.Queue()

    async def read_log() -> None:  # the timing lines; the rest is drained
        assert server.stderr is not None
        async for raw in server.stderr:
            match = TIMING.search(raw.decode("utf-8", "replace"))
            if match:
                timings.put_nowait(match)

    reader = asyncio.create_task(read_log())
    uri = edited.as_uri()
    sites = edit_sites(edited.read_text(encoding="utf-8"))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=folder.as_uri(),
        workspace_folders=[types.WorkspaceFolder(folder.as_uri(), folder.name)]))
    client.initialized(types.InitializedParams())
    for path in [edited, *others]:
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=path.as_uri(), language_id="python", version=0,
            text=path.read_text(encoding="utf-8"))))
        await timings.get()  # its first check (the first also walks the folder)
    rows: list[tuple[float, float, float, float]] = []
    current = {row: number for row, _, number in sites}
    for edit in range(edits + 1):  # the first a warm-up, not counted
        row, column, _ = sites[edit % len(sites)]
        old = current[row]
        new = str(int(old) + 1) if old.isdigit() else f"{float(old) + 0.5:g}"
        current[row] = new
        cpu = _cpu_seconds(server.pid)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=edit + 1),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(row, column),
                                  types.Position(row, column + len(old))),
                text=new)]))
        match = await timings.get()
        while match["uri"] != uri:
            match = await timings.get()
        if edit:
            rows.append((float(match["published"]), float(match["check"]),
                         float(match["after"]), _cpu_seconds(server.pid) - cpu))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    reader.cancel()
    return {"edits": len(rows), "sites": len(sites),
            **{name: [row[i] for row in rows]
               for i, name in enumerate(("published", "check", "after", "cpu"))}}


def in_process(folder: Path, edited: Path, others: list[Path], edits: int) -> dict:
    """The same edits checked in this process as the server's worker checks them (the
    document's statements kept, the folder's program, the other open files as buffers),
    CPU time to the answer (the collection after it left out, as it follows the answer in
    the worker); and libcst's parse of each text, the reference across machines."""
    import time

    import libcst

    from aliaslint.server.workspace import Workspace, _check_in_worker, _settle

    text = edited.read_text(encoding="utf-8")
    buffers = {str(path): path.read_text(encoding="utf-8") for path in others}
    workspace = Workspace([folder], buffers=lambda: buffers)
    settings = workspace.settings_for(edited, True)
    found = workspace.program_for(edited)
    linked = None if found is None else (found[0], found[1], buffers)
    sites = edit_sites(text)
    lines = text.splitlines(keepends=True)
    checks, parses = [], []
    for edit in range(edits + 1):
        row, column, old = sites[edit % len(sites)]
        line = lines[row]
        number = NUMBER.match(line, column)
        assert number is not None
        old = number.group()
        new = str(int(old) + 1) if old.isdigit() else f"{float(old) + 0.5:g}"
        lines[row] = line[:column] + new + line[column + len(old):]
        text = "".join(lines)
        start = time.process_time()
        _check_in_worker(("bench", text, edited, settings, linked))
        spent = time.process_time() - start
        _settle()  # as the worker does once its answer is sent
        start = time.process_time()
        libcst.parse_module(text)
        if edit:  # the first a warm-up
            checks.append(spent)
            parses.append(time.process_time() - start)
    return {"check": checks, "parse": parses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--file", type=Path, help="a real file to edit (see --root)")
    parser.add_argument("--root", type=Path,
                        help="the workspace folder of --file (default: its directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.file is not None:
            folder = (args.root or args.file.parent).resolve()
            edited, others = args.file.resolve(), []
        else:
            folder = Path(scratch).resolve()
            edited, train = folder / "model.py", folder / "train.py"
            edited.write_text(MODEL, encoding="utf-8")
            train.write_text(TRAIN, encoding="utf-8")
            others = [train]
        lines = edited.read_text(encoding="utf-8").count("\n")
        result = asyncio.run(measure(folder, edited, others, args.edits))
        local = in_process(folder, edited, others, args.edits)
    print(f"{edited.name}: {lines} lines, {result['edits']} edits over {result['sites']} "
          f"functions; {len(others)} other open document(s) importing it")
    for name, what in (("published", "debounce end -> publishDiagnostics"),
                       ("check", "  of which the check (the worker's round trip)"),
                       ("after", "dependents re-checked after the publish")):
        values = result[name]
        print(f"{what}: median {statistics.median(values):.1f} ms, "
              f"slowest {max(values):.1f} ms")
    print(f"CPU of the server and its worker per edit: median "
          f"{statistics.median(result['cpu']) * 1e3:.0f} ms")
    check, parse = statistics.median(local["check"]), statistics.median(local["parse"])
    print(f"in this process, the worker's check of the same edits: median {check * 1e3:.1f} ms "
          f"CPU; libcst.parse_module of the text {parse * 1e3:.1f} ms (check = "
          f"{check / parse:.2f}x parse)")


if __name__ == "__main__":
    main()
