"""How well the parse work predicts libcst's parse time on real files: the calibration of
`NODE_WORK` and `PARSE_BUDGET` (aliaslint/screen.py).

    python benchmarks/parse_cost.py DIRECTORY [--sample 120]

For the 40 largest `.py` files under DIRECTORY and a seeded sample of the others: the parse
work from CPython's tree (nodes, depth units, their total) and libcst's CPU seconds to parse
the file; then, by size band, libcst's µs per node and the ratio of the time measured to the
time predicted at 0.6 µs per unit of work (the slowest deep shape's cost, benchmarks/fuzz.md).
A ratio under 1 is a file the prediction over-estimates; the budget must not be met by a file
whose ratio is far over 1.  Figures: benchmarks/fuzz.md.
"""

from __future__ import annotations

import argparse
import ast
import gc
import random
import statistics
import time
from pathlib import Path

import libcst

from aliaslint.screen import parse_work

SECONDS_PER_UNIT = 0.6e-6
BANDS = ((0, 2_000), (2_000, 20_000), (20_000, 10**9))


def measure(path: Path) -> tuple[int, int, float] | None:
    """(nodes, total work, libcst CPU seconds), or None for a file either parser rejects."""
    try:
        source = path.read_text(encoding="utf-8")
        work = parse_work(ast.parse(source))
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    gc.collect()
    start = time.process_time()
    try:
        libcst.parse_module(source)
    except (libcst.ParserSyntaxError, RecursionError):
        return None
    return work.nodes, work.total, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--sample", type=int, default=120)
    args = parser.parse_args()
    files = sorted((path.stat().st_size, path) for path in args.directory.rglob("*.py")
                   if path.is_file() and path.stat().st_size > 2_000)
    rest = [path for _, path in files[:-40]]
    chosen = [path for _, path in files[-40:]] + random.Random(0).sample(
        rest, min(args.sample, len(rest)))
    rows = [row for row in map(measure, chosen) if row is not None]
    print(f"{len(rows)} files under {args.directory}")
    print("| nodes | files | µs per node (median) | (max) | measured / predicted (median) | (max) |")
    print("|---|---:|---:|---:|---:|---:|")
    for low, high in BANDS:
        band = [row for row in rows if low <= row[0] < high]
        if not band:
            continue
        per_node = [seconds / nodes * 1e6 for nodes, _, seconds in band]
        ratio = [seconds / (work * SECONDS_PER_UNIT) for _, work, seconds in band]
        print(f"| {low:,}–{high:,} | {len(band)} | {statistics.median(per_node):.0f} | "
              f"{max(per_node):.0f} | {statistics.median(ratio):.2f} | {max(ratio):.2f} |")


if __name__ == "__main__":
    main()
