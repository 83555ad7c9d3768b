"""The server offers only fixes that `--fix` would write: each code action's fix is judged by
the same `fixes.verify` as the command line's."""

from __future__ import annotations

from pathlib import Path

from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position
from aliaslint.server.convert import Text
from aliaslint.server.lsp import AliaslintServer
from test_fixes import TRACKER

# The AL207 case of the command line's fix tests: `copy` is a parameter of `snapshot`.
SOURCE = TRACKER
URI = "file:///project/tracker.py"

# A fix as a careless generator would make it: `copy` in `snapshot` is the parameter, so
# `copy.deepcopy` would raise AttributeError at run time.
SHADOWED = Diagnostic(
    "AL207", "snapshot", "tracker.py", Position(10, 16), Position(10, 39),
    fix=Fix("take a copy with `copy.deepcopy(...)`", "safe", (
        Edit("import copy\n", Position(1, 1), Position(1, 1)),
        Edit("copy.deepcopy(self.model.state_dict())", Position(10, 16), Position(10, 39)))))
# One that is fine: it brings in no name and leaves no finding on its row.
SOUND = Diagnostic(
    "AL404", "m", "tracker.py", Position(13, 16), Position(13, 28),
    fix=Fix("name it", "safe", (Edit("best['weight']", Position(13, 28), Position(13, 42)),)))


def judged(findings: list[Diagnostic], check) -> tuple[AliaslintServer, list]:
    server = AliaslintServer()
    server.project.check = check  # type: ignore[method-assign]
    text = Text.of(URI, SOURCE)
    entries = server.converter.entries(findings, text)
    return server, server._judge(URI, entries, SOURCE, Path("/project/tracker.py"), True)


def test_a_fix_verify_refuses_is_not_offered_as_a_code_action():
    server, entries = judged([SHADOWED], lambda text, path, on_disk: [SHADOWED]
                             if text == SOURCE else [])
    (entry,) = entries
    assert entry.finding.fix.applicability == "display-only"
    titles = [action.title for action in server.converter.quick_fixes(entry)]
    assert titles == ["Suppress AL207 with `# noqa: AL207`"]
    assert server.converter.fix_all(URI, entries) is None


def test_a_fix_verify_accepts_is_offered_unchanged():
    server, entries = judged([SOUND], lambda text, path, on_disk: [SOUND]
                             if text == SOURCE else [])
    (entry,) = entries
    assert entry.finding.fix == SOUND.fix
    assert server.converter.quick_fixes(entry)[0].title == "name it (AL404)"
    assert URI not in server.fix_all_clashes


def test_fixes_that_pass_alone_but_clash_together_are_not_offered_as_fix_all():
    # Each fix alone removes its own finding; the text both make together has a new one on
    # a row they wrote.
    first = Diagnostic("AL404", "a", "tracker.py", Position(7, 22), Position(7, 36),
                       fix=Fix("a", "safe", (Edit("nn.Linear(4, 8)", Position(7, 22),
                                                  Position(7, 37)),)))
    second = Diagnostic("AL404", "b", "tracker.py", Position(12, 13), Position(12, 39),
                        fix=Fix("b", "safe", (Edit("2.0", Position(12, 36),
                                                   Position(12, 39)),)))
    clash = Diagnostic("AL404", "new", "tracker.py", Position(7, 22), Position(7, 36))

    def check(text, path, on_disk):
        widened, doubled = "nn.Linear(4, 8)" in text, "add_(2.0)" in text
        if widened and doubled:
            return [clash]
        return [d for d, done in ((first, widened), (second, doubled)) if not done]

    server, entries = judged([first, second], check)
    assert [e.finding.fix.applicability for e in entries] == ["safe", "safe"]
    assert URI in server.fix_all_clashes
