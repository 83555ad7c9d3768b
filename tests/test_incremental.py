"""The language server's re-check parses only what an edit changed: the module it assembles
is libcst's own parse, and the findings (positions included) are those of a full check."""

import ast
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


# Edits as they are typed: a character, a row, a statement's worth; some break the text.
_PIECES = ["x", "1", " ", "(", ")", "[", "\\\n", "\n", "    ", "\t", ";", ":", "#", '"',
           '"""', "else:\n", "    y = 2\n", "@dec\n", "z = 3; ", "def g():\n    pass\n",
           "from __future__ import annotations\n", "elif q:\n    pass\n", "\r\n", "é"]


def _edited(text: str, rng: random.Random) -> str:
    rows = text.splitlines(keepends=True)
    choice = rng.random()
    if rows and choice < 0.2:  # a row removed
        at = rng.randrange(len(rows))
        return "".join(rows[:at] + rows[at + 1:])
    if rows and choice < 0.35:  # a row replaced
        at = rng.randrange(len(rows))
        return "".join(rows[:at] + [rng.choice(_PIECES) + "\n"] + rows[at + 1:])
    at = rng.randrange(len(text) + 1)
    if choice < 0.55 and at < len(text):  # a few characters removed
        return text[:at] + text[at + rng.randint(1, 3):]
    return text[:at] + rng.choice(_PIECES) + text[at:]


@pytest.mark.parametrize("source", [*TRICKY, *(p.read_text(encoding="utf-8")
                                               for p in FIXTURES[::7])])
def test_an_edited_texts_tree_is_cpythons_own(source):
    """CPython's tree after an edit, made from the kept one and the changed rows, is the
    whole text's parse, positions included; None (the screen parses it all) where the
    changed rows do not parse alone, which every text CPython rejects is."""
    import ast

    cache = StatementCache()
    rng = random.Random(len(source))
    text, made = source, 0
    for _ in range(40):
        try:
            whole = ast.parse(text)
        except (SyntaxError, ValueError):
            whole = None
        tree = cache.syntax(text)
        if whole is None:
            assert tree is None
        elif tree is not None:
            made += 1
            assert ast.dump(tree, include_attributes=True) == \
                ast.dump(whole, include_attributes=True)
        if whole is not None:
            cache.keep_syntax(text, tree or whole)
        text = _edited(text, rng) if rng.random() < 0.8 else source
    assert made or not source.strip()


def test_an_edit_inside_one_function_parses_that_function_alone(monkeypatch):
    source = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(50))
    cache = StatementCache()
    cache.keep_syntax(source, ast.parse(source))
    parsed: list[str] = []
    real = compile

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr("builtins.compile", counting)
    edited = source.replace("x + 17\n", "x * 17\n")
    tree = cache.syntax(edited)
    # The rows after f16 alone, below blank rows that put them where they are.
    assert parsed == ["\n" * 68 + "def f17(x):\n    return x * 17\n\n\n"]
    assert ast.dump(tree, include_attributes=True) == \
        ast.dump(ast.parse(edited), include_attributes=True)
    # Rows added: the statements before are kept, the rest is parsed again.
    parsed.clear()
    edited = source.replace("x + 17\n", "x * 17\n\n")
    assert ast.dump(cache.syntax(edited), include_attributes=True) == \
        ast.dump(ast.parse(edited), include_attributes=True)
    assert parsed[0].lstrip("\n").startswith("def f17(") and parsed[0].endswith("return x + 49\n\n\n")
