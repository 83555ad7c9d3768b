"""Instructions a cold check executes, counted by valgrind's callgrind, for this checkout and
another commit's worktree: a pairing a busy neighbour does not move (the same code counts the
same to a tenth of a percent, where its CPU time varies by a fifth), to tell a small engine
change from noise.  Time still decides a target: instructions do not count cache misses, and
a process that holds more memory pays for it in time, not here.

    python benchmarks/instructions.py timm pytorch-lightning --against /path/to/worktree

runs from the directory the paths are in, `check --isolated --no-cache -j 1` (every process:
the worker's instructions are the check's), hash seeds fixed, each side's bytecode compiled in
a warm-up run first.  A check under callgrind runs about fifty times slower than without.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_COUNTED = re.compile(r"^==\d+== I\s+refs:\s+([\d,]+)", re.MULTILINE)


def instructions(source: Path, paths: list[str], jobs: int) -> int:
    """The instructions of every process of one cold check with the aliaslint at ``source``."""
    command = [sys.executable, "-m", "aliaslint", "check", "--isolated", "--no-cache",
               "-j", str(jobs), "--output-format", "concise", *paths]
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "PYTHONPATH": str(source), "PYTHONHASHSEED": "0",
               "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pyc")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(command, env=env, capture_output=True, check=False)  # bytecode
        counted = subprocess.run(
            ["valgrind", "--tool=callgrind", "--trace-children=yes",
             f"--callgrind-out-file={scratch}/callgrind.%p", *command],
            env=env, capture_output=True, text=True, check=False)
    total = counted_in(counted.stderr)
    if not total:
        raise SystemExit(f"valgrind counted nothing:\n{counted.stderr[-2000:]}")
    return total


def counted_in(log: str) -> int:
    """The instructions valgrind's log counts, summed over the processes it traced."""
    return sum(int(number.replace(",", "")) for number in _COUNTED.findall(log))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--against", type=Path, required=True,
                        help="a worktree of the commit to pair with")
    parser.add_argument("--this", type=Path, default=_ROOT,
                        help="the checkout measured (default: this one)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt install valgrind)")
    this = instructions(args.this, args.paths, args.jobs)
    other = instructions(args.against, args.paths, args.jobs)
    print(f"A {args.this}: {this / 1e9:.3f} G instructions")
    print(f"B {args.against}: {other / 1e9:.3f} G instructions")
    print(f"A/B {this / other:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
