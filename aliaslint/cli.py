"""The command line: ``check`` (and ``check --trace``), ``trace``, ``rule``, ``rules``, ``clean``.

Exit codes: 0 no findings, 1 findings, 2 a usage or configuration error or
a file that could not be checked.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from aliaslint import __version__, registry, stages, verbose
from aliaslint.cli_output import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    fix_applies,
    lines_of,
    source_lines_from_disk,
    summary,
    use_color,
)
from aliaslint.config import (
    DEFAULT_MAX_FILE_SIZE,
    CliOptions,
    ConfigError,
    Resolver,
    Selection,
    close_match,
    validate_selectors,
)
from aliaslint.engine import (
    cache_keep,
    cache_location,
    check_paths,
    check_stdin,
    display_path,
)
from aliaslint.registry import rule_url
from aliaslint.progress import ProgressLine
from aliaslint.report import FORMATS, render, render_statistics, shown_path
from aliaslint.screen import Version, parse_target_version
from aliaslint.show import per_file_option, settings_text
from aliaslint.walk import walk

if TYPE_CHECKING:
    from aliaslint.baseline import Baseline
    from aliaslint.rule import Rule
    from aliaslint.runtime.launch import Program, Run



def _selectors(values: list[str] | None) -> list[str] | None:
    """``--select AL401,AL402 --select AL403`` → one flat list."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _target_version(value: str) -> Version:
    version = parse_target_version(value.strip().lower())
    if version is None:
        raise argparse.ArgumentTypeError(f"expected a Python version such as py311, got {value!r}")
    return version


# --- the command line -----------------------------------------------------------------------

_RUN_USAGE = "[OPTIONS] (SCRIPT | -m MODULE) [ARGS ...]"


class _Command(argparse.ArgumentParser):
    """The parser of one subcommand.

    Abbreviated options (``--out`` for ``--output-format``) are off: argparse looks up every
    argument, a traced program's too, and on Python 3.11 an ambiguous prefix there (``--co``)
    is an error. Arguments a subcommand does not know are reported here, under its name and
    usage; argparse would hand them up to the top-level parser (``aliaslint: error: ...``).
    """

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, []


class _Operands(argparse.Action):
    """What follows the options of ``trace`` and ``check``: the program to run, or PATHs.

    This is the one place that decides where a traced program's arguments begin. With
    nargs=REMAINDER argparse stops taking options at the first positional argument and passes
    everything from there on, untouched even where it looks like one of ours (``trace prog.py
    --output-format json``); after -m that argument is the MODULE (``trace -m pytest -x``), and
    a ``--`` in front of it only ended our options.

    ``check`` without --trace takes PATHs instead, and options may follow them too (``check src
    --jobs 2``): what comes after the PATHs is parsed again by the same parser.

    Called once the parser's options are parsed, it also rejects those that need ``mode``
    (--trace, --confirm) when it is off, and those that do not go with it when it is on.
    """

    def __init__(self, option_strings, dest, mode, needs_mode=(), not_with_mode=(), **kwargs):
        super().__init__(option_strings, dest, nargs=argparse.REMAINDER, **kwargs)
        self.mode, self.needs_mode, self.not_with_mode = mode, needs_mode, not_with_mode

    def __call__(self, parser, namespace, values, option_string=None):
        mode = getattr(namespace, self.mode.dest)
        flag = self.mode.option_strings[0]
        if self.dest == "paths" and not mode:  # `check` without --trace
            self._paths(parser, namespace, values)
        elif self.dest == "paths" and namespace.paths:  # `check src --trace prog.py`
            parser.error(f"argument {flag}: not allowed with PATH")
        else:
            program = values[1:] if values[:1] == ["--"] else values
            if not program:
                parser.error("give a script to run, or -m MODULE")
            namespace.program = program
        wrong = [action.option_strings[0]
                 for action in (self.not_with_mode if mode else self.needs_mode)
                 if getattr(namespace, action.dest) != action.default]
        if wrong:
            parser.error(f"argument {wrong[0]}: {'not allowed with' if mode else 'only with'} "
                         f"{flag}")

    @staticmethod
    def _paths(parser, namespace, values: list[str]) -> None:
        if values[:1] == ["--"]:
            paths, rest = values[1:], []
        else:
            # values[0] is a PATH (argparse began the operands there), and so is every next
            # argument up to one that may be an option. Parse from that one on again: the
            # parser calls this action once more for the operands after those options.
            end = next((i for i, arg in enumerate(values) if i and arg.startswith("-")),
                       len(values))
            paths, rest = values[:end], values[end:]
        namespace.paths = (namespace.paths or []) + paths
        if rest:
            parser.parse_known_args(rest, namespace)


# Option groups shared by check, check --trace and trace [--confirm]. Those that apply only with
# --trace or --confirm are returned, for _Operands to check.


def _selection_options(group) -> list[argparse.Action]:
    return [
        group.add_argument("--select", action="append", metavar="CODES",
                           help="comma-separated codes or prefixes to enable, replacing the "
                           "configured selection (ALL for every rule)"),
        group.add_argument("--extend-select", action="append", metavar="CODES",
                           help="codes or prefixes to enable in addition"),
        group.add_argument("--ignore", action="append", metavar="CODES",
                           help="codes or prefixes to disable"),
        group.add_argument("--extend-ignore", action="append", metavar="CODES",
                           help="codes or prefixes to disable, in addition to --ignore"),
        group.add_argument("--confidence", choices=("high", "low"),
                           help="'low' also reports possible-but-unproven hazards"),
    ]


def _output_options(group) -> None:
    group.add_argument("--output-format", choices=FORMATS, default="full",
                       help="how findings are reported (default: full, with code frames)")
    group.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="ANSI colors (auto: on a terminal, unless NO_COLOR is set)")


def _config_options(group) -> list[argparse.Action]:
    return [
        group.add_argument("--config", type=Path, metavar="FILE",
                           help="use this aliaslint.toml / pyproject.toml for every file"),
        group.add_argument("--isolated", action="store_true", help="ignore all config files"),
    ]


def _output_file(group, default: str) -> argparse.Action:
    # One name in every command, as ruff spells it; --output stays for existing scripts.
    return group.add_argument("--output-file", "-o", "--output", dest="output", type=Path,
                              metavar="FILE", help=f"write the report to FILE instead of {default}")


def _run_options(group, output: bool = True) -> list[argparse.Action]:
    """How to run the traced program (and, for `trace`, where its report goes)."""
    return [
        group.add_argument("-m", dest="module", action="store_true",
                           help="the program is a MODULE, run like `python -m MODULE`"),
        *([_output_file(group, "standard error")] if output else []),
        group.add_argument("--deep", action="store_true",
                           help="also watch every ATen op with a dispatch mode: finds writes "
                           "torch makes from C++ and reads of any kind, at about twice the cost"),
        group.add_argument("--fail-on", choices=("any", "confirmed", "never"), default="any",
                           help="when the program exits 0, exit 1 anyway if a finding was not "
                           "refuted ('any', the default) or only if one was confirmed or seen at "
                           "run time ('confirmed'); 'never' keeps the program's exit code"),
        group.add_argument("--nproc-per-node", type=_positive, metavar="N",
                           help="run N ranks under torch.distributed.run (torchrun --standalone), "
                           "each traced; one report for all of them"),
        group.add_argument("--follow-children", action="store_true",
                           help="also trace child processes that import torch (multiprocessing, "
                           "subprocesses); DataLoader workers are always traced"),
    ]


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value!r}")
    return number


def _add_check(commands) -> None:
    check = commands.add_parser(
        "check", help="check files and directories (default: .)",
        usage=f"%(prog)s [OPTIONS] [PATH ...]\n       %(prog)s --trace {_RUN_USAGE}",
        description="Check Python files and notebooks for PyTorch aliasing hazards, without "
        "running them. With --trace, run a program instead, check the project files it "
        "executes and mark each finding confirmed (the hazard happened), refuted (its line ran "
        "and the hazard did not: a false positive), not-reached or could-not-evaluate; the same as "
        "`aliaslint trace --confirm`.",
        epilog="With --trace, everything after SCRIPT or -m MODULE goes to the program; "
        "`--` also ends the options.",
    )
    rules = check.add_argument_group("rule selection")
    _selection_options(rules)
    static = [rules.add_argument(
        "--report-unused-suppressions", action="store_true",
        help="report noqa / aliaslint: ignore comments that silence nothing (AL901)"),
        rules.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES",
                           help="codes to disable in the files a pattern matches (relative to "
                           "the working directory), replacing the configured per-file-ignores; "
                           "repeat it for more patterns"),
        rules.add_argument("--extend-per-file-ignores", action="append",
                           metavar="PATTERN:CODES",
                           help="like --per-file-ignores, in addition to the configured ones")]
    output = check.add_argument_group("output")
    _output_options(output)
    _output_file(output, "standard output (with --trace: standard error)")
    static += [
        output.add_argument("--statistics", action="store_true",
                            help="print a count per rule instead of the findings"),
        output.add_argument("--show-settings", action="store_true",
                            help="print the settings that apply to the first PATH, and exit"),
        output.add_argument("--verbose", "-v", action="store_true",
                            help="say on standard error which config files were read, which "
                            "files were skipped and why, and which came from the cache"),
        output.add_argument("--show-files", action="store_true",
                            help="list the files that would be checked, with their config, "
                            "and exit"),
        output.add_argument("--exit-zero", action="store_true",
                            help="exit 0 even when there are findings (errors still exit 2)"),
    ]
    output.add_argument("--quiet", "-q", action="store_true",
                        help="print the findings only, without the summary line")
    adopting = check.add_argument_group("adopting on existing code")
    static += [
        adopting.add_argument("--add-noqa", action="store_true",
                              help="add a `# noqa: CODE` comment for every finding to its "
                              "line (merged with one already there), write each file whole, "
                              "and exit"),
        adopting.add_argument("--write-baseline", type=Path, metavar="FILE",
                              help="record the findings in FILE, and exit"),
        adopting.add_argument("--baseline", type=Path, metavar="FILE",
                              help="leave out the findings recorded in FILE (by rule, file and "
                              "a fingerprint that survives unrelated edits and moved files; "
                              "overrides `baseline`)"),
        adopting.add_argument("--no-baseline", action="store_true",
                              help="report every finding, ignoring the configured `baseline`"),
    ]
    fixing = check.add_argument_group("fixes")
    unsafe = fixing.add_mutually_exclusive_group()
    static += [
        fixing.add_argument("--fix", action="store_true",
                            help="apply the safe fixes (with --unsafe-fixes, the unsafe ones "
                            "too); a file is replaced whole or left as it was, and only inside "
                            "the directories named (a symbolic link to a file elsewhere only "
                            "when the link itself is named)"),
        unsafe.add_argument("--unsafe-fixes", action="store_true", default=None,
                            help="also apply (and count as available) fixes that may change "
                            "what the program computes"),
        unsafe.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                            default=None,
                            help="override `unsafe-fixes = true` in the configuration"),
        fixing.add_argument("--diff", action="store_true",
                            help="print the fixes as a unified diff, write nothing, and exit 1 "
                            "when there is something to fix"),
        fixing.add_argument("--fix-only", action="store_true",
                            help="apply fixes and report nothing else (implies --fix)"),
        fixing.add_argument("--show-fixes", action="store_true",
                            help="list the fixes applied, per file and rule"),
        fixing.add_argument("--exit-non-zero-on-fix", action="store_true",
                            help="exit 1 when a fix was applied, even if nothing is left"),
        fixing.add_argument("--fixable", action="append", metavar="CODES",
                            help="only these rules' fixes may be applied (replaces `fixable`)"),
        fixing.add_argument("--extend-fixable", action="append", metavar="CODES",
                            help="rules whose fixes may be applied, added to `fixable`"),
        fixing.add_argument("--unfixable", action="append", metavar="CODES",
                            help="rules whose fixes are only shown, never applied"),
    ]
    config = check.add_argument_group("configuration")
    _config_options(config)
    static += [
        config.add_argument("--respect-gitignore", action="store_true", default=None,
                            help="skip what git ignores in a directory walk (the default)"),
        config.add_argument("--no-respect-gitignore", dest="respect_gitignore",
                            action="store_false", default=None,
                            help="walk what git ignores too (overrides `respect-gitignore`)"),
        config.add_argument("--force-exclude", action="store_true",
                            help="apply exclude patterns to files named on the command line "
                            "(and to --stdin-filename) too"),
        config.add_argument("--target-version", type=_target_version, metavar="pyXY",
                            help="the Python whose grammar files must follow, e.g. py310 "
                            "(default: the Python running aliaslint)"),
        config.add_argument("--stdin-filename", type=Path, metavar="PATH",
                            help="with PATH `-` (or none), check standard input as if it were "
                            "PATH: its config, per-file-ignores and excludes apply, and a .ipynb "
                            "name reads notebook JSON"),
        config.add_argument("--max-file-size", type=int, metavar="BYTES",
                            help=f"skip larger files with AL902 (default {DEFAULT_MAX_FILE_SIZE})"),
        config.add_argument("--jobs", "-j", type=int, metavar="N",
                            help="worker processes (default: the number of cores)"),
        config.add_argument("--no-cache", action="store_true",
                            help="neither read nor write the cache of earlier results"),
    ]
    run = check.add_argument_group("running a program (--trace)")
    trace = run.add_argument("--trace", action="store_true",
                             help="run SCRIPT or -m MODULE with its arguments under the tracer "
                             "and confirm or refute the findings in the files it executes")
    check.add_argument("paths", action=_Operands, mode=trace,
                       needs_mode=_run_options(run, output=False),
                       not_with_mode=static, metavar="PATH",
                       help="files and directories to check (default: .); with --trace, "
                       "SCRIPT (MODULE with -m) and its arguments")
    check.set_defaults(run=_check)


def _add_trace(commands) -> None:
    trace = commands.add_parser(
        "trace", help="run a program or test suite and report alias hazards as they happen",
        usage=f"%(prog)s {_RUN_USAGE}",
        description="Run a Python program under the runtime tracer (torch is required) and "
        "report the alias hazards it hits, with their source lines.",
        epilog="Everything after SCRIPT or -m MODULE goes to the program, e.g. "
        "`aliaslint trace -m pytest -x tests/`; `--` also ends the options.",
    )
    confirm = trace.add_argument("--confirm", action="store_true",
                                 help="also check the executed files statically and mark each "
                                 "finding confirmed, refuted or not-reached (as `check --trace`)")
    _run_options(trace)
    _output_options(trace.add_argument_group("output"))
    confirm_only = (_selection_options(trace.add_argument_group("rule selection (--confirm)"))
                    + _config_options(trace.add_argument_group("configuration (--confirm)")))
    trace.add_argument("program", action=_Operands, mode=confirm, needs_mode=confirm_only,
                       metavar="SCRIPT",
                       help="the script (with -m, the module) to run, then its arguments: "
                       "all of them the program's, even those that look like ours")
    trace.set_defaults(run=_trace)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aliaslint",
        description="Find PyTorch memory-aliasing bugs: in-place writes autograd needs, "
        "writes through views, lost copies, NumPy-shared memory, snapshot references.",
    )
    parser.add_argument("--version", "-V", action="version", version=f"aliaslint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                     parser_class=_Command)
    _add_check(commands)
    _add_trace(commands)

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", metavar="CODE",
                      help="a rule code such as AL101, or its name (inplace-on-leaf)")
    rule.add_argument("--output-format", choices=("text", "json"), default="text",
                      help="json: the code, name, summary, defaults and documentation")
    rule.set_defaults(run=lambda args: _rule(args.code, args.output_format))

    listing = commands.add_parser("rules", help="list every rule")
    listing.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")
    listing.set_defaults(run=lambda args: _rules(args.output_format))

    server = commands.add_parser(
        "server", help="run the language server (LSP over stdio) for editors",
        description="Serve diagnostics, code actions and rule documentation to an editor over "
        "the Language Server Protocol on standard input and output. Needs the `server` extra: "
        "pip install 'aliaslint[server]'.")
    server.add_argument("--log-level", choices=("error", "warning", "info", "debug"),
                        default="warning", help="what the server logs to standard error")
    server.set_defaults(run=_server)

    clean = commands.add_parser("clean", help="remove the cache of earlier results")
    clean.add_argument("--config", type=Path, metavar="FILE",
                       help="the aliaslint.toml / pyproject.toml whose cache-dir to remove")
    clean.set_defaults(run=lambda args: _clean(args.config))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return args.run(args)
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
        ignore=validate_selectors(_selectors(args.ignore) or [], "--ignore")
        + validate_selectors(_selectors(args.extend_ignore) or [], "--extend-ignore"),
    )


def _walk_options(args, cwd: Path) -> dict:
    """The command line's per-file-ignores (anchored at ``cwd``) and gitignore switch."""
    return {
        "per_file_ignores": per_file_option(args.per_file_ignores, "--per-file-ignores", cwd)
        if args.per_file_ignores is not None else None,
        "extend_per_file_ignores": per_file_option(args.extend_per_file_ignores or [],
                                                   "--extend-per-file-ignores", cwd),
        "respect_gitignore": args.respect_gitignore,
    }


def _check(args) -> int:
    if args.trace:
        return _confirm(args)
    paths = args.paths or ["."]
    cli = CliOptions(
        selection=_selection(args),
        config=args.config,
        **_walk_options(args, Path.cwd()),
        max_file_size=args.max_file_size,
        confidence=args.confidence,
        report_unused_suppressions=args.report_unused_suppressions,
        target_version=args.target_version,
        isolated=args.isolated,
        force_exclude=args.force_exclude,
        unsafe_fixes=args.unsafe_fixes,
        fixable=validate_selectors(_selectors(args.fixable), "--fixable")
        if args.fixable else None,
        extend_fixable=validate_selectors(_selectors(args.extend_fixable) or [],
                                          "--extend-fixable"),
        unfixable=validate_selectors(_selectors(args.unfixable) or [], "--unfixable"),
    )
    cwd = Path.cwd()
    verbose.enabled = args.verbose
    stages.enabled = stages.enabled or args.verbose  # before the workers fork
    baseline = _adoption(args, paths, cwd, cli)
    if isinstance(baseline, str):
        print(f"aliaslint: error: {baseline}", file=sys.stderr)
        return EXIT_ERROR
    if paths == ["-"] or args.stdin_filename is not None and not args.paths:
        return _check_stdin(args, cli, cwd)
    if "-" in paths:
        print("aliaslint: error: `-` (standard input) cannot be checked with other paths",
              file=sys.stderr)
        return EXIT_ERROR
    if args.show_settings:
        return _show_settings(paths, cli, cwd, use_cache=not args.no_cache)
    if args.show_files:
        files, problems = walk(paths, Resolver(cli, cwd))
        for path, settings in files:
            source = display_path(settings.source, cwd) if settings.source else "defaults"
            print(f"{shown_path(display_path(path, cwd))}  ({shown_path(source)})")
        for path, reason in problems:
            print(f"aliaslint: error: {display_path(path, cwd)}: {reason}", file=sys.stderr)
        return EXIT_ERROR if problems else EXIT_CLEAN
    progress = None if args.quiet else ProgressLine.for_terminal(sys.stderr)
    try:
        result = check_paths(paths, cli, jobs=args.jobs, cwd=cwd, cache=not args.no_cache,
                             progress=progress)
    finally:
        if progress is not None:
            progress.close()
    if args.add_noqa:
        from aliaslint.cli_adopt import add_noqa  # rewriting files needs the parser

        return add_noqa(args, cwd, result)
    if args.write_baseline is not None:
        from aliaslint.baseline import write_baseline

        count = write_baseline(args.write_baseline, result.diagnostics, cwd,
                               source_lines_from_disk(cwd))
        print(f"Recorded {count} finding{'s' if count != 1 else ''} in "
              f"{args.write_baseline}.", file=sys.stderr)
        return EXIT_ERROR if result.could_not_check else EXIT_CLEAN
    def unrecorded(diagnostics: list) -> list:
        if baseline is None:
            return diagnostics
        return baseline.new(diagnostics, cwd, source_lines_from_disk(cwd))

    if args.fix or args.fix_only or args.diff:
        from aliaslint.cli_fix import fix_paths  # fixing needs the parser

        return fix_paths(args, cwd, result, unrecorded)
    new = unrecorded(result.diagnostics)
    result = replace(result, diagnostics=new, baselined=len(result.diagnostics) - len(new))
    return _report(args, result, source_lines_from_disk(cwd), cwd)


def _adoption(args, paths: list[str], cwd: Path, cli: CliOptions) -> Baseline | str | None:
    """The baseline to read (the command line's, else the configured one), or why the
    adoption options given cannot go together."""
    writing = [flag for flag, given in (("--add-noqa", args.add_noqa),
                                        ("--write-baseline", args.write_baseline is not None),
                                        ("--fix", args.fix or args.fix_only or args.diff))
               if given]
    if len(writing) > 1:
        return f"{writing[0]} cannot be used with {writing[1]}"
    if args.baseline is not None and args.no_baseline:
        return "--baseline cannot be used with --no-baseline"
    if (args.add_noqa or args.write_baseline) and (paths == ["-"] or args.stdin_filename):
        return f"{writing[0]} needs files, not standard input"
    if args.no_baseline or args.add_noqa or args.write_baseline is not None:
        return None
    configured = args.baseline if args.baseline is not None else \
        Resolver(cli, cwd).for_directory(cwd).baseline
    if configured is None:
        return None
    from aliaslint.baseline import Baseline  # only a run with a baseline reads one

    return Baseline.load(configured, cwd)


def _show_settings(paths: list[str], cli: CliOptions, cwd: Path, use_cache: bool) -> int:
    """The settings of the first path (a file's rules with its per-file-ignores), and the
    cache directory of the run."""
    path = Path(paths[0]) if paths[0] != "-" else Path("-")
    absolute = path if path.is_absolute() else cwd / path
    resolver = Resolver(cli, cwd)
    is_file = not absolute.is_dir()
    settings = resolver.for_file(absolute) if is_file else resolver.for_directory(absolute)
    cache_dir = cache_location(resolver)[0] if use_cache else None
    sys.stdout.write(settings_text(absolute, settings, cwd, is_file, cache_dir))
    return EXIT_CLEAN


def _check_stdin(args, cli: CliOptions, cwd: Path) -> int:
    data = sys.stdin.buffer.read()
    if args.fix or args.fix_only or args.diff:
        from aliaslint.cli_fix import fix_stdin  # fixing needs the parser

        return fix_stdin(args, cli, cwd, data)
    result = check_stdin(data, args.stdin_filename, cli, cwd=cwd)
    read_disk = source_lines_from_disk(cwd)

    def source_lines(filename: str, cell: int | None = None) -> list[str] | None:
        # The code frames show what came in, not the file on disk of the same name.
        if not any(d.filename == filename for d in result.diagnostics):
            return read_disk(filename, cell)
        return lines_of(data, filename, cell)

    return _report(args, result, source_lines, cwd)


def _report(args, result, source_lines, cwd: Path) -> int:
    diagnostics = result.diagnostics
    # (A file name the file system's encoding does not decode is written as its own bytes.)
    stream = open(args.output, "w", encoding="utf-8", errors="surrogateescape") \
        if args.output else sys.stdout
    try:
        with stages.stage("report"):
            color = use_color(args.color, stream)
            if args.statistics:
                stream.write(render_statistics(diagnostics, args.output_format,
                                               fix_applies(result, cwd)))
            else:
                stream.write(render(args.output_format, diagnostics, source_lines=source_lines,
                                    color=color, cwd=cwd, command="aliaslint check"))
                if args.output_format in ("full", "concise") and not args.quiet:
                    stream.write(summary(len(result.files), diagnostics,
                                         result.could_not_check, result.baselined) + "\n")
    finally:
        if args.output:
            stream.close()
    if stages.enabled:
        verbose.note(f"CPU time by stage: {stages.line()}")
    if result.could_not_check:
        return EXIT_ERROR
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _server(args) -> int:
    # Imported here: only `server` needs pygls, and `check` must not pay for it.
    from aliaslint.server import main as serve

    return serve(args.log_level)


def _clean(config: Path | None) -> int:
    """Remove what the cache lists; a directory that is not a cache is refused (exit 2)."""
    cwd = Path.cwd()
    resolver = Resolver(CliOptions(config=config), cwd)
    directory, setting = cache_location(resolver)
    from aliaslint.cache import clean as clean_cache

    cleaned = clean_cache(directory, setting, cache_keep(resolver))
    shown = display_path(directory, cwd)
    if cleaned is None:
        print(f"No cache at {shown}")
    elif cleaned.removed:
        print(f"Removed {shown}")
    else:
        count = f"{cleaned.entries} cache entr{'y' if cleaned.entries == 1 else 'ies'}"
        more = ", ..." if len(cleaned.left) > 3 else ""
        why = (f"it holds files the cache does not list ({', '.join(cleaned.left[:3])}{more})"
               if cleaned.left else "aliaslint did not make it")
        print(f"Removed {count} from {shown}; kept the directory: {why}")
    return EXIT_CLEAN


def _rule(given: str, fmt: str = "text") -> int:
    """The rule's spec, with what its module declares after the summary."""
    by_name = {rule.name: code for code, rule in registry.rules().items()}
    code = by_name.get(given.strip().lower(), given.strip().upper())
    from aliaslint.catalog import load_docs  # the rule documents, for `rule` and `rules`

    rule, doc = registry.get(code), load_docs().get(code)
    if rule is None or doc is None:
        hint = close_match(given, [*registry.rules(), *by_name])
        print(f"aliaslint: error: unknown rule {given!r}"
              + (f" (did you mean {hint!r}?)" if hint else " (see `aliaslint rules`)"),
              file=sys.stderr)
        return EXIT_ERROR
    if fmt == "json":
        print(json.dumps({**_rule_json(rule), "explanation": doc.text, "url": rule_url(code)},
                         indent=2))
        return EXIT_CLEAN
    head, summary, rest = doc.text.partition(doc.summary)
    facts = (f"- Default: {'on' if rule.default else 'off'}\n"
             f"- Confidence: {_confidence(rule)}\n"
             f"- Fix: {rule.fix}\n")
    text = f"{head}{summary}\n\n{facts}\n{rest.lstrip()}"
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_CLEAN


def _confidence(rule: Rule) -> str:
    if rule.assumption is None:
        return "high (every finding rests on facts PyTorch guarantees)"
    return f"high, and low with `--confidence low` when it assumes {rule.assumption}"


def _rule_json(rule: Rule) -> dict:
    return {"code": rule.code, "name": rule.name, "summary": rule.summary,
            "default": "on" if rule.default else "off",
            "confidence": ["high", "low"] if rule.assumption else ["high"], "fix": rule.fix}


def _rules(fmt: str) -> int:
    rules = registry.rules().values()
    if fmt == "json":
        print(json.dumps([_rule_json(r) for r in rules], indent=2))
        return EXIT_CLEAN
    if fmt == "markdown":
        from aliaslint.catalog import markdown_table

        sys.stdout.write(markdown_table())
        return EXIT_CLEAN
    width = max(len(r.name) for r in rules)
    for r in rules:
        flag = "" if r.default else " (off by default)"
        print(f"{r.code}  {r.name:<{width}}  {r.summary}{flag}")
    return EXIT_CLEAN


# --- trace ----------------------------------------------------------------------------------


def _program(args) -> Program:
    """The traced program, as the launcher takes it."""
    from aliaslint.runtime.launch import Program

    name, *rest = args.program
    return Program(name, tuple(rest), module=args.module)


def _needs_torch(command: str, error: str | None = None) -> bool:
    """True (with the message printed) when torch cannot be imported: the traced program
    is not run, because its result would say nothing.  The program's interpreter imports
    torch first thing and says so when it cannot (``error``); finding no torch at all is
    known here without starting it."""
    import importlib.util

    if error is None:
        try:
            found = importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError) as failure:
            found, error = False, str(failure)
        if found:
            return False
        error = error or "No module named 'torch'"
    print(f"aliaslint: error: `{command}` needs torch ({error}): "
          "pip install 'aliaslint[trace]'", file=sys.stderr)
    return True


def _launch(args, command: str, confirm: dict | None = None) -> Run | int:
    """Run the program traced in its own interpreter; the exit status instead when there is
    nothing to report: torch is missing (2), or, as one rank of a torchrun job whose program
    succeeded, another rank of the node finishes last and reports for every rank (0)."""
    from aliaslint.runtime.launch import Options, launch, share_with_node, torchrun_rank

    if _needs_torch(command):
        return EXIT_ERROR
    run = launch(_program(args), Options(nproc_per_node=args.nproc_per_node,
                                         follow_children=args.follow_children, confirm=confirm,
                                         deep=args.deep))
    if run.error is not None:
        _needs_torch(command, run.error)
        return EXIT_ERROR
    for problem in run.problems():
        print(f"aliaslint: warning: findings of {problem}", file=sys.stderr)
    rank = torchrun_rank() if args.nproc_per_node is None else None
    if rank is not None:
        merged = share_with_node(run, *rank)
        if merged is not None:
            return merged
        if run.exit_status == 0:
            return EXIT_CLEAN
    return run


def _trace(args) -> int:
    if args.confirm:
        return _confirm(args)
    run = _launch(args, "trace")
    if isinstance(run, int):
        return run
    cwd = Path.cwd()
    diagnostics = [_relative(d, cwd) for d in run.findings()]
    stream = open(args.output, "w", encoding="utf-8") if args.output else sys.stderr
    try:
        color = use_color(args.color, stream)
        stream.write(render(args.output_format, diagnostics,
                            source_lines=source_lines_from_disk(cwd), color=color, cwd=cwd,
                            command="aliaslint trace"))
        if args.output_format in ("full", "concise") and not run.started:
            stream.write(_did_not_start("aliaslint trace", args, run))
        elif args.output_format in ("full", "concise"):
            count = len(diagnostics)
            stream.write(f"aliaslint trace: {count} runtime finding{'s' if count != 1 else ''}"
                         f"{'.' if count else ' (no alias hazard was hit).'}\n")
    finally:
        if args.output:
            stream.close()
    status = run.exit_status
    if status == 0 and diagnostics and args.fail_on != "never":
        return EXIT_FINDINGS
    return status


def _did_not_start(command: str, args, run: Run) -> str:
    """The summary of a run whose program never began (Python said why, above)."""
    name = f"-m {args.program[0]}" if args.module else args.program[0]
    return (f"{command}: the program `{name}` did not start (exit status {run.exit_status}); "
            "nothing was traced.\n")


def _relative(diagnostic, cwd: Path):
    """The finding with every path shown relative to the working directory."""
    related = tuple(replace(r, filename=display_path(Path(r.filename), cwd))
                    for r in diagnostic.related)
    evidence = diagnostic.evidence and diagnostic.evidence.with_filenames(
        lambda name: display_path(Path(name), cwd))
    return replace(diagnostic, filename=display_path(Path(diagnostic.filename), cwd),
                   related=related, evidence=evidence)


# --- check --trace / trace --confirm ------------------------------------------------------------


def _confirm(args) -> int:
    from dataclasses import replace

    from aliaslint.runtime.confirm import Confirmation

    selection = _selection(args)
    cwd = Path.cwd()
    run = _launch(args, "check --trace", confirm={
        "select": selection.select, "extend_select": selection.extend_select,
        "ignore": selection.ignore, "config": str(args.config) if args.config else None,
        "confidence": args.confidence, "isolated": args.isolated, "cwd": str(cwd)})
    if isinstance(run, int):
        return run
    outcome = Confirmation(run.exit_status, *run.confirmation())
    text = args.output_format in ("full", "concise", "github")
    shown = []
    notes: dict[int, str] = {}  # for the HTML page, which shows them apart from the message
    for diagnostic in outcome.diagnostics:
        relative = _relative(diagnostic, cwd)
        if text and diagnostic.status is not None:
            note = outcome.note(diagnostic)
            message = f"[{diagnostic.status}] {relative.message}"
            if note:
                message += f"\nnote: run time: {note}"
            relative = replace(relative, message=message)
        notes[id(relative)] = outcome.note(diagnostic)
        shown.append(relative)
    stream = open(args.output, "w", encoding="utf-8") if args.output else sys.stderr
    try:
        color = use_color(args.color, stream)
        stream.write(render(args.output_format, shown, source_lines=source_lines_from_disk(cwd),
                            color=color, cwd=cwd, notes=notes, command="aliaslint check --trace"))
        if args.output_format in ("full", "concise") and not run.started:
            stream.write(_did_not_start("aliaslint check --trace", args, run))
        elif args.output_format in ("full", "concise") and not getattr(args, "quiet", False):
            stream.write(_confirm_summary(outcome, shown))
    finally:
        if args.output:
            stream.close()
    if outcome.exit_status != 0 or args.fail_on == "never":
        return outcome.exit_status
    failing = ("confirmed", "runtime") if args.fail_on == "confirmed" else (
        "confirmed", "not-reached", "could-not-evaluate", "runtime")
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
        lines += [f"  {shown_path(d.filename)}:{d.location.row}:{d.location.column}: {d.code}"
                  for d in refuted]
    files = len(outcome.files)
    static = sum(1 for d in outcome.diagnostics
                 if d.status in ("confirmed", "refuted", "not-reached", "could-not-evaluate"))
    runtime = outcome.count("runtime")
    lines.append(
        f"aliaslint check --trace: {static} static finding{'s' if static != 1 else ''} in "
        f"{files} executed file{'s' if files != 1 else ''}: "
        f"{outcome.count('confirmed')} confirmed, {outcome.count('refuted')} refuted, "
        f"{outcome.count('not-reached')} not reached"
        + (f", {outcome.count('could-not-evaluate')} could not be evaluated"
           if outcome.count("could-not-evaluate") else "")
        + f"; {runtime} runtime-only "
        f"finding{'s' if runtime != 1 else ''}.")
    return "\n".join(lines) + "\n"
