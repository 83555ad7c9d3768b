"""The fuzz campaign: hostile input for `check`, deterministic from a seed.

    python benchmarks/fuzz.py [--seed N] [--scale K]
    python benchmarks/fuzz.py --fix N [--seed N]     # the `--fix` campaign over N programs

Five kinds of input, each judged against what `check` promises (docs/contract.md):

* programs from hypothesmith's grammar, and mutations of the real files of this repository
  (fixtures, the package, the tests): no exception, no AL903, an answer within the time
  budget, and CPython's compiler as the judge of what is Python: a program it compiles is
  checked (AL902 only for the parse budget), one it rejects is AL902 with its message;
* hostile notebooks (mutated fixture notebooks, wrong types, deep nesting, garbage);
* hostile configuration files (mutated, deep, huge, long dotted keys): a ConfigError or
  settings, never another exception;
* corrupted cache entries: the same findings as without the cache.

The test suite runs the campaign at scale 1 (tests/test_fuzz.py); a longer run is
`--scale 50`, and its figures are in benchmarks/fuzz.md.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import random
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# An answer that takes this many CPU seconds counts as a hang.
HANG_SECONDS = 20.0

# Pieces that break or stretch Python in the ways the checker has met.
_INSERTS = (
    "(", ")", "[", "]", "{", "}", ":", ",", "\\\n", "\\", "\t", "    ", "\n", "\r\n", "\r",
    "await ", "async ", "lambda: ", "yield ", "return\n", "break\n", "nonlocal x\n",
    "global x\n", "from __future__ import annotations\n", "def f(x, x): pass\n", "'", '"',
    '"""', "f'{", "}'", "#", "@", "*", "**", ".add_(1)", ".data", ".detach()", " is ",
    "id(x) == id(y)", "torch.ones(2)", "x[0] = 1\n", "del x\n", "else:\n", "\x0c", "\u00e9",
    "\u2028", "\ufeff", "match x:\n    case 1: pass\n", "type X = int\n",
)


@dataclass
class Figures:
    """What the campaign tried and what went wrong; ``problems`` keeps the first examples."""

    tried: dict[str, int] = field(default_factory=dict)
    valid: int = 0  # programs CPython compiles
    crashes: int = 0
    hangs: int = 0
    rejected_valid: int = 0  # CPython compiles it, `check` says AL902 (beyond the budget)
    accepted_invalid: int = 0  # CPython rejects it, `check` reports no AL902
    over_budget: int = 0  # valid, but beyond the parse budget: AL902 by design
    # Valid, but libcst's tokenizer refuses indentation that mixes a tab in after spaces
    # (CPython accepts it where both tab sizes agree): AL902 names libcst's parser. Counted
    # apart, as the parser's known limit (docs/engine.md, "Known limits"), not aliaslint's fault.
    libcst_tabs: int = 0
    # Valid, but libcst's tokenizer refuses a backslash line continued by a line indented
    # less (_libcst_backslash_divergence): the same kind of limit.
    libcst_backslashes: int = 0
    slowest: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return self.crashes + self.hangs + self.rejected_valid + self.accepted_invalid

    def problem(self, kind: str, detail: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(f"{kind}: {detail[:300]!r}")

    def count(self, kind: str) -> None:
        self.tried[kind] = self.tried.get(kind, 0) + 1


def campaign(seed: int = 0, scale: int = 1) -> Figures:
    figures = Figures()
    rng = random.Random(seed)
    sources = _real_sources()
    for _ in range(120 * scale):
        _program(figures, "mutated file", _mutate(rng, rng.choice(sources)))
    _generated(figures, seed, 30 * scale)
    for _ in range(40 * scale):
        _notebook(figures, rng)
    for _ in range(40 * scale):
        _config(figures, rng)
    for _ in range(3 * scale):
        _cache(figures, rng)
    return figures


# --- programs ---------------------------------------------------------------------------------

_RULES: frozenset[str] = frozenset()


def _rules() -> frozenset[str]:
    global _RULES
    if not _RULES:
        from aliaslint import registry

        _RULES = frozenset(code for code, rule in registry.rules().items() if rule.checks)
    return _RULES


def _real_sources() -> list[str]:
    paths = [*sorted((ROOT / "fixtures").rglob("*.py")), *sorted((ROOT / "aliaslint").rglob("*.py")),
             *sorted((ROOT / "tests").glob("test_*.py"))]
    return [path.read_text(encoding="utf-8") for path in paths]


def _mutate(rng: random.Random, source: str) -> str:
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        at = rng.randrange(len(source) + 1)
        if choice < 0.35:
            source = source[:at] + rng.choice(_INSERTS) + source[at:]
        elif choice < 0.55:  # delete a range
            source = source[:at] + source[at + rng.randint(1, 40):]
        elif choice < 0.7:  # repeat a range
            end = min(len(source), at + rng.randint(1, 80))
            source = source[:end] + source[at:end] * rng.randint(1, 3) + source[end:]
        elif choice < 0.8:  # swap two lines
            lines = source.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            source = "\n".join(lines)
        elif choice < 0.9:  # a deep or long expression
            depth = rng.choice((50, 200, 400, 1000))
            shape = rng.choice(("(" * depth + "x" + ")" * depth, "x" + ".add(1)" * depth,
                                "+".join(["x"] * depth), "lambda: " * depth + "x",
                                "not " * depth + "x"))
            source = source[:at] + f"\ny = {shape}\n" + source[at:]
        else:  # re-indent a line
            lines = source.split("\n")
            i = rng.randrange(len(lines))
            lines[i] = rng.choice(("", " ", "\t", "        ")) + lines[i].lstrip()
            source = "\n".join(lines)
    return source


def _program(figures: Figures, kind: str, source: str) -> None:
    from aliaslint import check_source

    figures.count(kind)
    # The word the prefilter looks for, where it cannot make a `from __future__` late.
    source += "\n# torch\n"
    valid, reason = _cpython_verdict(source)
    figures.valid += valid
    start = time.process_time()
    try:
        diagnostics = check_source(source, "fuzz.py", _rules())
    except Exception as error:  # the contract says never
        figures.crashes += 1
        figures.problem(f"{kind} crash {type(error).__name__}: {error}", source)
        return
    elapsed = time.process_time() - start
    figures.slowest = max(figures.slowest, elapsed)
    if elapsed > HANG_SECONDS:
        figures.hangs += 1
        figures.problem(f"{kind} took {elapsed:.1f}s", source)
    if any(d.code == "AL903" for d in diagnostics):
        figures.crashes += 1
        figures.problem(f"{kind} AL903 {diagnostics}", source)
    errors = [d for d in diagnostics if d.code == "AL902"]
    budget = [d for d in errors if d.message.startswith("too costly to parse")]
    figures.over_budget += bool(budget)
    if valid and errors and not budget and _libcst_tab_divergence(source):
        figures.libcst_tabs += 1
    elif valid and errors and not budget and _libcst_backslash_divergence(source):
        figures.libcst_backslashes += 1
    elif valid and errors and not budget:
        figures.rejected_valid += 1
        figures.problem(f"{kind} rejected but valid: {errors[0].message}", source)
    elif not valid and not errors:
        figures.accepted_invalid += 1
        figures.problem(f"{kind} accepted but invalid: {reason}", source)


def _libcst_tab_divergence(source: str) -> bool:
    """Does libcst refuse ``source`` only for its tabs in indentation? (It parses once the
    indentation's tabs are expanded as CPython expands them, to multiples of 8.)"""
    import libcst

    lines = source.splitlines(keepends=True)
    if not any("\t" in line[:len(line) - len(line.lstrip(" \t"))] for line in lines):
        return False
    expanded = "".join(line[:len(line) - len(line.lstrip(" \t"))].expandtabs(8)
                       + line.lstrip(" \t") for line in lines)
    try:
        libcst.parse_module(expanded)
    except Exception:
        return False
    return True


# A line of indentation and a backslash, continued by a line indented less: CPython joins
# the two (the logical line keeps the first one's indentation); libcst's tokenizer sees a
# dedent.
_INDENTED_BACKSLASH = re.compile(r"^([ \t\f]+)\\\r?\n[ \t\f]*", re.MULTILINE)


def _libcst_backslash_divergence(source: str) -> bool:
    """Does libcst refuse ``source`` only for such a continuation?  (It parses once each is
    joined as CPython joins it.)"""
    import libcst

    if not _INDENTED_BACKSLASH.search(source):
        return False
    try:
        libcst.parse_module(_INDENTED_BACKSLASH.sub(r"\1", source))
    except Exception:
        return False
    return True


def _cpython_verdict(source: str) -> tuple[bool, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as error:
        return False, f"{type(error).__name__}: {error}"
    return True, ""


def _generated(figures: Figures, seed: int, count: int) -> None:
    """Programs from hypothesmith (grammar and syntax-tree based), seeded."""
    try:
        import hypothesmith
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hypothesis_seed
    except ImportError:
        return
    def runner(name: str, strategy):
        @hypothesis_seed(seed)
        @settings(max_examples=count, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def run(source: str) -> None:
            _program(figures, name, source)

        return run

    runner("hypothesmith grammar", hypothesmith.from_grammar())()
    runner("hypothesmith tree", hypothesmith.from_node())()


# --- notebooks --------------------------------------------------------------------------------

def _notebook(figures: Figures, rng: random.Random) -> None:
    from aliaslint.engine import check_notebook

    figures.count("notebook")
    paths = sorted((ROOT / "fixtures").rglob("*.ipynb"))
    data = json.loads(rng.choice(paths).read_text(encoding="utf-8"))
    hostile = [None, 1, -1, 3.5, "", "x", [], {}, [1, None], {"cells": 1}, "[" * 50,
               "%%bash\nrm -rf /\n", "await x\n", "def f(x, x): pass\n", ["a", 1]]
    choice = rng.random()
    if choice < 0.5 and data["cells"]:
        cell = rng.choice(data["cells"])
        cell[rng.choice(("source", "cell_type", "metadata"))] = rng.choice(hostile)
    elif choice < 0.65:
        data[rng.choice(("cells", "nbformat", "metadata"))] = rng.choice(hostile)
    elif choice < 0.8 and data["cells"]:
        cell = rng.choice(data["cells"])
        if isinstance(cell.get("source"), list):
            cell["source"] = _mutate(rng, "".join(cell["source"]))
    text = json.dumps(data)
    if rng.random() < 0.2:
        at = rng.randrange(len(text))
        text = text[:at] + rng.choice(("[" * 20000, "\x00", "\"", "}", "\ud800")) + text[at:]
    try:
        diagnostics = check_notebook(text.encode("utf-8", "surrogatepass"), "fuzz.ipynb",
                                     _rules())
    except Exception as error:
        figures.crashes += 1
        figures.problem(f"notebook crash {type(error).__name__}: {error}", text)
        return
    if any(d.code == "AL903" for d in diagnostics):
        figures.crashes += 1
        figures.problem("notebook AL903", text)


# --- configuration ----------------------------------------------------------------------------

_CONFIG = """[tool.aliaslint]
select = ["AL4", "AL101"]
ignore = ["AL404"]
per-file-ignores = { "tests/*" = ["AL4"] }
extend-exclude = ["third_party"]
max-file-size = 100000
confidence = "low"
target-version = "py310"
"""


def _config(figures: Figures, rng: random.Random) -> None:
    from aliaslint.config import CliOptions, ConfigError, Resolver

    figures.count("config")
    text = _CONFIG
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        piece = rng.choice(("[", "]", "{", "}", "=", "\"", "'", "\n", ".", "x" * 100, "1e999",
                            "[" * 3000, "{a = " * 2000, "a" + ".a" * 5000 + " = 1\n",
                            "\ufeff", "\x00", "true", "-1", "[[tool.aliaslint]]\n",
                            "select = 'ALL'\n", "target-version = 3\n"))
        text = text[:at] + piece + text[at:]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / rng.choice(("pyproject.toml", "aliaslint.toml"))
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            Resolver(CliOptions(), Path(directory)).for_directory(Path(directory))
        except ConfigError:
            pass
        except Exception as error:
            figures.crashes += 1
            figures.problem(f"config crash {type(error).__name__}: {error}", text)


# --- the cache --------------------------------------------------------------------------------

def _cache(figures: Figures, rng: random.Random) -> None:
    from aliaslint.engine import check_paths

    figures.count("cache")
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory)
        for path in sorted((ROOT / "fixtures").rglob("*.py"))[:12]:
            shutil.copy(path, project / path.name)
        cache = project / "cache"
        fresh = check_paths([str(project)], cwd=project, jobs=1).diagnostics
        check_paths([str(project)], cwd=project, jobs=1, cache=cache)
        files = sorted(p for p in cache.rglob("*") if p.is_file()
                       and (p.name == "index.json" or p.parent.parent.name == "entries"))
        for path in files:
            if rng.random() < 0.5:
                continue
            data = path.read_bytes()
            choice = rng.random()
            if choice < 0.25:
                data = data[:rng.randrange(len(data) + 1)]
            elif choice < 0.5:
                at = rng.randrange(len(data))
                data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]
            elif choice < 0.75:
                data = rng.choice((b"[" * 100_000, b"{}", b"[]", b"null", b'{"key": 1}',
                                   b'{"key": "x", "diagnostics": [["AL401", 1]]}'))
            else:
                text = data.decode("utf-8", "replace").replace("AL4", "ZZ9").replace("1", "-7")
                data = text.encode()
            path.write_bytes(data)
        try:
            cached = check_paths([str(project)], cwd=project, jobs=1, cache=cache).diagnostics
        except Exception as error:
            figures.crashes += 1
            figures.problem(f"cache crash {type(error).__name__}: {error}", "")
            return
        if cached != fresh:
            figures.crashes += 1
            figures.problem("cache: a corrupted entry changed the findings", "")


# --- `--fix`: every fix verified on generated programs -----------------------------------------
#
# Each program is fixed as `check --fix --unsafe-fixes` fixes a file (fix_bytes: encoding,
# byte-order mark and line endings kept) and judged: the fixed file compiles, a second fix
# changes nothing, each pass changed only the rows its edits name, and a program made from a
# runnable hazard (below) no longer misbehaves once fixed: it runs without an exception, its
# backward pass included, and its own assertions hold.

# Runnable hazards, each with the assertion its bug breaks; (source, fixable).
HAZARDS: tuple[tuple[str, bool], ...] = (
    ('''import torch
x = torch.randn(3, requires_grad=True)
y = x.sigmoid()
z = y.mul_(2).add_(1)
z.sum().backward()
assert x.grad is not None
''', True),
    ('''import torch
w = torch.randn(4, requires_grad=True)
h = w.exp()
h.mul_(2).add_(1).clamp_(max=50.0)
h.sum().backward()
''', True),
    ('''import torch
import torch.nn as nn
model = nn.Linear(3, 3)


def train(copy=False):
    best = model.state_dict()
    with torch.no_grad():
        model.weight.add_(1.0)
    assert not torch.equal(best["weight"], model.weight)


train()
''', True),
    ('''import torch
x = torch.randn(2, 3, 4)
y = x.transpose(1, 2)
z = y.view(2, -1)
assert z.shape == (2, 12)
''', True),
    ('''import torch
x = torch.arange(12.0).reshape(3, 4).t()
y = x.view(12)
y.add_(1)
assert x.sum().item() == 78.0
''', False),
    ('''import torch
w = torch.randn(3, requires_grad=True)
p = w.sigmoid()
t = p.detach()
t.pow_(2)
p.sum().backward()
''', True),
    ('''import torch
x = torch.zeros(4, 3)
idx = torch.tensor([0, 2])
x[idx][:, 0] = 1.0
assert x[0, 0].item() == 1.0
''', True),
    ('''import numpy as np
import torch
a = np.zeros(3)
t = torch.from_numpy(a)
t.add_(1)
assert a.sum() == 0
''', True),
    ('''import torch
a = torch.randn(3, requires_grad=True)
b = a.exp()
c = b.sigmoid_().mul_(2)
c.sum().backward()
''', False),
    ('''import torch
g = torch.zeros(3, 4)
same = g.storage().data_ptr() == g[1:].storage().data_ptr()
assert same
''', True),
)

_ENDINGS = ("\n", "\r\n", "\r", "bom")


@dataclass
class FixFigures:
    """What the `--fix` campaign tried and what went wrong."""

    tried: dict[str, int] = field(default_factory=dict)
    fixed_programs: int = 0  # programs at least one fix changed
    fixes: int = 0  # fixes applied
    refused: int = 0  # fixes `verify` refused (left as findings, not fixable)
    ran: int = 0  # fixed hazard programs run under torch
    unreported: int = 0  # hazard variants with no fixable finding (nothing to fix)
    problems: list[str] = field(default_factory=list)
    failures: int = 0
    endings: tuple[str, ...] = _ENDINGS  # the line endings tried

    def problem(self, kind: str, detail: str) -> None:
        self.failures += 1
        if len(self.problems) < 20:
            self.problems.append(f"{kind}: {detail[:400]!r}")

    def count(self, kind: str) -> None:
        self.tried[kind] = self.tried.get(kind, 0) + 1

    @property
    def programs(self) -> int:
        return sum(self.tried.values())


def fix_campaign(seed: int = 0, count: int = 300, *, run: bool = True,
                 endings: tuple[str, ...] = _ENDINGS) -> FixFigures:
    """``count`` programs: hazards in generated variants (shadowed names, method chains,
    nested calls, comments inside calls, decorators, function bodies, notebooks, every line
    ending), hypothesmith programs with a hazard spliced in, and mutated fixtures and rule
    examples."""
    figures = FixFigures(endings=endings)
    rng = random.Random(seed)
    examples = _rule_examples() + [p.read_text(encoding="utf-8") for p in
                                   sorted((ROOT / "fixtures").rglob("*.py"))]
    # hypothesmith is slow to draw from: a few programs, each spliced with several hazards.
    generated = _hypothesmith_programs(seed, max(count // 20, 5))
    for number in range(count):
        choice = number % 8
        if choice < 4 or not generated and choice < 6:
            source, fixable = rng.choice(HAZARDS)
            _fix_program(figures, rng, "hazard variant", _variant(rng, source),
                         fixable=fixable, run=run)
        elif choice < 6:
            hazard, _ = rng.choice(HAZARDS)
            other = generated[number % len(generated)]
            source = hazard + "\n" + other if rng.random() < 0.5 else other + "\n" + hazard
            _fix_program(figures, rng, "hypothesmith with a hazard", source)
        elif choice == 6:
            _fix_program(figures, rng, "mutated example", _mutate(rng, rng.choice(examples)))
        else:
            source, fixable = rng.choice(HAZARDS)
            _fix_notebook(figures, rng, _variant(rng, source, endings=False))
    return figures


def _rule_examples() -> list[str]:
    """The `bad` examples of rules/*.md."""
    blocks = []
    for path in sorted((ROOT / "rules").glob("AL*.md")):
        text = path.read_text(encoding="utf-8")
        blocks += [block for block in _BLOCK.findall(text)]
    return blocks


_BLOCK = re.compile(r"```python bad\n(.*?)```", re.S)


def _hypothesmith_programs(seed: int, count: int) -> list[str]:
    try:
        import hypothesmith
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hypothesis_seed
    except ImportError:
        return []
    found: list[str] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def collect(source: str) -> None:
        found.append(source)

    collect()
    return found


def _variant(rng: random.Random, source: str, *, endings: bool = True) -> str:
    """``source`` rewritten the ways real code differs, each kept only where it compiles."""
    steps = [_shadow, _comment_in_call, _decorate, _nest, _in_function, _chain]
    for step in rng.sample(steps, rng.randint(0, 3)):
        candidate = step(rng, source)
        if _cpython_verdict(candidate)[0]:
            source = candidate
    return source


def _after_imports(source: str, text: str) -> str:
    lines = source.split("\n")
    last = max((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))),
               default=-1)
    return "\n".join(lines[:last + 1] + text.rstrip("\n").split("\n") + lines[last + 1:])


def _shadow(rng: random.Random, source: str) -> str:
    """Module names a fix may bring in, bound to something else."""
    return _after_imports(source, rng.choice((
        "copy = 'not the module'", "_copy = None", "def copy(x):\n    return x",
        "from copy import copy", "torch_ = None")))


def _comment_in_call(rng: random.Random, source: str) -> str:
    lines = source.split("\n")
    candidates = [i for i, line in enumerate(lines) if re.search(r"\w\([^)]", line)
                  and not line.lstrip().startswith(("#", "def ", "class "))]
    if not candidates:
        return source
    i = rng.choice(candidates)
    opening = [m.end() for m in re.finditer(r"\w\(", lines[i])]
    at = rng.choice(opening)
    indent = len(lines[i]) - len(lines[i].lstrip())
    lines[i] = lines[i][:at] + "  # note\n" + " " * (indent + 4) + lines[i][at:]
    return "\n".join(lines)


def _decorate(rng: random.Random, source: str) -> str:
    source = re.sub(r"(?m)^(def |class )", r"@_same\n\1", source)
    return _after_imports(source, "\n\ndef _same(thing):\n    return thing\n")


def _nest(rng: random.Random, source: str) -> str:
    """An assigned value wrapped in a call and parentheses: `y = (x.sigmoid())`."""
    lines = source.split("\n")
    candidates = [i for i, line in enumerate(lines) if re.match(r"\s*\w+ = \S", line)]
    if not candidates:
        return source
    i = rng.choice(candidates)
    name, value = lines[i].split(" = ", 1)
    lines[i] = f"{name} = ({value})"
    return "\n".join(lines)


def _in_function(rng: random.Random, source: str) -> str:
    """The program's body run as a function (`copy` a parameter of it, sometimes)."""
    lines = source.rstrip("\n").split("\n")
    first = max((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))),
                default=-1) + 1
    params = rng.choice(("", "copy=False", "torch_=None, copy=None"))
    body = ["    " + line if line else line for line in lines[first:]]
    return "\n".join(lines[:first] + [f"def main({params}):"] + body + ["", "", "main()", ""])


def _chain(rng: random.Random, source: str) -> str:
    """An in-place call made a chain: `y.mul_(2)` → `y.mul_(2).add_(0)`."""
    return re.sub(r"(\.\w+_\([^()]*\))", r"\1.add_(0)", source, count=1)


def _ending(rng: random.Random, source: str, endings: tuple[str, ...]) -> tuple[bytes, str]:
    ending = rng.choice(endings)
    if ending == "bom":
        return ("\ufeff" + source).encode("utf-8"), "BOM"
    return source.replace("\n", ending).encode("utf-8"), repr(ending)


def _fix(data: bytes, suffix: str):
    from aliaslint import check_source
    from aliaslint.engine import check_notebook
    from aliaslint.fixes import fix_bytes

    rules = _rules()

    def check(text: str):
        if suffix == ".ipynb":
            return check_notebook(text, "fuzz.ipynb", rules)
        return check_source(text, "fuzz.py", rules)

    return fix_bytes(data, suffix, "fuzz" + suffix, check,
                     lambda d: d.fix is not None and d.fix.applicability in ("safe", "unsafe"))


def _fix_program(figures: FixFigures, rng: random.Random, kind: str, source: str, *,
                 fixable: bool | None = None, run: bool = False) -> None:
    figures.count(kind)
    source += "\n# torch\n" if "torch" not in source else ""
    if not _cpython_verdict(source)[0]:
        return
    data, ending = _ending(rng, source, figures.endings)
    where = f"{kind}, line ending {ending}"
    try:
        done = _fix(data, ".py")
    except Exception as error:  # the contract says never
        figures.problem(f"{where}: {type(error).__name__}: {error}", source)
        return
    if done is None or done.outcome is None:
        return
    figures.refused += len(done.outcome.dropped)
    if done.data is None:
        # A hazard the analysis does not see in this shape (a closure over a local model):
        # a miss of the checker, not of the fixer.
        figures.unreported += bool(fixable and not done.outcome.dropped)
        return
    figures.fixed_programs += 1
    figures.fixes += sum(done.outcome.fixed.values())
    if fixable is False:
        figures.problem(f"{where}: fixed though no fix is right", source)
    text = done.data.decode("utf-8-sig")
    valid, reason = _cpython_verdict(text)
    if not valid:
        figures.problem(f"{where}: the fixed file does not compile: {reason}", text)
        return
    again = _fix(done.data, ".py")
    if again is not None and again.data is not None:
        figures.problem(f"{where}: a second fix changed the file", text)
    for before, edits in done.outcome.passes:
        after_pass = _next_text(done.outcome, before)
        changed = _changed_rows(before, after_pass)
        named = {row for _, e in edits for row in range(e.location.row, e.end_location.row + 1)}
        if not changed <= named:
            figures.problem(f"{where}: rows {sorted(changed - named)} changed that no edit "
                            "names", before)
    if run and fixable:
        figures.ran += 1
        problem = _misbehaves(text)
        if problem is not None:
            figures.problem(f"{where}: the fixed program still misbehaves: {problem}", text)


def _next_text(outcome, before: str) -> str:
    texts = [text for text, _ in outcome.passes] + [outcome.text]
    return texts[texts.index(before) + 1]


def _changed_rows(before: str, after: str) -> set[int]:
    """The rows of ``before`` a line diff changes (an insertion counts at its row); rows
    break where CPython breaks them (not at form feeds or other Unicode breaks)."""
    old, new = _ROWS.split(before), _ROWS.split(after)
    return {row for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new,
                                                                 autojunk=False).get_opcodes()
            if tag != "equal" for row in range(i1 + 1, max(i2, i1 + 1) + 1)}


_ROWS = re.compile(r"\r\n|\r|\n")


def _misbehaves(source: str) -> str | None:
    """Run a fixed hazard program in this process (torch imported once); why it failed, or
    None when it ran to the end."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    namespace = {"__name__": "__main__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "<fixed>", "exec"), namespace)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def _fix_notebook(figures: FixFigures, rng: random.Random, source: str) -> None:
    """The program as a notebook, a cell per paragraph, fixed cell by cell."""
    figures.count("notebook")
    cells = [part + "\n" for part in source.strip("\n").split("\n\n")]
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                           "outputs": [], "source": cell.splitlines(keepends=True)}
                          for cell in cells],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                "nbformat_minor": 5}
    data = (json.dumps(notebook, indent=1) + "\n").encode()
    try:
        done = _fix(data, ".ipynb")
    except Exception as error:
        figures.problem(f"notebook: {type(error).__name__}: {error}", source)
        return
    if done is None or done.data is None:
        return
    figures.fixed_programs += 1
    figures.fixes += sum(done.outcome.fixed.values()) if done.outcome else 0
    fixed = json.loads(done.data)
    code = "".join("".join(cell["source"]) + "\n" for cell in fixed["cells"])
    if not _cpython_verdict(code)[0]:
        figures.problem("notebook: a fixed cell does not compile", code)
    again = _fix(done.data, ".ipynb")
    if again is not None and again.data is not None:
        figures.problem("notebook: a second fix changed the file", code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--fix", type=int, metavar="N", default=0,
                        help="run the `--fix` campaign over N programs instead")
    args = parser.parse_args()
    start = time.process_time()
    if args.fix:
        fixing = fix_campaign(args.seed, args.fix)
        print(json.dumps({"seed": args.seed, "programs": fixing.programs,
                          "tried": fixing.tried, "fixed_programs": fixing.fixed_programs,
                          "fixes": fixing.fixes, "refused": fixing.refused,
                          "ran_under_torch": fixing.ran, "unreported": fixing.unreported,
                          "failures": fixing.failures,
                          "cpu_s": round(time.process_time() - start, 1),
                          "problems": fixing.problems}, indent=2))
        return
    figures = campaign(args.seed, args.scale)
    print(json.dumps({"seed": args.seed, "scale": args.scale, "tried": figures.tried,
                      "inputs": sum(figures.tried.values()), "valid_programs": figures.valid,
                      "crashes": figures.crashes,
                      "hangs": figures.hangs, "rejected_valid": figures.rejected_valid,
                      "accepted_invalid": figures.accepted_invalid,
                      "over_budget": figures.over_budget,
                      "libcst_tabs": figures.libcst_tabs,
                      "libcst_backslashes": figures.libcst_backslashes,
                      "slowest_cpu_s": round(figures.slowest, 2),
                      "cpu_s": round(time.process_time() - start, 1),
                      "problems": figures.problems}, indent=2))


if __name__ == "__main__":
    main()
