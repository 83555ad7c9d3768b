"""Checks of the house: every module stays small, and mypy passes with the stated settings."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A module longer than this holds more than one job: split it.
MAX_LINES = 900


@pytest.mark.parametrize("path", sorted((ROOT / "aliaslint").rglob("*.py")),
                         ids=lambda path: path.relative_to(ROOT).as_posix())
def test_module_is_small(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{lines} lines"


@pytest.mark.slow
@pytest.mark.xdist_group("mypy")  # one mypy at a time on the checkout's .mypy_cache
def test_mypy_is_clean():
    """`mypy` with the configuration in pyproject.toml ([tool.mypy])."""
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:]
