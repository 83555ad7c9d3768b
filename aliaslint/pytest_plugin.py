"""pytest plugin: ``pytest --aliaslint-trace`` runs every test under the runtime tracer.

Registered through the ``pytest11`` entry point.  Without the flag it only adds its
options: nothing is traced and neither torch nor the tracer is imported.  With it, each
test's call phase runs inside ``aliaslint.trace()`` and the terminal summary lists the
findings per test.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("aliaslint", "aliaslint: runtime tracing of tensor alias hazards")
    group.addoption("--aliaslint-trace", action="store_true", default=False,
                    help="run each test under the aliaslint tracer and report the alias "
                    "hazards it hits (needs torch)")
    group.addoption("--aliaslint-trace-deep", action="store_true", default=False,
                    help="with --aliaslint-trace: also watch every ATen op (the tracer's "
                    "--deep mode; slower)")
    group.addoption("--aliaslint-fail-on", choices=("never", "any"), default="never",
                    help="with --aliaslint-trace: 'any' makes the session fail when a test "
                    "hit a hazard (default: never)")


def pytest_configure(config) -> None:
    if config.getoption("aliaslint_trace"):
        config.pluginmanager.register(TracePlugin(config), "aliaslint-trace")


class TracePlugin:
    """Traces each test's call phase; registered only when ``--aliaslint-trace`` is given."""

    def __init__(self, config) -> None:
        self.config = config
        self.findings: dict[str, list] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        from aliaslint.runtime.tracer import trace

        with trace(deep=self.config.getoption("aliaslint_trace_deep")) as tracer:
            yield
        if tracer.findings:
            self.findings[item.nodeid] = tracer.findings

    def pytest_sessionfinish(self, session) -> None:
        if (self.findings and self.config.getoption("aliaslint_fail_on") == "any"
                and session.exitstatus == pytest.ExitCode.OK):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        from aliaslint.diagnostics import display_path

        total = sum(len(found) for found in self.findings.values())
        terminalreporter.section("aliaslint trace")
        if not total:
            terminalreporter.write_line("no alias hazard was hit")
            return
        root = str(self.config.rootpath)
        for nodeid, found in self.findings.items():
            terminalreporter.write_line(nodeid, bold=True)
            for d in found:
                where = f"{display_path(d.filename, root)}:{d.location.row}:{d.location.column}"
                terminalreporter.write_line(f"  {where}: {d.code} {d.message}")
                for related in d.related:
                    terminalreporter.write_line(
                        f"      {display_path(related.filename, root)}:"
                        f"{related.location.row}: {related.message}")
        tests = len(self.findings)
        terminalreporter.write_line(
            f"{total} runtime finding{'s' if total != 1 else ''} in "
            f"{tests} test{'s' if tests != 1 else ''}")
