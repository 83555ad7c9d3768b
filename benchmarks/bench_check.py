"""How fast `aliaslint check` is, as a ratio to libcst's parse-only time of the same files.

    python benchmarks/bench_check.py --corpora ROOT [--jobs 1 2] [--no-parse]
    python benchmarks/bench_check.py DIR [DIR ...] [--jobs 1 2] [--no-parse]
    python benchmarks/bench_check.py --corpora ROOT --jobs 2 --pairs 3
    python benchmarks/bench_check.py --corpora ROOT --against CHECKOUT [--repeat 3]

`--corpora ROOT` measures every directory in ROOT (not hidden ones), as
`python benchmarks/corpora.py fetch ROOT` lays out the pinned corpora; DIRs
name the directories to measure (both may be given).  Files are found as
`check` finds them (no config: `--isolated`).  Every run starts in a fresh
process, so nothing is shared between them.  Printed per run: wall time, lines per second,
the ratio of its throughput to the parse-only throughput (1.00 = as fast as
parsing every file on one core) and, where `ruff` is installed, its time over that of
`ruff check --select ALL --no-cache` of the same directories, the CPU seconds spent
(less sensitive to a busy machine than wall time) and their split by stage (screen, parse, analysis,
summaries, rules, report: aliaslint/stages.py), and the peak resident memory of the
main process and of the largest worker.  Also printed: how many files and lines are
answered without parsing (no torch, no rule's words, quiet).

`--pairs N` runs the parse-only reference and the cold check (with the most jobs) N times in
turn, P C P C …, and prints the median of the time ratios of each pair and their range: on a
machine whose speed drifts between runs (a busy neighbour, memory reclaimed from the virtual
machine) a lone ratio of two runs minutes apart moves by a fifth.

`--against CHECKOUT` pairs each check with the same check by another checkout of aliaslint (a
git worktree of an earlier commit), run in turn A B A B … `--repeat` times; printed are the
medians of each and the median of the paired CPU ratios, which hold when the machine's speed
drifts.  It also times the warm check of a program of 20 files importing one helper, after a
comment edit and after a code edit of the helper, with how many files each re-analysed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FETCH_HINT = """\
Fetch the pinned corpora (benchmarks/corpora.toml) first:

    python benchmarks/corpora.py fetch CORPORA      # git clones and PyPI wheels into CORPORA/<name>
    python benchmarks/corpora.py verify CORPORA

then measure them with

    python benchmarks/bench_check.py --corpora CORPORA

or name directories to measure: python benchmarks/bench_check.py DIR [DIR ...]
(benchmarks/README.md: without network, `fetch --mirror-root` clones from local copies)"""


def _files(dirs: list[str]):
    from aliaslint.config import CliOptions, Resolver
    from aliaslint.walk import walk

    files, _ = walk(dirs, Resolver(CliOptions(isolated=True)))
    return files


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def measure_parse(dirs: list[str]) -> dict:
    import libcst

    from aliaslint.engine import NOTEBOOK_SUFFIX
    from aliaslint.notebooks import NotebookError, load_notebook

    sources = []
    for path, _ in _files(dirs):
        data = path.read_bytes()
        if path.suffix == NOTEBOOK_SUFFIX:
            try:
                data = load_notebook(data.decode("utf-8", "replace")).module().encode()
            except NotebookError:
                continue
        sources.append(data)
    start, cpu = time.perf_counter(), time.process_time()
    for data in sources:
        try:
            libcst.parse_module(data)
        except Exception:  # a file that does not parse still cost its time
            pass
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cpu": time.process_time() - cpu, "files": len(sources),
            "lines": sum(map(_lines, sources))}


def measure_check(dirs: list[str], jobs: int, cache: str | None) -> dict:
    from aliaslint.config import CliOptions
    from aliaslint.engine import check_paths

    try:
        from aliaslint import stages
        from aliaslint.cli_output import source_lines_from_disk
        from aliaslint.report import render
    except ImportError:  # a checkout from before the stage timers (--against d9c68ac)
        stages = None
    start = time.perf_counter()
    result = check_paths(dirs, CliOptions(isolated=True), jobs=jobs,
                         cache=Path(cache) if cache else False)
    if stages is not None:
        with stages.stage("report"):
            render("full", result.diagnostics, source_lines=source_lines_from_disk(Path.cwd()))
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = children.ru_maxrss
    cpu = time.process_time() + children.ru_utime + children.ru_stime
    return {"seconds": seconds, "findings": len(result.diagnostics),
            "files": len(result.files), "main_rss_mb": own / 1024, "cpu": cpu,
            "worker_rss_mb": workers / 1024 if workers else None,
            "stages": stages.snapshot() if stages is not None and stages.enabled else None}


def measure_prefilter(dirs: list[str]) -> dict:
    """How many files and lines the engine answers without libcst's parse: those that never
    mention torch, and those that do but in which no enabled rule can fire (no rule's words,
    and quiet: aliaslint/quiet.py), each within the program of the files checked together."""
    from aliaslint.engine import PREFILTER, _quiet, decode, may_find, program_link, \
        source_roots
    from aliaslint.config import CliOptions, Resolver
    from aliaslint.project import Program
    from aliaslint.screen import screen

    counts = {"files": 0, "lines": 0, "no_torch_files": 0, "no_torch_lines": 0,
              "no_words_files": 0, "no_words_lines": 0, "quiet_files": 0, "quiet_lines": 0,
              "errors_files": 0}
    for directory in dirs:  # each directory a program, as `check DIR` makes it
        files = _files([directory])
        program = Program.of([path for path, _ in files],
                             source_roots(Resolver(CliOptions(isolated=True))))
        for path, settings in files:
            if path.suffix != ".py":
                continue
            data = path.read_bytes()
            text = decode(data, str(path))
            lines = _lines(data)
            counts["files"] += 1
            counts["lines"] += lines
            if not isinstance(text, str):
                continue
            if PREFILTER not in text:
                counts["no_torch_files"] += 1
                counts["no_torch_lines"] += lines
                continue
            screened = screen(text, str(path), settings.target_version)
            if screened.error is not None:
                counts["errors_files"] += 1
                continue
            enabled = settings.rules_for(path)
            if not may_find(text, enabled):
                counts["no_words_files"] += 1
                counts["no_words_lines"] += lines
                continue
            link = program_link(program, path, settings)
            if not may_find(text, enabled, lambda: _quiet(screened.tree, None, link)):
                counts["quiet_files"] += 1
                counts["quiet_lines"] += lines
    return counts


def measure_ruff(dirs: list[str], ruff: str) -> dict:
    """`ruff check --select ALL` over the same directories, uncached, as a whole process:
    the fastest full-featured Python linter, the yardstick across machines."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([ruff, "check", "--select", "ALL", "--no-cache", "--isolated",
                    "--exit-zero", "--quiet", *dirs], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"seconds": seconds, "cpu": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime)}


def _child(kind: str, dirs: list[str], *extra, checkout: str | None = None) -> dict:
    """A measurement in a fresh process; with ``checkout``, of that checkout's aliaslint."""
    command = [sys.executable, __file__, "--child", kind, *extra, "--", *dirs]
    env = dict(os.environ, ALIASLINT_STAGES="1")  # one flag test per stage and file
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([checkout, env.get("PYTHONPATH", "")])
    output = subprocess.run(command, check=True, capture_output=True, text=True,
                            env=env).stdout
    return json.loads(output.splitlines()[-1])


HELPER = """import torch


def standardize(x):
    return (x - x.mean()) / (x.std() + 1e-5)
"""
IMPORTER = """import torch
from torch import nn

from helpers import standardize


class Block{n}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return standardize(torch.tanh(self.fc(x)))


def step(block, x):
    loss = block(x).pow(2).mean()
    loss.backward()
    return loss.item()
"""


def _program(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "helpers.py").write_text(HELPER)
    for n in range(20):
        (root / f"block{n}.py").write_text(IMPORTER.format(n=n))


def measure_edit(dirs: list[str], jobs: int, cache: str | None) -> dict:
    """A warm check of the 20-file program after its helper is edited as ``dirs[1]`` says
    ("comment" or "code"); ``dirs[0]`` is the program, already checked once."""
    from aliaslint.config import CliOptions
    from aliaslint.engine import check_paths

    root, edit = Path(dirs[0]), dirs[1]
    helper = root / "helpers.py"
    helper.write_text(HELPER + "# per-batch statistics\n" if edit == "comment" else
                      HELPER.replace("return (x - x.mean())", "x.sub_(x.mean())\n    return x"))
    notes: list[str] = []
    try:
        from aliaslint import verbose
    except ImportError:  # a checkout from before `check -v` (--against d9c68ac): not counted
        pass
    else:
        verbose.enabled = True
        verbose.note = notes.append  # type: ignore[assignment]
    start = time.perf_counter()
    check_paths([str(root)], CliOptions(isolated=True), jobs=jobs,
                cache=Path(cache) if cache else False)
    seconds = time.perf_counter() - start
    counted = [n for n in notes if n.endswith("from cache")]
    return {"seconds": seconds, "cpu": time.process_time(),
            "analysed": counted[-1] if counted else "n/a"}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def against(dirs: list[str], other: str, jobs_list: list[int], repeat: int) -> None:
    """Each cold check paired with ``other``'s, then the helper-edit scenario for both."""
    here = str(Path(__file__).resolve().parent.parent)
    for jobs in jobs_list:
        runs: dict[str, list[dict]] = {"this": [], "other": []}
        for _ in range(repeat):
            for name, checkout in (("this", here), ("other", other)):
                runs[name].append(_child("check", dirs, "--child-jobs", str(jobs),
                                         checkout=checkout))
        ratios = [a["cpu"] / b["cpu"] for a, b in zip(runs["this"], runs["other"])]
        walls = [a["seconds"] / b["seconds"] for a, b in zip(runs["this"], runs["other"])]
        print(f"cold check, {jobs} job(s), {repeat} pairs: cpu this "
              f"{_median([r['cpu'] for r in runs['this']]):.1f} s, other "
              f"{_median([r['cpu'] for r in runs['other']]):.1f} s, paired cpu ratio median "
              f"{_median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
              f"wall ratio median {_median(walls):.3f}; findings "
              f"{runs['this'][0]['findings']} / {runs['other'][0]['findings']}")
        for name, label in (("this", "this"), ("other", "other")):
            if runs[name][0].get("stages"):
                print(f"  {label} cpu by stage (median): " + ", ".join(
                    f"{stage} {_median([r['stages'][stage] for r in runs[name]]):.1f} s"
                    for stage in runs[name][0]["stages"]))
    with tempfile.TemporaryDirectory(prefix="aliaslint-bench-") as scratch:
        for name, checkout in (("this", here), ("other", other)):
            program = Path(scratch) / name / "program"
            cache = str(Path(scratch) / name / "cache")
            _program(program)
            _child("check", [str(program)], "--child-jobs", "2", "--child-cache", cache,
                   checkout=checkout)
            for edit in ("comment", "code"):
                run = _child("edit", [str(program), edit], "--child-jobs", "2",
                             "--child-cache", cache, checkout=checkout)
                print(f"{name}: warm check of 20 importers + helper after a {edit} edit of "
                      f"the helper: {run['seconds']:.2f} s wall ({run['analysed']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", metavar="DIR", help="a directory to measure")
    parser.add_argument("--corpora", metavar="ROOT",
                        help="measure every directory in ROOT (see benchmarks/corpora.py)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-parse", action="store_true",
                        help="skip the parse-only reference (ratios are then not printed)")
    parser.add_argument("--ruff", metavar="PATH", default=shutil.which("ruff"),
                        help="the ruff executable timed beside the checks (default: ruff on "
                             "PATH; none: no ruff row)")
    parser.add_argument("--against", metavar="CHECKOUT",
                        help="pair every check with this other checkout of aliaslint")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per figure (--against)")
    parser.add_argument("--pairs", type=int, default=1,
                        help="parse-only and cold check runs made in turn (the time ratio's "
                             "median and range)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-jobs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--child-cache", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    dirs = list(args.dirs)
    if args.child == "edit":  # DIRS: the program and which edit
        print(json.dumps(measure_edit(dirs, args.child_jobs, args.child_cache)))
        return 0
    if args.corpora:
        root = Path(args.corpora)
        corpora = sorted(str(p) for p in root.iterdir()
                         if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
        if not corpora:
            print(f"bench_check.py: {root} is not a directory with corpora in it.\n{FETCH_HINT}",
                  file=sys.stderr)
            return 2
        dirs += corpora
    if not dirs:
        print(f"bench_check.py: no corpora given (--corpora ROOT or DIRs).\n{FETCH_HINT}",
              file=sys.stderr)
        return 2
    missing = [d for d in dirs if not Path(d).exists()]
    if missing:
        print(f"bench_check.py: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.child == "parse":
        print(json.dumps(measure_parse(dirs)))
        return 0
    if args.child == "check":
        print(json.dumps(measure_check(dirs, args.child_jobs, args.child_cache)))
        return 0
    if args.child == "prefilter":
        print(json.dumps(measure_prefilter(dirs)))
        return 0

    print(f"aliaslint benchmark on {len(dirs)} directories, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    if args.against:
        against(dirs, args.against, args.jobs, args.repeat)
        return 0
    prefilter = _child("prefilter", dirs)
    lines = prefilter["lines"]
    print(f"files {prefilter['files']}, lines {lines:,}")
    print(f"not parsed: no 'torch': {prefilter['no_torch_files']} files / "
          f"{prefilter['no_torch_lines'] / lines:.1%} of lines; no word an enabled rule needs: "
          f"{prefilter['no_words_files']} files / {prefilter['no_words_lines'] / lines:.1%}; "
          f"quiet: {prefilter['quiet_files']} files / {prefilter['quiet_lines'] / lines:.1%}")
    parse_rate = None
    if not args.no_parse:
        parse = _child("parse", dirs)
        parse_rate = parse["lines"] / parse["seconds"]
        print(f"{'libcst parse only, 1 process':32} {parse['seconds']:8.1f} s "
              f"{parse_rate:12,.0f} lines/s  ratio 1.00  (cpu {parse['cpu']:.1f} s)")

    ruff = None
    if args.ruff and args.ruff != "none":
        ruff = measure_ruff(dirs, args.ruff)
        print(f"{'ruff check --select ALL':32} {ruff['seconds']:8.1f} s "
              f"{lines / ruff['seconds']:12,.0f} lines/s  (cpu {ruff['cpu']:.1f} s, "
              f"all cores)")

    def report(label: str, run: dict) -> None:
        rate = lines / run["seconds"]
        # Throughput over the parse's (higher is faster), and time over the parse's (the
        # figure the speed targets are stated in: lower is faster).
        ratio = f"  ratio {rate / parse_rate:.2f} (time {parse_rate / rate:.2f}x the parse's)" \
            if parse_rate else ""
        if ruff is not None:
            ratio += (f"  ÷ ruff: wall {run['seconds'] / ruff['seconds']:.1f}x, "
                      f"cpu {run['cpu'] / ruff['cpu']:.1f}x")
        workers = run["worker_rss_mb"]
        memory = f"peak RSS main {run['main_rss_mb']:.0f} MB" + (
            f", per worker {workers:.0f} MB" if workers else "")
        print(f"{label:32} {run['seconds']:8.1f} s {rate:12,.0f} lines/s{ratio}  {memory}  "
              f"(cpu {run['cpu']:.1f} s, {run['findings']} findings)")
        if run.get("stages"):
            print(f"{'':32} cpu by stage: " + ", ".join(
                f"{name} {seconds:.1f} s" for name, seconds in run["stages"].items()))

    with tempfile.TemporaryDirectory(prefix="aliaslint-bench-") as scratch:
        cold: dict[int, dict] = {}
        for jobs in args.jobs:
            cache = str(Path(scratch) / f"cache-{jobs}")
            cold[jobs] = _child("check", dirs, "--child-jobs", str(jobs), "--child-cache", cache)
            report(f"cold check, {jobs} job{'s' if jobs > 1 else ''}", cold[jobs])
        warm_jobs = max(args.jobs)
        cache = str(Path(scratch) / f"cache-{warm_jobs}")
        report("warm check (all cached)",
               _child("check", dirs, "--child-jobs", str(warm_jobs), "--child-cache", cache))
        if parse_rate and args.pairs > 1:
            pairs = [(parse["seconds"], cold[warm_jobs]["seconds"])]
            for index in range(args.pairs - 1):
                reference = _child("parse", dirs)
                run = _child("check", dirs, "--child-jobs", str(warm_jobs), "--child-cache",
                             str(Path(scratch) / f"pair-{index}"))
                pairs.append((reference["seconds"], run["seconds"]))
            ratios = [check / reference for reference, check in pairs]
            print(f"parse-only and cold check ({warm_jobs} jobs) in turn, {len(pairs)} pairs: "
                  f"time {_median(ratios):.2f}x the parse's (min {min(ratios):.2f}, max "
                  f"{max(ratios):.2f}; parse {', '.join(f'{p:.1f}' for p, _ in pairs)} s, "
                  f"check {', '.join(f'{c:.1f}' for _, c in pairs)} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
