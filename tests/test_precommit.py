"""The pre-commit hook, installed from this repository by pre-commit itself."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"})


@pytest.mark.slow
@pytest.mark.network
def test_hook_fails_on_a_finding(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    # try-repo clones the hook's repository at a commit: snapshot the working tree.
    repo = tmp_path / "aliaslint"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "snapshot")
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(
        "import torch\na = torch.zeros(3)\nassert id(a) != id(a[1:])\n")
    (project / "clean.py").write_text("import torch\nb = torch.ones(2)\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "aliaslint", "--all-files",
         "--color", "never"],
        cwd=project, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
             "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "model.py:3:8: AL401" in output
    assert "clean.py" not in output.split("model.py", 1)[0].split("aliaslint")[-1]
