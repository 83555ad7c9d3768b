"""What torch does on sample calls: views' layout, version bumps, aliasing, Python-level conversions."""

from __future__ import annotations

import warnings
from typing import Any

from aliaslint.ops.generate.decompose import decomposition_saves
from aliaslint.ops.generate.samples import (
    CRASHERS,
    call_aten,
    input_variants,
    sample_calls,
    shares_storage,
    tensors_of,
)
from aliaslint.ops.generate.schema import Overload, base_name, is_tensor_list, is_tensor_type


def probe_view_noncontiguous(torch: Any, ov: Overload) -> bool | None:
    """Is the view's result non-contiguous when applied to a contiguous sample with generic args?"""
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = call_aten(torch, ov.aten, pos, kw)
        except Exception:
            continue
        outs = [t for t in tensors_of(r) if t.numel() > 1]
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
        for xin in input_variants(torch, x):
            p = [xin if v is x else v for v in pos]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = fn(*p, **kw)
            except Exception:
                continue
            called = True
            called_world = world
            for t in tensors_of(r):
                if any(t is i or shares_storage(t, i) for i in [xin, *[v for v in p if hasattr(v, "untyped_storage")]]):
                    seen_alias = True
                else:
                    seen_copy = True
        if called and seen_alias and seen_copy:
            break
    return (seen_alias, seen_copy) if called else None



def probe_conversion(torch: Any, mname: str) -> tuple[bool, bool] | None:
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


def probe_overloads(
    torch: Any, ovs: list[Overload], by_aten: dict[str, Overload], visible: set[str], probe: bool = True
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Per-overload facts refined by probes: (facts by ATen name, probe notes by ATen name).

    Fills in the saves of composite overloads (``Overload.saves``) from their decomposition."""
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
                device_arg = any(base_name(a.type) == "Device" for a in o.schema.arguments.flat_all)
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
                and is_tensor_type(o.schema.arguments.flat_positional[0].type)
                and not is_tensor_list(o.schema.arguments.flat_positional[0].type)
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
    return facts, probe_notes
