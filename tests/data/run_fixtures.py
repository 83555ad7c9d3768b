"""Runs every fixture program of `fixtures/` in one process, each as `python FILE` would from
its own directory: the program the fixtures' HTML report is traced from
(`tests/test_html_report.py`, `docs/trace-report.png`)."""

import os
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

for path in sorted((ROOT / "fixtures").rglob("*.py")):
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    try:
        runpy.run_path(str(path), run_name="__main__")
    except Exception as error:  # a fixture may end in the very error its hazard raises
        print(f"{path.relative_to(ROOT)}: {type(error).__name__}: {error}"[:200], file=sys.stderr)
    finally:
        sys.path.remove(str(path.parent))
os.chdir(ROOT)
