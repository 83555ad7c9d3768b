"""Score an aliaslint checkout on the conformance cases in benchmarks/conformance/.

    python benchmarks/conformance.py [--root DIR] [--static] [--trace] [--json]
    python benchmarks/conformance.py --behaviour

Each case is a standalone script whose header says where the pattern comes from, which findings
a precise checker gives and on which lines, and what torch does when it runs:

    # source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_...
    # expect: AL106 at line 8            (one line per finding; `# expect: none` for a fine case)
    # torch: raises RuntimeError "returns multiple views"   (or `ok`, or `wrong "what it shows"`)

A `wrong` case detects the silent hazard itself and exits 1 (`raise SystemExit(1)`).

`--static` (the default) runs `aliaslint check` once over all cases and scores it twice: the
default (high-confidence) findings, and with `--confidence low` when the checkout knows it.
`--trace` runs each case under `aliaslint check --trace`: a hazard counts as found when the
expected finding is confirmed at run time or reported by the tracer.  A hazard case is found
when a finding with the expected code is on the expected line; a fine case with any finding is
a false-positive file.  `--root DIR` scores another checkout (an older commit in a worktree):
it runs as `python -m aliaslint` with DIR on PYTHONPATH, on a copy of the cases.

`--behaviour` runs every case in this process (torch required) and checks it behaves as its
header says; exit 1 when one does not.

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
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "conformance"
REPO = HERE.parent

_EXPECT = re.compile(r"# expect: (AL\d{3}) at line (\d+)$")
_TORCH = re.compile(r'# torch: (ok|raises (\w+) "(.+)"|wrong "(.+)")$')


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
    """A case's header; ValueError when it is malformed."""
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


def behave(case: Case) -> str | None:
    """Run the case as `__main__` in a fresh namespace; None when it behaves as its header
    says, else what it did."""
    cwd = os.getcwd()
    raised: BaseException | None = None
    with tempfile.TemporaryDirectory() as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.chdir(scratch)
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                runpy.run_path(str(case.path), run_name="__main__")
        except BaseException as error:  # the hazard under test, or the case's own exit
            raised = error
        finally:
            os.chdir(cwd)
    exit_code = raised.code if isinstance(raised, SystemExit) else None
    if case.behaviour == "ok":
        if raised is None or isinstance(raised, SystemExit) and exit_code in (0, None):
            return None
        return f"expected to run cleanly, got {raised!r}"
    if case.behaviour == "wrong":
        if isinstance(raised, AssertionError) or isinstance(raised, SystemExit) and exit_code:
            return None
        return f"expected the script to detect the wrong result and exit 1, got {raised!r}"
    if type(raised).__name__ == case.error and case.text in str(raised):
        return None
    return f"expected {case.error} containing {case.text!r}, got {raised!r}"


# -- scoring -----------------------------------------------------------------------------------


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
        return {"label": self.label, "available": self.available, "found": found,
                "hazards": total, "false_positive_files": sorted(self.false_files),
                "missed": sorted(n for v in self.missed.values() for n in v),
                "unexpected": sorted(self.extra)}


def score(label: str, cases: list[Case], findings: dict[str, list[tuple[str, int]]]) -> Score:
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
        result.extra += [f"{case.name}:{row} {code}" for code, row in got
                         if (code, row) not in case.expected]
    return result


def _aliaslint(root: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def _findings(report: str, confidences: tuple[str, ...]) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for item in json.loads(report or "[]"):
        if item.get("confidence", "high") in confidences and item["code"] < "AL900":
            found[Path(item["filename"]).stem].append((item["code"], item["location"]["row"]))
    return found


def static_scores(root: Path, cases: list[Case], work: Path) -> list[Score]:
    files = [case.path.name for case in cases]
    base = ["check", "--isolated", "--no-cache", "--select", "ALL", "--output-format", "json"]
    low = _aliaslint(root, [*base, "--confidence", "low", *files], work)
    scores = []
    if low.returncode in (0, 1):
        scores.append(score("static", cases, _findings(low.stdout, ("high",))))
        scores.append(score("static, with low", cases, _findings(low.stdout, ("high", "low"))))
    else:  # a checkout without confidence tiers
        plain = _aliaslint(root, [*base, *files], work)
        if plain.returncode not in (0, 1):
            raise SystemExit(f"aliaslint check failed:\n{plain.stderr[-2000:]}")
        scores.append(score("static", cases, _findings(plain.stdout, ("high",))))
        scores.append(Score("static, with low", available=False))
    return scores


def trace_score(root: Path, cases: list[Case], work: Path) -> Score:
    findings: dict[str, list[tuple[str, int]]] = {}
    for case in cases:
        report = work / f"{case.name}.report.json"
        _aliaslint(root, ["check", "--trace", "--output-format", "json", "-o", str(report),
                          case.path.name], work)
        text = report.read_text() if report.exists() else "[]"
        findings[case.name] = [
            (item["code"], item["location"]["row"]) for item in json.loads(text or "[]")
            if item.get("status") in ("confirmed", "runtime")
            and Path(item["filename"]).stem == case.name]
    return score("traced", cases, findings)


def _table(scores: list[Score], cases: list[Case]) -> str:
    families = sorted({case.family for case in cases if case.hazard})
    rows = ["| | " + " | ".join(s.label for s in scores) + " |",
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the aliaslint checkout to score")
    parser.add_argument("--static", action="store_true", help="score `aliaslint check` (default)")
    parser.add_argument("--trace", action="store_true", help="score `aliaslint check --trace`")
    parser.add_argument("--behaviour", action="store_true",
                        help="run the cases under torch and check their headers")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    cases = load()
    if args.behaviour:
        failures = [(case.name, problem) for case in cases if (problem := behave(case))]
        for name, problem in failures:
            print(f"{name}: {problem}")
        print(f"{len(cases) - len(failures)}/{len(cases)} cases behave as their headers say")
        return 1 if failures else 0
    scores: list[Score] = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for case in cases:
            shutil.copy(case.path, work / case.path.name)
        if args.static or not args.trace:
            scores += static_scores(args.root.resolve(), cases, work)
        if args.trace:
            scores.append(trace_score(args.root.resolve(), cases, work))
    if args.json:
        print(json.dumps([s.to_json() for s in scores], indent=2))
        return 0
    hazards = sum(1 for case in cases if case.hazard)
    print(f"{len(cases)} cases: {hazards} hazards, {len(cases) - hazards} fine; root {args.root}")
    print(_table(scores, cases))
    for s in scores:
        if not s.available:
            continue
        missed = sorted(n for v in s.missed.values() for n in v)
        print(f"\n{s.label}: missed {len(missed)}: {', '.join(missed) or '-'}")
        print(f"{s.label}: false-positive files: {', '.join(sorted(s.false_files)) or '-'}")
        if s.extra:
            print(f"{s.label}: unexpected findings in hazard files: {', '.join(s.extra)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
