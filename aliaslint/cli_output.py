"""What the check commands share for output: colour, the summary line, source lines."""

from __future__ import annotations

import os
from pathlib import Path

from aliaslint.diagnostics import FILE_NOT_CHECKED, display_path
from aliaslint.engine import NOTEBOOK_SUFFIX, decode
from aliaslint.lines import split as split_lines

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def use_color(choice: str, stream) -> bool:
    """`--color always|never|auto`; auto: a terminal, and NO_COLOR unset."""
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and "NO_COLOR" not in os.environ


def summary(files: int, diagnostics, could_not_check: int, baselined: int = 0) -> str:
    """"Found 4 findings in 1 of 2 files.": every finding printed (a notebook cell that does
    not parse, a file that could not be checked included), and the files they are in of
    those checked; a path that could not be reached counts as one of them."""
    unreached = {d.filename for d in diagnostics
                 if d.code == FILE_NOT_CHECKED and d.location.row == 0}
    total = files + len(unreached)
    checked = f"{total} file{'s' if total != 1 else ''}"
    known = (f"; {baselined} finding{'s' if baselined != 1 else ''} in the baseline left out"
             if baselined else "")
    if not diagnostics:
        return f"All checks passed! ({checked} checked{known})"
    count, where = len(diagnostics), len({d.filename for d in diagnostics})
    parts = [f"Found {count} finding{'s' if count != 1 else ''} in {where} of {checked}"]
    if could_not_check:
        parts.append(f"{could_not_check} file{'s' if could_not_check != 1 else ''} "
                     "could not be checked")
    return "; ".join(parts) + known + "."


def fix_applies(result, cwd: Path):
    """Would this run's settings apply the finding's fix (a safe one; an unsafe one where the
    file's settings or the command line allow unsafe fixes)?"""
    unsafe = {display_path(path, cwd): settings.fixes.unsafe_fixes
              for path, settings in result.checked}
    alone = next(iter(unsafe.values())) if len(unsafe) == 1 else False  # standard input

    def applies(d) -> bool:
        return d.fix is not None and (d.fix.applicability == "safe" or d.fix.applicability
                                      == "unsafe" and unsafe.get(d.filename, alone))

    return applies


def source_lines_from_disk(cwd: Path):
    def read(filename: str, cell: int | None = None) -> list[str] | None:
        path = cwd / filename
        try:
            if not path.is_file():  # a stream was read once, by the check
                return None
            data = path.read_bytes()
        except OSError:
            return None
        return lines_of(data, filename, cell)

    return read


def lines_of(data: bytes, filename: str, cell: int | None) -> list[str] | None:
    text = decode(data, filename)
    if not isinstance(text, str):
        return None
    if filename.endswith(NOTEBOOK_SUFFIX):
        from aliaslint.notebooks import cell_lines

        return cell_lines(text, cell) if cell is not None else None
    # Only the line breaks Python itself counts, so rows match the parser's.
    return split_lines(text)
