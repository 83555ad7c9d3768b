"""Quiet files (aliaslint/quiet.py) are answered without libcst's parse, and skipping them
changes no finding: every fixture and binding case directory, each checked as one program,
finds the same with the skip as with every file parsed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from aliaslint import engine, quiet
from aliaslint.config import CliOptions
from aliaslint.engine import check_paths, check_source

ROOT = Path(__file__).resolve().parent.parent
DIRECTORIES = [ROOT / "fixtures", ROOT / "benchmarks" / "conformance",
               ROOT / "benchmarks" / "programs" / "wp", ROOT / "benchmarks" / "programs" / "compose"]


def _findings(directory: Path) -> list:
    result = check_paths([str(directory)], CliOptions(isolated=True), jobs=1, cwd=ROOT)
    return sorted(result.diagnostics, key=lambda d: d.sort_key)


# The benchmark sets are whole corpora, for the slow run; the quick run keeps fixtures/ (the
# same skip against the same full parse), and tests/test_conformance.py's floors check each
# set's findings, with the skip, in the quick run too.
@pytest.mark.parametrize("directory", [
    directory if directory.name == "fixtures" else pytest.param(directory, marks=pytest.mark.slow)
    for directory in DIRECTORIES], ids=lambda d: d.name)
def test_skipping_quiet_files_changes_no_finding(directory, monkeypatch):
    with_skip = _findings(directory)
    monkeypatch.setenv(quiet.DISABLE, "1")  # the workers are forked: they see it too
    assert _findings(directory) == with_skip
    assert with_skip


QUIET = "import torch\n\n\ndef norm(x):\n    return x / x.norm(dim=-1, keepdim=True)\n"


def test_a_quiet_file_is_not_parsed(monkeypatch):
    parsed: list[str] = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse",
                        lambda s, f, *r, **o: parsed.append(f) or real(s, f, *r, **o))
    assert check_source(QUIET, "q.py") == [] and parsed == []
    monkeypatch.setenv(quiet.DISABLE, "1")
    assert check_source(QUIET, "q.py") == [] and parsed == ["q.py"]


@pytest.mark.parametrize("line", [
    "x.add_(1)", "x += 1", "x[0] = 1", "del x[0]", "torch.add(x, 1, out=x)",
    "torch.relu(x, True)", "nn.ReLU(True)", "f = torch.relu_", "getattr(x, 'mul_')(2)",
    "x.view(-1)", "loss.backward()", "opt.step()", "m.load_state_dict(s)", "a.fill(0)",
    "from torch.nn.functional import relu", "F.dropout(x, 0.1, True, True)",
])
def test_anything_that_writes_is_not_quiet(line):
    assert quiet.writes_nothing(ast.parse("import torch\nx = torch.ones(3)\n"))
    assert not quiet.writes_nothing(ast.parse(f"import torch\nx = torch.ones(3)\n{line}\n"))


def test_a_file_is_quiet_only_if_the_files_it_imports_are(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text("def scale(x):\n    x.mul_(2)\n    return x\n")
    (tmp_path / "calm.py").write_text("def same(x):\n    return x\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom helpers import scale\n\n"
        "x = torch.ones(3, requires_grad=True)\ny = x.sigmoid()\nscale(y)\ny.sum().sum()\n")
    (tmp_path / "other.py").write_text(
        "import torch\nfrom calm import same\n\nx = same(torch.ones(3))\n")
    parsed: list[str] = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse",
                        lambda s, f, *r, **o: parsed.append(f) or real(s, f, *r, **o))
    from aliaslint.config import Resolver
    from aliaslint.engine import program_link
    from aliaslint.project import Program

    resolver = Resolver(CliOptions(isolated=True), tmp_path)
    program = Program.of(sorted(tmp_path.glob("*.py")))
    for name in ("train.py", "other.py"):
        path = tmp_path / name
        settings = resolver.for_file(path)
        engine.check_buffer(path.read_bytes(), path, name, settings,
                            link=program_link(program, path, settings))
    assert parsed == ["train.py"]


def test_the_walk_meets_every_node_ast_walk_does():
    # `global a, b` keeps strings in a list and `{**d}` a None key: neither is a node.
    sources = [path.read_bytes() for top in ("aliaslint", "rules", "fixtures", "tests")
               for path in sorted((ROOT / top).rglob("*.py"))]
    sources.append(b"def f():\n    global a, b\n    return {**d, 'k': [x async for x in y]}\n")
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # the cases of files Python rejects
        assert sorted(map(id, quiet.walk(tree))) == sorted(map(id, ast.walk(tree)))


def test_the_files_an_import_reaches_are_every_name_below_or_just_above_it():
    # Against the definition read directly: a module named by the prefix, any module below
    # it, and the longest module above it (an attribute of that module).
    import random

    from aliaslint.project import Program

    rng = random.Random(7)
    parts = ["a", "b", "ab", "a_b", "c0", "z"]
    names = {".".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(300)}
    modules = {name: f"/p/{name.replace('.', '/')}.py" for name in names}
    program = Program({"/p": modules}, {}, {}, {"/p": frozenset()}, {})
    for _ in range(300):
        prefix = ".".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        expected = {path for name, path in modules.items()
                    if name == prefix or name.startswith(prefix + ".")}
        above = prefix.split(".")
        for cut in range(len(above) - 1, 0, -1):
            if ".".join(above[:cut]) in modules:
                expected.add(modules[".".join(above[:cut])])
                break
        assert quiet.reached([(0, prefix, ())], "/elsewhere.py", program, "/p") == expected
