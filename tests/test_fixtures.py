"""Realistic programs in fixtures/, checked against golden output, and run to keep them honest.

Set ALIASLINT_UPDATE_SNAPSHOTS=1 to rewrite the snapshots after an intended change.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aliaslint.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted([*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "fixtures").rglob("*.ipynb")])
SNAPSHOTS = ROOT / "tests" / "snapshots"
UPDATE = os.environ.get("ALIASLINT_UPDATE_SNAPSHOTS") == "1"


def _snapshot(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"wrote missing snapshot {path.name}; check it and commit it")
    assert actual == path.read_text(encoding="utf-8"), f"{name} changed"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.relative_to(ROOT).as_posix())
@pytest.mark.parametrize("fmt", ["full", "json"])
def test_output_matches_snapshot(fixture, fmt, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    relative = fixture.relative_to(ROOT).as_posix()
    main(["check", relative, "--isolated", "--no-cache", "--color", "never",
          "--output-format", fmt])
    out = capsys.readouterr().out
    stem = relative.removeprefix("fixtures/").removesuffix(".py").removesuffix(".ipynb")
    stem = stem.replace("/", "__")
    _snapshot(f"{stem}.{'txt' if fmt == 'full' else 'json'}", out)


@pytest.mark.slow
@pytest.mark.parametrize("fixture", [p for p in FIXTURES if p.suffix == ".py"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fixture_runs(fixture):
    """Every runnable fixture runs; its printed results are part of the snapshot."""
    result = subprocess.run(
        [sys.executable, "-W", "ignore", fixture.name], cwd=fixture.parent,
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    stem = fixture.relative_to(ROOT / "fixtures").as_posix().removesuffix(".py").replace("/", "__")
    _snapshot(f"{stem}.stdout", result.stdout)
