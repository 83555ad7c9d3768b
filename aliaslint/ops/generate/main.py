"""Build the whole table, write it as one-entry-per-line JSON, and the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

from aliaslint.ops.generate.names import module_entries, non_tensor_method_entries, op_entries, visible_bases
from aliaslint.ops.generate.probes import probe_dtypes, probe_metadata, probe_overloads
from aliaslint.ops.generate.schema import (
    MANUAL_TOML,
    OPS_JSON,
    Overload,
    attach_saves,
    load_torchgen,
    overload_facts,
    sha256,
    yaml_paths,
)

FORMAT = 1
#: The file's sections in the order written (each line of one is an entry the reader indexes).
SECTIONS = ("dtypes", "metadata", "modules", "non_tensor_methods", "ops")
DESCRIPTION = "Generate aliaslint/data/ops.json from the torchgen files shipped in the installed torch."


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
    visible = visible_bases(torch, F, by_base, manual)
    facts, probe_notes = probe_overloads(torch, ovs, by_aten, visible, probe)
    entries = op_entries(torch, F, by_base, facts, probe_notes, manual, visible, probe)
    modules = module_entries(manual, by_base, torch)
    non_tensor = non_tensor_method_entries(torch, by_base, entries, manual, probe)

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
        "non_tensor_methods": dict(sorted(non_tensor.items())),
        "dtypes": probe_dtypes(torch) if probe else {},
        "metadata": probe_metadata(torch) if probe else {},
    }


def dumps(table: dict[str, Any]) -> str:
    """Deterministic JSON with one op / module per line (diffable, and lazily loadable)."""
    lines = ["{", '"meta": ' + json.dumps(table["meta"], sort_keys=True) + ","]
    for section in SECTIONS:
        lines.append(f'"{section}": {{')
        items = sorted(table[section].items())
        for i, (k, v) in enumerate(items):
            sep = "," if i < len(items) - 1 else ""
            lines.append(json.dumps(k) + ": " + json.dumps(v, sort_keys=True, separators=(",", ":")) + sep)
        lines.append("}" if section == SECTIONS[-1] else "},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m aliaslint.ops_gen", description=DESCRIPTION)
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
