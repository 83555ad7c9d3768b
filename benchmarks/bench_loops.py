"""How the checker's time grows with the nesting depth of loops.

    python benchmarks/bench_loops.py [--depths 1 12] [--runs 5] [--show DEPTH]

Each depth D is a tiny synthetic module: one function that makes a tensor and,
inside D nested `for` loops, writes a view of it in place (one AL201 finding
at every depth):

    import torch


    def step(x):
        y = torch.zeros(3)
        for i0 in range(2):
            for i1 in range(2):        # ... D loops
                z = y[0]
                z.mul_(x)
        return y

`aliaslint.check_source` is timed on it in a fresh process (after a warm-up
check of another module, so imports and first-use costs are not counted), in
CPU seconds; the child repeats the check while it has spent less than 0.2 s and
keeps the median.  Each depth is measured in `--runs` fresh processes (the
depths interleaved) and the median is printed, with its ratio to depth 1's time
and to the previous depth's time in the same run.  A loop analysis that
interprets every body twice costs about twice as much per nesting level: the
ratio to the previous depth then tends to 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WARM_UP_DEPTH = 2
MIN_CPU = 0.2  # seconds a child keeps repeating a check for


def module(depth: int, prefix: str = "i") -> str:
    lines = ["import torch", "", "", "def step(x):", "    y = torch.zeros(3)"]
    for level in range(depth):
        lines.append("    " * (level + 1) + f"for {prefix}{level} in range(2):")
    indent = "    " * (depth + 1)
    lines += [f"{indent}z = y[0]", f"{indent}z.mul_(x)", "    return y"]
    return "\n".join(lines) + "\n"


def measure(depth: int) -> dict:
    from aliaslint import check_source

    check_source(module(WARM_UP_DEPTH, prefix="warm"), "warm_up.py")
    source = module(depth)
    _check_not_prefiltered(source)
    times: list[float] = []
    spent = 0.0
    while not times or spent < MIN_CPU:
        start = time.process_time()
        findings = check_source(source, f"depth{depth}.py")
        times.append(time.process_time() - start)
        spent += times[-1]
    return {"cpu": statistics.median(times), "calls": len(times), "findings": len(findings)}


def _check_not_prefiltered(source: str) -> None:
    """The module must reach the analysis, or the benchmark measures the prefilter."""
    try:
        from aliaslint.engine import _enabled, may_find
    except ImportError:  # the engine changed; the finding count still tells
        return
    if not may_find(source, _enabled(None, False)):
        sys.exit("bench_loops.py: the prefilter skips the synthetic module; fix module()")


def _child(depth: int) -> dict:
    command = [sys.executable, __file__, "--child", str(depth)]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_loops.py: depth {depth} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", type=int, nargs=2, default=[1, 12], metavar=("FROM", "TO"),
                        help="nesting depths to measure, inclusive (default 1 12)")
    parser.add_argument("--runs", type=int, default=5,
                        help="fresh processes per depth; the median is printed (default 5)")
    parser.add_argument("--show", type=int, metavar="DEPTH",
                        help="print the synthetic module of this depth and stop")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return 0
    if args.show is not None:
        print(module(args.show), end="")
        return 0
    first, last = args.depths
    if not 1 <= first <= last or args.runs < 1:
        parser.error("need 1 <= FROM <= TO and --runs >= 1")
    depths = range(first, last + 1)

    print(f"aliaslint loop-nesting benchmark: check_source on {len(depths)} synthetic modules, "
          f"{args.runs} fresh processes each, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    samples: dict[int, list[float]] = {depth: [] for depth in depths}
    findings: dict[int, int] = {}
    for _ in range(args.runs):
        for depth in depths:
            result = _child(depth)
            samples[depth].append(result["cpu"])
            findings[depth] = result["findings"]
    medians = {depth: statistics.median(times) for depth, times in samples.items()}
    base = f"× depth {first}"
    print(f"{'depth':>5} {'CPU s (median)':>15} {'min':>9} {'max':>9} {base:>10} "
          f"{'× previous':>11} {'findings':>9}")
    for depth in depths:
        ratio = medians[depth] / medians[first]
        previous = f"{medians[depth] / medians[depth - 1]:11.2f}" if depth > first else f"{'':11}"
        print(f"{depth:5} {medians[depth]:15.5f} {min(samples[depth]):9.5f} "
              f"{max(samples[depth]):9.5f} {ratio:10.1f} {previous} {findings[depth]:9}")
    if last - first >= 4:
        tail = [medians[d] / medians[d - 1] for d in range(last - 3, last + 1)]
        print(f"growth per nesting level over the last four depths: ×{statistics.mean(tail):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
