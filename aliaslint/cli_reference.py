"""The command-line reference (docs/cli.md), rendered from the one argparse tree of
``aliaslint.cli`` so that it cannot drift from it.

    python -m aliaslint.cli_reference          # rewrite docs/cli.md
    python -m aliaslint.cli_reference --check  # exit 1 when docs/cli.md is stale

The rendering is ours, not argparse's help formatter, whose wrapping follows the terminal's
width and whose spelling of options changes between Python versions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from aliaslint.cli import _parser

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
_HEADER = (
    "# Command-line reference\n\n"
    "<!-- Generated from the argparse tree of aliaslint/cli.py by "
    "`python -m aliaslint.cli_reference`; a test fails when it is stale. -->\n\n"
    "What each option means in more words, with examples: [usage.md](usage.md). "
    "Configuration keys: [configuration.md](configuration.md).\n"
)


def render() -> str:
    parser = _parser()
    commands = next(action for action in parser._actions
                    if isinstance(action, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in commands._choices_actions}
    out = [_HEADER, f"\n{parser.description}\n\n"]
    out += ["| command | what it does |\n|---|---|\n"]
    out += [f"| [`aliaslint {name}`](#aliaslint-{name}) | {_cell(helps.get(name) or '')} |\n"
            for name in commands.choices]
    out += ["\n`aliaslint --version` (`-V`) prints the version. `python -m aliaslint ...` is the "
            "same as `aliaslint ...`.\n"]
    for name, sub in commands.choices.items():
        out.append(_command(name, sub, helps.get(name) or ""))
    return "".join(out)


def _command(name: str, parser: argparse.ArgumentParser, summary: str) -> str:
    usage = (parser.usage % {"prog": f"aliaslint {name}"}) if parser.usage else \
        " ".join([f"aliaslint {name}", "[OPTIONS]",
                  *(_metavar(a) for a in parser._actions if not a.option_strings)])
    lines = [f"\n## aliaslint {name}\n\n```text\n{_dedent_usage(usage)}\n```\n\n"]
    lines.append(f"{parser.description or summary[:1].upper() + summary[1:] + '.'}\n")
    if parser.epilog:
        lines.append(f"\n{parser.epilog}\n")
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS
                   and not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        title = {"positional arguments": "arguments", "options": "options",
                 "optional arguments": "options"}.get(group.title or "", group.title)
        lines.append(f"\n### {title}\n\n| option | meaning |\n|---|---|\n")
        lines += [f"| {_cell(_invocation(a))} | {_cell(_help(a))} |\n" for a in actions]
    return "".join(lines)


def _dedent_usage(usage: str) -> str:
    return "\n".join(line.strip() for line in usage.splitlines())


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_metavar(action)}`"
    if action.nargs == 0:
        return ", ".join(f"`{option}`" for option in action.option_strings)
    return ", ".join(f"`{option} {_metavar(action)}`" for option in action.option_strings)


def _help(action: argparse.Action) -> str:
    text = (action.help or "") % {"default": action.default, "prog": "aliaslint"} \
        if action.help and "%(" in action.help else (action.help or "")
    default = action.default
    if action.nargs != 0 and default not in (None, False, argparse.SUPPRESS) and \
            "default" not in text:
        text = f"{text} (default: {default})" if text else f"default: {default}"
    if action.choices is not None and action.metavar is not None:
        text += f" (one of {', '.join(map(str, action.choices))})"
    return text


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    text = render()
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else None
    if check:
        if current != text:
            print(f"{DOC} is stale: run python -m aliaslint.cli_reference", file=sys.stderr)
            return 1
        return 0
    if current != text:
        DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
