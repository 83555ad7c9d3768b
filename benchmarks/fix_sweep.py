"""Apply every fix (`--fix --unsafe-fixes`) to copies of a set of files and measure what it did.

    python benchmarks/fix_sweep.py [--run] DIR_OR_FILE ...
    python benchmarks/fix_sweep.py --variants N [--seed S]

For each input copied into a temporary directory: how many fixes were applied, whether every
fixed file still compiles, whether a re-check reports none of the fixed findings and no new one
(a second `--fix` changes nothing), and whether only the lines the fixes' edits name changed.
With ``--run`` (needs torch) each conformance-style program is also run before and after: one
that exited 1 ("misbehaves") should exit 0 once fixed.

With ``--variants N``, every rule's fixes instead: the `bad` example of each rules/ALnnn.md whose
rule has a fix, rewritten N ways each (shadowed module names, method chains, nested calls, comments
inside a call, decorators, a function body, every line ending) and as a notebook, fixed in process
and judged as benchmarks/fuzz.py judges a fixed program.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path


def _check(*args: Path | str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "aliaslint", "check", "--isolated", "--no-cache", "--select", "ALL",
         "--output-format", "json", *map(str, args)],
        capture_output=True, text=True, check=False).stdout
    try:
        return json.loads(out) if out.strip().startswith("[") else []
    except json.JSONDecodeError:
        return []


def _runs_clean(path: Path) -> int:
    return subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True,
                          timeout=120, check=False).returncode


def variants(count: int, seed: int = 0) -> int:
    """Each fixable rule's `bad` example in ``count`` variants and as a notebook."""
    import random
    import re

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fuzz
    from aliaslint import registry

    rng = random.Random(seed)
    figures = fuzz.FixFigures()
    per_rule: Counter[str] = Counter()
    for path in sorted((fuzz.ROOT / "rules").glob("AL*.md")):
        rule = registry.get(path.stem)
        if rule is None or rule.fix == "none":
            continue
        for example in re.findall(r"```python bad\n(.*?)```", path.read_text("utf-8"), re.S):
            for _ in range(count):
                before = figures.fixes
                fuzz._fix_program(figures, rng, path.stem, fuzz._variant(rng, example))
                per_rule[path.stem] += figures.fixes - before
            fuzz._fix_notebook(figures, rng, example)
    print(json.dumps({"programs": figures.programs, "fixed_programs": figures.fixed_programs,
                      "fixes": figures.fixes, "refused": figures.refused,
                      "fixes_by_rule": dict(sorted(per_rule.items())),
                      "failures": figures.failures, "problems": figures.problems}, indent=2))
    return 1 if figures.failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--run", action="store_true", help="run each program before and after")
    parser.add_argument("--variants", type=int, metavar="N", default=0,
                        help="sweep N generated variants of each rule's example instead")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.variants:
        return variants(args.variants, args.seed)
    if not args.inputs:
        parser.error("give files or directories to sweep, or --variants N")
    # One run over everything first: only files with an applicable fix are copied and swept.
    candidates = sorted({Path(d["filename"]).resolve() for d in _check(*args.inputs)
                         if d.get("fix") and d["fix"]["applicability"] in ("safe", "unsafe")
                         and d["filename"].endswith(".py")})
    totals: Counter[str] = Counter()
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for source in candidates:
            work = Path(tmp) / source.name
            shutil.copyfile(source, work)
            before = _check(work)
            fixable = [d for d in before if d.get("fix") and
                       d["fix"]["applicability"] in ("safe", "unsafe")]
            if not fixable:
                continue
            totals["files with fixes"] += 1
            ran_before = _runs_clean(work) if args.run else None
            _check(work, "--fix", "--unsafe-fixes")
            text = work.read_text(encoding="utf-8")
            try:
                compile(text, str(work), "exec")
            except SyntaxError as error:
                problems.append(f"{source}: does not compile after fixing: {error}")
                continue
            after = _check(work)
            totals["fixes applied"] += len(before) - len(after)
            new = {(d["code"], d["message"]) for d in after} - \
                {(d["code"], d["message"]) for d in before}
            if new:
                problems.append(f"{source}: new findings after fixing: {sorted(new)}")
            original = source.read_text(encoding="utf-8").splitlines()
            changed = {i for tag, i1, i2, _, _ in difflib.SequenceMatcher(
                None, original, text.splitlines()).get_opcodes() if tag != "equal"
                for i in range(i1 + 1, max(i2, i1 + 1) + 1)}
            named = {row for d in fixable for e in d["fix"]["edits"]
                     for row in range(e["location"]["row"], e["end_location"]["row"] + 1)}
            if not changed <= named | {1}:
                problems.append(f"{source}: lines changed that no edit names: "
                                f"{sorted(changed - named)}")
            _check(work, "--fix", "--unsafe-fixes")
            if work.read_text(encoding="utf-8") != text:
                problems.append(f"{source}: a second --fix changed the file again")
            if args.run:
                ran_after = _runs_clean(work)
                totals[f"ran: exit {ran_before} -> {ran_after}"] += 1
    for key, value in sorted(totals.items()):
        print(f"{key}: {value}")
    print(f"problems: {len(problems)}")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
