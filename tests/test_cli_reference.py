"""docs/cli.md is rendered from the argparse tree, and says what `--help` says."""

import subprocess
import sys
from pathlib import Path

from aliaslint import cli_reference
from aliaslint.cli import _parser

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_is_up_to_date():
    assert cli_reference.DOC.read_text(encoding="utf-8") == cli_reference.render(), (
        "docs/cli.md is stale: run `python -m aliaslint.cli_reference`")


def test_every_option_of_every_command_is_in_the_reference():
    text = cli_reference.render()
    parser = _parser()
    (commands,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name, sub in commands.choices.items():
        section = text.split(f"\n## aliaslint {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (name, option)


def test_the_check_mode_reports_a_stale_file(tmp_path, monkeypatch):
    stale = tmp_path / "cli.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(cli_reference, "DOC", stale)
    assert cli_reference.main(["--check"]) == 1
    assert cli_reference.main([]) == 0 and cli_reference.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == cli_reference.render()


def test_the_reference_does_not_depend_on_the_terminal_width():
    script = "from aliaslint.cli_reference import render; print(render(), end='')"
    narrow = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={"COLUMNS": "30", "PYTHONPATH": str(ROOT)}, check=True)
    assert narrow.stdout == cli_reference.render()
