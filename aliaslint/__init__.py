"""aliaslint: find PyTorch memory-aliasing bugs before they run, and prove them when they do.

The public API::

    check_source(source, filename="<string>", rules=None) -> list[Diagnostic]
    check_paths(paths, ...) -> Result            # files and directories, in parallel
    shares_memory(a, b) / may_share_memory(a, b) # exact / bounds overlap of tensors or ndarrays
    Diagnostic                                   # the one finding type

``check`` never imports torch; ``shares_memory`` needs NumPy (and torch for tensors).
"""

__version__ = "0.1.0"

from aliaslint.diagnostics import Diagnostic, Position, Related
from aliaslint.engine import check_paths, check_source
from aliaslint.memory import may_share_memory, shares_memory

__all__ = [
    "Diagnostic",
    "Position",
    "Related",
    "check_paths",
    "check_source",
    "may_share_memory",
    "shares_memory",
    "__version__",
]
