"""The language server's re-check parses only what an edit changed: the module it assembles
is libcst's own parse, and the findings (positions included) are those of a full check."""

import random
from pathlib import Path

import libcst as cst
import pytest

from aliaslint import check_source
from aliaslint.incremental import StatementCache

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))

TRICKY = [
    "",
    "# only a comment\n",
    "import torch\nx = 1; y = 2\n",
    "import torch\n\n\n@decorate\n# between\n@other(1)\ndef f():\n    pass\n\n# after\nz = 3",
    "import torch\nclass A:\n  def f(self):\n    return 1\n  # indented, after\n\nclass B:\n"
    "    x = 1\n",
    "import torch\r\nif x:\r\n\tpass\r\nelif y:\r\n\tpass\r\nelse:\r\n    pass\r\n",
    "import torch\nx = [\n    1,\n]\ny = 1 + \\\n    2\n",
    "import torch\ntry:\n    pass\nexcept E:\n        pass\nfinally:\n  pass\nq = 1\n",
    "import torch\nif a: pass\nelse:\n   b = 1\nwhile c:\n   pass\n\n\n   \n",
    "import torch\nx = 1\\\n\n",
]


@pytest.mark.parametrize("source", [*TRICKY, *(p.read_text(encoding="utf-8") for p in FIXTURES)])
def test_assembled_module_is_libcst_parse(source):
    cache = StatementCache()
    lines = source.splitlines(keepends=True)
    rng = random.Random(len(source))
    versions = [source]
    for _ in range(3):  # edits that keep the text valid: blank lines and comments
        at = rng.randrange(len(lines) + 1)
        lines = [*lines[:at], rng.choice(["\n", "# note\n"]), *lines[at:]]
        versions.append("".join(lines))
    for version in versions:
        parsed = cache.parse(version)
        assert parsed is not None
        module, _ = parsed
        assert module.code == version
        assert module.deep_equals(cst.parse_module(version))


def test_findings_after_edits_are_a_full_checks():
    source = (ROOT / "fixtures" / "autograd" / "gan_step.py").read_text(encoding="utf-8")
    cache = StatementCache()
    check_source(source, "m.py", statements=cache)
    rng = random.Random(7)
    lines = source.splitlines(keepends=True)
    for step in range(8):
        at = rng.randrange(len(lines) + 1)
        lines = [*lines[:at], f"unrelated_{step} = {step}\n" if rng.random() < 0.5 else "\n",
                 *lines[at:]]
        text = "".join(lines)
        assert check_source(text, "m.py", statements=cache) == check_source(text, "m.py")


def test_a_chunk_libcst_rejects_falls_back_to_the_full_parse():
    # CPython accepts it; the result is the full parse's either way.
    source = "import torch\nx = torch.ones(2)\nprint(id(x) == id(x[1:]))\n"
    assert check_source(source, "m.py", statements=StatementCache()) == \
        check_source(source, "m.py")
