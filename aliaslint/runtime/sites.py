"""Where an operation comes from: the innermost frame of user code, and its source span; and
where the user built the in-place torch.nn modules (``nn.ReLU(inplace=True)``) whose
``forward`` runs an operation."""

from __future__ import annotations

import functools
import os
import sys
import weakref
from types import CodeType, FrameType
from typing import Any, NamedTuple

from aliaslint.diagnostics import Position, display_path
from aliaslint.runtime.usercode import is_user_file


class Site(NamedTuple):
    """A point in user code: the file, the line, and the instruction that was running."""

    filename: str  # absolute
    line: int
    code: CodeType
    lasti: int
    # Where the in-place module whose `forward` made the call was built, when user code
    # built it (`nn.ReLU(inplace=True)`): where the in-place operation is written.
    built_at: Site | None = None

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


def running_in_caller(site: Site) -> bool:
    """Is the line of ``site`` running in a frame that called into the innermost frame of
    user code: the line is executing a call whose callee (or something it called) is running
    now, so whatever the line made before that call is one of its temporaries?"""
    frame: FrameType | None = sys._getframe(1)
    innermost = True
    while frame is not None:
        code = frame.f_code
        if user_code(code):
            if not innermost and code is site.code and frame.f_lineno == site.line:
                return True
            innermost = False
        frame = frame.f_back
    return False


def user_code(code: CodeType) -> bool:
    """Is ``code`` the user's (``aliaslint.runtime.usercode``)?  Cached per code object."""
    entry = _USER_FILE.get(id(code))
    if entry is None:
        entry = _USER_FILE[id(code)] = (code, _user_filename(code))
    return bool(entry[1])


def user_filename(code: CodeType) -> str:
    """The absolute filename of ``code``, user code (see ``user_code``)."""
    return _USER_FILE[id(code)][1]


def frame_site(frame: FrameType) -> Site:
    """The site ``frame`` is at now; for a frame of user code (see ``user_code``)."""
    code = frame.f_code
    return Site(_USER_FILE[id(code)][1], frame.f_lineno, code, frame.f_lasti)


# id(module) → (a weak reference to it, the user line that built it), for the torch.nn
# modules built with `inplace=True` while a trace is open; and the code of their `forward`s.
_BUILT: dict[int, tuple[weakref.ref, Site]] = {}
INPLACE_FORWARDS: set[CodeType] = set()


def built(module: Any, site: Site) -> None:
    """User code at ``site`` built the in-place module ``module``."""
    key = id(module)
    _BUILT[key] = (weakref.ref(module, lambda _ref: _BUILT.pop(key, None)), site)


def _built_at(frame: FrameType) -> Site | None:
    """Where the module whose ``forward`` ``frame`` runs was built (an in-place module's)."""
    module = frame.f_locals.get("self")
    entry = _BUILT.get(id(module))
    return entry[1] if entry is not None and entry[0]() is module else None


def written_where(site: Site | None) -> tuple[Site | None, list[tuple[str, Site | None]]]:
    """Where a finding about a write at ``site`` points, and its related location: for a
    write an in-place module's ``forward`` makes, the line that built the module (where the
    in-place operation is written, as the static rule has it), with the call related."""
    if site is None or site.built_at is None:
        return site, []
    return site.built_at, [("the in-place write runs here", site._replace(built_at=None))]


_ALIASLINT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class LazySite:
    """The user site of the running operation, found only if some check needs it, and
    whether user code made the call itself (``direct``) rather than through a library
    (an optimizer, ``gradcheck``).  ``direct`` may be known beforehand (from the wrapper
    the call went through); otherwise it is whether the first frame outside aliaslint is
    user code.  Walking out to the user's frame it passes the ``forward`` of the in-place
    module that made the call, if any: the site then says where the user built it."""

    __slots__ = ("known", "site", "direct", "_preset")

    def __init__(self, direct: bool | None = None) -> None:
        self.known = False
        self.site: Site | None = None
        self._preset = direct
        self.direct = bool(direct)

    def __call__(self) -> Site | None:
        if not self.known:
            self.known = True
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith(_ALIASLINT_DIR):
                frame = frame.f_back
            if self._preset is None:
                self.direct = frame is not None and user_code(frame.f_code)
            built_at = None
            while frame is not None and not user_code(frame.f_code):
                if built_at is None and frame.f_code in INPLACE_FORWARDS:
                    built_at = _built_at(frame)
                frame = frame.f_back
            if frame is not None:
                self.site = frame_site(frame)
                if built_at is not None:
                    self.site = self.site._replace(built_at=built_at)
        return self.site
