"""Which files are the user's code, not the standard library, installed packages or torch."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig

# What pip and the distributions install third-party packages into, wherever that lies: the
# running environment, a user site, a virtual environment placed inside the project.
_INSTALLED = frozenset({"site-packages", "dist-packages"})


def _normal(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _package_dir(name: str) -> str | None:
    """The directory of top-level package ``name``, found without importing it."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None)
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    return os.path.dirname(origin) if origin else None


@functools.cache
def library_dirs() -> tuple[str, ...]:
    """The directories no user code lies in, normalised, each ending in a separator."""
    paths = sysconfig.get_paths()
    dirs = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths]
    dirs.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # aliaslint
    # A development install of torch lies outside site-packages.
    dirs += filter(None, map(_package_dir, ("torch", "functorch", "torchgen")))
    return tuple(sorted({_normal(d) + os.sep for d in dirs}))


def is_user_file(filename: str, root: str | None = None) -> bool:
    """Is ``filename`` the user's code rather than the standard library, an installed package
    (site-packages, dist-packages), torch or aliaslint?  With ``root``: and below ``root``.

    Names in angle brackets are code without a file: frozen modules are the standard
    library; ``<string>``, ``<stdin>`` and notebook cells are the user's, below no root.
    """
    if filename.startswith("<"):
        return root is None and not filename.startswith("<frozen")
    path = _normal(filename)
    if root is not None and not path.startswith(_normal(root).rstrip(os.sep) + os.sep):
        return False
    if path.startswith(library_dirs()):
        return False
    return _INSTALLED.isdisjoint(path.split(os.sep))
