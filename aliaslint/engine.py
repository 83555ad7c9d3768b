"""read → prefilter → parse → analyse → checks → suppressions, for each file.

Every problem with one file becomes a finding for that file (AL902 for a
file that cannot be read, decoded or parsed; AL903 for an exception inside
the analysis or a rule), so one bad file never stops the run.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from aliaslint.analysis import analyse
from aliaslint.checks import CHECKS, Context, Finding
from aliaslint.config import CliOptions, Resolver, Settings, resolve_rules, walk
from aliaslint.diagnostics import Diagnostic, Position, Related
from aliaslint.suppressions import parse_suppressions

# Files that never mention torch cannot create a tensor: skip them unparsed.
PREFILTER = "torch"


@dataclass(frozen=True)
class Result:
    diagnostics: list[Diagnostic]
    files: list[Path]

    @property
    def could_not_check(self) -> int:
        return len({d.filename for d in self.diagnostics if d.code in ("AL902", "AL903")})


def _file_error(filename: str, message: str, row: int = 1, column: int = 1,
                code: str = "AL902") -> Diagnostic:
    position = Position(row, column)
    return Diagnostic(code, message, filename, position, position)


def decode(data: bytes, filename: str) -> str | Diagnostic:
    """Source text from bytes by PEP 263, or the AL902 finding that explains why not."""
    if b"\0" in data:
        row = data.count(b"\n", 0, data.index(b"\0")) + 1
        return _file_error(filename, "file contains NUL bytes (binary?) and cannot be checked",
                           row)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        return _file_error(filename, f"bad encoding declaration: {error.msg}",
                           getattr(error, "lineno", None) or 1)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        row = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return _file_error(
            filename,
            f"file is not valid {encoding}: byte 0x{data[error.start]:02x} cannot be decoded "
            "(declare the encoding with a `# -*- coding: ... -*-` line)",
            row, column,
        )


def check_source(source: str | bytes, filename: str = "<string>",
                 rules: Iterable[str] | None = None, *,
                 report_unused_suppressions: bool = False,
                 confidence: str = "high") -> list[Diagnostic]:
    """Check one module's source; the findings come back sorted.

    ``rules`` are the codes to run (default: the default selection).
    """
    enabled = frozenset(rules) if rules is not None else resolve_rules(
        (), report_unused_suppressions)
    if isinstance(source, bytes):
        decoded = decode(source, filename)
        if isinstance(decoded, Diagnostic):
            return [decoded]
        source = decoded
    if PREFILTER not in source:
        return []
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return [_file_error(filename, f"syntax error: {error.message}",
                            error.raw_line, error.raw_column + 1)]
    except RecursionError:
        return [_file_error(filename, "file is nested too deeply to parse")]
    findings, errors = _run_checks(module, enabled, filename)
    located = _locate(module, findings, filename, confidence)
    diagnostics = [diagnostic for diagnostic, _ in located]
    if located or "AL901" in enabled:
        diagnostics = _apply_suppressions(source, located, enabled, filename)
    return sorted(errors + diagnostics, key=lambda d: d.sort_key)


def _run_checks(module: cst.Module, enabled: frozenset[str], filename: str):
    errors: list[Diagnostic] = []
    try:
        analysis = analyse(module)
    except RecursionError:
        return [], [_file_error(filename, "file is nested too deeply to analyse")]
    except Exception as error:  # a bug in aliaslint: report it, keep going
        return [], [_file_error(filename, _internal("the analysis", error), code="AL903")]
    by_event: dict[type, list] = {}
    for event in analysis.events:
        by_event.setdefault(type(event), []).append(event)
    context = Context(module)
    findings: dict[tuple, Finding] = {}
    failed: set[str] = set()
    for check in CHECKS:
        if check.code not in enabled or check.code in failed:
            continue
        try:
            for event in by_event.get(check.event, ()):
                for finding in check.run(event, context):
                    # Loops are interpreted twice; a finding counts once.
                    findings.setdefault((finding.code, id(finding.node), finding.message), finding)
        except Exception as error:
            failed.add(check.code)
            errors.append(_file_error(filename, _internal(check.code, error), code="AL903"))
    return list(findings.values()), errors


def _internal(where: str, error: Exception) -> str:
    return (f"internal error in {where}: {type(error).__name__}: {error} "
            "(please report this with the file that caused it)")


def _locate(module, findings: list[Finding], filename: str,
            confidence: str) -> list[tuple[Diagnostic, int]]:
    """Each finding as a Diagnostic, with the first row of its statement."""
    if not findings:
        return []
    # Positions are computed only for files with findings: the provider costs
    # a full pass over the tree.
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def span(node):
        code_range = positions[node]
        return (Position(code_range.start.line, code_range.start.column + 1),
                Position(code_range.end.line, code_range.end.column + 1))

    located = []
    for finding in findings:
        start, end = span(finding.node)
        related = tuple(
            Related(message, filename, *span(node)) for message, node in finding.related
        )
        diagnostic = Diagnostic(finding.code, finding.message, filename, start, end, related)
        if confidence == "low" or diagnostic.confidence == "high":
            located.append((diagnostic, span(finding.stmt)[0].row))
    return located


def _apply_suppressions(source: str, located: list[tuple[Diagnostic, int]], enabled,
                        filename: str) -> list[Diagnostic]:
    suppressions = parse_suppressions(source)
    kept = []
    for diagnostic, statement_row in located:
        if not suppressions.suppresses(diagnostic.code, (diagnostic.location.row, statement_row)):
            kept.append(diagnostic)
    if "AL901" in enabled:
        from aliaslint.catalog import load_rules

        known = load_rules()
        for directive, code in suppressions.unused():
            start = Position(directive.row, directive.column)
            end = Position(directive.row, directive.end_column)
            if code is None:
                message = f"unused suppression `{directive.text.strip()}`: nothing to silence here"
            elif code not in known:
                message = f"suppression names unknown rule `{code}`"
            elif code not in enabled:
                message = f"suppression of `{code}` is unused: the rule is not enabled"
            else:
                message = f"unused suppression of `{code}`: no {code} finding on this line"
            kept.append(Diagnostic("AL901", message, filename, start, end))
    return kept


def check_file(path: Path, filename: str, settings: Settings) -> list[Diagnostic]:
    """Check one file on disk; every failure is a finding, never an exception."""
    try:
        size = path.stat().st_size
        if size > settings.max_file_size:
            return [_file_error(
                filename,
                f"file is {size:,} bytes, over the {settings.max_file_size:,}-byte limit "
                "(raise `max-file-size` to check it)",
            )]
        data = path.read_bytes()
    except OSError as error:
        return [_file_error(filename, f"cannot read file: {error.strerror or error}")]
    try:
        return check_source(
            data, filename, settings.rules_for(path),
            report_unused_suppressions=settings.report_unused_suppressions,
            confidence=settings.confidence,
        )
    except Exception as error:  # never let one file stop the run
        return [_file_error(filename, _internal("the engine", error), code="AL903")]


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        relative = os.path.relpath(path, cwd)
        return Path(relative).as_posix() if not relative.startswith("../../..") else str(path)


def _check_job(job) -> list[Diagnostic]:
    path, filename, settings = job
    return check_file(path, filename, settings)


def check_paths(paths=(".",), cli: CliOptions = CliOptions(), *, jobs: int | None = None,
                cwd: Path | None = None) -> Result:
    """Check files and directories; findings come back sorted whatever ``jobs`` is.

    Raises ``ConfigError`` for a broken configuration: there is nothing
    sensible to check against then.
    """
    resolver = Resolver(cli, cwd)
    files, missing = walk(paths, resolver)
    jobs_list = [(path, display_path(path, resolver.cwd), settings) for path, settings in files]
    diagnostics = [
        _file_error(name, "no such file or directory", row=0, column=0) for name in missing
    ]
    workers = min(jobs or os.cpu_count() or 1, len(jobs_list))
    if workers <= 1 or len(jobs_list) < 4:
        for job in jobs_list:
            diagnostics.extend(_check_job(job))
    else:
        # Chunks amortise the hand-off; several per worker balance big files.
        chunk = max(1, min(32, len(jobs_list) // (workers * 8)))
        with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
            for result in pool.map(_check_job, jobs_list, chunksize=chunk):
                diagnostics.extend(result)
    diagnostics.sort(key=lambda d: d.sort_key)
    return Result(diagnostics, [path for path, _ in files])


def _context():
    # fork is cheapest (the tables are already loaded) where it is safe.
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return None
