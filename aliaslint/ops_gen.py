"""Generate ``aliaslint/data/ops.json`` from the torchgen files shipped in the installed torch.

Run ``python -m aliaslint.ops_gen`` (``--check`` compares instead of writing; ``-o PATH`` writes
elsewhere).  Inputs:

* ``torchgen/packaged/ATen/native/native_functions.yaml``: parsed with torchgen's own parser
  (``torchgen.gen.parse_native_yaml`` -> ``NativeFunction`` / ``FunctionSchema``).  Alias
  annotations give views (``Tensor(a) self -> Tensor(a)``), in-place / mutable arguments
  (``Tensor(a!)``) and ``out=`` overloads.
* ``torchgen/packaged/autograd/derivatives.yaml``: loaded with torchgen's
  ``load_derivatives``.  The tensors a backward formula reads (``saved_inputs`` /
  ``saved_outputs`` of type Tensor, Tensor?, Tensor[]) are what autograd saves.  Forward-mode
  formulas are ignored.
* ``aliaslint/data/ops_manual.toml``: hand facts for APIs no yaml describes.
* Probes on sample tensors (CPU, tiny) for two facts the yaml does not state: whether a view's
  result is non-contiguous for a contiguous input, and whether an op without alias annotations
  (a composite op) may nevertheless return its input or a view of it ("sometimes_alias").
  Saves of composite ops without a derivatives entry are derived from the ATen ops they
  decompose into (traced with a TorchDispatchMode) and the derivatives of those.

Only this module and the torch tests import torch; ``aliaslint.ops`` reads the JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import sys
import tomllib
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
OPS_JSON = DATA_DIR / "ops.json"
MANUAL_TOML = DATA_DIR / "ops_manual.toml"
FORMAT = 1

TORCH_NS = "torch"
TENSOR_NS = "torch.Tensor"
F_NS = "torch.nn.functional"
SUB_NS = {"linalg": "torch.linalg", "special": "torch.special", "fft": "torch.fft"}


# ----------------------------------------------------------------------------------------------
# torchgen inputs
# ----------------------------------------------------------------------------------------------


def yaml_paths() -> dict[str, Path]:
    import torchgen

    base = Path(torchgen.__file__).resolve().parent / "packaged"
    return {
        "native_functions": base / "ATen" / "native" / "native_functions.yaml",
        "tags": base / "ATen" / "native" / "tags.yaml",
        "derivatives": base / "autograd" / "derivatives.yaml",
    }


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_torchgen() -> tuple[list[Any], dict[Any, Any]]:
    """Native functions and differentiability infos (keyed by FunctionSchema)."""
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    p = yaml_paths()
    funcs = parse_native_yaml(str(p["native_functions"]), str(p["tags"])).native_functions
    infos, _ = load_derivatives(str(p["derivatives"]), str(p["native_functions"]), str(p["tags"]))
    return list(funcs), infos


# ----------------------------------------------------------------------------------------------
# per-overload facts from the schema
# ----------------------------------------------------------------------------------------------


def _is_tensor_type(t: Any) -> bool:
    from torchgen.model import BaseTy, BaseType, ListType, OptionalType

    if isinstance(t, OptionalType):
        return _is_tensor_type(t.elem)
    if isinstance(t, ListType):
        return _is_tensor_type(t.elem)
    return isinstance(t, BaseType) and t.name == BaseTy.Tensor


def _is_tensor_list(t: Any) -> bool:
    from torchgen.model import ListType, OptionalType

    if isinstance(t, OptionalType):
        return _is_tensor_list(t.elem)
    return isinstance(t, ListType) and _is_tensor_type(t.elem)


def _returns_kind(schema: Any) -> str:
    rets = schema.returns
    if not rets:
        return "none"
    if all(_is_tensor_type(r.type) for r in rets):
        if len(rets) == 1 and not _is_tensor_list(rets[0].type):
            return "tensor"
        return "tensors"
    return "other"


@dataclass
class Overload:
    """Facts of one ATen overload, in schema names (``self``, ``other``, ...)."""

    aten: str  # "add.Tensor"
    base: str  # "add"
    kind: str
    params: list[str]
    kwonly: list[str]
    aliases: str | None
    writes: list[str]
    returns: str
    is_out: bool
    composite_implicit: bool
    variants: set[str]
    python_module: str | None
    saves: list[str] | None = None
    saves_source: str = ""
    schema: Any = field(default=None, repr=False)
    func: Any = field(default=None, repr=False)


def overload_facts(f: Any) -> Overload:
    from torchgen.model import SchemaKind

    s = f.func
    args = s.arguments
    flat = list(args.flat_all)
    out_names = [a.name for a in args.out]
    sk = s.kind()
    writes = [
        a.name for a in flat if a.annotation is not None and a.annotation.is_write and a.name not in out_names
    ]
    aliases = None
    is_view = False
    for r in s.returns:
        ann = r.annotation
        if ann is None or ann.is_write:
            continue
        for a in flat:
            if a.annotation is not None and set(a.annotation.alias_set) & set(ann.alias_set):
                aliases = a.name
                is_view = True
                break
        if is_view:
            break
    if sk == SchemaKind.out:
        kind = "out"
    elif sk == SchemaKind.inplace:
        kind = "inplace"
        aliases = "self"
    elif is_view and not writes:
        kind = "view"
    elif writes and any(r.annotation is not None and r.annotation.is_write for r in s.returns):
        # mutable op returning (an alias of) a written argument: in-place in effect
        kind = "inplace"
        aliases = writes[0]
    else:
        kind = "functional"
    return Overload(
        aten=str(s.name),
        base=str(s.name.name),
        kind=kind,
        params=[a.name for a in args.flat_positional],
        kwonly=[a.name for a in args.flat_kwarg_only if a.name not in out_names],
        aliases=aliases if kind in ("view", "inplace") else None,
        writes=(writes + out_names) if kind == "out" else writes,
        returns=_returns_kind(s),
        is_out=sk == SchemaKind.out,
        composite_implicit=bool(f.has_composite_implicit_autograd_kernel),
        variants={v.name for v in f.variants},
        python_module=f.python_module,
        schema=s,
        func=f,
    )


# ----------------------------------------------------------------------------------------------
# saves from derivatives.yaml
# ----------------------------------------------------------------------------------------------


def _saved_tensor_names(info: Any, schema: Any, inplace: bool) -> list[str]:
    """Tensors a DifferentiabilityInfo's backward reads, as argument names and result names."""
    from torchgen.api.types import BaseCType, OptionalCType, tensorT

    arg_names = {a.name for a in schema.arguments.flat_all}
    ret_names = [r.name or ("result" if len(schema.returns) == 1 else f"result{i}") for i, r in enumerate(schema.returns)]

    def is_tensorish(t: Any) -> bool:
        text = str(t)
        return t == BaseCType(tensorT) or t == OptionalCType(BaseCType(tensorT)) or "Tensor" in text

    out: set[str] = set()
    for sa in info.all_saved_inputs:
        name = sa.nctype.name
        if isinstance(name, str) and name in arg_names and sa.expr == name and is_tensorish(sa.nctype.type):
            if inplace and name == "self":
                # autograd saves a clone of the original self: nothing the user holds
                continue
            out.add(name)
    for sa in info.all_saved_outputs:
        name = sa.nctype.name
        if not isinstance(name, str) or not is_tensorish(sa.nctype.type):
            continue
        if name == "result" or name in ret_names:
            idx = ret_names.index(name) if name in ret_names else 0
            out.add("result" if idx == 0 else f"result{idx}")
        elif name.startswith("result") and name[6:].isdigit():
            idx = int(name[6:])
            out.add("result" if idx == 0 else f"result{idx}")
    return sorted(out)


def attach_saves(ovs: list[Overload], infos: dict[Any, Any]) -> None:
    """Per-overload saves: the overload's own derivatives entry, else its signature twin's."""
    by_schema: dict[str, Any] = {}
    by_signature: dict[Any, Any] = {}
    for schema, per_key in infos.items():
        info = per_key.get("Default") or next(iter(per_key.values()))
        by_schema[str(schema)] = info
        by_signature.setdefault(schema.signature(), info)
    for ov in ovs:
        if ov.is_out:
            ov.saves = []
            ov.saves_source = "out= overloads do not support autograd"
            continue
        info = by_schema.get(str(ov.schema))
        src = "derivatives.yaml"
        if info is None:
            info = by_signature.get(ov.schema.signature())
            src = "derivatives.yaml (signature twin)"
        if info is not None:
            ov.saves = _saved_tensor_names(info, ov.schema, ov.kind == "inplace")
            ov.saves_source = src
        elif ov.composite_implicit:
            ov.saves = None
            ov.saves_source = "composite"
        elif not any(_is_tensor_type(a.type) for a in ov.schema.arguments.flat_all):
            ov.saves = []
            ov.saves_source = "no tensor inputs"
        else:
            ov.saves = []
            ov.saves_source = "no derivative formula: autograd saves nothing"


# ----------------------------------------------------------------------------------------------
# sample arguments (also used by tests/test_ops_torch.py)
# ----------------------------------------------------------------------------------------------

SHAPE = (4, 3, 5)


def sample_worlds(torch: Any) -> list[dict[str, Any]]:
    """Tensor worlds tried in order: shape and dtype of every tensor argument."""
    return [
        {"shape": SHAPE, "dtype": torch.float32},
        {"shape": (3, 3), "dtype": torch.float32},
        {"shape": (6,), "dtype": torch.float32},
        {"shape": (1, 3, 5), "dtype": torch.float32},
        {"shape": (2, 3, 4, 5), "dtype": torch.float32},
        {"shape": SHAPE, "dtype": torch.complex64},
        {"shape": SHAPE, "dtype": torch.int64},
        {"shape": SHAPE, "dtype": torch.bool},
        # uniform sizes: weight and input agree for conv3d / conv_transpose*
        {"shape": (2, 2, 2), "dtype": torch.float32},
        {"shape": (2, 2, 2, 2), "dtype": torch.float32},
        {"shape": (2, 2, 2, 2, 2), "dtype": torch.float32},
    ]


def _int_candidates(name: str, all_names: set[str], ndim: int) -> list[Any]:
    if name in ("dim0", "axis0", "source"):
        return [0]
    if name == "dim1":
        return [0] if "dim2" in all_names else [1]
    if name in ("dim2", "axis1", "destination"):
        return [1]
    if name in ("dim", "dimension", "start_dim"):
        return [0, 1]
    if name == "end_dim":
        return [1, -1]
    if name in ("size", "length", "step", "chunks", "sections", "split_size", "repeats", "n", "k"):
        return [2, 1]
    if name in ("index", "start", "offset", "storage_offset"):
        return [1, 0]
    return [1, 0, 2]


def _intlist_candidates(name: str, x_shape: tuple[int, ...], names: set[str] = frozenset()) -> list[Any]:
    nd = len(x_shape)
    if name == "size" and "stride" in names:
        return [[2, 2], [2]]
    if "shape" in name and name != "shape":
        return [[x_shape[-1]], list(x_shape[1:])]
    if name in ("size", "shape"):
        return [[-1], [2, *x_shape], list(x_shape), [x_shape[0], -1]]
    if name in ("dims", "dim", "perm"):
        return [list(range(nd))[::-1], [0], [1, 0]]
    if name == "stride":
        # a transposed layout of the first two dims of a (2, 2) window
        return [[1, 2], [1]]
    if name in ("split_sizes", "split_size"):
        return [[1, x_shape[0] - 1], [1, 1]]
    if name in ("indices", "tensor_indices_or_sections"):
        return [[1], [1, 2]]
    if name == "source":
        return [[0], [0, 1]]
    if name == "destination":
        return [[1], [1, 0]]
    return [[1], [0], [2, 1]]


def _scalar_candidates(name: str) -> list[Any]:
    return [2, 0.5, 1]


def _arg_candidates(torch: Any, a: Any, schema: Any, world: dict[str, Any], tensors: list[Any], x: Any) -> list[Any]:
    from torchgen.model import BaseTy, BaseType, ListType, OptionalType

    t = a.type
    names = {b.name for b in schema.arguments.flat_all}
    if isinstance(t, OptionalType):
        if _is_tensor_type(t.elem):
            return [None]
        return [None]
    if isinstance(t, ListType):
        if _is_tensor_type(t.elem):
            return [[x, x.clone()]]
        if isinstance(t.elem, BaseType) and t.elem.name in (BaseTy.int, BaseTy.SymInt):
            return _intlist_candidates(a.name, tuple(x.shape), names)
        if isinstance(t.elem, BaseType) and t.elem.name == BaseTy.bool:
            return [[True, True, True]]
        if isinstance(t.elem, BaseType) and t.elem.name == BaseTy.float:
            return [[1.0]]
        return []
    if isinstance(t, BaseType):
        n = t.name
        if n == BaseTy.Tensor:
            if not tensors:
                return [x]
            if a.name in ("index", "indices", "target"):
                idx = torch.randint(0, 2, world["shape"], generator=torch.Generator().manual_seed(0))
                return [idx, torch.tensor([0, 1]), torch.tensor(1)]
            return [_make_tensor(torch, world, a.name), torch.tensor(1)]
        if n in (BaseTy.int, BaseTy.SymInt):
            return _int_candidates(a.name, names, x.dim())
        if n == BaseTy.bool:
            return [False, True]
        if n == BaseTy.float:
            return [0.5]
        if n == BaseTy.Scalar:
            return _scalar_candidates(a.name)
        if n == BaseTy.ScalarType:
            return [world["dtype"], torch.float64]
        if n == BaseTy.str:
            return ["mean", "none"]
        if n == BaseTy.Device:
            return ["cpu"]
        if n == BaseTy.MemoryFormat:
            return [torch.contiguous_format]
        if n == BaseTy.Layout:
            return [torch.strided]
    return []


_TEMPLATES: dict[Any, Any] = {}


def _make_tensor(torch: Any, world: dict[str, Any], name: str = "") -> Any:
    """A fresh contiguous sample tensor (same values every time)."""
    key = (world["shape"], world["dtype"])
    t = _TEMPLATES.get(key)
    if t is None:
        t = _TEMPLATES[key] = _new_tensor(torch, world)
    return t.clone()


def _new_tensor(torch: Any, world: dict[str, Any]) -> Any:
    shape, dtype = world["shape"], world["dtype"]
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return torch.rand(shape, generator=g, dtype=dtype) + 0.5
    return torch.randint(0, 2, shape, generator=g, dtype=dtype)


#: ATen ops that crash the process (segfault) on arbitrary sample arguments instead of raising;
#: never called with samples (by the generator or the tests).
CRASHERS = {
    "native_batch_norm": "segfaults with running stats None and training=False",
}


def callable_by_sample(schema: Any) -> bool:
    """Sample calls are built only for schemas without Tensor[] arguments: the RNN kernels
    (lstm, gru, rnn_*) take flat weight lists and corrupt memory when given arbitrary lists."""
    if str(schema.name.name.base) in CRASHERS:
        return False
    return not any(_is_tensor_list(a.type) for a in schema.arguments.flat_all)


def sample_calls(torch: Any, schema: Any, max_tries: int = 3):
    """Yield (world, positional args, kwargs) candidates for an overload's required arguments.

    The first tensor argument is a fresh contiguous tensor of the world's shape and dtype.
    Arguments with defaults are left to their defaults.
    """
    if not callable_by_sample(schema):
        return
    args = schema.arguments
    out_names = {a.name for a in args.out}
    required_pos = [a for a in args.flat_positional if a.default is None]
    required_kw = [a for a in args.flat_kwarg_only if a.default is None and a.name not in out_names]
    for world in sample_worlds(torch):
        for k in range(max_tries):
            x = _make_tensor(torch, world)  # fresh: a failed in-place call may leave x broken
            tensors: list[Any] = []
            pos: list[Any] = []
            kw: dict[str, Any] = {}
            ok = True
            for a in required_pos + required_kw:
                cands = _arg_candidates(torch, a, schema, world, tensors, x)
                if not cands:
                    ok = False
                    break
                v = cands[min(k, len(cands) - 1)]
                if _is_tensor_type(a.type) and not _is_tensor_list(a.type) and v is not None:
                    tensors.append(v)
                if a in required_pos:
                    pos.append(v)
                else:
                    kw[a.name] = v
            if not ok:
                return
            yield world, x, pos, kw


def call_aten(torch: Any, aten: str, pos: list[Any], kw: dict[str, Any]) -> Any:
    base, _, ovl = aten.partition(".")
    packet = getattr(torch.ops.aten, base)
    return getattr(packet, ovl or "default")(*pos, **kw)


def _tensors_of(v: Any) -> list[Any]:
    import torch

    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    return []


def shares_storage(a: Any, b: Any) -> bool:
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.untyped_storage().nbytes() > 0
    except Exception:
        return False


def probe_call(torch: Any, fn: Any, pos_variants: list[tuple[Any, list[Any], dict[str, Any]]]):
    """Call fn on the first variant that works; return (x, result) or None."""
    for x, pos, kw in pos_variants:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fn(*pos, **kw)
            return x, r
        except Exception:
            continue
    return None


def probe_view_noncontiguous(torch: Any, ov: Overload) -> bool | None:
    """Is the view's result non-contiguous when applied to a contiguous sample with generic args?"""
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = call_aten(torch, ov.aten, pos, kw)
        except Exception:
            continue
        outs = [t for t in _tensors_of(r) if t.numel() > 1]
        if not outs:
            continue
        return any(not t.is_contiguous() for t in outs)
    return None


def probe_version_bump(torch: Any, ov: Overload) -> bool | None:
    """Does the in-place op bump the written tensor's version counter (what autograd checks)?

    False for requires_grad_ / detach_ (metadata only); None when not callable on samples."""
    seen = None
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        if seen is not None and world is not seen[0]:
            break  # every argument try of the first world that works
        v0 = x._version
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call_aten(torch, ov.aten, pos, kw)
        except Exception:
            continue
        seen = (world, (seen[1] if seen else False) or x._version > v0)
    return None if seen is None else seen[1]


def _base_name(t: Any) -> str:
    from torchgen.model import BaseType, ListType, OptionalType

    while isinstance(t, (OptionalType, ListType)):
        t = t.elem
    return t.name.name if isinstance(t, BaseType) else ""


def _input_variants(torch: Any, x: Any) -> list[Any]:
    """Contiguous sample, a transposed (non-contiguous) view, and conj / neg-bit views."""
    out = [x]
    if x.dim() >= 2:
        out.append(x.transpose(0, 1))
    elif x.shape[0] > 1:
        out.append(x[::2])
    if x.is_complex():
        out.append(x.conj())
    if x.is_floating_point() or x.is_complex():
        out.append(torch._neg_view(x))
    return out


def probe_alias(torch: Any, fn: Any, schema: Any, all_worlds: bool = False) -> tuple[bool, bool] | None:
    """(alias seen, copy seen) over sample calls: contiguous / transposed / conj / neg-bit input,
    same / other dtype.  Only the first world that works is used unless all_worlds (then every
    world is tried until both outcomes are seen: resolve_conj copies only complex inputs)."""
    seen_alias = seen_copy = False
    called = False
    called_world = None
    for world, x, pos, kw in sample_calls(torch, schema):
        if called_world is not None and world is not called_world and not all_worlds:
            break  # the first world that works decides; its other argument tries still count
        for xin in _input_variants(torch, x):
            p = [xin if v is x else v for v in pos]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = fn(*p, **kw)
            except Exception:
                continue
            called = True
            called_world = world
            for t in _tensors_of(r):
                if any(t is i or shares_storage(t, i) for i in [xin, *[v for v in p if hasattr(v, "untyped_storage")]]):
                    seen_alias = True
                else:
                    seen_copy = True
        if called and seen_alias and seen_copy:
            break
    return (seen_alias, seen_copy) if called else None


# ----------------------------------------------------------------------------------------------
# saves of composite ops: trace the decomposition
# ----------------------------------------------------------------------------------------------


def decomposition_saves(torch: Any, ov: Overload, by_aten: dict[str, Overload]) -> list[str] | None:
    """Saves of a CompositeImplicitAutograd overload from the ATen ops it runs.

    The op is run on sample tensors (requiring grad) under a TorchDispatchMode; each inner op's
    saves (from derivatives.yaml) are mapped back to the composite's inputs / result by storage.
    Returns None when the decomposition cannot be traced or reaches an op with unknown saves.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Rec(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, list[Any], Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            r = func(*args, **kwargs)
            self.calls.append((func, list(args), dict(kwargs), r))
            return r

    if not any(_is_tensor_type(a.type) for a in ov.schema.arguments.flat_all):
        return []
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        if not (world["dtype"].is_floating_point):
            continue
        ins: dict[str, Any] = {}
        names = [a.name for a in ov.schema.arguments.flat_positional if a.default is None] + list(kw)
        vals = list(pos) + list(kw.values())
        grad_pos = []
        for nm, v in zip(names, vals):
            if hasattr(v, "requires_grad") and v.is_floating_point():
                v2 = v.detach().clone().requires_grad_(True)
                if nm in ov.writes or (ov.kind == "inplace" and nm == "self"):
                    v2 = v2 * 1  # a non-leaf, so it may be written in place
                ins[nm] = v2
                grad_pos.append(v2)
            else:
                grad_pos.append(v)
        if not ins:
            return []
        rec = Rec()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with rec:
                    r = call_aten(torch, ov.aten, grad_pos[: len(pos)], dict(zip(list(kw), grad_pos[len(pos):])))
        except Exception:
            continue
        results = _tensors_of(r)
        saves: set[str] = set()
        for func, args, kwargs, res in rec.calls:
            inner = by_aten.get(func._schema.name.split("::")[-1] + ("." + func._overloadname if func._overloadname != "default" else ""))
            if inner is None:
                continue
            if inner.saves is None:
                return None
            if not inner.saves:
                continue
            bound = _bind(func._schema, args, kwargs, res)
            for s in inner.saves:
                for t in _tensors_of(bound.get(s)):
                    for nm, v in ins.items():
                        if shares_storage(t, v):
                            saves.add(nm)
                    for i, rt in enumerate(results):
                        if shares_storage(t, rt):
                            saves.add("result" if i == 0 else f"result{i}")
        if ov.kind == "inplace":
            # the written self *is* the result (in-place ops save the clone of the original)
            saves = {("result" if s == "self" else s) for s in saves}
        return sorted(saves)
    return None


def _bind(schema: Any, args: list[Any], kwargs: dict[str, Any], res: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a, v in zip(schema.arguments, args):
        out[a.name] = v
    out.update(kwargs)
    rs = res if isinstance(res, (tuple, list)) and len(schema.returns) > 1 else [res]
    for i, v in enumerate(rs):
        out["result" if i == 0 else f"result{i}"] = v
    return out


# ----------------------------------------------------------------------------------------------
# user-visible names
# ----------------------------------------------------------------------------------------------


def _rename(names: list[str] | None, self_name: str | None) -> list[str] | None:
    if names is None:
        return None
    out = []
    for n in names:
        if n == "self":
            if self_name is None:
                continue
            n = self_name
        out.append(n)
    return out


def _merge_params(lists: list[list[str]]) -> list[str]:
    """Positions on which every overload that has the position agrees, up to the first conflict."""
    out: list[str] = []
    for i in range(max((len(p) for p in lists), default=0)):
        names = {p[i] for p in lists if len(p) > i}
        if len(names) != 1:
            break
        out.append(names.pop())
    return out


KIND_ORDER = ["view", "inplace", "sometimes_alias", "functional"]


def merge_entry(name: str, ovs: list[Overload], self_name: str | None, facts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One user-visible name from its overloads.  self_name: "input" (function), None (method)."""
    main = [o for o in ovs if not o.is_out] or ovs
    kinds = {facts[o.aten]["kind"] for o in main}
    notes = []
    if len(kinds) == 1:
        kind = kinds.pop()
    elif kinds <= {"view", "sometimes_alias"}:
        kind = "sometimes_alias"
    elif "inplace" in kinds:
        kind = "inplace"
        notes.append("overloads disagree: " + ", ".join(sorted(kinds)))
    else:
        kind = "sometimes_alias" if (kinds & {"view", "sometimes_alias"}) else "functional"
        notes.append("overloads disagree: " + ", ".join(sorted(kinds)))
    aliases = {facts[o.aten]["aliases"] for o in main if facts[o.aten]["aliases"]}
    writes = sorted({w for o in main for w in o.writes})
    rets = {o.returns for o in main}
    saves = [o.saves for o in main if not o.is_out]
    known = [set(s) for s in saves if s is not None]
    if saves and all(s is not None for s in saves):
        must = set.intersection(*known) if known else set()
        may = set.union(*known) if known else set()
        smust, smay = sorted(must), sorted(may)
    else:
        smust = None
        smay = sorted(set.union(*known)) if known else None
    non_contig = [facts[o.aten].get("noncontiguous") for o in main if facts[o.aten]["kind"] == "view"]
    entry: dict[str, Any] = {
        "kind": kind,
        "params": _merge_params([_rename(o.params, self_name) for o in main]),
        "aliases": (_rename([aliases.pop()], self_name) or [None])[0] if len(aliases) == 1 else None,
        "writes": _rename(writes, self_name if self_name else "self"),
        "twin": None,
        "noncontiguous": bool(non_contig) and all(v is True for v in non_contig),
        "returns": rets.pop() if len(rets) == 1 else "other",
        "has_out": any(o.is_out for o in ovs),
        "saves_must": _rename(smust, self_name if self_name else "self"),
        "saves_may": _rename(smay, self_name if self_name else "self"),
        "overloads": {
            (o.aten.partition(".")[2] or "default"): {
                "kind": facts[o.aten]["kind"],
                "params": _rename(o.params, self_name),
                "saves": _rename(o.saves, self_name if self_name else "self"),
                "returns": o.returns,
                **({"aliases": _rename([facts[o.aten]["aliases"]], self_name if self_name else "self")[0]} if facts[o.aten]["aliases"] else {}),
                **({"writes": _rename(o.writes, self_name if self_name else "self")} if o.writes else {}),
                **({"bumps_version": facts[o.aten]["bumps_version"]} if facts[o.aten].get("bumps_version") is not None else {}),
                **({"metadata_only": True} if "inplace_view" in o.func.tags else {}),
            }
            for o in ovs
        },
    }
    if kind == "inplace":
        bumps = [facts[o.aten].get("bumps_version") for o in main if facts[o.aten]["kind"] == "inplace"]
        entry["bumps_version"] = (all(bumps) if all(b is not None for b in bumps) else None) if bumps else None
        if bumps and all(b is False for b in bumps):
            entry["bumps_version"] = False
        if all("inplace_view" in o.func.tags for o in main if facts[o.aten]["kind"] == "inplace"):
            entry["metadata_only"] = True
    if self_name is None and entry["aliases"] is None and len(aliases) == 0 and kind in ("view", "inplace", "sometimes_alias"):
        entry["aliases"] = "self"
    if entry["aliases"] is None and kind in ("view", "inplace", "sometimes_alias") and main and main[0].params:
        first = _rename([main[0].params[0]], self_name if self_name else "self")
        entry["aliases"] = first[0] if first else "self"
    if kind == "inplace" and not entry["writes"]:
        entry["writes"] = [entry["aliases"]]
    if notes:
        entry["note"] = "; ".join(notes)
    return entry


def generate(probe: bool = True) -> dict[str, Any]:
    """Build the whole table (a JSON-able dict)."""
    import torch
    import torch.nn.functional as F

    paths = yaml_paths()
    funcs, infos = load_torchgen()
    ovs = [overload_facts(f) for f in funcs]
    attach_saves(ovs, infos)
    by_aten = {o.aten: o for o in ovs}
    by_base: dict[str, list[Overload]] = defaultdict(list)
    for o in ovs:
        by_base[str(o.schema.name.name)].append(o)

    manual = tomllib.loads(MANUAL_TOML.read_text())
    visible = _visible_bases(torch, F, by_base, manual)

    # per-overload kind refinement: probes (only ops reachable from a user-visible name)
    facts: dict[str, dict[str, Any]] = {o.aten: {"kind": o.kind, "aliases": o.aliases} for o in ovs}
    probe_notes: dict[str, str] = {}
    if probe:
        torch.manual_seed(0)
        for o in ovs:
            if o.base not in visible or "backward" in o.base:
                continue
            if o.kind == "view" and o.composite_implicit:
                # alias annotation on a composite op means "may alias" (reshape, contiguous, to,
                # flatten ...): a view only if no sample call returns a copy.
                res = probe_alias(
                    torch, lambda *a, _n=o.aten, **k: call_aten(torch, _n, list(a), k), o.schema, all_worlds=True
                )
                device_arg = any(_base_name(a.type) == "Device" for a in o.schema.arguments.flat_all)
                if res is None or res[1] or device_arg:
                    facts[o.aten]["kind"] = "sometimes_alias"
                    probe_notes[o.aten] = (
                        "composite op with an alias annotation: "
                        + ("not callable on samples, treated as may-alias" if res is None
                           else "a copy was observed for some samples" if res[1]
                           else "copies when the device differs (not observable on CPU)")
                    )
                else:
                    facts[o.aten]["noncontiguous"] = probe_view_noncontiguous(torch, o)
            elif o.kind == "view":
                facts[o.aten]["noncontiguous"] = probe_view_noncontiguous(torch, o)
            elif o.kind == "inplace" and not o.base.startswith("_") and o.base not in CRASHERS:
                facts[o.aten]["bumps_version"] = probe_version_bump(torch, o)
            elif (
                o.kind == "functional"
                and o.returns in ("tensor", "tensors")
                and not o.base.startswith("_")
                and o.base not in CRASHERS
                and o.schema.arguments.flat_positional
                and _is_tensor_type(o.schema.arguments.flat_positional[0].type)
                and not _is_tensor_list(o.schema.arguments.flat_positional[0].type)
            ):
                res = probe_alias(torch, lambda *a, _n=o.aten, **k: call_aten(torch, _n, list(a), k), o.schema)
                if res and res[0]:
                    facts[o.aten]["kind"] = "sometimes_alias"
                    facts[o.aten]["aliases"] = o.params[0]
                    probe_notes[o.aten] = "returns its input or a view of it for some arguments" + (
                        ", a copy for others" if res[1] else " (a copy was not observed on CPU)"
                    )
        # composite saves
        for o in ovs:
            if o.saves is None and o.composite_implicit and not o.is_out and o.base in visible:
                o.saves = decomposition_saves(torch, o, by_aten)
                if o.saves is not None:
                    o.saves_source = "decomposition"

    entries: dict[str, dict[str, Any]] = {}

    def public_names(mod: Any) -> set[str]:
        return set(dir(mod))

    torch_names = public_names(torch)
    tensor_names = public_names(torch.Tensor)
    f_names = public_names(F)

    for base, group in sorted(by_base.items()):
        fn_ovs = [o for o in group if "function" in o.variants]
        m_ovs = [o for o in group if "method" in o.variants]
        pm = group[0].python_module
        if pm in SUB_NS:
            ns = SUB_NS[pm]
            short = base[len(pm) + 1 :] if base.startswith(pm + "_") else base
            mod = eval(ns, {"torch": torch})
            if fn_ovs and hasattr(mod, short):
                entries[f"{ns}.{short}"] = merge_entry(short, fn_ovs, "input", facts)
            continue
        if pm == "nn":
            if fn_ovs and base in f_names and callable(getattr(F, base)) and base not in manual.get("functional_alias", {}):
                entries[f"{F_NS}.{base}"] = merge_entry(base, fn_ovs, "input", facts)
            elif fn_ovs and hasattr(torch._C._nn, base) and not base.startswith("_") and base in visible:
                # reached only through a wrapper (F.silu(inplace=True) runs torch._C._nn.silu_)
                entries[f"torch._C._nn.{base}"] = merge_entry(base, fn_ovs, "input", facts)
            continue
        if pm is None and fn_ovs and base in torch_names:
            entries[f"{TORCH_NS}.{base}"] = merge_entry(base, fn_ovs, "input", facts)
        if pm is None and m_ovs and base in tensor_names:
            entries[f"{TENSOR_NS}.{base}"] = merge_entry(base, m_ovs, None, facts)

    # twins
    for qn, e in entries.items():
        ns, _, short = qn.rpartition(".")
        if e["kind"] == "inplace" and short.endswith("_") and f"{ns}.{short[:-1]}" in entries:
            e["twin"] = short[:-1]
        elif not short.endswith("_") and f"{ns}.{short}_" in entries and entries[f"{ns}.{short}_"]["kind"] == "inplace":
            e["twin"] = short + "_"

    # torch.nn.functional: python wrappers and builtins
    fmap = manual.get("functional_alias", {})
    for fname in sorted(f_names):
        if fname.startswith("_") or not callable(getattr(F, fname)):
            continue
        qn = f"{F_NS}.{fname}"
        target = fmap.get(fname, fname)
        src = entries.get(qn) or entries.get(f"{TORCH_NS}.{target}") or entries.get(f"{F_NS}.{target}")
        if src is None and target in by_base:
            src = merge_entry(target, [o for o in by_base[target] if "function" in o.variants] or by_base[target], "input", facts)
        fobj = getattr(F, fname)
        try:
            sig = inspect.signature(fobj)
            params = [
                p.name
                for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            if not params and any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
                params = None  # boolean_dispatch wrappers (max_pool2d ...): keep the ATen names
        except (TypeError, ValueError):
            params = None
        if src is None:
            if params is None or not isinstance(fobj, type(lambda: 0)):
                continue
            e = {"kind": "unknown", "params": params, "aliases": None, "writes": [], "twin": None,
                 "noncontiguous": False, "returns": "other", "has_out": False,
                 "saves_must": None, "saves_may": None, "overloads": {}}
        else:
            e = json.loads(json.dumps(src))
            if target != fname or qn not in entries:
                e["op"] = target
            if params is not None:
                e["params"] = params
                if "inplace" in params:
                    twin = target + "_"
                    if twin in by_base and any(o.kind == "inplace" for o in by_base[twin]):
                        e["inplace_kwarg"] = "inplace"
                        e["twin"] = twin
                _rename_functional_args(e, params, manual.get("functional_args", {}).get(fname, {}))
        entries[qn] = e

    # dunders and properties
    for d, target in sorted(manual.get("dunder", {}).items()):
        if d not in tensor_names:
            continue
        src = entries.get(f"{TENSOR_NS}.{target}")
        if src is None:
            continue
        e = json.loads(json.dumps(src))
        e["op"] = target
        entries[f"{TENSOR_NS}.{d}"] = e
    for d, target in sorted(manual.get("dunder_reflected", {}).items()):
        # `x.__rpow__(y)` is `y ** x`: the receiver is the right operand, so argument-level
        # facts of the ATen op do not apply by name; kind and returns do, saves are unknown.
        if d not in tensor_names or f"{TENSOR_NS}.{target}" not in entries:
            continue
        e = json.loads(json.dumps(entries[f"{TENSOR_NS}.{target}"]))
        e.update(op=target, saves_must=None, saves_may=None, overloads={}, twin=None,
                 note="reflected operator (receiver is the right operand); saves not derived")
        entries[f"{TENSOR_NS}.{d}"] = e
    for p, target in sorted(manual.get("property", {}).items()):
        if p not in tensor_names:
            continue
        if target not in by_base:
            continue
        src = merge_entry(target, [o for o in by_base[target] if not o.is_out], None, facts)
        e = json.loads(json.dumps(src))
        e["op"] = target
        e["params"] = []
        e["property"] = True
        entries[f"{TENSOR_NS}.{p}"] = e

    # Tensor methods implemented in python_variable_methods.cpp with no yaml entry: conversions
    # such as float(), half(), bool() -- called without arguments on a tensor of every dtype.
    for mname in sorted(tensor_names):
        qn = f"{TENSOR_NS}.{mname}"
        if qn in entries or mname.startswith("_") or mname.endswith("_") or qn in manual.get("op", {}):
            continue
        attr = inspect.getattr_static(torch.Tensor, mname)
        if type(attr).__name__ != "method_descriptor" or not probe:
            continue
        res = _probe_conversion(torch, mname)
        if res is None:
            continue
        alias, copy = res
        e = {"kind": "sometimes_alias" if alias else "functional", "params": [], "aliases": "self" if alias else None,
             "writes": [], "twin": None, "noncontiguous": False, "returns": "tensor", "has_out": False,
             "saves_must": None, "saves_may": None, "overloads": {}}
        if alias:
            e["note"] = "conversion: returns self when nothing changes" + (", a copy otherwise" if copy else "")
        entries[qn] = e

    for qn, ws in manual.get("extra_writes", {}).items():
        e = entries[qn]
        e["writes"] = sorted(set(e.get("writes") or ()) | set(ws))
        e["note"] = "; ".join(filter(None, [e.get("note"), "updates " + ", ".join(ws) + " in place in training mode (not annotated in the schema)"]))

    # hand entries
    for qn, m in manual.get("op", {}).items():
        e = {"kind": m["kind"], "params": m.get("params", []), "aliases": m.get("aliases"),
             "writes": m.get("writes", []), "twin": m.get("twin"), "noncontiguous": m.get("noncontiguous", False),
             "returns": m.get("returns", "other"), "has_out": False,
             "saves_must": m.get("saves_must"), "saves_may": m.get("saves_may"), "overloads": {}, "manual": True}
        for k in ("note", "retain_kwarg", "grad_enabled", "mode_arg", "copy_kwarg", "bumps_version"):
            if k in m:
                e[k] = m[k]
        entries[qn] = e

    for qn, e in entries.items():
        for oname, od in e.get("overloads", {}).items():
            key = e.get("op", qn.rpartition(".")[2]) + ("." + oname if oname != "default" else "")
            if key in probe_notes:
                od["probe"] = probe_notes[key]

    # modules
    modules: dict[str, dict[str, Any]] = {}
    for qn, m in manual.get("module", {}).items():
        me: dict[str, Any] = {
            "op": m.get("op"),
            "inplace_kwarg": m.get("inplace_kwarg"),
            "inplace_op": m.get("inplace_op"),
            "container": bool(m.get("container", False)),
            "opaque": bool(m.get("opaque", False)),
            "identity": bool(m.get("identity", False)),
            "saves": m.get("saves"),
            "writes": m.get("writes", []),
            "returns": m.get("returns", "tensor" if (m.get("op") or m.get("identity")) else "other"),
        }
        me["has_params"] = None if me["container"] or me["identity"] else bool(me["opaque"])
        if me["op"]:
            group = [o for o in by_base.get(me["op"], []) if not o.is_out]
            # parameters: the op takes a weight (Linear, Conv, norms, Embedding)
            me["has_params"] = any("weight" in {a.name for a in o.schema.arguments.flat_all} for o in group)
            if not group:
                raise SystemExit(f"ops_manual.toml: {qn}: unknown op {me['op']}")
            if me["inplace_kwarg"] and not me["inplace_op"]:
                me["inplace_op"] = me["op"] + "_"
            if me["inplace_op"] and me["inplace_op"] not in by_base:
                raise SystemExit(f"ops_manual.toml: {qn}: unknown op {me['inplace_op']}")
            if me["saves"] is None:
                # the op's saves in module terms: the argument forward's input goes to is
                # "input" (default: the op's first tensor argument), parameters keep their
                # names, auxiliary outputs (mean / rstd: result1 ...) and buffers are dropped.
                first = group[0]
                input_arg = m.get("input_arg") or next(
                    a.name for a in first.schema.arguments.flat_positional if _is_tensor_type(a.type)
                )
                known = [set(o.saves) for o in group if o.saves is not None]
                saves = set.intersection(*known) if known and len(known) == len(group) else None
                if saves is not None:
                    keep = {"weight", "bias", "result"}
                    me["saves"] = sorted({"input" if s == input_arg else s for s in saves} & (keep | {"input"}))
        if "note" in m:
            me["note"] = m["note"]
        modules[qn] = me

    return {
        "meta": {
            "format": FORMAT,
            "generator": "python -m aliaslint.ops_gen",
            "torch": torch.__version__,
            "native_functions.yaml sha256": sha256(paths["native_functions"]),
            "derivatives.yaml sha256": sha256(paths["derivatives"]),
            "ops_manual.toml sha256": sha256(MANUAL_TOML),
            "probed": probe,
        },
        "ops": dict(sorted(entries.items())),
        "modules": dict(sorted(modules.items())),
    }


def _rename_functional_args(e: dict[str, Any], params: list[str], mapping: dict[str, str]) -> None:
    """Map ATen argument names to the Python wrapper's parameter names.

    ``mapping`` comes from ``[functional_args]`` in ops_manual.toml.  Names that still do not
    match a wrapper parameter make the facts that mention them unknown (None) rather than wrong.
    """
    ok = set(params) | {"result"} | {f"result{i}" for i in range(1, 8)}

    def ren(v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, str):
            return mapping.get(v, v)
        return sorted(mapping.get(n, n) for n in v)

    for k in ("aliases", "writes", "saves_must", "saves_may"):
        e[k] = ren(e.get(k))
    for od in e.get("overloads", {}).values():
        for k in ("aliases", "writes", "saves"):
            if k in od:
                od[k] = ren(od[k])
    bad = set()
    for k in ("aliases",):
        if e.get(k) and e[k] not in ok:
            bad.add(e[k])
    for k in ("writes", "saves_must", "saves_may"):
        bad |= set(e.get(k) or ()) - ok
    if bad:
        e["saves_must"] = None if set(e.get("saves_must") or ()) & bad else e.get("saves_must")
        e["saves_may"] = None if set(e.get("saves_may") or ()) & bad else e.get("saves_may")
        if e.get("aliases") in bad:
            e["aliases"] = None
        e["writes"] = [w for w in e.get("writes") or () if w not in bad]
        e["note"] = "ATen argument names not matched to the Python wrapper's: " + ", ".join(sorted(bad))


def _visible_bases(torch: Any, F: Any, by_base: dict[str, Any], manual: dict[str, Any]) -> set[str]:
    """ATen base names reachable from torch.*, torch.Tensor.*, F.*, sub-namespaces or the hand table."""
    names = set(dir(torch)) | set(dir(torch.Tensor)) | set(dir(F))
    out = {b for b in by_base if b in names}
    for b, group in by_base.items():
        pm = group[0].python_module
        if pm in SUB_NS and b.startswith(pm + "_"):
            out.add(b)
    for f in names & set(dir(F)):
        if f + "_" in by_base:
            out.add(f + "_")
    for section in ("dunder", "property", "functional_alias"):
        out |= set(manual.get(section, {}).values())
    for m in manual.get("module", {}).values():
        out |= {m.get("op"), m.get("inplace_op")} - {None}
    return out


def _probe_conversion(torch: Any, mname: str) -> tuple[bool, bool] | None:
    seen_alias = seen_copy = False
    called = False
    dtypes = (
        torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
        torch.complex128, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
    )
    for dtype in dtypes:
        x = torch.ones(2, 3, dtype=dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = getattr(x, mname)()
        except Exception:
            continue
        if not isinstance(r, torch.Tensor):
            return None
        called = True
        if r is x or shares_storage(r, x):
            seen_alias = True
        else:
            seen_copy = True
    return (seen_alias, seen_copy) if called else None


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------


def dumps(table: dict[str, Any]) -> str:
    """Deterministic JSON with one op / module per line (diffable, and lazily loadable)."""
    lines = ["{", '"meta": ' + json.dumps(table["meta"], sort_keys=True) + ","]
    for section in ("modules", "ops"):
        lines.append(f'"{section}": {{')
        items = sorted(table[section].items())
        for i, (k, v) in enumerate(items):
            sep = "," if i < len(items) - 1 else ""
            lines.append(json.dumps(k) + ": " + json.dumps(v, sort_keys=True, separators=(",", ":")) + sep)
        lines.append("}," if section == "modules" else "}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m aliaslint.ops_gen", description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=OPS_JSON, help="where to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the output file differs from a fresh generation")
    ns = ap.parse_args(argv)
    text = dumps(generate())
    if ns.check:
        old = ns.output.read_text() if ns.output.exists() else ""
        if old != text:
            print(f"{ns.output} is out of date; run python -m aliaslint.ops_gen", file=sys.stderr)
            return 1
        return 0
    ns.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = ns.output.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, ns.output)
    print(f"wrote {ns.output} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
