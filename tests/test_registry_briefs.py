"""The rules' briefs (registry.briefs), which the engine reads before anything is parsed, say
what the rules themselves declare."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aliaslint import registry

ROOT = Path(__file__).resolve().parent.parent


def test_the_briefs_are_the_rules_own():
    registry.reload()
    kept = registry.briefs()
    loaded = {code: registry.brief_of(rule, registry._module_names[code])
              for code, rule in registry.rules().items()}
    assert kept == loaded


QUIET = "import torch\n\n\ndef norm(x):\n    return x / x.norm()\n"


@pytest.mark.parametrize("paths", [["quiet.py", "plain.py", "-j", "1"], ["-"]],
                         ids=["files", "stdin"])
def test_a_file_no_rule_can_fire_in_is_answered_without_libcst(tmp_path, paths):
    """Standard input is checked in the process itself; files in a forked worker (where
    several workers run, the process loads the parser's side once for them all)."""
    (tmp_path / "quiet.py").write_text(QUIET)
    (tmp_path / "plain.py").write_text("print('no tensors here')\n")
    dump = tmp_path / "modules.txt"
    script = ("import atexit, sys\n"
              f"atexit.register(lambda: open({str(dump)!r}, 'w').write('\\n'.join(sys.modules)))\n"
              "from aliaslint.cli import main\n"
              f"sys.exit(main(['check', '--isolated', '--no-cache', *{paths!r}]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          input=QUIET, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = set(dump.read_text().split("\n"))
    assert "aliaslint.engine" in modules
    loaded = {m for m in modules if m == "libcst" or m.startswith((
        "libcst.", "aliaslint.analysis", "aliaslint.checking", "aliaslint.fixes",
        "aliaslint.server", "aliaslint.runtime", "aliaslint.rule", "aliaslint.checks.al"))}
    assert not loaded
