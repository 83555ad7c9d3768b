"""The conformance benchmark (benchmarks/conformance/) and the program sets
(benchmarks/programs/*/): every case has a well-formed header and behaves under torch as that
header says, and the checker's static score on the cases holds the floor recorded in
benchmarks/conformance.md."""

from __future__ import annotations

import ast
import builtins
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import benchmark_script

ROOT = Path(__file__).resolve().parent.parent
SCORER = ROOT / "benchmarks" / "conformance.py"
conformance = benchmark_script("conformance")
CASES = conformance.load()
PROGRAM_SETS = conformance.program_sets()
PROGRAMS = {directory.name: conformance.load(directory) for directory in PROGRAM_SETS}
# What each program set promises: hazards, fine twins, hazards that span two or more files.
PROGRAM_MINIMUMS = {"wp": (40, 40, 15)}
_SOURCE = re.compile(r"https://\S+ @ [0-9a-f]{7,40}")  # a repository file's URL @ its commit


def test_every_case_has_a_valid_header():
    assert sum(case.hazard for case in CASES) >= 45
    assert sum(not case.hazard for case in CASES) >= 25
    for case in CASES:
        lines = case.path.read_text().splitlines()
        header = [line for line in lines[:4] if line.startswith("# ")]
        assert header[0].startswith("# source: ") and len(case.source) > 10, case.name
        assert case.behaviour in ("ok", "raises", "wrong"), case.name
        # A fine case is named for it; a hazard is named for its family.
        assert case.name.startswith("fine_") == (not case.hazard), case.name
        if case.behaviour == "raises":
            error = getattr(builtins, case.error, None)
            assert isinstance(error, type) and issubclass(error, Exception), case.name
        for code, name, row in case.expected:
            assert name == case.path.name
            assert re.fullmatch(r"AL[1-4]\d\d", code), f"{case.name}: {code}"
            text = lines[row - 1].strip()
            assert text and not text.startswith("#"), f"{case.name}: line {row} is not code"


def _definitions(path: Path) -> int:
    tree = ast.parse(path.read_text())
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return sum(isinstance(node, kinds) for node in ast.walk(tree))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_program_case_is_a_real_program_with_a_twin(name):
    """A program case names the repository file and commit it follows, is a program (two or more
    definitions, 30 lines or more, across its modules), and each hazard has a fine twin of the
    same shape named `fine_NAME`."""
    cases = PROGRAMS[name]
    by_name = {case.name: case for case in cases}
    for case in cases:
        assert _SOURCE.fullmatch(case.source), f"{case.name}: {case.source}"
        assert case.name.startswith("fine_") == (not case.hazard), case.name
        assert sum(len(f.read_text().splitlines()) for f in case.files) >= 30, case.name
        assert sum(_definitions(f) for f in case.files) >= 2, case.name
        if case.behaviour == "raises":
            error = getattr(builtins, case.error, None)
            assert isinstance(error, type) and issubclass(error, Exception), case.name
        twin = by_name.get(case.name if not case.hazard else f"fine_{case.name}")
        partner = by_name.get(case.name.removeprefix("fine_"))
        assert twin is not None and partner is not None, f"{case.name} has no twin"
        assert twin.path.is_dir() == partner.path.is_dir() == case.path.is_dir(), case.name
        if not case.hazard:
            assert case.behaviour == "ok", case.name
        if case.path.is_dir():  # the twin has the same modules
            assert [f.relative_to(case.path) for f in case.files] == \
                [f.relative_to(partner.path) for f in partner.files], case.name
        base = case.path if case.path.is_dir() else case.path.parent
        for code, file, row in case.expected:
            assert re.fullmatch(r"AL[1-4]\d\d", code), f"{case.name}: {code}"
            text = (base / file).read_text().splitlines()[row - 1].strip()
            assert text and not text.startswith("#"), f"{case.name}: {file}:{row} is not code"
    hazards = [case for case in cases if case.hazard]
    wanted = PROGRAM_MINIMUMS.get(name, (1, 1, 0))
    spanning = [case for case in hazards if len(case.files) >= 2]
    assert len(hazards) >= wanted[0] and len(cases) - len(hazards) >= wanted[1]
    assert len(spanning) >= wanted[2]


def test_a_directory_case_names_the_module_of_each_finding(tmp_path):
    case = tmp_path / "helper_writes"
    case.mkdir()
    (case / "utils.py").write_text("def scale(t):\n    t.mul_(2)\n    return t\n")
    (case / "main.py").write_text("# source: s\n# expect: AL208 at utils.py:2\n"
                                  "# expect: AL101 at line 5\n# torch: ok\nx = 1\n")
    parsed = conformance.parse(case)
    assert parsed.expected == [("AL208", "utils.py", 2), ("AL101", "main.py", 5)]
    assert parsed.script == case / "main.py" and parsed.key == f"{tmp_path.name}/helper_writes"
    (case / "main.py").write_text("# source: s\n# expect: AL208 at other.py:2\n# torch: ok\nx = 1\n")
    with pytest.raises(ValueError, match="not in the case"):
        conformance.parse(case)
    (case / "main.py").write_text("# source: s\n# expect: AL208 at utils.py:9\n# torch: ok\nx = 1\n")
    with pytest.raises(ValueError, match="outside utils.py"):
        conformance.parse(case)
    single = tmp_path / "views_x.py"
    single.write_text("# source: s\n# expect: AL101 at utils.py:1\n# torch: ok\nx = 1\n")
    with pytest.raises(ValueError, match="single-file"):
        conformance.parse(single)
    (case / "main.py").unlink()
    with pytest.raises(ValueError, match="entry point"):
        conformance.parse(case)


def test_findings_are_matched_to_a_directory_case_by_file_and_line(tmp_path):
    work = tmp_path / "wp"
    for name in ("helper_writes", "fine_helper_writes"):
        (work / name).mkdir(parents=True)
        (work / name / "utils.py").write_text("def scale(t):\n    t.mul_(2)\n    return t\n")
        header = "# expect: AL208 at utils.py:2" if "fine" not in name else "# expect: none"
        (work / name / "main.py").write_text(f"# source: s\n{header}\n# torch: ok\nx = 1\n")
    (work / "views_x.py").write_text("# source: s\n# expect: AL101 at line 4\n# torch: ok\nx = 1\n")
    cases = conformance.load(work)
    report = json.dumps([
        {"code": "AL208", "filename": "helper_writes/utils.py", "location": {"row": 2}},
        {"code": "AL101", "filename": "helper_writes/main.py", "location": {"row": 2}},
        {"code": "AL208", "filename": "fine_helper_writes/utils.py", "location": {"row": 2}},
        {"code": "AL101", "filename": "views_x.py", "location": {"row": 4}},
        {"code": "AL901", "filename": "views_x.py", "location": {"row": 1}},
    ])
    findings = conformance._findings(report, work)
    assert findings["helper_writes"] == [("AL208", "utils.py", 2), ("AL101", "main.py", 2)]
    assert findings["views_x.py"] == [("AL101", "views_x.py", 4)]
    result = conformance.score("static", cases, findings)
    assert result.recall() == (2, 2)
    assert result.false_files == ["fine_helper_writes"]
    assert result.extra == ["helper_writes/main.py:2 AL101"]
    # The tracer of a directory case runs inside it: its report names files from there.
    traced = json.dumps([{"code": "AL208", "filename": "utils.py", "location": {"row": 2},
                          "status": "confirmed"}])
    assert conformance._findings(traced, work, work / "helper_writes", ("confirmed",)) == {
        "helper_writes": [("AL208", "utils.py", 2)]}


def test_directory_cases_run_in_their_directory_and_do_not_share_modules(tmp_path):
    """Two cases with a module of the same name each see their own, from their own directory."""
    for name, value in (("first", 1), ("second", 2)):
        case = tmp_path / name
        (case / "pkg").mkdir(parents=True)
        (case / "pkg" / "__init__.py").write_text("from .values import VALUE\n")
        (case / "pkg" / "values.py").write_text(f"VALUE = {value}\n")
        (case / "utils.py").write_text(f"VALUE = {value}\n")
        (case / "main.py").write_text(
            "import os, sys\nimport utils\nfrom pkg import VALUE\n"
            "assert os.path.samefile(sys.path[0], os.getcwd())\n"
            "assert os.path.isfile('utils.py')\n"
            f"raise SystemExit(0 if utils.VALUE == VALUE == {value} else 3)\n")
    before = set(sys.modules)
    outcomes = [conformance.run_case(tmp_path / name) for name in ("first", "second")]
    assert outcomes == [{"exit": 0, "error": None, "message": ""}] * 2
    assert not {"utils", "pkg", "pkg.values"} & (set(sys.modules) - before)
    assert not list(tmp_path.rglob("__pycache__"))


def test_a_malformed_header_is_refused(tmp_path):
    bad = tmp_path / "views_bad.py"
    bad.write_text("# source: somewhere\n# torch: ok\nimport torch\n")
    with pytest.raises(ValueError, match="expect"):
        conformance.parse(bad)
    bad.write_text("# source: s\n# expect: AL101 at line 99\n# torch: ok\nimport torch\n")
    with pytest.raises(ValueError, match="outside"):
        conformance.parse(bad)
    bad.write_text("# source: s\n# expect: none\n# expect: AL101 at line 4\n# torch: ok\nx = 1\n")
    with pytest.raises(ValueError, match="expect"):
        conformance.parse(bad)


@pytest.mark.parametrize(("behaviour", "outcome", "matches"), [
    ("ok", {"exit": 0, "error": None, "message": ""}, True),
    ("ok", {"exit": 1, "error": None, "message": ""}, False),
    ("wrong", {"exit": 1, "error": None, "message": ""}, True),
    ("wrong", {"exit": None, "error": "AssertionError", "message": ""}, True),
    ("wrong", {"exit": 0, "error": None, "message": ""}, False),
    ("wrong", {"exit": None, "error": "RuntimeError", "message": "boom"}, False),
    ("raises", {"exit": None, "error": "RuntimeError", "message": "x modified by an inplace "
                "operation"}, True),
    ("raises", {"exit": None, "error": "RuntimeError", "message": "something else"}, False),
    ("raises", {"exit": 0, "error": None, "message": ""}, False),
])
def test_the_judge_holds_an_outcome_to_its_header(behaviour, outcome, matches):
    case = conformance.Case(Path("autograd_x.py"), "s", [("AL101", 1)], behaviour,
                            "RuntimeError" if behaviour == "raises" else "",
                            "modified by an inplace operation" if behaviour == "raises" else "")
    assert (conformance.judge(case, outcome) is None) == matches


@pytest.mark.slow
def test_every_case_behaves_under_torch_as_its_header_says():
    """All cases of all sets in one process, so torch is imported once: the scorer's runner
    executes each script (a directory case's main.py) as `__main__` in a fresh namespace and
    prints how each one ended."""
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    sets = [conformance.CASES, *PROGRAM_SETS]
    result = subprocess.run([sys.executable, str(SCORER), "--behaviour", "--json",
                             *(arg for path in sets for arg in ("--cases", str(path)))],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.stdout.lstrip().startswith("{"), result.stderr[-2000:]
    outcomes = json.loads(result.stdout)
    everything = CASES + [case for cases in PROGRAMS.values() for case in cases]
    assert set(outcomes) == {case.key for case in everything}
    wrong = {case.key: problem for case in everything
             if (problem := conformance.judge(case, outcomes[case.key])) is not None}
    assert not wrong
    assert result.returncode == 0


def _recorded(name: str) -> int:
    text = (ROOT / "benchmarks" / "conformance.md").read_text()
    match = re.search(rf"^{re.escape(name)}: (\d+)$", text, re.M)
    assert match, f"benchmarks/conformance.md records no `{name}: N` line"
    return int(match.group(1))


def test_the_static_score_holds_its_recorded_floor():
    """Findings may improve: only a drop below the floor, or more false-positive files than the
    ceiling, fails."""
    result = subprocess.run([sys.executable, str(SCORER), "--static", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    scores = {score["label"]: score for score in json.loads(result.stdout)}
    static = scores["static"]
    assert static["hazards"] == sum(case.hazard for case in CASES)
    assert static["found"] >= _recorded("static recall floor"), static["missed"]
    assert len(static["false_positive_files"]) <= _recorded("static false-positive ceiling"), \
        static["false_positive_files"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_program_set_holds_its_recorded_floor(name):
    """Each program set whose floor benchmarks/conformance.md records: the static score of its
    directory cases, checked as whole directories, does not drop."""
    text = (ROOT / "benchmarks" / "conformance.md").read_text()
    if f"programs/{name} static recall floor:" not in text:
        pytest.skip(f"no floor recorded for programs/{name}")
    result = subprocess.run([sys.executable, str(SCORER), "--cases",
                             str(conformance.PROGRAMS / name), "--static", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    static = {score["label"]: score for score in json.loads(result.stdout)}["static"]
    assert static["hazards"] == sum(case.hazard for case in PROGRAMS[name])
    assert static["found"] >= _recorded(f"programs/{name} static recall floor"), static["missed"]
    ceiling = _recorded(f"programs/{name} static false-positive ceiling")
    assert len(static["false_positive_files"]) <= ceiling, static["false_positive_files"]
