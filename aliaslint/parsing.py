"""libcst's parse without the checks its parser's output cannot fail.

Every libcst node validates itself when constructed (`CSTNode.__post_init__` calls
`_validate`: parentheses balanced, whitespace where a keyword needs it, …).  That is for
trees built by hand; a tree libcst's own parser builds from text is valid by construction,
and the checks are 40% of the parse.  They are skipped only while the parser runs; nodes a
fix builds are still checked.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

_VALIDATING = CSTNode.__post_init__
_lock = threading.Lock()
_parsing = 0  # parses under way (the language server parses on more than one thread)


def _unvalidated(self: CSTNode) -> None:
    """What a parsed node does when constructed: nothing to check."""


def parse_module(source: str, config: cst.PartialParserConfig | None = None) -> cst.Module:
    """``cst.parse_module(source, config)``, as fast as the parser itself."""
    global _parsing
    with _lock:
        _parsing += 1
        CSTNode.__post_init__ = _unvalidated  # type: ignore[method-assign]
    try:
        if config is None:
            return cst.parse_module(source)
        return cst.parse_module(source, config)
    finally:
        with _lock:
            _parsing -= 1
            if not _parsing:
                CSTNode.__post_init__ = _VALIDATING  # type: ignore[method-assign]
