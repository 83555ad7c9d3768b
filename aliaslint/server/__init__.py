"""``aliaslint server``: a Language Server over standard input and output.

The editor sends the unsaved text of Python files and notebooks; the server checks it with
the same engine and settings as ``aliaslint check`` and answers with diagnostics, code
actions and hovers.  Its dependencies (pygls, lsprotocol) are the ``aliaslint[server]``
extra, imported only here, so ``aliaslint check`` starts as fast without them.

* ``workspace``: which settings apply to a document, and checking its text with the other
  files of its folder (no LSP types);
* ``convert``: findings as LSP diagnostics, code actions and hovers;
* ``lsp``: the protocol handlers.
"""

from __future__ import annotations

import logging
import sys

INSTALL_HINT = "pip install 'aliaslint[server]'"


def main(log_level: str = "warning") -> int:
    """Serve over stdio until the client says exit; 2 when the dependencies are missing."""
    try:
        from aliaslint.server.lsp import build_server
    except ImportError as error:
        print(f"aliaslint: error: `aliaslint server` needs pygls and lsprotocol ({error}): "
              f"{INSTALL_HINT}", file=sys.stderr)
        return 2
    # stdout carries the protocol: every log line goes to stderr, which editors show.
    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="aliaslint server %(levelname)s: %(message)s")
    if log_level != "debug":  # pygls logs every message it sends at info level
        logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.root.level))
    from aliaslint.server.lsp import TIMING, timing

    if TIMING:
        timing.setLevel(logging.INFO)
    build_server().start_io()
    return 0
