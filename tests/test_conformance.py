"""The conformance benchmark (benchmarks/conformance/): well-formed cases, each behaving under
torch as its header says, and the checker's score no worse than the floor recorded in
benchmarks/conformance.md."""

from __future__ import annotations

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


def test_every_case_has_a_header_and_both_kinds_are_there():
    assert len(CASES) >= 40
    assert sum(case.hazard for case in CASES) >= 30
    assert sum(not case.hazard for case in CASES) >= 15
    for case in CASES:
        assert case.source
        lines = case.path.read_text().splitlines()
        for code, row in case.expected:
            assert not lines[row - 1].startswith("#"), f"{case.name}: line {row} is a comment"


def test_a_malformed_header_is_refused(tmp_path):
    bad = tmp_path / "views_bad.py"
    bad.write_text("# source: somewhere\n# torch: ok\nimport torch\n")
    with pytest.raises(ValueError, match="expect"):
        conformance.parse(bad)
    bad.write_text("# source: s\n# expect: AL101 at line 99\n# torch: ok\nimport torch\n")
    with pytest.raises(ValueError, match="outside"):
        conformance.parse(bad)


def test_every_case_behaves_under_torch_as_its_header_says():
    """All cases in one process: torch is imported once."""
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    result = subprocess.run([sys.executable, str(SCORER), "--behaviour"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _recorded(name: str) -> int:
    text = (ROOT / "benchmarks" / "conformance.md").read_text()
    match = re.search(rf"^{name}: (\d+)$", text, re.M)
    assert match, f"benchmarks/conformance.md records no `{name}: N` line"
    return int(match.group(1))


def test_the_static_score_holds_its_recorded_floor():
    result = subprocess.run([sys.executable, str(SCORER), "--static", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    scores = {score["label"]: score for score in json.loads(result.stdout)}
    static = scores["static"]
    assert static["hazards"] == sum(case.hazard for case in CASES)
    assert static["found"] >= _recorded("static recall floor"), static["missed"]
    assert len(static["false_positive_files"]) <= _recorded("static false-positive ceiling"), \
        static["false_positive_files"]
