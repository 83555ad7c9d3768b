"""Per-overload facts from torchgen's native_functions.yaml, and their saves from derivatives.yaml."""

from __future__ import annotations

import re

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
OPS_JSON = DATA_DIR / "ops.json"
MANUAL_TOML = DATA_DIR / "ops_manual.toml"


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


def is_tensor_type(t: Any) -> bool:
    from torchgen.model import BaseTy, BaseType, ListType, OptionalType

    if isinstance(t, OptionalType):
        return is_tensor_type(t.elem)
    if isinstance(t, ListType):
        return is_tensor_type(t.elem)
    return isinstance(t, BaseType) and t.name == BaseTy.Tensor


def is_tensor_list(t: Any) -> bool:
    from torchgen.model import ListType, OptionalType

    if isinstance(t, OptionalType):
        return is_tensor_list(t.elem)
    return isinstance(t, ListType) and is_tensor_type(t.elem)


def _returns_kind(schema: Any) -> str:
    rets = schema.returns
    if not rets:
        return "none"
    if all(is_tensor_type(r.type) for r in rets):
        if len(rets) == 1 and not is_tensor_list(rets[0].type):
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
    # For each saved argument, the arguments whose requiring grad makes autograd save it.
    saved_when: dict[str, list[str]] | None = None
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


def _saved_when(info: Any, saves: list[str]) -> dict[str, list[str]]:
    """When the generated forward saves each argument in ``saves``.  It creates the backward
    node when any argument with a derivative requires grad and saves every tensor the formulas
    read, except that a plain tensor read by the formula of one argument only is saved only
    when that argument requires grad (``guard_for`` in torchgen's gen_variable_type.py: `mul`
    keeps `self` for `other`'s gradient)."""
    from torchgen.api.types import BaseCType, tensorT

    with_derivatives = [a.name for a in info.args_with_derivatives]
    has_list = any("[]" in str(a.type) for a in info.args_with_derivatives)
    out: dict[str, list[str]] = {}
    for sa in info.all_saved_inputs:
        name = sa.nctype.name
        if name not in saves:
            continue
        used_in = [d for d in info.derivatives if sa in d.saved_inputs]
        guarded = (not has_list and "backward" not in info.name and len(with_derivatives) > 1
                   and sa.nctype.type == BaseCType(tensorT) and len(used_in) == 1)
        if not guarded:
            out[name] = sorted(with_derivatives)
        elif len(used_in[0].var_names) == 1:
            out[name] = sorted(used_in[0].var_names)
        else:
            # `wrap_opt_if(name, grad_input_mask[i] || ...)`: saved when one of those
            # inputs (by their position among the differentiable ones) requires grad.
            match = re.search(rf"wrap_opt_if\({name},(.*?)\)", used_in[0].formula)
            if match is None:
                out[name] = sorted(with_derivatives)
            else:
                picks = [int(i) for i in re.findall(r"grad_input_mask\[(\d+)\]", match.group(1))]
                if picks and all(i < len(with_derivatives) for i in picks):
                    out[name] = sorted({with_derivatives[i] for i in picks})
    return out


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
            # A composite op's entry serves other backends: dense tensors run its
            # decomposition, which guards its saves its own way.
            ov.saved_when = None if ov.composite_implicit else _saved_when(info, ov.saves)
            ov.saves_source = src
        elif ov.composite_implicit:
            ov.saves = None
            ov.saves_source = "composite"
        elif not any(is_tensor_type(a.type) for a in ov.schema.arguments.flat_all):
            ov.saves = []
            ov.saves_source = "no tensor inputs"
        else:
            ov.saves = []
            ov.saves_source = "no derivative formula: autograd saves nothing"



def base_name(t: Any) -> str:
    from torchgen.model import BaseType, ListType, OptionalType

    while isinstance(t, (OptionalType, ListType)):
        t = t.elem
    return t.name.name if isinstance(t, BaseType) else ""

