"""The command tree: each subcommand's --help, where a traced program's arguments begin, and
usage errors (exit 2, named after the subcommand)."""

import re
from pathlib import Path

import pytest

from aliaslint.cli import _parser, main

# Runs clean and, checked statically, has one AL402 finding that the run confirms.
PROGRAM = """\
import torch


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a is b


print(same(torch.zeros(2), torch.zeros(2)))
"""


def help_text(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit:
        main([*argv, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


def options(help: str) -> set[str]:
    """The option strings that a --help output lists (``--jobs N, -j N`` → --jobs, -j)."""
    found = set()
    for invocation in re.findall(r"^  (-\S.*?)(?:  |$)", help, re.MULTILINE):
        found.update(part.split()[0] for part in invocation.split(", "))
    return found


def test_top_level_help_lists_every_subcommand(capsys):
    out = help_text(capsys)
    listed = re.findall(r"^    (\w+) ", out, re.MULTILINE)
    assert listed == ["check", "trace", "rule", "rules", "server", "clean"]


def test_check_help_shows_trace_and_its_options(capsys):
    out = help_text(capsys, "check")
    assert "aliaslint check [OPTIONS] [PATH ...]" in out
    assert "aliaslint check --trace [OPTIONS] (SCRIPT | -m MODULE) [ARGS ...]" in out
    assert options(out) == {
        "-h", "--help",
        "--select", "--extend-select", "--ignore", "--confidence", "--report-unused-suppressions",
        "--output-format", "--color", "--statistics", "--show-files", "--exit-zero",
        "--output-file", "-o", "--output", "--quiet", "-q",
        "--config", "--isolated", "--force-exclude", "--target-version", "--max-file-size",
        "--jobs", "-j", "--no-cache", "--stdin-filename",
        "--fix", "--unsafe-fixes", "--no-unsafe-fixes", "--diff", "--fix-only", "--show-fixes",
        "--exit-non-zero-on-fix", "--fixable", "--extend-fixable", "--unfixable",
        "--trace", "-m", "--fail-on", "--nproc-per-node", "--follow-children", "--deep",
        "--extend-ignore", "--per-file-ignores", "--extend-per-file-ignores", "--show-settings",
        "--verbose", "-v", "--respect-gitignore", "--no-respect-gitignore",
        "--add-noqa", "--write-baseline", "--baseline", "--no-baseline",
    }


def test_trace_help_shows_its_options(capsys):
    out = help_text(capsys, "trace")
    assert out.startswith("usage: aliaslint trace [OPTIONS] (SCRIPT | -m MODULE) [ARGS ...]\n")
    assert options(out) == {
        "-h", "--help", "--confirm", "-m", "--output-file", "--output", "-o", "--fail-on",
        "--nproc-per-node", "--follow-children", "--deep", "--output-format", "--color",
        "--select", "--extend-select", "--ignore", "--extend-ignore", "--confidence", "--config",
        "--isolated",
    }
    assert "rule selection (--confirm):" in out


@pytest.mark.parametrize(("argv", "expected"), [
    # Everything from SCRIPT on is the program's, even what looks like one of our options.
    ("trace prog.py --output-format json -o x",
     {"program": ["prog.py", "--output-format", "json", "-o", "x"], "output_format": "full",
      "output": None}),
    ("trace --output-format json -o report.json prog.py --help",
     {"program": ["prog.py", "--help"], "output_format": "json",
      "output": Path("report.json")}),
    ("trace -m pytest -x -o foo", {"module": True, "program": ["pytest", "-x", "-o", "foo"]}),
    ("trace prog.py --co", {"program": ["prog.py", "--co"]}),  # no prefix matching
    # `--` ends our options; one after SCRIPT is the program's own.
    ("trace -- -prog.py -m", {"program": ["-prog.py", "-m"], "module": False}),
    ("trace prog.py -- --flag", {"program": ["prog.py", "--", "--flag"]}),
    ("trace --confirm --select AL4 prog.py --select AL1",
     {"confirm": True, "select": ["AL4"], "program": ["prog.py", "--select", "AL1"]}),
    # check --trace: the first positional argument is the program, not a PATH.
    ("check --trace prog.py a.py --jobs 2",
     {"trace": True, "program": ["prog.py", "a.py", "--jobs", "2"], "paths": None,
      "jobs": None}),
    ("check --select AL4 --trace --ignore AL404 -m pytest -k x",
     {"trace": True, "select": ["AL4"], "ignore": ["AL404"], "module": True,
      "program": ["pytest", "-k", "x"]}),
    ("check --trace --fail-on never -- prog.py", {"fail_on": "never", "program": ["prog.py"]}),
    # Without --trace, options may come before, between and after PATHs.
    ("check src --select AL4 tests -j 2",
     {"trace": False, "paths": ["src", "tests"], "select": ["AL4"], "jobs": 2}),
    ("check -- -odd.py --jobs", {"paths": ["-odd.py", "--jobs"], "jobs": None}),
])
def test_where_the_program_begins(argv, expected):
    args = _parser().parse_args(argv.split())
    assert {key: getattr(args, key) for key in expected} == expected


@pytest.mark.parametrize(("argv", "message"), [
    ("", "aliaslint: error: the following arguments are required: COMMAND"),
    ("check --trace", "aliaslint check: error: give a script to run, or -m MODULE"),
    ("check --trace --output-format json",
     "aliaslint check: error: give a script to run, or -m MODULE"),
    ("trace", "aliaslint trace: error: give a script to run, or -m MODULE"),
    ("trace -m", "aliaslint trace: error: give a script to run, or -m MODULE"),
    ("trace --confirm", "aliaslint trace: error: give a script to run, or -m MODULE"),
    ("trace --bogus prog.py", "aliaslint trace: error: unrecognized arguments: --bogus"),
    ("check src --bogus", "aliaslint check: error: unrecognized arguments: --bogus"),
    ("trace --output-format xml prog.py",
     "aliaslint trace: error: argument --output-format: invalid choice: 'xml'"),
    ("trace --select AL4 prog.py",
     "aliaslint trace: error: argument --select: only with --confirm"),
    ("check -m pytest", "aliaslint check: error: argument -m: only with --trace"),
    ("check --trace --jobs 2 prog.py",
     "aliaslint check: error: argument --jobs: not allowed with --trace"),
    ("check src --trace prog.py",
     "aliaslint check: error: argument --trace: not allowed with PATH"),
    ("rule", "aliaslint rule: error: the following arguments are required: CODE"),
])
def test_usage_errors_exit_2_and_name_the_subcommand(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        main(argv.split())
    assert exit.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_program_arguments_that_look_like_ours_reach_the_program(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    (tmp_path / "script.py").write_text("import sys\nprint(sys.argv[1:])\n")
    monkeypatch.chdir(tmp_path)
    assert main(["trace", "script.py", "--output-format", "json", "-o", "x"]) == 0
    out, err = capsys.readouterr()
    assert out == "['--output-format', 'json', '-o', 'x']\n"
    assert err.endswith("aliaslint trace: 0 runtime findings (no alias hazard was hit).\n")
    assert not (tmp_path / "x").exists()
    # An unknown rule code after SCRIPT is the script's business, not a selection error.
    assert main(["check", "--trace", "script.py", "--select", "AL999"]) == 0
    assert capsys.readouterr().out == "['--select', 'AL999']\n"


@pytest.mark.slow
def test_check_trace_with_rule_selection(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    (tmp_path / "prog.py").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--trace", "--output-format", "concise", "prog.py"]) == 1
    assert "prog.py:5:12: AL402 [confirmed]" in capsys.readouterr().err
    assert main(["check", "--trace", "--ignore", "AL4", "--output-format", "concise",
                 "prog.py"]) == 0
    assert "AL402" not in capsys.readouterr().err
    # Selection options may also come before --trace, and trace --confirm takes them too.
    assert main(["check", "--select", "AL1", "--trace", "prog.py"]) == 0
    capsys.readouterr()
    assert main(["trace", "--confirm", "--select", "AL402", "--fail-on", "confirmed",
                 "prog.py"]) == 1
    capsys.readouterr()
    assert main(["check", "--trace", "--select", "AL999", "prog.py"]) == 2
    out, err = capsys.readouterr()
    assert "unknown rule selector 'AL999'" in err
    assert out == ""  # a configuration error stops before the program runs


def test_every_check_option_is_in_the_usage_table(capsys):
    # docs/cli.md lists them all by construction; docs/usage.md says each in more words.
    readme = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text(
        encoding="utf-8")
    table = {word for row in re.findall(r"^\| (.*?) \|", readme, re.MULTILINE)
             for code in re.findall(r"`([^`]*)`", row)
             for word in code.split() if word.startswith("-")}
    missing = options(help_text(capsys, "check")) - table - {"-h", "--help"}
    assert not missing, f"options of `check --help` missing from docs/usage.md's table: {missing}"
