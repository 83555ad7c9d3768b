"""The shipped op tables checked against the installed torch.

* drift: a fresh generation equals aliaslint/data/ops.json;
* views: every op the table calls a view shares storage with its input when called through the
  public API on sample tensors; functional ops do not; sometimes-alias ops do both; the
  non-contiguous claims hold;
* saves: what autograd really saves (saved_tensors_hooks) equals what the table says, per
  overload, for every differentiable overload that can be called on sample tensors;
* nn modules: the hand table's module claims hold on real modules.

The agreement figures are printed at the end (also without -s).
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict

import pytest

from aliaslint import ops
from aliaslint.ops.generate import main as generator
from aliaslint.ops.generate import probes, samples, schema

torch = pytest.importorskip("torch")

# The tables describe the pinned torch build: against another one they drift by design.
# One worker runs the module: the tests add to STATS, which test_zz_summary prints last.
pytestmark = [pytest.mark.torch_exact, pytest.mark.xdist_group("ops_torch")]

STATS: dict[str, Counter] = defaultdict(Counter)
DISAGREE: dict[str, list[str]] = defaultdict(list)
UNCALLABLE: dict[str, list[str]] = defaultdict(list)

# Ops whose sample call through the public API disagrees with the table for a known reason
# (empty: every disagreement found so far was fixed in the generator or the hand table).
# name -> reason.  Every entry is also listed in docs/ops.md.
KNOWN_VIEW_EXCEPTIONS: dict[str, str] = {}
KNOWN_SAVE_EXCEPTIONS: dict[str, str] = {}


@pytest.fixture(scope="module")
def overloads():
    funcs, infos = schema.load_torchgen()
    ovs = [schema.overload_facts(f) for f in funcs]
    return {o.aten: o for o in ovs}


def _entries(kinds, namespaces=("torch", "torch.Tensor")):
    for name in ops.names():
        ns, _, short = name.rpartition(".")
        if ns not in namespaces or (short.startswith("_") and not short.startswith("__")):
            continue  # private ATen entry points are not called with arbitrary samples
        op = ops.lookup(name)
        if op.extra.get("manual"):
            continue
        if op.kind in kinds:
            yield name, ns, short, op


def _aten(op, short, oname):
    base = op.aten or short
    return base if oname == "default" else f"{base}.{oname}"


def _call_public(ns, short, op, pos, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op.is_property:
            return getattr(pos[0], short)
        if ns == "torch":
            return getattr(torch, short)(*pos, **kw)
        if ns == "torch.nn.functional":
            return getattr(torch.nn.functional, short)(*pos, **kw)
        return getattr(pos[0], short)(*pos[1:], **kw)


def _first_call(ns, short, op, ov, variants=False, all_worlds=False):
    """(x, pos, kw, result) of the sample calls that work through the public API, in the first
    world where one works (every world with all_worlds)."""
    called_world = None
    for world, x, pos, kw in samples.sample_calls(torch, ov.schema):
        if called_world is not None and world is not called_world and not all_worlds:
            return
        inputs = samples.input_variants(torch, x) if variants else [x]
        for xin in inputs:
            p = [xin if v is x else v for v in pos]
            try:
                r = _call_public(ns, short, op, p, kw)
            except Exception:
                continue
            called_world = world
            yield xin, p, kw, r


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    return []


def _shares(a, b):
    return samples.shares_storage(a, b)


# ------------------------------------------------------------------------------------------------
# drift
# ------------------------------------------------------------------------------------------------


def test_no_drift():
    fresh = generator.dumps(generator.generate())
    shipped = schema.OPS_JSON.read_text()
    if fresh != shipped:
        import difflib

        diff = "".join(list(difflib.unified_diff(shipped.splitlines(True), fresh.splitlines(True), n=0))[:40])
        pytest.fail("aliaslint/data/ops.json is out of date; run python -m aliaslint.ops_gen\n" + diff)
    m = ops.meta()
    assert m["torch"] == torch.__version__
    paths = schema.yaml_paths()
    assert m["native_functions.yaml sha256"] == schema.sha256(paths["native_functions"])
    assert m["derivatives.yaml sha256"] == schema.sha256(paths["derivatives"])


# ------------------------------------------------------------------------------------------------
# views, functional, sometimes-alias
# ------------------------------------------------------------------------------------------------


def test_views_share_storage(overloads):
    bad = []
    for name, ns, short, op in _entries({"view"}):
        for oname, od in op.overloads.items():
            if od.kind != "view":
                continue
            ov = overloads.get(_aten(op, short, oname))
            if ov is None:
                UNCALLABLE["view"].append(f"{name}.{oname}: no schema")
                continue
            done = False
            for xin, p, kw, r in _first_call(ns, short, op, ov):
                outs = _tensors(r)
                if not outs:
                    continue
                STATS["views"]["checked"] += 1
                if all(_shares(t, xin) for t in outs):
                    STATS["views"]["agree"] += 1
                else:
                    bad.append(f"{name}.{oname}: result does not share storage with its input")
                if op.noncontiguous:
                    STATS["noncontiguous"]["checked"] += 1
                    if any(not t.is_contiguous() for t in outs if t.numel() > 1):
                        STATS["noncontiguous"]["agree"] += 1
                    else:
                        bad.append(f"{name}.{oname}: table says non-contiguous, sample result is contiguous")
                done = True
                break
            if not done:
                UNCALLABLE["view"].append(f"{name}.{oname}: no sample call succeeded")
    bad = [b for b in bad if b.split(":")[0].rsplit(".", 1)[0] not in KNOWN_VIEW_EXCEPTIONS]
    DISAGREE["views"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["views"]["checked"] >= 60


def test_functional_do_not_alias(overloads):
    bad = []
    for name, ns, short, op in _entries({"functional"}):
        if op.returns not in ("tensor", "tensors"):
            continue
        for oname, od in op.overloads.items():
            if od.kind != "functional" or od.returns not in ("tensor", "tensors"):
                continue
            ov = overloads.get(_aten(op, short, oname))
            if ov is None or not ov.schema.arguments.flat_positional or not samples.callable_by_sample(ov.schema):
                continue
            calls = shared = 0
            for xin, p, kw, r in _first_call(ns, short, op, ov, variants=True):
                ins = [v for v in p if isinstance(v, torch.Tensor)]
                calls += 1
                shared += any(t is i or _shares(t, i) for t in _tensors(r) for i in ins)
            if not calls:
                continue
            STATS["functional"]["checked"] += 1
            STATS["functional"]["sample calls"] += calls
            if shared:
                bad.append(f"{name}.{oname}: result shares storage with an input")
            else:
                STATS["functional"]["agree"] += 1
    DISAGREE["functional"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["functional"]["checked"] >= 300


def test_sometimes_alias_both_outcomes(overloads):
    bad = []
    for name, ns, short, op in _entries({"sometimes_alias"}):
        for oname, od in op.overloads.items():
            if od.kind != "sometimes_alias":
                continue
            ov = overloads.get(_aten(op, short, oname))
            if ov is None:
                continue
            alias = copy = False
            called = False
            for xin, p, kw, r in _first_call(ns, short, op, ov, variants=True, all_worlds=True):
                called = True
                for t in _tensors(r):
                    ins = [v for v in p if isinstance(v, torch.Tensor)]
                    if any(t is i or _shares(t, i) for i in ins):
                        alias = True
                    else:
                        copy = True
            if not called:
                UNCALLABLE["sometimes_alias"].append(f"{name}.{oname}: no sample call succeeded")
                continue
            STATS["sometimes_alias"]["checked"] += 1
            if not alias:
                bad.append(f"{name}.{oname}: never aliased on samples")
                continue
            if copy:
                STATS["sometimes_alias"]["both outcomes"] += 1
            else:
                UNCALLABLE["sometimes_alias (copy not observable on CPU samples)"].append(f"{name}.{oname}")
            STATS["sometimes_alias"]["agree"] += 1
    # conversions without a yaml entry (float(), double() ...): same on the receiver
    for name in ops.names():
        if not name.startswith("torch.Tensor."):
            continue
        op = ops.lookup(name)
        if op.kind != "sometimes_alias" or op.overloads or op.extra.get("manual"):
            continue
        short = name.rpartition(".")[2]
        res = probes.probe_conversion(torch, short)
        STATS["sometimes_alias"]["checked"] += 1
        if res and res[0]:
            STATS["sometimes_alias"]["agree"] += 1
            if res[1]:
                STATS["sometimes_alias"]["both outcomes"] += 1
        else:
            bad.append(f"{name}: never aliased")
    x = torch.ones(2, 3)
    assert x.cpu() is x  # hand entry: Tensor.cpu aliases on CPU
    DISAGREE["sometimes_alias"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["sometimes_alias"]["both outcomes"] >= 10


def test_inplace_writes_bump_version(overloads):
    """In-place ops write their `self` through the public API; the version-bump claim holds."""
    bad = []
    for name, ns, short, op in _entries({"inplace"}):
        for oname, od in op.overloads.items():
            if od.kind != "inplace" or od.bumps_version is None:
                continue
            ov = overloads.get(_aten(op, short, oname))
            if ov is None or not samples.callable_by_sample(ov.schema):
                continue
            bumped = None
            for world, x, pos, kw in samples.sample_calls(torch, ov.schema):
                v0 = x._version
                try:
                    r = _call_public(ns, short, op, pos, kw)
                except Exception:
                    continue
                bumped = x._version > v0
                if bumped:
                    if not (r is x or _shares(r, x)) and r is not None:
                        bad.append(f"{name}.{oname}: result is not its self")
                    break
            if bumped is None:
                continue
            STATS["inplace version bump"]["checked"] += 1
            if bumped == od.bumps_version:
                STATS["inplace version bump"]["agree"] += 1
            else:
                bad.append(f"{name}.{oname}: table bumps_version={od.bumps_version}, torch {bumped}")
    DISAGREE["inplace"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["inplace version bump"]["checked"] >= 100


# ------------------------------------------------------------------------------------------------
# layout and fill facts: self_overlapping, reorders_dims, fills
# ------------------------------------------------------------------------------------------------


def _dims(t):
    return [(sz, st) for sz, st in zip(t.shape, t.stride()) if sz > 1]


def _public_view_calls(ns, short, op, ov, narrowed=False):
    """(input, result tensors) of every public sample call in every world; with narrowed also
    with the first tensor narrowed to size 1 in its first dimension (something to broadcast)."""
    for world, x, pos, kw in samples.sample_calls(torch, ov.schema):
        for xin in [x] + ([x[:1]] if narrowed and x.dim() and x.shape[0] > 1 else []):
            p = [xin if v is x else v for v in pos]
            k = {n: (xin if v is x else v) for n, v in kw.items()}
            try:
                r = _call_public(ns, short, op, p, k)
            except Exception:
                continue
            outs = _tensors(r)
            if outs:
                yield xin, outs


def _view_overloads(overloads, op, short):
    for oname, od in op.overloads.items():
        ov = overloads.get(_aten(op, short, oname))
        if od.kind == "view" and ov is not None:
            yield oname, ov


def test_self_overlapping_views(overloads):
    """Through the public API, a view's result has a stride 0 on a dimension of size > 1 on some
    sample exactly when the table says self_overlapping, and torch then refuses an in-place
    write to it ("more than one element of the written-to tensor refers to a single memory
    location")."""
    bad = []
    for name, ns, short, op in _entries({"view"}):
        called = overlapping = False
        for oname, ov in _view_overloads(overloads, op, short):
            for xin, outs in _public_view_calls(ns, short, op, ov, narrowed=True):
                called = True
                for t in outs:
                    if not any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
                        continue
                    overlapping = True
                    with pytest.raises(RuntimeError, match="single memory location"):
                        t.mul_(torch.ones((), dtype=t.dtype))
        if not called:
            continue
        STATS["self-overlapping views"]["checked"] += 1
        if overlapping == op.self_overlapping:
            STATS["self-overlapping views"]["agree"] += 1
            STATS["self-overlapping views"]["claimed"] += overlapping
        else:
            bad.append(f"{name}: table self_overlapping={op.self_overlapping}, torch {overlapping}")
    DISAGREE["self-overlapping views"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["self-overlapping views"]["claimed"] >= 3


def test_reordering_views(overloads):
    """Through the public API, every view overload of a name the table says reorders_dims gives
    results with the input's dimensions (size, stride) in another order on some sample and never
    other dimensions, and `.view(-1)` of such a result raises; no other view name does so."""
    bad = []
    for name, ns, short, op in _entries({"view"}):
        verdicts = []
        for oname, ov in _view_overloads(overloads, op, short):
            called = reordered = other = False
            for xin, outs in _public_view_calls(ns, short, op, ov):
                called = True
                for t in outs:
                    if sorted(_dims(t)) != sorted(_dims(xin)):
                        other = True
                    elif _dims(t) != _dims(xin):
                        reordered = True
                        xin.view(-1)
                        with pytest.raises(RuntimeError, match="view size is not compatible"):
                            t.view(-1)
            if called:
                verdicts.append(reordered and not other)
        if not verdicts:
            continue
        reorders = all(verdicts)
        STATS["reordering views"]["checked"] += 1
        if reorders == op.reorders_dims:
            STATS["reordering views"]["agree"] += 1
            STATS["reordering views"]["claimed"] += reorders
        else:
            bad.append(f"{name}: table reorders_dims={op.reorders_dims}, torch {reorders}")
    DISAGREE["reordering views"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["reordering views"]["claimed"] >= 10


def _destinations(x):
    """Destinations of one shape and dtype with very different values."""
    if x.dtype == torch.bool:
        return [x.clone(), ~x, torch.zeros_like(x)]
    return [x.clone(), torch.zeros_like(x), x * -37]


def _ends(ns, short, op, pos, kw):
    """What the destination (the receiver) holds after the call, for each destination; None when
    a call raises."""
    ends = []
    for d in _destinations(pos[0]):
        rest = [v.clone() if isinstance(v, torch.Tensor) else v for v in pos[1:]]
        torch.manual_seed(0)
        try:
            _call_public(ns, short, op, [d, *rest], kw)
        except Exception:
            return None
        ends.append(d)
    return ends


def _equal(a, b):
    return a.shape == b.shape and bool(((a == b) | (a != a) & (b != b)).all())


def test_fills(overloads):
    """Through the Tensor methods, an in-place op the table says fills leaves destinations with
    very different values equal (same random seed) on every sample; other in-place ops show
    that their result depends on the destination (counted; not every dependence is visible on
    samples)."""
    bad = []
    with torch.random.fork_rng(devices=[]):
        for name, ns, short, op in _entries({"inplace"}, namespaces=("torch.Tensor",)):
            if op.writes != ("self",) or op.is_property:
                continue
            called = depends = False
            for oname, od in op.overloads.items():
                ov = overloads.get(_aten(op, short, oname))
                if od.kind != "inplace" or ov is None or not samples.callable_by_sample(ov.schema):
                    continue
                for world, x, pos, kw in samples.sample_calls(torch, ov.schema):
                    ends = _ends(ns, short, op, pos, kw)
                    if ends is None:
                        continue
                    called = True
                    if not all(_equal(ends[0], e) for e in ends[1:]):
                        depends = True
            if not called:
                continue
            if op.fills:
                STATS["fills"]["checked"] += 1
                if depends:
                    bad.append(f"{name}: table says fills, its result depends on the destination")
                else:
                    STATS["fills"]["agree"] += 1
            else:
                STATS["not fills"]["checked"] += 1
                STATS["not fills"]["dependence seen"] += depends
                if not depends:
                    UNCALLABLE["fills (no dependence seen on samples, not claimed)"].append(name)
    DISAGREE["fills"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["fills"]["checked"] >= 3


# ------------------------------------------------------------------------------------------------
# saves
# ------------------------------------------------------------------------------------------------


def _record_saves(fn):
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    return r, saved


def _classify(saved, named_inputs, results, inplace):
    out = set()
    for s in saved:
        hit = False
        for nm, v in named_inputs.items():
            if s is v or _shares(s, v):
                out.add("result" if inplace and nm == "self" else nm)
                hit = True
        if not hit:
            for i, rt in enumerate(results):
                if s is rt or _shares(s, rt):
                    out.add("result" if i == 0 else f"result{i}")
    return out


def _saves_case(ns, short, op, ov, oname):
    """Actual saves of one overload through the public API, or None when not callable."""
    names = [a.name for a in ov.schema.arguments.flat_positional if a.default is None]
    kwn = [a.name for a in ov.schema.arguments.flat_kwarg_only if a.default is None and a.name not in {o.name for o in ov.schema.arguments.out}]
    for world, x, pos, kw in samples.sample_calls(torch, ov.schema):
        if not world["dtype"].is_floating_point:
            continue
        vals = list(pos) + [kw[k] for k in kwn]
        fresh = []
        named = {}
        for nm, v in zip(names + kwn, vals):
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                v = v.detach().clone().requires_grad_(True)
                if op.kind == "inplace" and nm == "self":
                    v = v * 1  # a non-leaf can be written in place
                named[nm] = v
            fresh.append(v)
        p = fresh[: len(pos)]
        k = dict(zip(kwn, fresh[len(pos):]))
        try:
            r, saved = _record_saves(lambda: _call_public(ns, short, op, p, k))
        except Exception:
            continue
        results = _tensors(r)
        if not any(t.requires_grad for t in results):
            return None
        # outputs the call returns (F wrappers hide some: max_pool2d without return_indices)
        visible = {"result"} | {f"result{i}" for i in range(1, len(results))}
        return _classify(saved, named, results, op.kind == "inplace"), set(named) | visible
    return None


MUST_SAVES = [
    "torch.sigmoid", "torch.tanh", "torch.exp", "torch.relu", "torch.softmax", "torch.log_softmax",
    "torch.pow", "torch.mul", "torch.div", "torch.matmul", "torch.nn.functional.linear", "torch.conv2d",
    "torch.layer_norm", "torch.batch_norm", "torch.embedding", "torch.index_select", "torch.gather",
    "torch.Tensor.index_add", "torch.take_along_dim", "torch.Tensor.sigmoid_", "torch.Tensor.relu_", "torch.Tensor.mul_",
]


def test_saves_match_autograd(overloads):
    bad = []
    covered = set()
    kinds = {"functional", "inplace", "view", "sometimes_alias"}
    for name, ns, short, op in _entries(kinds, ("torch", "torch.Tensor", "torch.nn.functional")):
        for oname, od in op.overloads.items():
            if od.saves is None or od.kind == "out":
                continue
            ov = overloads.get(_aten(op, short, oname))
            if ov is None or not samples.callable_by_sample(ov.schema):
                continue
            res = _saves_case(ns, short, op, ov, oname)
            if res is None:
                continue
            actual, given = res
            # table names -> schema names (torch.X entries call the schema's `self` `input`)
            schema_names = {a.name for a in ov.schema.arguments.flat_all}
            to_schema = lambda s: "self" if (s == "input" and "self" in schema_names) else s
            expect = {to_schema(s) for s in od.saves}
            expect = {s for s in expect if s in given}
            STATS["saves"]["checked"] += 1
            cat = lambda s: {("result" if x.startswith("result") else "input") for x in s}
            if cat(actual) == cat(expect):
                STATS["saves"]["agree (input vs result)"] += 1
            if actual == expect:
                STATS["saves"]["agree (names)"] += 1
                covered.add(name)
            else:
                bad.append(f"{name}.{oname}: table {sorted(expect)} autograd {sorted(actual)}")
    known = [b for b in bad if b.split(":")[0] in KNOWN_SAVE_EXCEPTIONS]
    bad = [b for b in bad if b not in known]
    DISAGREE["saves"] += bad
    assert STATS["saves"]["checked"] >= 150
    missing = [n for n in MUST_SAVES if n not in covered]
    assert not missing, f"not verified: {missing}"
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad)


# ------------------------------------------------------------------------------------------------
# nn modules
# ------------------------------------------------------------------------------------------------

nn = torch.nn


def _module_cases():
    x2 = lambda: torch.rand(4, 5)
    img = lambda *s: (lambda: torch.rand(*s))
    return {
        "torch.nn.Linear": (lambda: nn.Linear(5, 3), x2),
        "torch.nn.Bilinear": None,
        "torch.nn.Conv1d": (lambda: nn.Conv1d(3, 4, 2), img(2, 3, 8)),
        "torch.nn.Conv2d": (lambda: nn.Conv2d(3, 4, 2), img(2, 3, 6, 6)),
        "torch.nn.Conv3d": (lambda: nn.Conv3d(3, 4, 2), img(1, 3, 4, 4, 4)),
        "torch.nn.ConvTranspose1d": (lambda: nn.ConvTranspose1d(3, 4, 2), img(2, 3, 8)),
        "torch.nn.ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 4, 2), img(2, 3, 6, 6)),
        "torch.nn.ConvTranspose3d": (lambda: nn.ConvTranspose3d(3, 4, 2), img(1, 3, 4, 4, 4)),
        "torch.nn.ReLU": (nn.ReLU, x2),
        "torch.nn.ReLU6": (nn.ReLU6, x2),
        "torch.nn.LeakyReLU": (nn.LeakyReLU, x2),
        "torch.nn.ELU": (nn.ELU, x2),
        "torch.nn.CELU": (nn.CELU, x2),
        "torch.nn.SELU": (nn.SELU, x2),
        "torch.nn.Hardtanh": (nn.Hardtanh, x2),
        "torch.nn.Threshold": (lambda **k: nn.Threshold(0.1, 0.0, **k), x2),
        "torch.nn.RReLU": (nn.RReLU, x2),
        "torch.nn.SiLU": (nn.SiLU, x2),
        "torch.nn.Mish": (nn.Mish, x2),
        "torch.nn.Hardswish": (nn.Hardswish, x2),
        "torch.nn.Hardsigmoid": (nn.Hardsigmoid, x2),
        "torch.nn.GELU": (nn.GELU, x2),
        "torch.nn.Sigmoid": (nn.Sigmoid, x2),
        "torch.nn.Tanh": (nn.Tanh, x2),
        "torch.nn.Softplus": (nn.Softplus, x2),
        "torch.nn.Softmax": (lambda: nn.Softmax(dim=1), x2),
        "torch.nn.LogSoftmax": (lambda: nn.LogSoftmax(dim=1), x2),
        "torch.nn.BatchNorm1d": (lambda: nn.BatchNorm1d(5), x2),
        "torch.nn.BatchNorm2d": (lambda: nn.BatchNorm2d(3), img(2, 3, 4, 4)),
        "torch.nn.BatchNorm3d": (lambda: nn.BatchNorm3d(3), img(2, 3, 2, 2, 2)),
        "torch.nn.LayerNorm": (lambda: nn.LayerNorm(5), x2),
        "torch.nn.GroupNorm": (lambda: nn.GroupNorm(1, 3), img(2, 3, 4)),
        "torch.nn.Dropout": (lambda **k: nn.Dropout(0.5, **k), x2),
        "torch.nn.Embedding": (lambda: nn.Embedding(10, 3), lambda: torch.tensor([1, 2, 3])),
        "torch.nn.LSTM": (lambda: nn.LSTM(5, 4), img(3, 2, 5)),
        "torch.nn.GRU": (lambda: nn.GRU(5, 4), img(3, 2, 5)),
        "torch.nn.RNN": (lambda: nn.RNN(5, 4), img(3, 2, 5)),
        "torch.nn.Identity": (nn.Identity, x2),
        "torch.nn.MaxPool1d": (lambda: nn.MaxPool1d(2), img(2, 3, 4)),
        "torch.nn.MaxPool2d": (lambda: nn.MaxPool2d(2), img(2, 3, 4, 4)),
        "torch.nn.MaxPool3d": (lambda: nn.MaxPool3d(2), img(1, 2, 4, 4, 4)),
        "torch.nn.AvgPool1d": (lambda: nn.AvgPool1d(2), img(2, 3, 4)),
        "torch.nn.AvgPool2d": (lambda: nn.AvgPool2d(2), img(2, 3, 4, 4)),
        "torch.nn.AvgPool3d": (lambda: nn.AvgPool3d(2), img(1, 2, 4, 4, 4)),
        "torch.nn.AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(2), img(2, 3, 4)),
        "torch.nn.AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d(2), img(2, 3, 4, 4)),
        "torch.nn.AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d(2), img(1, 2, 4, 4, 4)),
        "torch.nn.PixelShuffle": (lambda: nn.PixelShuffle(2), img(1, 4, 2, 2)),
        "torch.nn.GLU": (nn.GLU, img(4, 6)),
        "torch.nn.ZeroPad2d": (lambda: nn.ZeroPad2d(1), img(1, 2, 3, 3)),
        "torch.nn.ConstantPad1d": (lambda: nn.ConstantPad1d(1, 0.5), img(2, 3, 4)),
        "torch.nn.ConstantPad2d": (lambda: nn.ConstantPad2d(1, 0.5), img(1, 2, 3, 3)),
        "torch.nn.ReflectionPad2d": (lambda: nn.ReflectionPad2d(1), img(1, 2, 3, 3)),
        "torch.nn.PReLU": (nn.PReLU, x2),
        "torch.nn.RMSNorm": (lambda: nn.RMSNorm(5), x2),
        "torch.nn.Flatten": (nn.Flatten, img(2, 3, 4)),
        "torch.nn.Unflatten": (lambda: nn.Unflatten(1, (5, 1)), x2),
        "torch.nn.Sequential": (lambda: nn.Sequential(nn.Linear(5, 3), nn.ReLU()), x2),
        "torch.nn.ModuleList": (lambda: nn.ModuleList([nn.ReLU()]), None),
        "torch.nn.ModuleDict": (lambda: nn.ModuleDict({"a": nn.ReLU()}), None),
    }


def _module_saves(mod, x):
    if x.is_floating_point():
        x = x.clone().requires_grad_(True)
    named = {"input": x}
    for pn, p in mod.named_parameters():
        named[pn.split(".")[-1]] = p
    r, saved = _record_saves(lambda: mod(x))
    out = set()
    results = _tensors(r[0] if isinstance(r, tuple) and isinstance(r[0], torch.Tensor) else r)
    for s in saved:
        for nm, v in named.items():
            if s is v or _shares(s, v):
                out.add("weight" if nm.startswith("weight") else "bias" if nm.startswith("bias") else nm)
        for rt in results:
            if s is rt or _shares(s, rt):
                out.add("result")
    return x, r, out


def test_modules_match_torch():
    bad = []
    cases = _module_cases()
    for qn in ops.names("modules"):
        mo = ops.module(qn)
        assert hasattr(torch.nn, qn.rpartition(".")[2]), qn
        case = cases.get(qn)
        if case is None:
            UNCALLABLE["modules"].append(f"{qn}: no sample case")
            continue
        make, inp = case
        mod = make()
        STATS["modules"]["checked"] += 1
        ok = True
        if mo.has_params is not None and mo.has_params != bool(list(mod.parameters())):
            ok = False
            bad.append(f"{qn}: has_params={mo.has_params} but parameters() says otherwise")
        if mo.container:
            ok = ok and isinstance(mod, (nn.Sequential, nn.ModuleList, nn.ModuleDict))
        elif mo.identity:
            x = inp()
            ok = mod(x) is x
        else:
            mod.train()
            x, r, actual = _module_saves(mod, inp())
            if mo.saves is not None:
                expect = set(mo.saves)
                if actual != expect:
                    ok = False
                    bad.append(f"{qn}: table {sorted(expect)} autograd {sorted(actual)}")
            if mo.op:
                fn = ops.aten(mo.op)
                assert fn is not None, qn
                outs = _tensors(r)
                if fn.kind == "functional" and any(_shares(t, x) for t in outs):
                    ok = False
                    bad.append(f"{qn}: result shares storage with its input")
                if fn.kind == "sometimes_alias":
                    # must alias for some input / mode (Flatten: contiguous input; Dropout: eval)
                    y = inp().transpose(0, 1) if inp().dim() > 1 else inp()
                    shares_contig = any(_shares(t, x) for t in outs)
                    shares_t = any(_shares(t, y) for t in _tensors(mod(y)))
                    mod.eval()
                    z = inp()
                    shares_eval = any(_shares(t, z) for t in _tensors(mod(z)))
                    ok = ok and (shares_contig or shares_t or shares_eval)
            if mo.inplace_kwarg:
                try:
                    mod2 = make(**{mo.inplace_kwarg: True})
                except TypeError:
                    mod2 = type(mod)(**{mo.inplace_kwarg: True})
                mod2.train()
                x = inp().clone()
                v0 = x._version
                r2 = mod2(x)
                if not (x._version > v0 and _shares(r2, x)):
                    ok = False
                    bad.append(f"{qn}({mo.inplace_kwarg}=True) did not write its input")
                assert ops.aten(mo.inplace_op).kind == "inplace", qn
            if mo.writes:
                for w in mo.writes:
                    assert hasattr(mod, w), (qn, w)
        if ok:
            STATS["modules"]["agree"] += 1
        elif not bad or not bad[-1].startswith(qn):
            bad.append(f"{qn}: sample call disagrees with the table's kind")
    DISAGREE["modules"] += bad
    assert not bad, "\n".join(bad)


def test_functional_inplace_kwargs():
    """F.relu(x, inplace=True) & co write x: every F entry with inplace_kwarg."""
    import torch.nn.functional as F

    bad = []
    for name in ops.names():
        if not name.startswith("torch.nn.functional."):
            continue
        op = ops.lookup(name)
        if not op.inplace_kwarg:
            continue
        fn = getattr(F, name.rpartition(".")[2])
        x = torch.rand(4, 5) - 0.5
        v0 = x._version
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                extra = {k: v for k, v in (("threshold", 0.1), ("value", 0.0), ("training", True)) if k in op.params}
                r = fn(x, **extra, **{op.inplace_kwarg: True})
        except Exception as e:  # pragma: no cover - reported
            bad.append(f"{name}: {e}")
            continue
        STATS["F inplace kwarg"]["checked"] += 1
        if x._version > v0 and _shares(r, x) and ops.aten(op.twin).kind == "inplace":
            STATS["F inplace kwarg"]["agree"] += 1
        else:
            bad.append(f"{name}: inplace=True did not write the input")
    assert not bad, "\n".join(bad)
    assert STATS["F inplace kwarg"]["checked"] >= 10


def test_numpy_share_entries():
    import copy

    import numpy as np

    a = np.zeros(3, dtype=np.float32)
    t = torch.from_numpy(a)
    t[0] = 1
    assert a[0] == 1 and ops.lookup("torch.from_numpy").kind == "numpy_share"
    t2 = torch.as_tensor(a)
    assert _shares(t2, t)
    n = t.numpy()
    n[1] = 2
    assert t[1] == 2 and ops.method("numpy").kind == "numpy_share"
    n2 = np.asarray(t)
    n2[2] = 3
    assert t[2] == 3
    d = copy.deepcopy(t)
    assert not _shares(d, t) and ops.lookup("copy.deepcopy").kind == "deepcopy"
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert _shares(sd["weight"], m.weight) and ops.lookup("torch.nn.Module.state_dict").kind == "reference"
    assert m.weight.data.untyped_storage().data_ptr() == m.weight.untyped_storage().data_ptr()
    STATS["hand entries"]["checked"] += 6
    STATS["hand entries"]["agree"] += 6


def _plain(v):
    if isinstance(v, (bool, int, float, complex, str, torch.qscheme)):
        return True
    return isinstance(v, (list, tuple)) and all(_plain(i) for i in v)


def test_non_tensor_methods():
    """Every method of the non_tensor_methods section, called on a sample (without arguments, on
    a one-element tensor, with a second tensor), returns what the table says: a plain value, or
    an untyped / typed storage over the tensor's memory.  The deriving storage methods are in
    deriving_methods()."""
    bad = []
    for name, kind in ops.non_tensor_methods().items():
        result = None
        for x, args in ((torch.ones(2, 3), ()), (torch.ones(1), ()), (torch.ones(2, 3), (torch.ones(2, 3),))):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = (x, getattr(x, name)(*args))
                break
            except Exception:
                continue
        if result is None:
            UNCALLABLE["non-tensor methods"].append(name)  # sparse / quantized receivers
            continue
        x, r = result
        STATS["non-tensor methods"]["checked"] += 1
        if kind == "value":
            ok = _plain(r)
        else:
            cls = torch.UntypedStorage if kind == "storage" else torch.TypedStorage
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # TypedStorage is deprecated
                ok = isinstance(r, cls) and r.data_ptr() == x.untyped_storage().data_ptr()
            ok = ok and name in ops.deriving_methods()
        if ok:
            STATS["non-tensor methods"]["agree"] += 1
        else:
            bad.append(f"{name}: table says {kind}, torch returned {type(r).__name__}")
    DISAGREE["non-tensor methods"] += bad
    assert not bad, "\n".join(bad)
    assert STATS["non-tensor methods"]["checked"] >= 25


def test_deriving_attributes():
    """The deriving attributes make a new object over the tensor's memory."""
    x = torch.ones(3, 3, dtype=torch.complex64)
    for name in ops.deriving_attributes():
        v = getattr(x, name)
        assert isinstance(v, torch.Tensor) and v is not x and _shares(v, x), name
    STATS["deriving attributes"]["checked"] += len(ops.deriving_attributes())
    STATS["deriving attributes"]["agree"] += len(ops.deriving_attributes())


def test_ndarray_writers():
    """Each NumPy writer in the table writes its array in place (byteswap only with
    inplace=True); no other public ndarray method called without arguments writes its array."""
    import numpy as np

    calls = {
        "fill": lambda a: a.fill(7),
        "sort": lambda a: a.sort(),
        "put": lambda a: a.put([0], [9]),
        "partition": lambda a: a.partition(1),
        "resize": lambda a: a.resize((2,), refcheck=False),
        "itemset": lambda a: a.itemset(0, 9),
        "byteswap": lambda a: a.byteswap(inplace=True),
        "setfield": lambda a: a.setfield(9, a.dtype),
    }
    assert set(calls) == ops.ndarray_writers()
    for name, call in calls.items():
        if not hasattr(np.ndarray, name):
            UNCALLABLE["ndarray writers (not in this NumPy)"].append(name)
            continue
        a = np.array([3, 1, 2], dtype=np.int32)
        before = a.copy()
        call(a)
        assert a.shape != before.shape or not np.array_equal(a, before), name
        STATS["ndarray writers"]["checked"] += 1
        STATS["ndarray writers"]["agree"] += 1
    a = np.array([3, 1, 2], dtype=np.int32)
    a.byteswap()
    assert np.array_equal(a, [3, 1, 2])  # without inplace=True: a copy
    for name in dir(np.ndarray):
        if name.startswith("_") or name in calls or not callable(getattr(np.ndarray, name)):
            continue
        a = np.array([3.0, 1.0, 2.0])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(a, name)()
        except Exception:
            continue
        assert np.array_equal(a, [3.0, 1.0, 2.0]) and a.shape == (3,), name


def test_parameter_methods():
    """parameters() / named_parameters() yield the module's parameters themselves."""
    m = nn.Linear(2, 2)
    assert [p for p in m.parameters()] == [m.weight, m.bias]
    assert all(p is getattr(m, n) for n, p in m.named_parameters())
    assert ops.parameter_methods() == {"parameters", "named_parameters"}
    bn = nn.BatchNorm1d(2)
    assert any(b is bn.running_mean for b in bn.buffers())
    STATS["parameter methods"]["checked"] += 3
    STATS["parameter methods"]["agree"] += 3


def test_running_stats_writes():
    """The schema-less writes of [extra_writes] happen (values of running_mean change)."""
    import torch.nn.functional as F

    calls = {
        "torch.nn.functional.batch_norm": lambda x, rm, rv: F.batch_norm(x, rm, rv, training=True),
        "torch.batch_norm": lambda x, rm, rv: torch.batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5, False),
        "torch.native_batch_norm": lambda x, rm, rv: torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5),
        "torch.nn.functional.instance_norm": lambda x, rm, rv: F.instance_norm(x, rm, rv, use_input_stats=True),
        "torch.instance_norm": lambda x, rm, rv: torch.instance_norm(x, None, None, rm, rv, True, 0.1, 1e-5, False),
    }
    for name, call in calls.items():
        assert set(ops.lookup(name).writes) >= {"running_mean", "running_var"}, name
        x = torch.rand(4, 3, 2)
        rm, rv = torch.zeros(3), torch.ones(3)
        call(x, rm, rv)
        assert not torch.equal(rm, torch.zeros(3)) and not torch.equal(rv, torch.ones(3)), name
        STATS["schema-less writes"]["checked"] += 1
        STATS["schema-less writes"]["agree"] += 1


def test_zz_summary(capsys):
    lines = ["", "aliaslint op tables vs torch " + torch.__version__ + ":"]
    for k, c in STATS.items():
        lines.append(f"  {k}: " + ", ".join(f"{kk} {vv}" for kk, vv in c.items()))
    for k, v in UNCALLABLE.items():
        lines.append(f"  not checked ({k}): {len(v)}")
    for k, v in DISAGREE.items():
        if v:
            lines.append(f"  disagreements ({k}): {len(v)}")
    with capsys.disabled():
        print("\n".join(lines))
