"""Score an aliaslint checkout on the conformance cases in benchmarks/conformance/, or on another
case set such as benchmarks/programs/wp/.

    python benchmarks/conformance.py [--cases DIR] [--root DIR] [--static] [--trace] [--json]
    python benchmarks/conformance.py --behaviour [--cases DIR ...] [--json]

Each case is a standalone script whose header says where the pattern comes from, which findings
a precise checker gives and on which lines, and what torch does when it runs:

    # source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_...
    # expect: AL106 at line 8            (one line per finding; `# expect: none` for a fine case)
    # torch: raises RuntimeError "returns multiple views"   (or `ok`, or `wrong "what it shows"`)

A `wrong` case detects the silent hazard itself and exits non-zero (`raise SystemExit(1)` or an
AssertionError).

A case is a single file `NAME.py` or, in the program sets (benchmarks/programs/*/), a directory
`NAME/` holding a small program of several modules whose entry point is `NAME/main.py`; the
header is then main.py's, and an expected finding in another of its modules names the file:
`# expect: AL208 at utils.py:12` (relative to the case directory). `--cases DIR` picks the set.

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

A directory case is checked as a whole directory (`aliaslint check ... NAME`) and traced with
the directory as the working directory; findings are matched by file and line.

`--behaviour` runs every case of the given sets (`--cases` repeated; default the conformance set)
in one process (torch required), each as `__main__` in a fresh namespace, and compares what it
did with its header; with `--json` it prints what each case did instead, keyed `SET/NAME` (the
test suite judges that). A directory case runs from a scratch copy of its directory, which is its
working directory and first on `sys.path`; its modules leave `sys.modules` afterwards, so one
case's `utils` is not the next one's. Exit 1 when a case does not behave as its header says.

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
PROGRAMS = HERE / "programs"  # one directory per set of program cases
REPO = HERE.parent
ENTRY = "main.py"  # the entry point, and the header, of a directory case

# `at line N` is a line of the file holding the header; `at FILE:N` names a module of a
# directory case, relative to the case directory.
_EXPECT = re.compile(r"# expect: (AL\d{3}) at (?:line (\d+)|([\w./-]+\.py):(\d+))$")
_TORCH = re.compile(r'# torch: (ok|raises (\w+) "(.+)"|wrong "(.+)")$')
TRACE_FOUND = ("confirmed", "runtime")  # statuses that mean the run showed the hazard


Finding = tuple[str, str, int]  # code, file relative to the case (a single file: its name), row


@dataclass
class Case:
    path: Path  # the script, or the directory of a program case
    source: str
    expected: list[Finding]
    behaviour: str  # "ok", "raises", "wrong"
    error: str = ""  # the exception type, for "raises"
    text: str = ""  # what the error message contains, or what goes wrong

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def key(self) -> str:
        """The case's name within all sets: `SET/NAME`."""
        return f"{self.path.parent.name}/{self.name}"

    @property
    def script(self) -> Path:
        """What runs: the file itself, or a directory case's entry point."""
        return self.path / ENTRY if self.path.is_dir() else self.path

    @property
    def files(self) -> list[Path]:
        """The case's Python files."""
        if not self.path.is_dir():
            return [self.path]
        return sorted(p for p in self.path.rglob("*.py") if "__pycache__" not in p.parts)

    @property
    def family(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def hazard(self) -> bool:
        return bool(self.expected)


def parse(path: Path) -> Case:
    """A case's header (the leading comment lines of the script, or of a directory case's
    main.py); ValueError when it is malformed."""
    directory = path.is_dir()
    script = path / ENTRY if directory else path
    if not script.is_file():
        raise ValueError(f"{path.name}: a directory case needs its entry point {ENTRY}")
    lines = script.read_text().splitlines()
    source = ""
    expected: list[Finding] = []
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
            if match.group(2) is not None:
                expected.append((match.group(1), script.name, int(match.group(2))))
            elif directory:
                expected.append((match.group(1), match.group(3), int(match.group(4))))
            else:
                raise ValueError(f"{path.name}: a single-file case gives `at line N`")
        elif (match := _TORCH.match(line)) is not None:
            torch_line = match
    if not source or torch_line is None or none == bool(expected):
        raise ValueError(f"{path.name}: needs `# source:`, `# expect:` lines or `# expect: none`, "
                         "and `# torch:`")
    for _, name, row in expected:
        target = path / name if directory else script
        if not target.is_file() or not target.resolve().is_relative_to(path.resolve()):
            raise ValueError(f"{path.name}: expected file {name} is not in the case")
        if not 0 < row <= len(target.read_text().splitlines()):
            raise ValueError(f"{path.name}: expected line {row} is outside {name}")
    if torch_line.group(1) == "ok":
        return Case(path, source, expected, "ok")
    if torch_line.group(2) is not None:
        return Case(path, source, expected, "raises", torch_line.group(2), torch_line.group(3))
    return Case(path, source, expected, "wrong", text=torch_line.group(4))


def load(directory: Path = CASES) -> list[Case]:
    """The cases of a set: its scripts and its directories (each a program with a main.py)."""
    entries = [path for path in sorted(directory.iterdir())
               if (path.suffix == ".py" and path.is_file())
               or (path.is_dir() and not path.name.startswith((".", "_")))]
    return [parse(path) for path in entries]


def program_sets() -> list[Path]:
    """The sets of program cases, benchmarks/programs/*/."""
    if not PROGRAMS.is_dir():
        return []
    return sorted(path for path in PROGRAMS.iterdir()
                  if path.is_dir() and not path.name.startswith((".", "_")))


# -- behaviour under torch -------------------------------------------------------------------


def run_case(path: Path) -> dict[str, object]:
    """Run one script (or a directory case's main.py) as `__main__` in a fresh namespace and say
    how it ended: `exit` (the SystemExit code, 0 for a normal end), or `error` and `message` for
    any other exception."""
    cwd = os.getcwd()
    outcome: dict[str, object] = {"exit": 0, "error": None, "message": ""}
    # A scratch working directory and muted output: a case must not depend on or leave files,
    # and warnings filters it sets must not leak into the next case. A directory case runs from
    # a scratch copy of itself (so its imports leave no __pycache__ in the tree), first on
    # sys.path as `python main.py` would put it.
    with tempfile.TemporaryDirectory() as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script, home = path, Path(scratch)
        if path.is_dir():
            home = Path(scratch) / path.name
            shutil.copytree(path, home, ignore=shutil.ignore_patterns("__pycache__"))
            script = home / ENTRY
        os.chdir(home)
        saved_path = list(sys.path)
        before = set(sys.modules)
        if path.is_dir():
            sys.path.insert(0, str(home))
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                runpy.run_path(str(script), run_name="__main__")
        except SystemExit as stop:
            code = stop.code
            outcome["exit"] = code if isinstance(code, int) else (0 if code is None else 1)
        except BaseException as error:  # the hazard under test, or the case's own assertion
            outcome.update(exit=None, error=type(error).__name__, message=str(error))
        finally:
            os.chdir(cwd)
            sys.path[:] = saved_path
            if path.is_dir():
                _forget_modules(home, before)
    return outcome


def _forget_modules(home: Path, before: set[str]) -> None:
    """Drop the modules a directory case imported from itself: the next case's `utils` or
    `models` must be its own. Modules from elsewhere (torch, imported on first use) stay."""
    root = str(home.resolve())
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        spec = getattr(module, "__spec__", None)
        places = [getattr(module, "__file__", None) or ""]
        places += list(getattr(spec, "submodule_search_locations", None) or [])
        if any(place and os.path.realpath(place).startswith(root + os.sep) for place in places):
            del sys.modules[name]


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


Findings = dict[str, list[Finding]]  # case's entry (NAME.py or NAME) -> its findings


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
        got = findings.get(case.path.name, [])
        if not case.hazard:
            if got:
                result.false_files.append(case.name)
            continue
        if all(item in got for item in case.expected):
            result.found[case.family].append(case.name)
        else:
            result.missed[case.family].append(case.name)
        result.extra += [f"{_where(case, name, row)} {code}" for code, name, row in sorted(set(got))
                         if (code, name, row) not in case.expected]
    return result


def _where(case: Case, name: str, row: int) -> str:
    return f"{case.name}:{row}" if case.path.is_file() else f"{case.name}/{name}:{row}"


def _aliaslint(root: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def _findings(report: str, work: Path, cwd: Path | None = None,
              statuses: tuple[str, ...] | None = None) -> Findings:
    """(code, file, row) per case of a JSON report made in `cwd` (default `work`, the scratch
    copy of the set); only findings with one of `statuses` if given. A file's first part under
    `work` is its case (NAME.py, or the directory NAME). Meta findings (AL9xx: a file that could
    not be checked, an unused suppression) are not about the hazard and are left out."""
    found: Findings = defaultdict(list)
    base = (cwd or work).resolve()
    for item in json.loads(report or "[]"):
        if item["code"] >= "AL900":
            continue
        if statuses is not None and item.get("status") not in statuses:
            continue
        where = (base / item["filename"]).resolve()
        if not where.is_relative_to(work.resolve()):
            continue
        parts = where.relative_to(work.resolve()).parts
        name = parts[0] if len(parts) == 1 else "/".join(parts[1:])
        found[parts[0]].append((item["code"], name, item["location"]["row"]))
    return found


def static_scores(root: Path, cases: list[Case], work: Path) -> list[Score]:
    files = [case.path.name for case in cases]  # a directory case is checked as a whole
    base = ["check", "--isolated", "--no-cache", "--select", "ALL", "--output-format", "json"]
    default = _aliaslint(root, [*base, *files], work)
    if default.returncode not in (0, 1):
        raise SystemExit(f"aliaslint check failed:\n{default.stderr[-2000:]}")
    scores = [score("static", cases, _findings(default.stdout, work))]
    low = _aliaslint(root, [*base, "--confidence", "low", *files], work)
    if low.returncode in (0, 1):
        scores.append(score("static, with low", cases, _findings(low.stdout, work)))
    elif "--confidence" in low.stderr:  # a checkout from before the confidence tiers
        scores.append(Score("static, with low", available=False))
    else:
        raise SystemExit(f"aliaslint check --confidence low failed:\n{low.stderr[-2000:]}")
    return scores


def trace_score(root: Path, cases: list[Case], work: Path) -> Score:
    def trace(case: Case) -> list[Finding]:
        # The report sits outside the set's copy, so no case directory gains a file.
        report = work.parent / f"{case.name}.report.json"
        # A directory case runs as `python main.py` from its directory.
        cwd = work / case.path.name if case.path.is_dir() else work
        _aliaslint(root, ["trace", "--confirm", "--isolated", "--select", "ALL",
                          "--output-format", "json", "-o", str(report),
                          case.script.name if case.path.is_dir() else case.path.name], cwd)
        text = report.read_text() if report.exists() else "[]"
        return _findings(text, work, cwd, TRACE_FOUND).get(case.path.name, [])

    # One process per case (a case that raises ends its run); they are independent.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(trace, cases))
    return score("traced", cases, {case.path.name: got for case, got in zip(cases, results)})


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
    outcomes = {case.key: run_case(case.path) for case in cases}
    failures = [(case.key, problem) for case in cases
                if (problem := judge(case, outcomes[case.key])) is not None]
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
    parser.add_argument("--cases", type=Path, action="append", metavar="DIR",
                        help="the case set (default benchmarks/conformance); with --behaviour it "
                             "may be repeated")
    args = parser.parse_args(argv)
    sets = [path.resolve() for path in args.cases or [CASES]]
    for directory in sets:
        if not directory.is_dir():
            parser.error(f"{directory} is not a directory of cases")
    if args.behaviour:
        return _behaviour([case for directory in sets for case in load(directory)], args.json)
    if len(sets) > 1:
        parser.error("score one set at a time (--cases once)")
    cases = load(sets[0])
    root = args.root.resolve()
    if not (root / "aliaslint" / "__init__.py").is_file():
        parser.error(f"{root} is not an aliaslint checkout")
    scores: list[Score] = []
    with tempfile.TemporaryDirectory() as scratch:
        # The set's copy is one level down, so the tracer's reports stay outside it.
        work = Path(scratch) / sets[0].name
        work.mkdir()
        for case in cases:
            if case.path.is_dir():
                shutil.copytree(case.path, work / case.path.name,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
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
