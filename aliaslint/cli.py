"""The command line: ``check``, ``rule``, ``rules``, ``clean``.

Exit codes: 0 no findings, 1 findings, 2 a usage or configuration error or
a file that could not be checked.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from aliaslint import __version__
from aliaslint.cache import clean as clean_cache
from aliaslint.catalog import load_rules, markdown_table
from aliaslint.config import DEFAULT_MAX_FILE_SIZE, CliOptions, ConfigError, Resolver, Selection
from aliaslint.config import validate_selectors, walk
from aliaslint.engine import NOTEBOOK_SUFFIX, cache_directory, check_paths, decode, display_path
from aliaslint.notebooks import cell_lines
from aliaslint.report import FORMATS, render, render_statistics

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _selectors(values: list[str] | None) -> list[str] | None:
    """``--select AL401,AL402 --select AL403`` → one flat list."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aliaslint",
        description="Find PyTorch memory-aliasing bugs: in-place writes autograd needs, "
        "writes through views, lost copies, NumPy-shared memory, snapshot references.",
    )
    parser.add_argument("--version", action="version", version=f"aliaslint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser("check", help="check files and directories (default: .)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    rules = check.add_argument_group("rule selection")
    rules.add_argument("--select", action="append", metavar="CODES",
                       help="comma-separated codes or prefixes to enable, replacing the "
                       "configured selection (ALL for every rule)")
    rules.add_argument("--extend-select", action="append", metavar="CODES",
                       help="codes or prefixes to enable in addition")
    rules.add_argument("--ignore", action="append", metavar="CODES",
                       help="codes or prefixes to disable")
    rules.add_argument("--confidence", choices=("high", "low"),
                       help="'low' also reports possible-but-unproven hazards")
    rules.add_argument("--report-unused-suppressions", action="store_true",
                       help="report noqa / aliaslint: ignore comments that silence nothing (AL901)")
    output = check.add_argument_group("output")
    output.add_argument("--output-format", choices=FORMATS, default="full")
    output.add_argument("--statistics", action="store_true",
                        help="print a count per rule instead of the findings")
    output.add_argument("--show-files", action="store_true",
                        help="list the files that would be checked, with their config, and exit")
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    output.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when there are findings (errors still exit 2)")
    config = check.add_argument_group("configuration")
    config.add_argument("--config", type=Path, metavar="FILE",
                        help="use this aliaslint.toml / pyproject.toml for every file")
    config.add_argument("--isolated", action="store_true", help="ignore all config files")
    config.add_argument("--force-exclude", action="store_true",
                        help="apply exclude patterns to files named on the command line too")
    config.add_argument("--max-file-size", type=int, metavar="BYTES",
                        help=f"skip larger files with AL902 (default {DEFAULT_MAX_FILE_SIZE})")
    config.add_argument("--jobs", "-j", type=int, metavar="N",
                        help="worker processes (default: the number of cores)")
    config.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache of earlier results")

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", metavar="CODE")

    # Listed for --help only: `trace` takes the program's own arguments, parsed by _trace.
    commands.add_parser("trace", add_help=False,
                        help="run a program or test suite and report alias hazards as they happen")

    listing = commands.add_parser("rules", help="list every rule")
    listing.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")

    clean = commands.add_parser("clean", help="remove the cache of earlier results")
    clean.add_argument("--config", type=Path, metavar="FILE",
                       help="the aliaslint.toml / pyproject.toml whose cache-dir to remove")
    return parser



def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["trace"]:
        return _trace(argv[1:])
    if argv[:1] == ["check"] and "--trace" in _split_trace_argv(argv[1:], _CONFIRM_OPTIONS)[0]:
        return _confirm(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "rule":
            return _rule(args.code)
        if args.command == "clean":
            return _clean(args.config)
        return _rules(args.output_format)
    except ConfigError as error:
        print(f"aliaslint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `aliaslint check | head`
        sys.stderr.close()
        return EXIT_FINDINGS


def _selection(args) -> Selection:
    """The command line's --select / --extend-select / --ignore, validated."""
    select = _selectors(args.select)
    return Selection(
        select=validate_selectors(select, "--select") if select is not None else None,
        extend_select=validate_selectors(_selectors(args.extend_select) or [],
                                         "--extend-select"),
        ignore=validate_selectors(_selectors(args.ignore) or [], "--ignore",
                                  allow_planned=True),
    )


def _check(args) -> int:
    cli = CliOptions(
        selection=_selection(args),
        config=args.config,
        max_file_size=args.max_file_size,
        confidence=args.confidence,
        report_unused_suppressions=args.report_unused_suppressions,
        isolated=args.isolated,
        force_exclude=args.force_exclude,
    )
    cwd = Path.cwd()
    if args.show_files:
        files, missing = walk(args.paths, Resolver(cli, cwd))
        for path, settings in files:
            source = display_path(settings.source, cwd) if settings.source else "defaults"
            print(f"{display_path(path, cwd)}  ({source})")
        for name in missing:
            print(f"aliaslint: error: {name}: no such file or directory", file=sys.stderr)
        return EXIT_ERROR if missing else EXIT_CLEAN
    result = check_paths(args.paths, cli, jobs=args.jobs, cwd=cwd, cache=not args.no_cache)
    diagnostics = result.diagnostics
    color = _use_color(args.color, sys.stdout)
    if args.statistics:
        sys.stdout.write(render_statistics(diagnostics))
    else:
        sys.stdout.write(render(args.output_format, diagnostics,
                                source_lines=_source_lines(cwd), color=color, cwd=cwd))
        if args.output_format in ("full", "concise"):
            print(_summary(len(result.files), diagnostics, result.could_not_check))
    if result.could_not_check:
        return EXIT_ERROR
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _use_color(choice: str, stream) -> bool:
    """`--color always|never|auto`; auto: a terminal, and NO_COLOR unset."""
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and "NO_COLOR" not in os.environ


def _summary(files: int, diagnostics, could_not_check: int) -> str:
    findings = sum(1 for d in diagnostics if d.code not in ("AL902", "AL903"))
    checked = f"{files} file{'s' if files != 1 else ''}"
    if not diagnostics:
        return f"All checks passed! ({checked} checked)"
    parts = [f"Found {findings} finding{'s' if findings != 1 else ''} in {checked}"]
    if could_not_check:
        parts.append(f"{could_not_check} file{'s' if could_not_check != 1 else ''} "
                     "could not be checked")
    return "; ".join(parts) + "."


def _source_lines(cwd: Path):
    def read(filename: str, cell: int | None = None) -> list[str] | None:
        try:
            data = (cwd / filename).read_bytes()
        except OSError:
            return None
        text = decode(data, filename)
        if not isinstance(text, str):
            return None
        if filename.endswith(NOTEBOOK_SUFFIX):
            return cell_lines(text, cell) if cell is not None else None
        # Only the line breaks Python itself counts, so rows match the parser's.
        return re.split(r"\r\n|\r|\n", text)

    return read


def _clean(config: Path | None) -> int:
    directory = cache_directory(Resolver(CliOptions(config=config), Path.cwd()))
    try:
        removed = clean_cache(directory)
    except OSError as error:
        print(f"aliaslint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"Removed {display_path(directory, Path.cwd())}" if removed
          else f"No cache at {display_path(directory, Path.cwd())}")
    return EXIT_CLEAN


def _rule(code: str) -> int:
    rule = load_rules().get(code.strip().upper())
    if rule is None:
        print(f"aliaslint: error: unknown rule {code!r} (see `aliaslint rules`)", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(rule.text if rule.text.endswith("\n") else rule.text + "\n")
    return EXIT_CLEAN


def _rules(fmt: str) -> int:
    rules = load_rules().values()
    if fmt == "json":
        data = [
            {"code": r.code, "name": r.name, "summary": r.summary, "status": r.status,
             "default": "on" if r.default_on else "off", "fix": r.fix}
            for r in rules
        ]
        print(json.dumps(data, indent=2))
        return EXIT_CLEAN
    if fmt == "markdown":
        sys.stdout.write(markdown_table())
        return EXIT_CLEAN
    width = max(len(r.name) for r in rules)
    for r in rules:
        flag = "" if r.implemented else " (planned)"
        print(f"{r.code}  {r.name:<{width}}  {r.summary}{flag}")
    return EXIT_CLEAN


# --- trace ----------------------------------------------------------------------------------

_TRACE_OPTIONS_WITH_VALUE = ("--output-format", "--fail-on", "--color", "--output", "-o")
_CONFIRM_OPTIONS = (*_TRACE_OPTIONS_WITH_VALUE, "--select", "--extend-select", "--ignore",
                    "--confidence", "--config")


def _trace_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aliaslint trace",
        usage="aliaslint trace [OPTIONS] (SCRIPT | -m MODULE) [ARGS...]",
        description="Run a Python program under the runtime tracer (torch is required) and "
        "report the alias hazards it hits, with their source lines.",
        epilog="Everything after SCRIPT or -m MODULE goes to the program, e.g. "
        "`aliaslint trace -m pytest -x tests/`.",
    )
    parser.add_argument("-m", dest="module", metavar="MODULE",
                        help="run a library module as a script, like `python -m`")
    parser.add_argument("--output-format", choices=FORMATS, default="full")
    parser.add_argument("--output", "-o", type=Path, metavar="FILE",
                        help="write the report to FILE instead of standard error")
    parser.add_argument("--fail-on", choices=("never", "any"), default="any",
                        help="exit 1 when the program succeeded but runtime findings exist "
                        "('any', the default); 'never' keeps the program's exit code")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.add_argument("--confirm", action="store_true",
                        help="also check the executed files statically and mark each finding "
                        "confirmed, refuted or not-reached (as `check --trace`)")
    return parser


def _split_trace_argv(argv: list[str],
                      with_value: tuple[str, ...] = _TRACE_OPTIONS_WITH_VALUE,
                      ) -> tuple[list[str], list[str]]:
    """(aliaslint's options, the program and its arguments): the program starts at the
    first argument that is not one of ours, or right after ``-m MODULE``."""
    ours = []
    rest = list(argv)
    while rest:
        arg = rest[0]
        if arg == "--":
            rest.pop(0)
            break
        if arg == "-m":
            ours += rest[:2]
            return ours, rest[2:]
        if arg.startswith("-m") and not arg.startswith("--"):
            ours.append(arg)
            return ours, rest[1:]
        if not arg.startswith("-"):
            break
        ours.append(rest.pop(0))
        if arg in with_value and rest:
            ours.append(rest.pop(0))
    return ours, rest


def _trace(argv: list[str]) -> int:
    parser = _trace_parser()
    ours, program = _split_trace_argv(argv)
    if "--confirm" in ours:
        return _confirm(argv)
    args = parser.parse_args(ours)
    if args.module is None and not program:
        parser.error("give a script to run, or -m MODULE")
    try:
        from aliaslint.tracer import run_program, trace
        tracer = trace()
    except ImportError as error:
        print(f"aliaslint: error: `trace` needs torch ({error})", file=sys.stderr)
        return EXIT_ERROR
    if args.module is not None:
        status = run_program(tracer, module=args.module, args=program)
    else:
        status = run_program(tracer, script=program[0], args=program[1:])
    cwd = Path.cwd()
    diagnostics = [_relative(d, cwd) for d in tracer.findings]
    stream = open(args.output, "w", encoding="utf-8") if args.output else sys.stderr
    try:
        color = _use_color(args.color, stream)
        stream.write(render(args.output_format, diagnostics, source_lines=_source_lines(cwd),
                            color=color, cwd=cwd))
        if args.output_format in ("full", "concise"):
            count = len(diagnostics)
            stream.write(f"aliaslint trace: {count} runtime finding{'s' if count != 1 else ''}"
                         f"{'.' if count else ' (no alias hazard was hit).'}\n")
    finally:
        if args.output:
            stream.close()
    if status == 0 and diagnostics and args.fail_on == "any":
        return EXIT_FINDINGS
    return status


def _relative(diagnostic, cwd: Path):
    """The finding with every path shown relative to the working directory."""
    from dataclasses import replace

    related = tuple(replace(r, filename=display_path(Path(r.filename), cwd))
                    for r in diagnostic.related)
    return replace(diagnostic, filename=display_path(Path(diagnostic.filename), cwd),
                   related=related)


# --- check --trace / trace --confirm ------------------------------------------------------------


def _confirm_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aliaslint check --trace",
        usage="aliaslint check --trace [OPTIONS] (SCRIPT | -m MODULE) [ARGS...]",
        description="Run a Python program under the runtime tracer, check the project files "
        "it executes statically, and mark each finding confirmed (the hazard happened), "
        "refuted (its line ran and the hazard did not: a false positive) or not-reached.",
        epilog="Everything after SCRIPT or -m MODULE goes to the program. The same as "
        "`aliaslint trace --confirm`.",
    )
    parser.add_argument("--trace", "--confirm", dest="confirm", action="store_true",
                        help="run the program and confirm the findings (required)")
    parser.add_argument("-m", dest="module", metavar="MODULE",
                        help="run a library module as a script, like `python -m`")
    parser.add_argument("--select", action="append", metavar="CODES")
    parser.add_argument("--extend-select", action="append", metavar="CODES")
    parser.add_argument("--ignore", action="append", metavar="CODES")
    parser.add_argument("--confidence", choices=("high", "low"))
    parser.add_argument("--config", type=Path, metavar="FILE")
    parser.add_argument("--isolated", action="store_true", help="ignore all config files")
    parser.add_argument("--output-format", choices=FORMATS, default="full")
    parser.add_argument("--output", "-o", type=Path, metavar="FILE",
                        help="write the report to FILE instead of standard error")
    parser.add_argument("--fail-on", choices=("any", "confirmed", "never"), default="any",
                        help="when the program exited 0, exit 1 if a finding is confirmed or "
                        "not refuted ('any', the default), only if one is confirmed or seen "
                        "at run time ('confirmed'), or never")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return parser


def _confirm(argv: list[str]) -> int:
    from dataclasses import replace

    parser = _confirm_parser()
    ours, program = _split_trace_argv(argv, _CONFIRM_OPTIONS)
    args = parser.parse_args(ours)
    if args.module is None and not program:
        parser.error("give a script to run, or -m MODULE")
    try:
        cli = CliOptions(
            selection=_selection(args),
            config=args.config, confidence=args.confidence, isolated=args.isolated,
        )
        from aliaslint.confirm import confirm
    except ConfigError as error:
        print(f"aliaslint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except ImportError as error:
        print(f"aliaslint: error: `check --trace` needs torch ({error})", file=sys.stderr)
        return EXIT_ERROR
    cwd = Path.cwd()
    try:
        if args.module is not None:
            outcome = confirm(module=args.module, args=program, cli=cli, cwd=str(cwd))
        else:
            outcome = confirm(script=program[0], args=program[1:], cli=cli, cwd=str(cwd))
    except ConfigError as error:
        print(f"aliaslint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    text = args.output_format in ("full", "concise", "github")
    shown = []
    for diagnostic in outcome.diagnostics:
        relative = _relative(diagnostic, cwd)
        if text and diagnostic.status is not None:
            note = outcome.note(diagnostic)
            message = f"[{diagnostic.status}] {relative.message}"
            if note:
                message += f"\nnote: run time: {note}"
            relative = replace(relative, message=message)
        shown.append(relative)
    stream = open(args.output, "w", encoding="utf-8") if args.output else sys.stderr
    try:
        color = _use_color(args.color, stream)
        stream.write(render(args.output_format, shown, source_lines=_source_lines(cwd),
                            color=color, cwd=cwd))
        if args.output_format in ("full", "concise"):
            stream.write(_confirm_summary(outcome, shown))
    finally:
        if args.output:
            stream.close()
    if outcome.exit_status != 0 or args.fail_on == "never":
        return outcome.exit_status
    failing = ("confirmed", "runtime") if args.fail_on == "confirmed" else (
        "confirmed", "not-reached", "runtime")
    if any(d.status in failing for d in outcome.diagnostics):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _confirm_summary(outcome, shown) -> str:
    """The refuted findings again, one a line, then the counts."""
    lines = []
    refuted = [d for d in shown if d.status == "refuted"]
    if refuted:
        lines.append(f"Refuted: {len(refuted)} static finding{'s' if len(refuted) != 1 else ''} "
                     "whose line ran without the hazard (false positives of `check`):")
        lines += [f"  {d.filename}:{d.location.row}:{d.location.column}: {d.code}"
                  for d in refuted]
    files = len(outcome.files)
    static = sum(1 for d in outcome.diagnostics
                 if d.status in ("confirmed", "refuted", "not-reached"))
    runtime = outcome.count("runtime")
    lines.append(
        f"aliaslint check --trace: {static} static finding{'s' if static != 1 else ''} in "
        f"{files} executed file{'s' if files != 1 else ''}: "
        f"{outcome.count('confirmed')} confirmed, {outcome.count('refuted')} refuted, "
        f"{outcome.count('not-reached')} not reached; {runtime} runtime-only "
        f"finding{'s' if runtime != 1 else ''}.")
    return "\n".join(lines) + "\n"
