"""aliaslint: find PyTorch memory-aliasing bugs before they run, and prove them when they do.

The public API::

    check_source(source, filename="<string>", rules=None) -> list[Diagnostic]
    check_paths(paths, ...) -> Result            # files and directories, in parallel
    shares_memory(a, b) / may_share_memory(a, b) # exact / bounds overlap of tensors or ndarrays
    Diagnostic                                   # the one finding type
    trace() -> Tracer                            # `with trace() as t:` ... `t.findings`

``check`` never imports torch; ``shares_memory`` needs NumPy (and torch for tensors);
``trace`` imports torch when a trace starts.  The checker and the tracer load on first
use, so importing aliaslint (as pytest does for its plugin) stays cheap.
"""

__version__ = "0.1.0"

# Before any other import: under `python -m aliaslint` the working directory's modules must
# not stand in for aliaslint's dependencies (see interpreter).
from aliaslint import interpreter as _interpreter

if _interpreter.run_as_module():
    _interpreter.guard_as_main()

from aliaslint.diagnostics import Diagnostic, Position, Related
from aliaslint.memory import may_share_memory, shares_memory

_LAZY = {"check_paths": "aliaslint.engine", "check_source": "aliaslint.engine",
         "trace": "aliaslint.runtime.tracer"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'aliaslint' has no attribute {name!r}")


__all__ = [
    "Diagnostic",
    "Position",
    "Related",
    "check_paths",
    "check_source",
    "may_share_memory",
    "shares_memory",
    "trace",
    "__version__",
]
