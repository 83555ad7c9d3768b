"""The conformance benchmark (benchmarks/conformance/): every case has a well-formed header and
behaves under torch as that header says, and the checker's static score on the cases holds the
floor recorded in benchmarks/conformance.md."""

from __future__ import annotations

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
        for code, row in case.expected:
            assert re.fullmatch(r"AL[1-4]\d\d", code), f"{case.name}: {code}"
            text = lines[row - 1].strip()
            assert text and not text.startswith("#"), f"{case.name}: line {row} is not code"


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


def test_every_case_behaves_under_torch_as_its_header_says():
    """All cases in one process, so torch is imported once: the scorer's runner executes each
    script as `__main__` in a fresh namespace and prints how each one ended."""
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    result = subprocess.run([sys.executable, str(SCORER), "--behaviour", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.stdout.lstrip().startswith("{"), result.stderr[-2000:]
    outcomes = json.loads(result.stdout)
    assert set(outcomes) == {case.name for case in CASES}
    wrong = {case.name: problem for case in CASES
             if (problem := conformance.judge(case, outcomes[case.name])) is not None}
    assert not wrong
    assert result.returncode == 0


def _recorded(name: str) -> int:
    text = (ROOT / "benchmarks" / "conformance.md").read_text()
    match = re.search(rf"^{name}: (\d+)$", text, re.M)
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
