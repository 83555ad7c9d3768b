"""The pre-commit hook, installed from this repository by pre-commit itself."""

import os
import re
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


def readme_snippet() -> str:
    """The `.pre-commit-config.yaml` the README's pre-commit section prints."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## pre-commit\n", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the README's pre-commit section has no yaml snippet"
    return match.group(1)


def test_the_readme_pins_a_commit_of_this_repository():
    (rev,) = re.findall(r"^\s*rev: (\S+)", readme_snippet(), re.MULTILINE)
    assert re.fullmatch(r"[0-9a-f]{40}", rev), rev
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    found = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT,
                           capture_output=True)
    assert found.returncode == 0, f"rev {rev} is not a commit of this repository"
    hooks = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT,
                           capture_output=True, text=True)
    assert "- id: aliaslint\n" in hooks.stdout


@pytest.mark.slow
@pytest.mark.network
def test_hook_fails_on_a_finding(tmp_path):
    """pre-commit installs the hook the README's snippet names, from this repository's own
    history at its `rev:`, and fails on a finding."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("git is not installed, or this is not a git checkout")
    snippet = readme_snippet()
    url = re.search(r"- repo: (\S+)", snippet)
    assert url is not None
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(snippet.replace(url.group(1), str(ROOT)))
    (project / "model.py").write_text(
        "import torch\na = torch.zeros(3)\nassert id(a) != id(a[1:])\n")
    (project / "clean.py").write_text("import torch\nb = torch.ones(2)\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=project, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
             "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "model.py:3:8: AL401" in output
    assert "clean.py" not in output.split("model.py", 1)[0].split("aliaslint")[-1]
