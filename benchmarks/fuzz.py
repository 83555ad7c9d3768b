"""The fuzz campaign: hostile input for `check`, deterministic from a seed.

    python benchmarks/fuzz.py [--seed N] [--scale K]

Five kinds of input, each judged against what `check` promises (README, "Contract"):

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
import json
import random
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
    if valid and errors and not budget:
        figures.rejected_valid += 1
        figures.problem(f"{kind} rejected but valid: {errors[0].message}", source)
    elif not valid and not errors:
        figures.accepted_invalid += 1
        figures.problem(f"{kind} accepted but invalid: {reason}", source)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    start = time.process_time()
    figures = campaign(args.seed, args.scale)
    print(json.dumps({"seed": args.seed, "scale": args.scale, "tried": figures.tried,
                      "inputs": sum(figures.tried.values()), "valid_programs": figures.valid,
                      "crashes": figures.crashes,
                      "hangs": figures.hangs, "rejected_valid": figures.rejected_valid,
                      "accepted_invalid": figures.accepted_invalid,
                      "over_budget": figures.over_budget,
                      "slowest_cpu_s": round(figures.slowest, 2),
                      "cpu_s": round(time.process_time() - start, 1),
                      "problems": figures.problems}, indent=2))


if __name__ == "__main__":
    main()
