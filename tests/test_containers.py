"""Containers keep their elements, and functions kept as values do what they hold: one row
per operation, each a small piece of model code with its exact findings (at the default
confidence and with `low`), and each run under torch to show the hazard is real (it raises)
or that the correct version runs."""

from __future__ import annotations

import textwrap

import pytest

from aliaslint import check_source, registry

torch = pytest.importorskip("torch")

# The head every row starts with: a backbone of two stages whose outputs a sigmoid gates.
HEAD = """\
import copy
import functools
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

stem = nn.Linear(8, 8)
x = torch.randn(4, 8)
"""
# Line numbers below count from the first line after HEAD.
OFFSET = HEAD.count("\n")

# (name, body, findings at high, findings only at low, raises under torch)
CASES = [
    ("display_literal_index", """\
feats = [torch.sigmoid(stem(x)), torch.tanh(stem(x))]
feats[0].mul_(2)
sum(f.sum() for f in feats).backward()
""", [(2, "AL101")], [], True),
    ("display_other_index_is_clean", """\
feats = [torch.sigmoid(stem(x)), stem(x)]
feats[1].mul_(2)
sum(f.sum() for f in feats).backward()
""", [], [], False),
    ("append_in_order", """\
feats = []
feats.append(stem(x))
feats.append(torch.sigmoid(stem(x)))
feats[1].add_(1)
(feats[0] + feats[1]).sum().backward()
""", [(4, "AL101")], [], True),
    ("extend_then_negative_index", """\
feats = [stem(x)]
feats.extend([torch.exp(stem(x))])
feats[-1].clamp_(max=4.0)
torch.cat(feats, 1).sum().backward()
""", [(3, "AL101")], [], True),
    ("insert_at_front", """\
feats = [stem(x)]
feats.insert(0, torch.sigmoid(stem(x)))
feats[0].mul_(0.5)
torch.stack(feats).sum().backward()
""", [(3, "AL101")], [], True),
    ("pop_last", """\
feats = [stem(x), torch.sigmoid(stem(x))]
gate = feats.pop()
gate.mul_(2)
gate.sum().backward()
""", [(3, "AL101")], [], True),
    ("dict_literal_key", """\
outs = {"logits": stem(x), "probs": torch.softmax(stem(x), -1)}
outs["probs"].clamp_(min=1e-6)
outs["probs"].log().sum().backward()
""", [(2, "AL101")], [], True),
    ("dict_other_key_is_clean", """\
outs = {"logits": stem(x), "probs": torch.softmax(stem(x), -1)}
outs["logits"].clamp_(min=-5.0)
(outs["logits"].sum() + outs["probs"].sum()).backward()
""", [], [], False),
    ("dict_items_loop", """\
maps = {name: torch.sigmoid(stem(x)) for name in ("p3", "p4")}
for name, m in maps.items():
    m.mul_(0.5)
sum(m.sum() for m in maps.values()).backward()
""", [(3, "AL101")], [], True),
    ("dict_values_loop", """\
maps = {name: torch.sigmoid(stem(x)) for name in ("p3", "p4")}
for m in maps.values():
    m.pow_(2)
sum(m.sum() for m in maps.values()).backward()
""", [(3, "AL101")], [], True),
    ("dict_keys_index_is_low", """\
maps = {name: torch.sigmoid(stem(x)) for name in ("p3", "p4")}
for name in maps.keys():
    maps[name].mul_(0.5)
sum(m.sum() for m in maps.values()).backward()
""", [], [(3, "AL101")], True),
    ("zip_enumerate", """\
gates = [torch.softmax(stem(x), -1) for _ in range(2)]
for i, (g, t) in enumerate(zip(gates, [0.5, 2.0])):
    g.pow_(1.0 / t)
sum(g.sum() for g in gates).backward()
""", [(3, "AL101")], [], True),
    ("unpacking", """\
low_level, high_level = [torch.sigmoid(stem(x)), torch.sigmoid(stem(x))]
high_level.mul_(2)
(low_level + high_level).sum().backward()
""", [(2, "AL101")], [], True),
    ("slice_copy", """\
feats = [torch.sigmoid(stem(x)), torch.sigmoid(stem(x))]
laterals = feats[:]
laterals[1].add_(laterals[0])
sum(f.sum() for f in feats).backward()
""", [(3, "AL101")], [], True),
    ("list_copy", """\
masks = [torch.sigmoid(stem(x))]
hard = list(masks)
hard[0].gt_(0.5)
masks[0].sum().backward()
""", [(3, "AL101")], [], True),
    ("list_of_dict_values", """\
maps = {"p3": torch.sigmoid(stem(x))}
kept = list(maps.values())
kept[0].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("dict_copy", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = dict(maps)
out["p3"].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("appended_in_a_loop", """\
outs = []
for i in range(3):
    gate = torch.sigmoid(stem(x) * i)
    outs.append(gate * 2)
    gate.mul_(0.5)
sum(o.sum() for o in outs).backward()
""", [(5, "AL101")], [], True),
    ("appended_in_a_loop_then_written_out_of_place_is_clean", """\
outs = []
for i in range(3):
    gate = torch.sigmoid(stem(x) * i)
    outs.append(gate * 2)
    gate = gate * 0.5
sum(o.sum() for o in outs).backward()
""", [], [], False),
    # A loop that carries its state (`h = stage(h)`) and keeps each iteration's output: the
    # list holds this iteration's tensor and the earlier ones, all saved by the ReLU.
    ("stage_outputs_appended_then_each_written", """\
feats = []
h = x
for _ in range(3):
    h = torch.relu(stem(h))
    feats.append(h)
for f in feats:
    f.mul_(0.5)
sum(f.sum() for f in feats).backward()
""", [(7, "AL101")], [], True),
    ("stage_outputs_appended_then_scaled_out_of_place_is_clean", """\
feats = []
h = x
for _ in range(3):
    h = torch.relu(stem(h))
    feats.append(h)
scaled = [f * 0.5 for f in feats]
sum(f.sum() for f in scaled).backward()
""", [], [], False),
    ("stage_outputs_written_at_an_unknown_index_is_low", """\
feats = []
h = x
for _ in range(3):
    h = torch.relu(stem(h))
    feats.append(h)
for i in range(len(feats) - 1, 0, -1):
    feats[i - 1] += feats[i]
sum(f.sum() for f in feats).backward()
""", [], [(7, "AL101")], True),
    ("stage_outputs_cloned_into_the_list_is_clean", """\
feats = []
h = x
for _ in range(3):
    h = torch.relu(stem(h))
    feats.append(h.clone())
for f in feats:
    f.mul_(0.5)
sum(f.sum() for f in feats).backward()
""", [], [], False),
    # A dict filled under names the code computes, returned, and normalised in place by a
    # helper walking its items: each value is a ReLU output that ReLU saved.
    ("feature_dict_returned_then_normalised_by_a_helper", """\
def extract(h, names):
    feats = {}
    for name in names:
        h = torch.relu(stem(h))
        feats[name] = h
    return feats


def l2_normalize(feats):
    for name, v in feats.items():
        v.div_(v.norm(dim=1, keepdim=True) + 1e-6)
    return feats


out = l2_normalize(extract(x, ("a", "b")))
sum(v.sum() for v in out.values()).backward()
""", [(11, "AL101")], [], True),
    ("feature_dict_returned_then_normalised_into_new_tensors_is_clean", """\
def extract(h, names):
    feats = {}
    for name in names:
        h = torch.relu(stem(h))
        feats[name] = h
    return feats


def l2_normalize(feats):
    for name, v in feats.items():
        feats[name] = v / (v.norm(dim=1, keepdim=True) + 1e-6)
    return feats


out = l2_normalize(extract(x, ("a", "b")))
sum(v.sum() for v in out.values()).backward()
""", [], [], False),
    # Layers put in a dict under computed names, run in order through `named_children()`:
    # the dict of kept activations holds each layer's own output (one tensor per layer).
    ("named_children_outputs_kept_in_a_dict", """\
layers = OrderedDict()
for i in range(2):
    layers[f"fc{i}"] = nn.Linear(8, 8)
    layers[f"act{i}"] = nn.Sigmoid()
body = nn.Sequential(layers)


def extract(h):
    feats = {}
    for name, layer in body.named_children():
        h = layer(h)
        if name.startswith("act"):
            feats[name] = h
    return feats


feats = extract(stem(x))
for name, f in feats.items():
    f.mul_(2)
sum(f.sum() for f in feats.values()).backward()
""", [(19, "AL101")], [], True),
    ("named_children_outputs_cloned_into_a_dict_is_clean", """\
layers = OrderedDict()
for i in range(2):
    layers[f"fc{i}"] = nn.Linear(8, 8)
    layers[f"act{i}"] = nn.Sigmoid()
body = nn.Sequential(layers)


def extract(h):
    feats = {}
    for name, layer in body.named_children():
        h = layer(h)
        if name.startswith("act"):
            feats[name] = h.clone()
    return feats


feats = extract(stem(x))
for name, f in feats.items():
    f.mul_(2)
sum(f.sum() for f in feats.values()).backward()
""", [], [], False),
    # A public augmentation that works on a shallow copy of the batch writes the caller's
    # tensors: the caller's later read of the batch sees the blended images (AL208).
    ("shallow_copied_batch_written_by_a_helper", """\
def strong_view(batch):
    out = copy.copy(batch)
    images = out["img"]
    images.mul_(0.5)
    return out


batch = {"img": torch.rand(4, 8), "label": torch.zeros(4)}
strong = strong_view(batch)
weak = stem(batch["img"])
""", [(4, "AL208")], [], False),
    ("dict_copied_batch_written_by_a_helper", """\
def strong_view(batch):
    out = dict(batch)
    out["img"].mul_(0.5)
    return out


batch = {"img": torch.rand(4, 8), "label": torch.zeros(4)}
strong = strong_view(batch)
weak = stem(batch["img"])
""", [(3, "AL208")], [], False),
    ("deep_copied_batch_written_by_a_helper_is_clean", """\
def strong_view(batch):
    out = copy.deepcopy(batch)
    images = out["img"]
    images.mul_(0.5)
    return out


batch = {"img": torch.rand(4, 8), "label": torch.zeros(4)}
strong = strong_view(batch)
weak = stem(batch["img"])
""", [], [], False),
    ("batch_element_the_helper_did_not_write_is_clean", """\
def strong_view(batch):
    out = copy.copy(batch)
    out["label"].mul_(0.5)
    return out


batch = {"img": torch.rand(4, 8), "label": torch.zeros(4)}
strong = strong_view(batch)
weak = stem(batch["img"])
""", [], [], False),
    ("list_batch_rebound_after_the_helper_is_clean", """\
def jitter(pair):
    pair[0].add_(0.1)


batch = [torch.rand(4, 8), torch.zeros(4)]
jitter(batch)
batch = [torch.rand(4, 8), torch.zeros(4)]
weak = stem(batch[0])
""", [], [], False),
    ("a_tuple_returned_keeps_each_graph", """\
def cell(inp):
    h = torch.tanh(stem(inp))
    return stem(h), h


out, state = cell(x)
state.mul_(0.5)
out.sum().backward()
""", [(7, "AL101")], [], True),
    ("a_tuple_returned_keeps_each_graph_apart", """\
def two(inp):
    return torch.sigmoid(stem(inp)), torch.exp(stem(inp))


gated, grown = two(x)
grown.mul_(0.5)
gated.sum().backward()
""", [], [], False),
    ("dict_of_keywords", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = dict(**maps)
out["p3"].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("dict_spread", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = {**maps, "scale": 2.0}
out["p3"].mul_(out["scale"])
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("dict_method_copy", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = maps.copy()
out["p3"].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("copy_copy", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = copy.copy(maps)
out["p3"].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("ordered_dict", """\
maps = {"p3": torch.sigmoid(stem(x))}
out = OrderedDict(maps)
out["p3"].mul_(2)
maps["p3"].sum().backward()
""", [(3, "AL101")], [], True),
    ("copy_copy_of_a_batch", """\
w = torch.randn(8, requires_grad=True)
batch = {"img": torch.rand(4, 8)}
logits = batch["img"] * w
aug = copy.copy(batch)
aug["img"].mul_(0.5)
logits.sum().backward()
""", [(5, "AL101")], [], True),
    ("deepcopy_of_a_batch_is_clean", """\
w = torch.randn(8, requires_grad=True)
batch = {"img": torch.rand(4, 8)}
logits = batch["img"] * w
aug = copy.deepcopy(batch)
aug["img"].mul_(0.5)
logits.sum().backward()
""", [], [], False),
    ("clone_per_element_is_clean", """\
masks = [torch.sigmoid(stem(x))]
hard = [m.clone() for m in masks]
hard[0].gt_(0.5)
masks[0].sum().backward()
""", [], [], False),
    ("list_of_dict_is_its_keys", """\
maps = {"p3": torch.sigmoid(stem(x))}
names = list(maps)
names.append("p4")
maps["p3"].sum().backward()
""", [], [], False),
    ("unknown_index_is_low", """\
feats = [torch.sigmoid(stem(x)) for _ in range(3)]
k = int(torch.randint(0, 3, ()).item())
feats[k].mul_(2)
sum(f.sum() for f in feats).backward()
""", [], [(3, "AL101")], True),
    ("range_len_index_is_aligned", """\
feats = [torch.sigmoid(stem(x)) for _ in range(3)]
for i in range(len(feats)):
    feats[i].mul_(2)
sum(f.sum() for f in feats).backward()
""", [(3, "AL101")], [], True),
    ("enumerate_index_is_aligned", """\
feats = [torch.sigmoid(stem(x)) for _ in range(3)]
for i, f in enumerate(feats):
    feats[i].mul_(0.5)
sum(f.sum() for f in feats).backward()
""", [(3, "AL101")], [], True),
    ("helper_writes_elements", """\
def temper(weights, temperatures):
    for w, t in zip(weights, temperatures):
        w.pow_(1.0 / t)
    return weights


gates = [torch.softmax(stem(x), -1) for _ in range(2)]
tempered = temper(gates, [0.5, 2.0])
sum(g.sum() for g in tempered).backward()
""", [(3, "AL101")], [], True),
    ("helper_returns_dict", """\
def heads(h):
    return {"mask": torch.sigmoid(h), "box": h * 2}


outs = heads(stem(x))
outs["mask"].gt_(0.5)
outs["mask"].sum().backward()
""", [(6, "AL101")], [], True),
    ("helper_returns_dict_other_key_is_clean", """\
def heads(h):
    return {"mask": torch.sigmoid(h), "box": h * 2}


outs = heads(stem(x))
outs["box"].clamp_(min=0.0)
(outs["mask"].sum() + outs["box"].sum()).backward()
""", [], [], False),
    # A helper that writes its argument without saying so: the write inside it is the
    # finding; one whose name says it writes in place is called on the wrong tensor.
    ("undeclared_helper_write_points_inside", """\
def rescale(t):
    t.mul_(0.5)


probs = torch.sigmoid(stem(x))
rescale(probs)
probs.sum().backward()
""", [(2, "AL101")], [], True),
    # A helper that says it writes in place is reported like any other: at its write, where
    # the out-of-place rewrite goes, with the call related.
    ("declared_helper_write_points_at_the_write", """\
def rescale_(t):
    t.mul_(0.5)


probs = torch.sigmoid(stem(x))
rescale_(probs)
probs.sum().backward()
""", [(2, "AL101")], [], True),
    # Functions as values: the write happens at the call through the value.
    ("partial_inplace", """\
act = functools.partial(F.leaky_relu, negative_slope=0.1, inplace=True)
h = torch.tanh(stem(x))
h = act(h)
h.sum().backward()
""", [(3, "AL105")], [], True),
    ("partial_out_of_place_is_clean", """\
act = functools.partial(F.leaky_relu, negative_slope=0.1, inplace=False)
h = torch.tanh(stem(x))
h = act(h)
h.sum().backward()
""", [], [], False),
    ("getattr_literal", """\
act = getattr(torch, "relu_")
h = torch.tanh(stem(x))
act(h)
h.sum().backward()
""", [(3, "AL105")], [], True),
    ("getattr_out_of_place_is_clean", """\
act = getattr(torch, "relu")
h = torch.tanh(stem(x))
h = act(h)
h.sum().backward()
""", [], [], False),
    ("lambda", """\
clamp = lambda s: s.clamp_(1e-3, 10.0)
std = torch.exp(stem(x))
clamp(std)
std.sum().backward()
""", [(1, "AL101")], [], True),
    ("attribute_holds_function", """\
class Head(nn.Module):
    def __init__(self, act_fn):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act_fn = act_fn

    def forward(self, h):
        h = torch.tanh(self.fc(h))
        return self.act_fn(h)


Head(torch.relu_)(x).sum().backward()
""", [(9, "AL105")], [], True),
    ("attribute_holds_out_of_place_function_is_clean", """\
class Head(nn.Module):
    def __init__(self, act_fn):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act_fn = act_fn

    def forward(self, h):
        h = torch.tanh(self.fc(h))
        return self.act_fn(h)


Head(torch.relu)(x).sum().backward()
""", [], [], False),
    ("factory_of_partial_by_keyword", """\
def get_act_fn(name, inplace=False):
    if name == "leaky_relu":
        return functools.partial(F.leaky_relu, negative_slope=0.1, inplace=inplace)
    return F.gelu


act = get_act_fn("leaky_relu", inplace=True)
h = torch.tanh(stem(x))
act(h).sum().backward()
""", [(9, "AL105")], [], True),
    ("partial_of_a_module_class", """\
class Block(nn.Module):
    def __init__(self, dim, act_layer=nn.GELU):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act_layer()

    def forward(self, h):
        return self.act(torch.tanh(self.fc(h)))


Block(8, act_layer=functools.partial(nn.ReLU, inplace=True))(x).sum().backward()
""", [(5, "AL105")], [], True),
    ("partial_of_a_module_class_out_of_place_is_clean", """\
class Block(nn.Module):
    def __init__(self, dim, act_layer=nn.GELU):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act_layer()

    def forward(self, h):
        return self.act(torch.tanh(self.fc(h)))


Block(8, act_layer=functools.partial(nn.ReLU, inplace=False))(x).sum().backward()
""", [], [], False),
    ("returned_dict_with_a_written_save", """\
def heads(h):
    probs = torch.softmax(h, -1)
    probs.clamp_(min=1e-4)
    return {"probs": probs, "logits": h}


heads(stem(x))["probs"].log().sum().backward()
""", [(3, "AL101")], [], True),
    ("distribution_over_a_written_save", """\
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu, self.log_std = nn.Linear(8, 2), nn.Linear(8, 2)

    def forward(self, obs):
        std = torch.exp(self.log_std(obs))
        std.clamp_(1e-3, 10.0)
        return torch.distributions.Normal(self.mu(obs), std)


Policy()(x).log_prob(torch.zeros(4, 2)).sum().backward()
""", [(8, "AL101")], [], True),
    ("distribution_over_a_clamped_copy_is_clean", """\
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu, self.log_std = nn.Linear(8, 2), nn.Linear(8, 2)

    def forward(self, obs):
        std = torch.exp(self.log_std(obs))
        std = std.clamp(1e-3, 10.0)
        return torch.distributions.Normal(self.mu(obs), std)


Policy()(x).log_prob(torch.zeros(4, 2)).sum().backward()
""", [], [], False),
]


def _findings(source: str, confidence: str) -> list[tuple[int, str]]:
    rules = {code for code, rule in registry.rules().items() if rule.checks}
    found = check_source(source, "model.py", rules, confidence=confidence)  # type: ignore[arg-type]
    return sorted({(d.location.row - OFFSET, d.code) for d in found})


@pytest.mark.parametrize("name,body,high,low,raises", CASES, ids=[c[0] for c in CASES])
def test_container_and_function_value_findings(name, body, high, low, raises):
    source = HEAD + textwrap.dedent(body)
    assert _findings(source, "high") == high
    assert _findings(source, "low") == sorted(high + low)


@pytest.mark.parametrize("name,body,high,low,raises", CASES, ids=[c[0] for c in CASES])
def test_each_row_does_under_torch_what_it_claims(name, body, high, low, raises):
    source = HEAD + textwrap.dedent(body)
    torch.manual_seed(0)
    if raises:
        with pytest.raises(RuntimeError, match="inplace operation"):
            exec(compile(source, "model.py", "exec"), {"__name__": "__main__"})
    else:
        exec(compile(source, "model.py", "exec"), {"__name__": "__main__"})
