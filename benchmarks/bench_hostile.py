"""CPU seconds `check` spends on the pathological inputs, and what the parse budget rests on.

    python benchmarks/bench_hostile.py

For each reproducer: CPython's verdict, the CPU seconds of `check_source`, and its answer.
Then, for the expression shapes libcst parses in super-linear time, at the deepest CPython
compiles: the parse work (aliaslint.screen.parse_work) and libcst's CPU time per unit of it,
which is what PARSE_BUDGET is calibrated from.  Figures: benchmarks/fuzz.md.
"""

from __future__ import annotations

import ast
import time

import libcst

from aliaslint import check_source
from aliaslint.screen import PARSE_BUDGET, parse_work

FINDING = "a = torch.ones(2)\nprint(id(a) == id(a))\n"

REPRODUCERS = {
    "3,000 chained calls": "c = a" + ".add(1)" * 3000 + "\n",
    "5,000-term sum": "c = " + "+".join(["a"] * 5000) + "\n",
    "f(f(...)) 800 deep": "c = " + "f(" * 800 + "1" + ")" * 800 + "\n",
    "1,000 chained calls": "c = a" + ".add(1)" * 1000 + "\n",
    "4 x 1,000 chained calls": ("c = a" + ".add(1)" * 1000 + "\n") * 4,
    "1 MB of ordinary code": "",  # filled in from the package's own source
}

SHAPES = {
    "chained calls": "c = a" + ".add(1)" * 700 + "\n",
    "chained subscripts": "c = a" + "[1]" * 1000 + "\n",
    "chained attributes": "c = a" + ".b" * 1400 + "\n",
    "mixed trailers": "c = a" + ".b(1)[2]" * 330 + "\n",
    "nested lambdas": "c = " + "lambda: " * 1400 + "1\n",
    "conditional chain": "c = " + "a if b else " * 1400 + "1\n",
    "sum": "c = " + "+".join(["a"] * 1400) + "\n",
    "power chain": "c = " + "**".join(["a"] * 1400) + "\n",
    "not chain": "c = " + "not " * 1400 + "x\n",
}


def _cpu(function) -> tuple[float, object]:
    start = time.process_time()
    value = function()
    return time.process_time() - start, value


def _verdict(source: str) -> str:
    try:
        compile(source, "<bench>", "exec", dont_inherit=True)
    except (SyntaxError, RecursionError) as error:
        return f"rejects ({type(error).__name__})"
    return "compiles"


def main() -> None:
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "aliaslint"
    ordinary = "".join(path.read_text(encoding="utf-8").replace(
        "from __future__ import annotations", "") for path in sorted(package.rglob("*.py")))
    REPRODUCERS["1 MB of ordinary code"] = ordinary[:1_000_000].rsplit("\ndef ", 1)[0] + "\n"
    print(f"{'reproducer':26} {'CPython':24} check CPU s  answer")
    for name, body in REPRODUCERS.items():
        source = "import torch\n" + body + FINDING
        seconds, diagnostics = _cpu(lambda: check_source(source, "bench.py"))
        codes = sorted({d.code for d in diagnostics})  # type: ignore[attr-defined]
        print(f"{name:26} {_verdict(source):24} {seconds:11.3f}  {','.join(codes) or 'none'}")
    print(f"\nshape (deepest CPython compiles)   parse work   libcst CPU s   ns/unit"
          f"   (budget {PARSE_BUDGET:,})")
    for name, source in SHAPES.items():
        units = parse_work(ast.parse(source)).units
        seconds, _ = _cpu(lambda: libcst.parse_module(source))
        print(f"{name:34} {units:10,} {seconds:14.3f} {seconds / units * 1e9:9.0f}")


if __name__ == "__main__":
    main()
