"""Path patterns with gitignore semantics (pathspec's implementation), for every pattern option.

Each pattern belongs to a directory: a config file's for ``exclude``, ``include`` and
``per-file-ignores`` (the file that wrote it, also when another file extends it), the
working directory's for the command line's, and its own directory's for a ``.gitignore``.
To match patterns of many directories with one spec, each pattern is rewritten once as
a pattern over absolute paths (``anchor``), and a path is matched by its absolute form.

As in ruff, a config pattern that names no directory (``build``, ``*_pb2.py``) matches a
file or directory of that name anywhere; in a ``.gitignore`` it matches only below that
file's directory, as git reads it.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


def anchor(pattern: str, directory: Path, names_anywhere: bool = True) -> str:
    """``pattern``, relative to ``directory``, as a pattern over absolute paths; with
    ``names_anywhere`` a pattern that names no directory is left as it is (``floored``
    anchors it where a match begins).

    A leading ``!`` stays in front (a re-include in exclude lists and ``.gitignore``
    files); a leading ``./`` is the directory itself.
    """
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if body.startswith("./"):
        body = "/" + body[2:]
    bang = "!" if negated else ""
    if _is_name(body):
        if names_anywhere:
            return bang + body
        body = "**/" + body
    return f"{bang}{_root(directory)}/{body.lstrip('/')}"


def _is_name(body: str) -> bool:
    return "/" not in body.rstrip("/")


# What a directory's name must escape to stand for itself in a pattern (pathspec's set).
_SPECIAL = re.compile(r"([\[\]!*#?\\])")


def _root(directory: Path) -> str:
    return _SPECIAL.sub(r"\\\1", Path(os.path.abspath(directory)).as_posix().rstrip("/"))


def key(path: Path | str, is_dir: bool = False) -> str:
    """What a path is matched as: its absolute form, ``/`` after a directory."""
    if _POSIX:  # an absolute path there is its own posix form (a walk asks for each file)
        text = os.path.abspath(path).lstrip("/")
    else:
        text = Path(os.path.abspath(path)).as_posix().lstrip("/")
    return text + "/" if is_dir else text


_POSIX = os.sep == "/" and os.altsep is None


@lru_cache(maxsize=512)
def spec(patterns: tuple[str, ...], floor: Path | None = None) -> Spec:
    """The patterns compiled; a pattern that names no directory matches names below
    ``floor`` only, never the directories a project happens to sit in (``~/build/proj``)."""
    if floor is not None:
        root = _root(floor)
        patterns = tuple(
            (bang + f"{root}/**/{body}" if _is_name(body) else bang + body)
            for pattern in patterns
            for bang, body in [("!", pattern[1:]) if pattern.startswith("!") else ("", pattern)])
    # Imported here: a run that matches no pattern (files named, no --force-exclude) does
    # not pay for it.
    from pathspec import GitIgnoreSpec

    return Spec(GitIgnoreSpec.from_lines(patterns))


class Spec:
    """A compiled pattern list, as pathspec matches it; where no pattern re-includes (no
    ``!``), a path is excluded when any pattern matches it, which is asked of each pattern's
    regular expression directly (a walk matches every entry against the default excludes
    and the .gitignore lines: pathspec's general loop, which ranks matches for
    re-includes, was a tenth of a warm run)."""

    def __init__(self, spec: GitIgnoreSpec):
        self.spec = spec
        active = [p for p in spec.patterns if p.include is not None]
        self._any_of: re.Pattern | None = None
        if all(p.include for p in active):
            # One expression for all of them: the group that marks a directory match only
            # ranks matches, which a list without re-includes does not need.
            try:
                self._any_of = re.compile("|".join(
                    f"(?:{p.regex.pattern.replace('(?P<ps_d>', '(?:')})" for p in active
                    if p.regex is not None)
                    or "(?!)")
            except (re.error, TypeError, AttributeError):  # another pathspec: its own loop
                self._any_of = None

    def match_file(self, path: str) -> bool:
        if self._any_of is None:
            return self.spec.match_file(path)
        from pathspec.util import normalize_file

        return self._any_of.search(normalize_file(path)) is not None

    def check_file(self, path: str):
        return self.spec.check_file(path)


def matches(patterns: tuple[str, ...], path: Path | str, is_dir: bool = False,
            floor: Path | None = None) -> bool:
    """Does the last pattern that matches ``path`` (or a directory above it) exclude it?"""
    return bool(patterns) and spec(patterns, floor).match_file(key(path, is_dir))


def which(patterns: tuple[str, ...], path: Path | str, is_dir: bool = False,
          floor: Path | None = None) -> str | None:
    """The pattern that excludes ``path``, if one does (for ``check -v``)."""
    if not patterns:
        return None
    result = spec(patterns, floor).check_file(key(path, is_dir))
    return patterns[result.index] if result.include and result.index is not None else None


def matches_file(pattern: str, path: Path | str, floor: Path | None = None) -> bool:
    """One ``per-file-ignores`` pattern: a leading ``!`` matches every file it does not (as
    in ruff)."""
    if pattern.startswith("!"):
        return not matches((pattern[1:],), path, floor=floor)
    return matches((pattern,), path, floor=floor)


def without_matches_of(patterns: tuple[str, ...], directory: Path,
                       floor: Path | None = None) -> tuple[str, ...]:
    """``patterns`` less those that exclude ``directory`` or a directory above it.

    A directory named on the command line is checked even when a pattern excludes it (as a
    named file is), so what it contains is judged only by the patterns about what it
    contains; pathspec alone would also exclude everything below an excluded directory.
    """
    if not matches(patterns, directory, True, floor):
        return patterns
    target = key(directory, is_dir=True)
    return tuple(p for p in patterns
                 if p.startswith("!") or not spec((p,), floor).match_file(target))
