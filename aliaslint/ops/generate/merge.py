"""One table entry for a user-visible name from the facts of its ATen overloads."""

from __future__ import annotations

from typing import Any, overload

from aliaslint.ops.generate.schema import Overload, is_tensor_list, is_tensor_type


def tensor_params(o: Overload) -> list[str]:
    """The overload's positional and keyword parameters whose type is a single tensor."""
    if o.schema is None:
        return []
    args = o.schema.arguments
    return [a.name for a in [*args.flat_positional, *args.flat_kwarg_only]
            if is_tensor_type(a.type) and not is_tensor_list(a.type)]


@overload
def rename(names: list[str], self_name: str | None) -> list[str]: ...
@overload
def rename(names: None, self_name: str | None) -> None: ...
@overload
def rename(names: list[str] | None, self_name: str | None) -> list[str] | None: ...


def rename(names: list[str] | None, self_name: str | None) -> list[str] | None:
    """Argument names with the schema's ``self`` spelled ``self_name`` (dropped when None)."""
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



def _merge_saved_when(ovs: list[Overload], self_name: str) -> dict[str, list[str]]:
    """For each argument every overload saves, the arguments whose requiring grad makes every
    overload save it (see schema._saved_when)."""
    if not ovs or any(o.saved_when is None for o in ovs):
        return {}
    maps = [{rename([k], self_name)[0]: set(rename(v, self_name)) for k, v in (o.saved_when or {}).items()}
            for o in ovs]
    common = set.intersection(*(set(m) for m in maps))
    out = {}
    for name in sorted(common):
        inputs = set.intersection(*(m[name] for m in maps))
        if inputs:
            out[name] = sorted(inputs)
    return out


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
    smust: list[str] | None
    smay: list[str] | None
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
        "params": _merge_params([rename(o.params, self_name) for o in main]),
        "aliases": (rename([aliases.pop()], self_name) or [None])[0] if len(aliases) == 1 else None,
        "writes": rename(writes, self_name if self_name else "self"),
        "twin": None,
        "noncontiguous": bool(non_contig) and all(v is True for v in non_contig),
        "returns": rets.pop() if len(rets) == 1 else "other",
        "has_out": any(o.is_out for o in ovs),
        "saves_must": rename(smust, self_name if self_name else "self"),
        "saves_may": rename(smay, self_name if self_name else "self"),
        "overloads": {
            (o.aten.partition(".")[2] or "default"): {
                "kind": facts[o.aten]["kind"],
                "params": rename(o.params, self_name),
                "saves": rename(o.saves, self_name if self_name else "self"),
                "returns": o.returns,
                **({"aliases": rename([facts[o.aten]["aliases"]], self_name if self_name else "self")[0]} if facts[o.aten]["aliases"] else {}),
                **({"writes": rename(o.writes, self_name if self_name else "self")} if o.writes else {}),
                **({"bumps_version": facts[o.aten]["bumps_version"]} if facts[o.aten].get("bumps_version") is not None else {}),
                **({"metadata_only": True} if "inplace_view" in o.func.tags else {}),
                **({"out": True} if o.is_out else {}),
                # Which parameters take a tensor: what tells the overloads apart at a call.
                "tensors": rename(tensor_params(o), self_name),
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
    views = [facts[o.aten] for o in main if facts[o.aten]["kind"] == "view"]
    if any(f.get("self_overlapping") for f in views):
        entry["self_overlapping"] = True  # some view overload can be (stride 0)
    if views and all(f.get("reorders_dims") is True for f in views):
        entry["reorders_dims"] = True
    if views and all(f.get("multi_output") is True for f in views):
        entry["multi_output"] = True  # every overload's outputs come from one view node
    maybe = [facts[o.aten] for o in main if facts[o.aten]["kind"] == "sometimes_alias"]
    if kind == "sometimes_alias" and maybe and all(f.get("returns_input") for f in maybe):
        entry["returns_input"] = True  # every overload returns its input itself or a copy
    functional = [facts[o.aten].get("differentiable") for o in main
                  if facts[o.aten]["kind"] == "functional"]
    if kind == "functional" and functional and all(f is False for f in functional):
        entry["no_grad_result"] = True  # no overload's result can require grad
    when = _merge_saved_when([o for o in main if not o.is_out], self_name if self_name else "self")
    if when:
        entry["saved_when"] = when
    fills = [facts[o.aten].get("fills") for o in main if facts[o.aten]["kind"] == "inplace"]
    if kind == "inplace" and fills and all(f is True for f in fills):
        entry["fills"] = True
    if self_name is None and entry["aliases"] is None and len(aliases) == 0 and kind in ("view", "inplace", "sometimes_alias"):
        entry["aliases"] = "self"
    if entry["aliases"] is None and kind in ("view", "inplace", "sometimes_alias") and main and main[0].params:
        first = rename([main[0].params[0]], self_name if self_name else "self")
        entry["aliases"] = first[0] if first else "self"
    if kind == "inplace" and not entry["writes"]:
        entry["writes"] = [entry["aliases"]]
    if notes:
        entry["note"] = "; ".join(notes)
    return entry
