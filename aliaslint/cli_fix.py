"""`check --fix`, `--fix-only` and `--diff`, on files and on standard input."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aliaslint.cli_output import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    lines_of,
    source_lines_from_disk,
    summary,
    use_color,
)
from aliaslint.config import CliOptions, Settings
from aliaslint.diagnostics import FILE_NOT_CHECKED, INTERNAL_ERROR, UNUSED_SUPPRESSION, \
    Diagnostic
from aliaslint.engine import Result, check_buffer, check_stdin, display_path, program_link, \
    stdin_target
from aliaslint.fixes import fix_bytes, fix_file
from aliaslint.report import hidden_fixes, hidden_fixes_note, render
from aliaslint.walk import WriteScope


def fix_stdin(args, cli: CliOptions, cwd: Path, data: bytes) -> int:
    """`--fix` on standard input, as ruff does: the fixed text goes to standard output
    (with `--diff`, the diff), and what is left to standard error."""
    target = stdin_target(args.stdin_filename, cli, cwd)
    done = None
    unsafe = False
    if target is not None:
        path, filename, settings = target
        unsafe = settings.fixes.unsafe_fixes
        done = fix_bytes(data, path.suffix or ".py", filename,
                         lambda text: check_buffer(text, path, filename, settings),
                         lambda d: _applies(d, unsafe))
    final = done.data if done is not None and done.data is not None else data
    if args.diff:
        sys.stdout.write(done.diff if done is not None else "")
    else:
        sys.stdout.buffer.write(final)
        sys.stdout.flush()
    if done is None:
        result = check_stdin(data, args.stdin_filename, cli, cwd=cwd)
        remaining, count = result.diagnostics, 0
    else:
        remaining = done.remaining
        count = sum(done.outcome.fixed.values()) if done.outcome is not None else 0
        if done.not_written:
            print(f"aliaslint: error: {done.filename}: not fixed: {done.not_written}",
                  file=sys.stderr)
    if args.diff:
        return _would_fix(count, hidden_fixes(remaining, lambda d: _applies(d, unsafe)))
    if not args.fix_only and remaining:
        sys.stderr.write(render(args.output_format, remaining, cwd=cwd,
                                source_lines=lambda name, cell=None: lines_of(final, name, cell),
                                color=use_color(args.color, sys.stderr)))
    if any(d.code in (FILE_NOT_CHECKED, INTERNAL_ERROR) for d in remaining):
        return EXIT_ERROR
    if count and args.exit_non_zero_on_fix:
        return EXIT_FINDINGS
    return EXIT_FINDINGS if remaining and not args.fix_only and not args.exit_zero \
        else EXIT_CLEAN


class Recheck:
    """A file's text checked again as the run checked it: within the program (a summary of
    an imported helper is what makes a finding here), so that a fix or a suppression is
    made for every finding the run reported in the file.  Findings other files' checks made
    here (a write inside this helper, found by a caller's check) are kept with the text the
    run checked, in ``elsewhere``."""

    def __init__(self, result: Result, path: Path, filename: str, settings: Settings):
        self.result, self.path, self.filename, self.settings = result, path, filename, settings
        self.checked: str | None = None  # the text the run checked: the first one asked for
        self.elsewhere: list[Diagnostic] = []

    def __call__(self, text: str) -> list[Diagnostic]:
        link = program_link(self.result.program, self.path, self.settings)
        first = self.checked is None
        if first:
            self.checked = text
        found = [d for d in check_buffer(text, self.path, self.filename, self.settings,
                                         link=link)
                 if not self._used_elsewhere(d, text)]
        if first:
            own = {(d.code, d.location, d.end_location) for d in found}
            self.elsewhere = [d for d in self.result.diagnostics if d.filename == self.filename
                              and (d.code, d.location, d.end_location) not in own]
        return found + self.elsewhere if text == self.checked else found

    def _used_elsewhere(self, finding: Diagnostic, text: str) -> bool:
        """Is ``finding`` an AL901 the run withdrew (another file's check used that
        suppression)?  Matched by message and the suppression's line, which a fix above it
        may have moved."""
        if finding.code != UNUSED_SUPPRESSION:
            return False
        withdrawn = [d for d in self.result.used_elsewhere
                     if d.filename == finding.filename and d.message == finding.message]
        if not withdrawn:
            return False
        lines, checked = text.splitlines(), (self.checked or "").splitlines()

        def line(rows: list[str], row: int) -> str | None:
            return rows[row - 1] if row <= len(rows) else None
        return any(line(checked, d.location.row) == line(lines, finding.location.row)
                   for d in withdrawn)


def fix_paths(args, cwd: Path, result: Result,
              unrecorded: Callable[[list], list] = lambda found: found) -> int:
    """`--fix`, `--fix-only`, `--diff`: fix each file that has an applicable fix, then report
    what is left the way `check` does (ruff's exit codes: findings left → 1); of what is
    left, only the findings a baseline does not record (``unrecorded``)."""
    by_file: dict[str, list] = {}
    for d in result.diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    # `unsafe-fixes` may differ between configs: each file's own (the command line wins).
    unsafe = {display_path(path, cwd): settings.fixes.unsafe_fixes
              for path, settings in result.checked}

    def applicable(d) -> bool:
        return _applies(d, unsafe[d.filename])

    remaining = [d for d in result.diagnostics if d.filename not in unsafe or not any(
        applicable(x) for x in by_file.get(d.filename, ()))]
    fixed: dict[str, Counter] = {}
    diffs: list[str] = []
    scope = WriteScope(args.paths or ["."], cwd)
    write_failed = False
    fixed_at: dict[str, Counter] = {}  # by real path: what the fixes written there fixed
    for path, settings in result.checked:
        filename = display_path(path, cwd)
        if not any(applicable(d) for d in by_file.get(filename, ())):
            continue
        refusal = scope.refusal(path)
        if refusal is not None:
            print(f"aliaslint: warning: {filename}: not fixed: {refusal}", file=sys.stderr)
            remaining.extend(by_file[filename])
            continue

        real = os.path.realpath(path)
        if real in fixed_at:  # the same file by another name (a link), fixed already
            fixed[filename] = fixed_at[real]
            continue

        check = Recheck(result, path, filename, settings)
        done = fix_file(path, filename, check, applicable, write=not args.diff)
        if done is None:
            remaining.extend(by_file[filename])
            continue
        if done.outcome is not None:
            for message in done.outcome.dropped:
                print(f"aliaslint: warning: {filename}: fix not applied: {message}",
                      file=sys.stderr)
        if done.not_written is not None:
            # Nothing was written: the file's findings are all still there.
            print(f"aliaslint: error: {filename}: not fixed: {done.not_written}",
                  file=sys.stderr)
            remaining.extend(by_file[filename])
            write_failed = write_failed or done.write_failed
            continue
        remaining.extend(done.remaining)
        if done.data is not None:  # another file's check found these; fixes here leave them
            remaining.extend(check.elsewhere)
        if done.outcome is not None and done.outcome.fixed:
            fixed[filename] = fixed_at[real] = done.outcome.fixed
        diffs.append(done.diff)
    remaining = unrecorded(sorted(remaining, key=lambda d: d.sort_key))
    count = sum(sum(c.values()) for c in fixed.values())
    if args.diff:
        sys.stdout.write("".join(diffs))
        return _would_fix(count, hidden_fixes(remaining, applicable))
    if args.show_fixes or args.fix_only:
        for filename, codes in sorted(fixed.items()):
            for code, n in sorted(codes.items()):
                print(f"Fixed {code} × {n} in {filename}")
    if not args.fix_only:
        sys.stdout.write(render(args.output_format, remaining,
                                source_lines=source_lines_from_disk(cwd),
                                color=use_color(args.color, sys.stdout), cwd=cwd))
        if args.output_format in ("full", "concise"):
            hidden = sum(1 for d in remaining if d.fix is not None and
                         d.fix.applicability == "unsafe" and not unsafe.get(d.filename))
            print(_fix_summary(len(result.files), remaining, count, hidden,
                               result.could_not_check))
    if result.could_not_check or write_failed:
        return EXIT_ERROR
    if count and args.exit_non_zero_on_fix:
        return EXIT_FINDINGS
    if remaining and not args.fix_only and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _applies(d, unsafe: bool) -> bool:
    """May this run apply the finding's fix (a safe one; an unsafe one when allowed)?"""
    return d.fix is not None and (d.fix.applicability == "safe" or
                                  d.fix.applicability == "unsafe" and unsafe)


def _would_fix(count: int, hidden: int) -> int:
    """`--diff`'s ending: how many findings the diff fixes and how many more `--unsafe-fixes`
    would (as ruff says it), and exit 1 if the diff fixes any."""
    more = f" ({hidden_fixes_note(hidden)})" if hidden else ""
    if count:
        print(f"Would fix {count} finding{'s' if count != 1 else ''}{more}.", file=sys.stderr)
    elif hidden:
        print(f"No fixes available{more}.", file=sys.stderr)
    return EXIT_FINDINGS if count else EXIT_CLEAN


def _fix_summary(files: int, remaining, fixed: int, hidden: int, could_not_check: int) -> str:
    left = sum(1 for d in remaining if d.code not in (FILE_NOT_CHECKED, INTERNAL_ERROR))
    total = left + fixed
    if not total:
        text = summary(files, remaining, could_not_check)
    else:
        text = (f"Found {total} finding{'s' if total != 1 else ''} ({fixed} fixed, {left} "
                "remaining).")
    if hidden:
        text += f"\n{hidden} more fixable with the `--unsafe-fixes` option."
    return text
