"""Score an aliaslint checkout on the conformance cases in benchmarks/conformance/.

    python benchmarks/conformance.py [--root DIR] [--static] [--trace] [--json]
    python benchmarks/conformance.py --behaviour [--json]

Each case is a standalone script whose header says where the pattern comes from, which findings
a precise checker gives and on which lines, and what torch does when it runs:

    # source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_...
    # expect: AL106 at line 8            (one line per finding; `# expect: none` for a fine case)
    # torch: raises RuntimeError "returns multiple views"   (or `ok`, or `wrong "what it shows"`)

A `wrong` case detects the silent hazard itself and exits non-zero (`raise SystemExit(1)` or an
AssertionError).

`--static` (the default) runs `aliaslint check --isolated --no-cache --select ALL --output-format
json` once over all the cases, and once more with `--confidence low` when the checkout knows that
option (otherwise the low tier is n/a). `--trace` runs each case under `aliaslint trace --confirm`:
there a hazard counts as found when the expected finding is confirmed at run time or reported by
the tracer. A hazard case is found when a finding with every expected code is on its expected
line; a fine case with any finding is a false-positive file; findings in a hazard file that were
not expected are listed as unexpected.

`--root DIR` scores another checkout (for instance an older commit in a git worktree): aliaslint
runs as `python -m aliaslint` with DIR first on PYTHONPATH. The working directory of those runs
is a scratch copy of the cases, not DIR: the confirming half of the tracer only checks the files
under the working directory, so running from DIR would skip it for an older checkout whose tree
does not hold the cases, and both checkouts must see the cases the same way.

`--behaviour` runs every case in one process (torch required), each as `__main__` in a fresh
namespace, and compares what it did with its header; with `--json` it prints what each case did
instead (the test suite judges that). Exit 1 when a case does not behave as its header says.

Standard library only, apart from what the cases themselves import.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "conformance"
REPO = HERE.parent

_EXPECT = re.compile(r"# expect: (AL\d{3}) at line (\d+)$")
_TORCH = re.compile(r'# torch: (ok|raises (\w+) "(.+)"|wrong "(.+)")$')
TRACE_FOUND = ("confirmed", "runtime")  # statuses that mean the run showed the hazard


@dataclass
class Case:
    path: Path
    source: str
    expected: list[tuple[str, int]]
    behaviour: str  # "ok", "raises", "wrong"
    error: str = ""  # the exception type, for "raises"
    text: str = ""  # what the error message contains, or what goes wrong

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def family(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def hazard(self) -> bool:
        return bool(self.expected)


def parse(path: Path) -> Case:
    """A case's header (its leading comment lines); ValueError when it is malformed."""
    lines = path.read_text().splitlines()
    source = ""
    expected: list[tuple[str, int]] = []
    none = False
    torch_line = None
    for line in lines:
        if not line.startswith("# "):
            break
        if line.startswith("# source: "):
            source = line.removeprefix("# source: ").strip()
        elif line == "# expect: none":
            none = True
        elif (match := _EXPECT.match(line)) is not None:
            expected.append((match.group(1), int(match.group(2))))
        elif (match := _TORCH.match(line)) is not None:
            torch_line = match
    if not source or torch_line is None or none == bool(expected):
        raise ValueError(f"{path.name}: needs `# source:`, `# expect:` lines or `# expect: none`, "
                         "and `# torch:`")
    for _, row in expected:
        if not 0 < row <= len(lines):
            raise ValueError(f"{path.name}: expected line {row} is outside the file")
    if torch_line.group(1) == "ok":
        return Case(path, source, expected, "ok")
    if torch_line.group(2) is not None:
        return Case(path, source, expected, "raises", torch_line.group(2), torch_line.group(3))
    return Case(path, source, expected, "wrong", text=torch_line.group(4))


def load(directory: Path = CASES) -> list[Case]:
    return [parse(path) for path in sorted(directory.glob("*.py"))]


# -- behaviour under torch -------------------------------------------------------------------


def run_case(path: Path) -> dict[str, object]:
    """Run one script as `__main__` in a fresh namespace and say how it ended: `exit` (the
    SystemExit code, 0 for a normal end), or `error` and `message` for any other exception."""
    cwd = os.getcwd()
    outcome: dict[str, object] = {"exit": 0, "error": None, "message": ""}
    # A scratch working directory and muted output: a case must not depend on or leave files,
    # and warnings filters it sets must not leak into the next case.
    with tempfile.TemporaryDirectory() as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.chdir(scratch)
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                runpy.run_path(str(path), run_name="__main__")
        except SystemExit as stop:
            code = stop.code
            outcome["exit"] = code if isinstance(code, int) else (0 if code is None else 1)
        except BaseException as error:  # the hazard under test, or the case's own assertion
            outcome.update(exit=None, error=type(error).__name__, message=str(error))
        finally:
            os.chdir(cwd)
    return outcome


def judge(case: Case, outcome: dict[str, object]) -> str | None:
    """None when the outcome matches the case's `# torch:` header, else what went wrong."""
    error, message, code = outcome["error"], str(outcome["message"]), outcome["exit"]
    if case.behaviour == "ok":
        return None if error is None and code == 0 else f"expected to run cleanly, got {outcome}"
    if case.behaviour == "wrong":
        if error == "AssertionError" or (error is None and code != 0):
            return None
        return f"expected the script to detect the wrong result and exit non-zero, got {outcome}"
    if error == case.error and case.text in message:
        return None
    return f"expected {case.error} containing {case.text!r}, got {outcome}"


# -- scoring -----------------------------------------------------------------------------------


Findings = dict[str, list[tuple[str, int]]]  # case name -> (code, row) of each finding


@dataclass
class Score:
    label: str
    found: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    missed: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    false_files: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # unexpected findings in hazard files
    available: bool = True

    def recall(self) -> tuple[int, int]:
        found = sum(len(v) for v in self.found.values())
        return found, found + sum(len(v) for v in self.missed.values())

    def to_json(self) -> dict[str, object]:
        found, total = self.recall()
        families = sorted(set(self.found) | set(self.missed))
        return {"label": self.label, "available": self.available, "found": found,
                "hazards": total, "false_positive_files": sorted(self.false_files),
                "missed": sorted(n for v in self.missed.values() for n in v),
                "unexpected": sorted(self.extra),
                "families": {f: [len(self.found.get(f, [])),
                                 len(self.found.get(f, [])) + len(self.missed.get(f, []))]
                             for f in families}}


def score(label: str, cases: list[Case], findings: Findings) -> Score:
    result = Score(label)
    for case in cases:
        got = findings.get(case.name, [])
        if not case.hazard:
            if got:
                result.false_files.append(case.name)
            continue
        if all(item in got for item in case.expected):
            result.found[case.family].append(case.name)
        else:
            result.missed[case.family].append(case.name)
        result.extra += [f"{case.name}:{row} {code}" for code, row in sorted(set(got))
                         if (code, row) not in case.expected]
    return result


def _aliaslint(root: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def _findings(report: str, statuses: tuple[str, ...] | None = None) -> Findings:
    """(code, row) per case of a JSON report; only findings with one of `statuses` if given.
    Meta findings (AL9xx: a file that could not be checked, an unused suppression) are not
    about the hazard and are left out."""
    found: Findings = defaultdict(list)
    for item in json.loads(report or "[]"):
        if item["code"] >= "AL900":
            continue
        if statuses is not None and item.get("status") not in statuses:
            continue
        found[Path(item["filename"]).stem].append((item["code"], item["location"]["row"]))
    return found


def static_scores(root: Path, cases: list[Case], work: Path) -> list[Score]:
    files = [case.path.name for case in cases]
    base = ["check", "--isolated", "--no-cache", "--select", "ALL", "--output-format", "json"]
    default = _aliaslint(root, [*base, *files], work)
    if default.returncode not in (0, 1):
        raise SystemExit(f"aliaslint check failed:\n{default.stderr[-2000:]}")
    scores = [score("static", cases, _findings(default.stdout))]
    low = _aliaslint(root, [*base, "--confidence", "low", *files], work)
    if low.returncode in (0, 1):
        scores.append(score("static, with low", cases, _findings(low.stdout)))
    elif "--confidence" in low.stderr:  # a checkout from before the confidence tiers
        scores.append(Score("static, with low", available=False))
    else:
        raise SystemExit(f"aliaslint check --confidence low failed:\n{low.stderr[-2000:]}")
    return scores


def trace_score(root: Path, cases: list[Case], work: Path) -> Score:
    def trace(case: Case) -> list[tuple[str, int]]:
        report = work / f"{case.name}.report.json"
        _aliaslint(root, ["trace", "--confirm", "--isolated", "--select", "ALL",
                          "--output-format", "json", "-o", str(report), case.path.name], work)
        text = report.read_text() if report.exists() else "[]"
        return _findings(text, TRACE_FOUND).get(case.name, [])

    # One process per case (a case that raises ends its run); they are independent.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(trace, cases))
    return score("traced", cases, {case.name: got for case, got in zip(cases, results)})


def _table(scores: list[Score], cases: list[Case]) -> str:
    families = sorted({case.family for case in cases if case.hazard})
    rows = ["| family | " + " | ".join(s.label for s in scores) + " |",
            "|---|" + "---|" * len(scores)]
    for family in families:
        total = sum(1 for case in cases if case.hazard and case.family == family)
        cells = [f"{len(s.found.get(family, []))}/{total}" if s.available else "n/a"
                 for s in scores]
        rows.append(f"| {family} | " + " | ".join(cells) + " |")
    cells = []
    for s in scores:
        found, total = s.recall()
        cells.append(f"**{found}/{total}**" if s.available else "n/a")
    rows.append("| recall | " + " | ".join(cells) + " |")
    fine = sum(1 for case in cases if not case.hazard)
    rows.append("| false-positive files | " + " | ".join(
        f"{len(s.false_files)}/{fine}" if s.available else "n/a" for s in scores) + " |")
    return "\n".join(rows)


def _behaviour(cases: list[Case], as_json: bool) -> int:
    outcomes = {case.name: run_case(case.path) for case in cases}
    failures = [(case.name, problem) for case in cases
                if (problem := judge(case, outcomes[case.name])) is not None]
    if as_json:
        print(json.dumps(outcomes, indent=1, sort_keys=True))
    else:
        for name, problem in failures:
            print(f"{name}: {problem}")
        print(f"{len(cases) - len(failures)}/{len(cases)} cases behave as their headers say")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the aliaslint checkout to score")
    parser.add_argument("--static", action="store_true", help="score `aliaslint check` (default)")
    parser.add_argument("--trace", action="store_true",
                        help="score `aliaslint trace --confirm`, one run per case")
    parser.add_argument("--behaviour", action="store_true",
                        help="run the cases under torch and compare them with their headers")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    cases = load()
    if args.behaviour:
        return _behaviour(cases, args.json)
    root = args.root.resolve()
    if not (root / "aliaslint" / "__init__.py").is_file():
        parser.error(f"{root} is not an aliaslint checkout")
    scores: list[Score] = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for case in cases:
            shutil.copy(case.path, work / case.path.name)
        if args.static or not args.trace:
            scores += static_scores(root, cases, work)
        if args.trace:
            scores.append(trace_score(root, cases, work))
    if args.json:
        print(json.dumps([s.to_json() for s in scores], indent=2))
        return 0
    hazards = sum(1 for case in cases if case.hazard)
    print(f"{len(cases)} cases: {hazards} hazards, {len(cases) - hazards} fine; root {root}")
    print(_table(scores, cases))
    for s in scores:
        if not s.available:
            print(f"\n{s.label}: n/a (this checkout has no such option)")
            continue
        missed = sorted(n for v in s.missed.values() for n in v)
        print(f"\n{s.label}: missed {len(missed)}: {', '.join(missed) or '-'}")
        print(f"{s.label}: false-positive files: {', '.join(sorted(s.false_files)) or '-'}")
        print(f"{s.label}: unexpected findings in hazard files: {len(s.extra)}"
              + (f": {', '.join(s.extra)}" if s.extra else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
