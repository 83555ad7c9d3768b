"""Run a program (``script.py`` or ``-m module``) under the tracer, as ``python`` would."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from contextlib import AbstractContextManager

_ALIASLINT = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def run_program(tracer: AbstractContextManager[object], *, script: str | None = None,
                module: str | None = None, args: Sequence[str] = ()) -> int:
    """Run ``script`` or ``-m module`` as ``__main__`` under ``tracer``; its exit code.

    Like ``python script.py`` / ``python -m module``: ``sys.argv`` and ``sys.path[0]``
    are set as the interpreter sets them, an uncaught exception prints its traceback
    and gives 1, and ``SystemExit`` gives its code.
    """
    name = script if script is not None else module
    if name is None or script is not None and module is not None:
        raise TypeError("run_program runs either a script or a module")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [name, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(name)) if script else os.getcwd()
    try:
        with tracer:
            if module is not None:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(name, run_name="__main__")
    except SystemExit as exit:
        return _exit_status(exit.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException as error:  # the program's own error, printed as Python prints it
        _print_program_error(error)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_program_error(error: BaseException) -> None:
    """The traceback without the frames of aliaslint and runpy that ran the program."""
    tb = error.__traceback__
    ours = (_ALIASLINT, os.path.realpath(runpy.__file__))
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not (filename.startswith("<frozen runpy")
                or os.path.realpath(filename).startswith(ours)):
            break
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)
