"""How much slower is a CPU training step under ``aliaslint trace``?

Run from the repository root::

    python benchmarks/bench_trace.py [--steps N] [--rounds R] [--workloads gpt,cnn]
                                     [--baseline DIR]

Each workload of ``trace_workloads.py`` (the pinned GPT and the small CNN) is timed in a
fresh process, one torch thread, in CPU time, under each mode in turn:

* ``plain``: untraced;
* ``trace``: ``aliaslint trace`` (the default tracer);
* ``deep``: ``aliaslint trace --deep`` (every ATen op through a dispatch mode);
* ``check``: ``aliaslint check --trace`` (static findings confirmed while it runs), timed
  inside the program it runs;
* ``dispatch-mode`` and ``function-mode``: an empty ``TorchDispatchMode`` /
  ``TorchFunctionMode`` (a Python call per ATen op / per torch call, nothing else): what any
  tracer built on one pays before doing anything.

A round builds the workload, takes a warm-up step and times ``--steps`` steps, for every
mode one after the other (each round starting with the next mode), so that a drifting
machine affects all of them alike.  The figure for a mode is the median over rounds of its time per step
divided by the plain time per step of the same round.

``--baseline DIR`` times another source tree of aliaslint (for example ``git archive`` of an
older commit unpacked into DIR) in the same run: its processes alternate with this tree's,
and its modes are reported as ``before``.  A tree without ``--deep`` has no ``deep`` row.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("plain", "trace", "deep", "check", "dispatch-mode", "function-mode")


def _empty_dispatch_mode():
    from torch.utils._python_dispatch import TorchDispatchMode

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return PassThrough()


def _empty_function_mode():
    from torch.overrides import TorchFunctionMode

    class PassThrough(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return PassThrough()


def _time_mode(mode: str, workload: str, steps: int, scratch: str) -> float | None:
    """Seconds of CPU time per step of ``workload`` under ``mode``; None if unavailable."""
    import contextlib

    import aliaslint
    from trace_workloads import seconds_per_step

    if mode == "check":
        try:
            from aliaslint.runtime.confirm import confirm
        except ImportError:  # a baseline tree from before confirmation moved into runtime/
            from aliaslint.confirm import confirm  # type: ignore[no-redef]

        out = os.path.join(scratch, "check.txt")
        if os.path.exists(out):
            os.remove(out)
        confirm(script=str(HERE / "trace_workloads.py"), args=[workload, str(steps), out],
                cwd=str(ROOT))
        with open(out, encoding="utf-8") as stream:
            return float(stream.read().split()[-1])
    if mode == "deep" and "deep" not in inspect.signature(aliaslint.trace).parameters:
        return None
    context: contextlib.AbstractContextManager[object]
    if mode == "plain":
        context = contextlib.nullcontext()
    elif mode == "trace":
        context = aliaslint.trace()
    elif mode == "deep":
        context = aliaslint.trace(deep=True)  # type: ignore[call-arg]
    elif mode == "dispatch-mode":
        context = _empty_dispatch_mode()
    else:
        context = _empty_function_mode()
    with context as tracer:
        per_step = seconds_per_step(workload, steps)
    findings = getattr(tracer, "findings", [])
    assert not findings, findings  # the workloads are clean: a finding is a false positive
    return per_step


def child(args: argparse.Namespace) -> None:
    """One process: every round times every mode of one workload; JSON on standard output."""
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(HERE))
    times: dict[str, list[float]] = {mode: [] for mode in args.modes}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            # Each round starts with another mode, so that no mode always runs first.
            shift = round_ % len(args.modes)
            for mode in args.modes[shift:] + args.modes[:shift]:
                seconds = _time_mode(mode, args.workload, args.steps, scratch)
                if seconds is not None:
                    times[mode].append(seconds)
    json.dump({mode: values for mode, values in times.items() if values}, sys.stdout)


def _run_child(source: Path, workload: str, args: argparse.Namespace) -> dict[str, list[float]]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--workload", workload,
               "--steps", str(args.steps), "--rounds", str(args.rounds),
               "--modes", ",".join(args.modes)]
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"the timing process for {source} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def _ratios(times: dict[str, list[float]]) -> dict[str, float]:
    plain = times["plain"]
    return {mode: statistics.median(t / p for t, p in zip(values, plain))
            for mode, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per process")
    parser.add_argument("--processes", type=int, default=2,
                        help="timing processes per tree and workload (alternating trees)")
    parser.add_argument("--workloads", default="gpt,cnn")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--baseline", type=Path, help="another aliaslint source tree to time")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.modes = [mode for mode in args.modes.split(",") if mode]
    if "plain" not in args.modes:
        args.modes.insert(0, "plain")
    if args.child:
        child(args)
        return
    import torch

    trees = [("after", ROOT)] + ([("before", args.baseline.resolve())] if args.baseline else [])
    print(f"torch {torch.__version__}, 1 thread, CPU time; {args.steps} steps per round, "
          f"{args.rounds} rounds x {args.processes} processes per tree; "
          "ratio = median over rounds of (mode / plain of the same round)")
    started = time.monotonic()
    for workload in args.workloads.split(","):
        collected: dict[str, dict[str, list[float]]] = {label: {} for label, _ in trees}
        for _ in range(args.processes):
            for label, source in trees:
                for mode, values in _run_child(source, workload, args).items():
                    collected[label].setdefault(mode, []).extend(values)
        for label, _ in trees:
            times = collected[label]
            ratios = _ratios(times)
            plain_ms = 1000 * statistics.median(times["plain"])
            cells = "   ".join(f"{mode} {ratios[mode]:.2f}x" for mode in args.modes
                               if mode in ratios and mode != "plain")
            print(f"{workload:4} {label:6} plain {plain_ms:6.2f} ms/step   {cells}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
