"""Saves of composite ops without a derivatives.yaml entry, from the ATen ops they decompose into."""

from __future__ import annotations

import warnings
from typing import Any

from aliaslint.ops.generate.samples import call_aten, sample_calls, shares_storage, tensors_of
from aliaslint.ops.generate.schema import Overload, is_tensor_type


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
            self.calls: list[tuple[Any, list[Any], dict[str, Any], Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            r = func(*args, **kwargs)
            self.calls.append((func, list(args), dict(kwargs), r))
            return r

    if not any(is_tensor_type(a.type) for a in ov.schema.arguments.flat_all):
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
        results = tensors_of(r)
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
                for t in tensors_of(bound.get(s)):
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
