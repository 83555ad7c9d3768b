"""Runs small programs in one process, each as `python SCRIPT` would from a directory, and
says how each ended: its exit status and what it wrote to stdout and stderr (an uncaught
exception's traceback as the interpreter prints it).

Reads one JSON `[directory, script]` a line from stdin and answers each with one JSON line
on stdout.  torch is imported once, for all of them, which is the point: a test that proves a
program's hazard under torch would otherwise start an interpreter and import torch for each
program.  Each program gets a fresh `__main__` namespace, the directory as its working
directory and the script's directory first on `sys.path`, torch's random generator seeded
afresh as in a new process, grad mode on and float32 as the default dtype; the modules it
imports from the script's directory are forgotten afterwards, so one program's `models` is
not the next one's."""

from __future__ import annotations

import io
import json
import os
import runpy
import sys
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout

import torch


def _forget_modules(where: str, before: set[str]) -> None:
    root = os.path.realpath(where) + os.sep
    for name in set(sys.modules) - before:
        where = getattr(sys.modules.get(name), "__file__", None) or ""
        if os.path.realpath(where).startswith(root):
            del sys.modules[name]


def run(home: str, script: str) -> dict[str, object]:
    out, err = io.StringIO(), io.StringIO()
    status = 0
    path = os.path.join(home, script)  # absolute, as `__file__` is in `python SCRIPT`
    where = os.path.dirname(path)
    saved = (os.getcwd(), list(sys.path), list(sys.argv), set(sys.modules))
    torch.seed()  # a seed of its own, as a new process gets
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    os.chdir(home)
    sys.path.insert(0, where)
    sys.argv[:] = [script]
    try:
        with warnings.catch_warnings(), redirect_stdout(out), redirect_stderr(err):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as stop:  # as the interpreter ends on it
                if stop.code is None or isinstance(stop.code, int):
                    status = stop.code or 0
                else:
                    print(stop.code, file=sys.stderr)
                    status = 1
            except BaseException as error:  # the hazard under test, or the program's check
                traceback.print_exception(error)
                status = 1
    finally:
        os.chdir(saved[0])
        sys.path[:], sys.argv[:] = saved[1], saved[2]
        _forget_modules(where, saved[3])
    return {"returncode": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    # The answers get a descriptor of their own: what a program writes to the process's
    # standard output from C goes nowhere instead of into an answer.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    for line in sys.stdin:
        home, script = json.loads(line)
        answers.write(json.dumps(run(home, script)) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
