"""User-visible names: entries for torch.*, Tensor methods, F.*, dunders, properties, hand entries, modules."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any

from aliaslint.ops.generate.merge import merge_entry
from aliaslint.ops.generate.probes import (
    probe_constant,
    probe_conversion,
    probe_factory_dtype,
    probe_non_tensor_result,
    probe_value_dtype,
)
from aliaslint.ops.generate.schema import Overload, is_tensor_type

TORCH_NS = "torch"
TENSOR_NS = "torch.Tensor"
F_NS = "torch.nn.functional"
SUB_NS = {"linalg": "torch.linalg", "special": "torch.special", "fft": "torch.fft"}


def op_entries(
    torch: Any,
    F: Any,
    by_base: dict[str, list[Overload]],
    facts: dict[str, dict[str, Any]],
    probe_notes: dict[str, str],
    manual: dict[str, Any],
    visible: set[str],
    probe: bool = True,
) -> dict[str, dict[str, Any]]:
    """The ``ops`` section: one entry per user-visible name."""
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
            params: list[str] | None = [
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
        res = probe_conversion(torch, mname)
        if res is None:
            continue
        alias, copy, converts_to, same_iff_unchanged, only_input = res
        e = {"kind": "sometimes_alias" if alias else "functional", "params": [], "aliases": "self" if alias else None,
             "writes": [], "twin": None, "noncontiguous": False, "returns": "tensor", "has_out": False,
             "saves_must": None, "saves_may": None, "overloads": {}}
        if alias:
            e["note"] = "conversion: returns self when nothing changes" + (", a copy otherwise" if copy else "")
            if only_input:
                e["returns_input"] = True  # the input itself or a copy, never a view of it
        if converts_to is not None:
            e["converts_to"] = converts_to  # the result's dtype, whatever the input's
            if same_iff_unchanged:
                e["same_when_unchanged"] = True  # the input itself exactly when it has that dtype
        entries[qn] = e

    # Factories: the dtype a call without `dtype=` gives.
    if probe:
        torch.manual_seed(0)
        for qn, e in entries.items():
            ns, _, fname = qn.rpartition(".")
            if ns != TORCH_NS or e.get("kind") != "functional":
                continue
            fn = getattr(torch, fname, None)
            if fn is None:
                continue
            params = e.get("params") or []
            dtype = probe_factory_dtype(torch, fn) if params[:1] == ["size"] else None
            if dtype is not None:
                e["factory_dtype"] = dtype
                if probe_constant(torch, fn, (3, 2)):
                    e["constant"] = True  # a placeholder to be filled (zeros, ones, empty)
            elif params[:2] == ["size", "fill_value"] and probe_constant(torch, fn, (3, 2), 7):
                e["constant"] = True
            elif e.get("no_grad_result") and all(probe_constant(torch, fn, sample) for sample in (
                    torch.tensor([[0.0, -1.0], [float("nan"), 2.0], [float("inf"), 3.0]]),
                    torch.tensor([[1 + 1j, 2 + 0j], [0j, -1j]]))):
                e["constant"] = True  # zeros_like, full_like's kin
            elif e.get("returns") == "tensor" and \
                    (e.get("overloads") or {}).get("default", {}).get("tensors") == []:
                how = probe_value_dtype(torch, fn)
                if how is not None:
                    e["dtype_from"] = how

    # torch.nn.init: functions that fill their tensor argument in place under no_grad and
    # return it -- called on a leaf that requires grad (which an in-place op outside no_grad
    # refuses) to prove both.
    if probe:
        for fname in sorted(dir(torch.nn.init)):
            fn = getattr(torch.nn.init, fname)
            if fname.startswith("_") or not fname.endswith("_") or not callable(fn):
                continue
            params = list(inspect.signature(fn).parameters)
            for extra in ((), (0.5,)):
                sample = torch.ones(4, 4, requires_grad=True)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        result = fn(sample, *extra)
                except Exception:
                    continue
                if result is sample and sample._version > 0:
                    entries[f"torch.nn.init.{fname}"] = {
                        "kind": "inplace", "params": params, "aliases": params[0],
                        "writes": [params[0]], "twin": None, "noncontiguous": False,
                        "returns": "tensor", "has_out": False, "saves_must": None,
                        "saves_may": None, "overloads": {}, "fills": True, "no_grad": True,
                        "note": "fills its argument in place under no_grad and returns it"}
                break

    for qn, ws in manual.get("extra_writes", {}).items():
        e = entries[qn]
        e["writes"] = sorted(set(e.get("writes") or ()) | set(ws))
        e["note"] = "; ".join(filter(None, [e.get("note"), "updates " + ", ".join(ws) + " in place in training mode (not annotated in the schema)"]))

    slopes = manual.get("negative_slope", {})
    for qn, e in entries.items():
        params = slopes.get(e.get("op", qn.rpartition(".")[2]))
        if params is not None and e.get("kind") == "inplace":
            e["negative_slope"] = params  # its backward raises when their mean is < 0

    # hand entries
    for qn, m in manual.get("op", {}).items():
        e = {"kind": m["kind"], "params": m.get("params", []), "aliases": m.get("aliases"),
             "writes": m.get("writes", []), "twin": m.get("twin"), "noncontiguous": m.get("noncontiguous", False),
             "returns": m.get("returns", "other"), "has_out": False,
             "saves_must": m.get("saves_must"), "saves_may": m.get("saves_may"), "overloads": {}, "manual": True}
        for k in ("note", "retain_kwarg", "grad_enabled", "mode_arg", "copy_kwarg", "bumps_version", "property",
                  "inplace_kwarg", "yields", "returns_input"):
            if k in m:
                e[k] = m[k]
        entries[qn] = e

    for qn, e in entries.items():
        for oname, od in e.get("overloads", {}).items():
            key = e.get("op", qn.rpartition(".")[2]) + ("." + oname if oname != "default" else "")
            if key in probe_notes:
                od["probe"] = probe_notes[key]
    return entries


def non_tensor_method_entries(
    torch: Any,
    by_base: dict[str, list[Overload]],
    entries: dict[str, dict[str, Any]],
    manual: dict[str, Any],
    probe: bool = True,
) -> dict[str, dict[str, Any]]:
    """The ``non_tensor_methods`` section: Tensor methods that return no tensor, by what they return.

    ``value`` (a plain Python value: int, bool, float, str, torch.Size, lists / tuples of them),
    ``storage`` (a torch.UntypedStorage over the tensor's memory) or ``typed_storage`` (a
    torch.TypedStorage over it).  ATen methods: from the schema, when every overload returns
    only non-tensor values and writes nothing.  Other methods (bound by hand in C++ or written
    in Python; public ones and the private ones ``[non_tensor_methods] private`` of the hand
    table lists): called without arguments on a sample tensor."""
    def is_method(mname: str) -> bool:  # not an attribute such as is_leaf / output_nr
        return type(inspect.getattr_static(torch.Tensor, mname, None)).__name__ in ("method_descriptor", "function")

    out: dict[str, dict[str, Any]] = {}
    for qn, e in entries.items():
        ns, _, mname = qn.rpartition(".")
        if ns != TENSOR_NS or e.get("manual") or e.get("property") or "op" in e or not is_method(mname):
            continue
        group = [o for o in by_base.get(mname, []) if "method" in o.variants and not o.is_out]
        if group and all(
            o.schema.returns and not o.writes and not any(is_tensor_type(r.type) for r in o.schema.returns)
            for o in group
        ):
            types = sorted({", ".join(str(r.type) for r in o.schema.returns) for o in group})
            out[mname] = {"returns": "value", "source": "schema", "type": " | ".join(types)}
    if not probe:
        return out
    private = set(manual.get("non_tensor_methods", {}).get("private", []))
    for mname in sorted(set(dir(torch.Tensor))):
        if mname.startswith("__") or mname.endswith("_") or f"{TENSOR_NS}.{mname}" in entries:
            continue
        if mname.startswith("_") and mname not in private:
            continue
        if not is_method(mname):
            continue
        res = probe_non_tensor_result(torch, mname)
        if res is not None:
            out[mname] = {"returns": res[0], "source": "probe", "type": res[1]}
    return out


def module_entries(manual: dict[str, Any], by_base: dict[str, list[Overload]],
                   torch: Any) -> dict[str, dict[str, Any]]:
    """The ``modules`` section: ``[module."torch.nn.X"]`` of the hand table with the op's generated saves."""
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
            # forward's tensor arguments, in order, by the op's names (a loss: input, target)
            "inputs": m.get("inputs", ["input"]),
            **({"saved_when": m["saved_when"]} if "saved_when" in m else {}),
        }
        init = _init_params(torch, qn)
        if init is not None:
            me["init_params"] = init
        me["has_params"] = None if me["container"] or me["identity"] else bool(me["opaque"])
        if me["op"]:
            group = [o for o in by_base.get(me["op"], []) if not o.is_out]
            # parameters: the op takes a weight (Linear, Conv, norms, Embedding)
            me["has_params"] = m.get("has_params", any(
                "weight" in {a.name for a in o.schema.arguments.flat_all} for o in group))
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
                    a.name for a in first.schema.arguments.flat_positional if is_tensor_type(a.type)
                )
                known = [set(o.saves) for o in group if o.saves is not None]
                saves = set.intersection(*known) if known and len(known) == len(group) else None
                if saves is not None:
                    keep = {"weight", "bias", "result", *me["inputs"]}
                    me["saves"] = sorted({"input" if s == input_arg else s for s in saves} & keep)
        if "note" in m:
            me["note"] = m["note"]
        modules[qn] = me
    return modules


def _init_params(torch: Any, qualname: str) -> list[str] | None:
    """The constructor's parameters that an argument can bind by position, in order
    (``nn.Dropout(p, inplace)``, ``nn.LeakyReLU(negative_slope, inplace)``): which
    positional argument is ``inplace`` differs per class.  None when the signature does
    not say (``*args``) or the class is not found."""
    obj: Any = torch
    for part in qualname.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    try:
        params = list(inspect.signature(obj.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


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


def visible_bases(torch: Any, F: Any, by_base: dict[str, Any], manual: dict[str, Any]) -> set[str]:
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
