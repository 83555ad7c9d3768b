"""Where an operation comes from: the innermost frame of user code, and its source span."""

from __future__ import annotations

import functools
import os
import sys
from types import CodeType, FrameType
from typing import NamedTuple

from aliaslint.diagnostics import Position, display_path
from aliaslint.runtime.usercode import is_user_file


class Site(NamedTuple):
    """A point in user code: the file, the line, and the instruction that was running."""

    filename: str  # absolute
    line: int
    code: CodeType
    lasti: int

    def span(self) -> tuple[Position, Position]:
        """The source range of the running expression (the call, ``x += 1``, ``t[i] = v``)."""
        return _instruction_span(self.code, self.lasti, self.line)

    def describe(self, cwd: str | None = None) -> str:
        return f"{display_path(self.filename, cwd or os.getcwd())}:{self.line}"


@functools.cache
def _instruction_span(code: CodeType, lasti: int, line: int) -> tuple[Position, Position]:
    positions = getattr(code, "co_positions", None)
    if positions is not None:
        for index, (start, end, column, end_column) in enumerate(positions()):
            if index == lasti // 2:
                if start is not None and column is not None and end is not None:
                    return Position(start, column + 1), Position(end, (end_column or column) + 1)
                break
    import linecache

    text = linecache.getline(code.co_filename, line).rstrip()
    first = len(text) - len(text.lstrip()) + 1
    return Position(line, first), Position(line, len(text) + 1)


# id(code) → (code, its absolute filename when it is user code, else "").  Keyed by
# identity: equal code objects (the same source in two files) compare equal, and
# holding the code keeps its id from being reused.
_USER_FILE: dict[int, tuple[CodeType, str]] = {}


def _user_filename(code: CodeType) -> str:
    name = code.co_filename
    if not is_user_file(name):
        return ""
    return name if name.startswith("<") else os.path.abspath(name)


def user_site() -> Site | None:
    """The innermost frame of user code (``aliaslint.runtime.usercode``)."""
    frame: FrameType | None = sys._getframe(1)
    known = _USER_FILE
    while frame is not None:
        code = frame.f_code
        entry = known.get(id(code))
        if entry is None:
            entry = known[id(code)] = (code, _user_filename(code))
        filename = entry[1]
        if filename:
            return Site(filename, frame.f_lineno, code, frame.f_lasti)
        frame = frame.f_back
    return None
