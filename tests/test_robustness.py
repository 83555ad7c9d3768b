"""`check` never raises, whatever valid Python it is given."""

import pytest

pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from hypothesis import HealthCheck, given, settings  # noqa: E402, I001  (after the skip)

from aliaslint import check_source
from aliaslint import registry

RULES = {code for code, rule in registry.rules().items() if rule.checks}


# Derandomized so a CI run is reproducible; the generators still cover a broad
# space, and a longer random run is one `--hypothesis-seed` away.
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_check_never_raises_on_generated_modules(source):
    # The prefilter would skip most generated code: make every module look like torch code.
    diagnostics = check_source("import torch\n" + source, "generated.py", RULES)
    assert all(d.code != "AL903" for d in diagnostics), diagnostics


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_check_never_raises_on_generated_syntax_trees(source):
    diagnostics = check_source("import torch\n" + source, "generated.py", RULES)
    assert all(d.code != "AL903" for d in diagnostics), diagnostics


def test_deeply_nested_code_is_a_file_error_not_a_crash():
    source = "import torch\nx = " + "(" * 400 + "1" + ")" * 400 + "\n"
    diagnostics = check_source(source, "deep.py", RULES)
    assert [d.code for d in diagnostics] in ([], ["AL902"])
