import textwrap

import pytest

from aliaslint import check_source
from aliaslint import registry


def lint(source: str, rules=None) -> list[tuple[int, str]]:
    """(row, code) of each finding in ``source`` (dedented), with every rule that has a check."""
    if rules is None:
        rules = {code for code, rule in registry.rules().items() if rule.checks}
    diagnostics = check_source(textwrap.dedent(source), "example.py", rules)
    return [(d.location.row, d.code) for d in diagnostics]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project directory that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
