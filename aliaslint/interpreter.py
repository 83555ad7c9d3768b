"""The interpreter's command line, and the working directory kept out of aliaslint's imports.

``python -m aliaslint`` starts with the working directory first on ``sys.path``, so a
``libcst.py``, ``pathspec.py`` or ``tomllib.py`` of the project being checked would be
imported in place of aliaslint's dependency (and run).  aliaslint drops that entry, as
``python -P`` does, before it imports anything else, unless the working directory is the
checkout that holds this ``aliaslint``.  ``PYTHONPATH`` entries are the user's choice and stay.

Only stdlib modules that the interpreter has loaded before any program runs (``os``, ``sys``)
are imported here.
"""

import os
import sys

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_guarded = False


def guard_as_main() -> None:
    """Drop the working directory from the front of ``sys.path`` when aliaslint is the
    program (``python -m aliaslint``), once; as a library imported by another program,
    leave its ``sys.path`` alone."""
    global _guarded
    if _guarded:
        return
    _guarded = True
    entry = sys.path[0] if sys.path else None
    if entry is None or not _is_working_directory(entry) or _same(entry, _CHECKOUT):
        return
    del sys.path[0]


def run_as_module() -> bool:
    """Is ``python -m aliaslint...`` locating its module right now?  (While it does,
    ``sys.argv[0]`` is ``-m``; ``sys.orig_argv`` names the module.)"""
    if sys.argv[:1] != ["-m"]:
        return False
    module = interpreter_options(getattr(sys, "orig_argv", [])[1:])[1]
    return module is not None and module.partition(".")[0] == __package__


def interpreter_options(args: list[str]) -> tuple[list[str], str | None]:
    """The interpreter's own options at the start of ``args`` (``sys.orig_argv[1:]``), one
    option a word and the value of ``-W``/``-X`` a word of its own (``-BWerror`` gives
    ``-B -W error``), up to the script, ``-c`` or ``-m``; and the MODULE of ``-m MODULE``."""
    options: list[str] = []
    index = 0
    while index < len(args):
        option = args[index]
        index += 1
        if option == "--" or option == "-" or not option.startswith("-"):
            return options, None
        if option.startswith("--"):
            options.append(option)
            if option == "--check-hash-based-pycs" and index < len(args):
                options.append(args[index])
                index += 1
            continue
        for position, letter in enumerate(option[1:], start=2):
            if letter == "c":
                return options, None
            if letter not in "mWX":
                options.append(f"-{letter}")
                continue
            value = option[position:]
            if not value:
                value = args[index] if index < len(args) else ""
                index += 1
            if letter == "m":
                return options, value or None
            options += [f"-{letter}", value]
            break
    return options, None


def _is_working_directory(entry: str) -> bool:
    return entry == "" or _same(entry, os.curdir)


def _same(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False
