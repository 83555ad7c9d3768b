"""Every output format, checked against exactly what users (and code scanning) receive."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from aliaslint import catalog, check_source, report
from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position, Related

ROOT = Path(__file__).resolve().parent.parent

SARIF_SCHEMA = json.loads(
    (Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)

RULE_NAMES = {
    "AL101": "inplace-on-saved-tensor",
    "AL201": "write-through-view",
    "AL404": "typed-storage",
    "AL902": "file-not-checked",
}


def _rule_doc(code: str, name: str) -> str:
    return (
        f"# {code} {name}\n\nSummary of {name}.\n\n## What it does\n\nChecks for {name}\nin code.\n\n"
        "## Why is this bad?\n\nIt is.\n"
    )


RULES = {code: catalog.parse_doc(_rule_doc(code, name)) for code, name in RULE_NAMES.items()}


@pytest.fixture(autouse=True)
def stand_in_catalog(monkeypatch):
    """Outputs here depend on these rules only, not on the wording of rules/*.md."""
    monkeypatch.setattr(catalog, "load_docs", lambda: RULES)


TRAIN = """\
import torch


def step(x, w, z):
    h = torch.sigmoid(x @ w)
    # scale the activations
    # before the loss
    y = h
    h.mul_(2)
    loss = h.sum()
    loss.backward()
    y = layers.view_of(x)
    y.t().add_(
        z,
    )
    return y
""".splitlines()

LAYERS = ["import torch", "", "def view_of(x):", "    return x.t()"]

SOURCES = {"train.py": TRAIN, "model/layers.py": LAYERS}

P = Position

SAVED = Diagnostic(
    "AL101",
    "`h` is modified in place after `sigmoid` saved it for backward\n"
    "help: write `h = h.mul(2)` instead",
    "train.py",
    P(9, 5),
    P(9, 14),
    related=(
        Related("backward reads the saved value here", "train.py", P(11, 5), P(11, 20)),
        Related("saved for backward here", "train.py", P(5, 9), P(5, 29)),
    ),
    fix=Fix("Use out-of-place `mul`", "unsafe", (Edit("h = h.mul(2)", P(9, 5), P(9, 14)),)),
)
VIEW = Diagnostic(
    "AL201",
    "write through a view of `x`, which is read later",
    "train.py",
    P(13, 5),
    P(15, 6),
    related=(Related("view created here", "model/layers.py", P(4, 12), P(4, 17)),),
    confidence="low",
    status="confirmed",
)
NO_SOURCE = Diagnostic(
    "AL404",
    "`.storage()` is deprecated",
    "gone.py",
    P(2, 1),
    P(2, 10),
    related=(Related("also here", "gone.py", P(5, 3), P(5, 8)),),
)
WHOLE_FILE = Diagnostic(
    "AL902", "could not be checked: invalid UTF-8 at byte 7", "broken, 100%.py", P(0, 0), P(0, 0)
)
ALL = [SAVED, VIEW, NO_SOURCE, WHOLE_FILE]


def render(fmt, diagnostics=ALL, **options):
    return report.render(fmt, diagnostics, source_lines=SOURCES.get, **options)


def test_full():
    assert render("full") == """\
train.py:9:5: AL101 [inplace-on-saved-tensor] `h` is modified in place after `sigmoid` saved it for backward
   |
 5 |     h = torch.sigmoid(x @ w)
   |         -------------------- saved for backward here
...
 9 |     h.mul_(2)
   |     ^^^^^^^^^ AL101
10 |     loss = h.sum()
11 |     loss.backward()
   |     --------------- backward reads the saved value here
   |
   = help: write `h = h.mul(2)` instead
   = help: Use out-of-place `mul` (unsafe fix, applied by `--fix --unsafe-fixes`)

train.py:13:5: AL201 [write-through-view] (low confidence) write through a view of `x`, which is read later
   |
13 |     y.t().add_(
   |     ^^^^^^^^^^^
14 |         z,
15 |     )
   |     ^ AL201
   |
  ::: model/layers.py:4:12
   |
 4 |     return x.t()
   |            ----- view created here
   |

gone.py:2:1: AL404 [typed-storage] `.storage()` is deprecated
  = note: gone.py:5:3: also here

broken, 100%.py: AL902 [file-not-checked] could not be checked: invalid UTF-8 at byte 7

"""


def test_full_marks_every_span_on_a_shared_line_and_keeps_explanations():
    diagnostic = Diagnostic(
        "AL201",
        "`y` is written\nthe base `x` is read afterwards\nnote: views share storage",
        "train.py",
        P(13, 5),
        P(13, 10),
        related=(Related("a view of `x`", "train.py", P(13, 5), P(13, 8)),),
    )
    assert render("full", [diagnostic]) == """\
train.py:13:5: AL201 [write-through-view] `y` is written
   |
13 |     y.t().add_(
   |     ^^^^^ AL201
   |     --- a view of `x`
   |
   = note: the base `x` is read afterwards
   = note: views share storage

"""


def test_full_lines_up_carets_after_tabs_and_wide_characters():
    lines = {"t.py": ['s = "日本"; x.add_(1)', "\tx.add_(1)"]}
    diagnostics = [
        Diagnostic("AL201", "wide", "t.py", P(1, 11), P(1, 20)),
        Diagnostic("AL201", "tab", "t.py", P(2, 2), P(2, 11)),
    ]
    text = report.render("full", diagnostics, source_lines=lines.get)
    assert '1 | s = "日本"; x.add_(1)\n  |             ^^^^^^^^^ AL201\n' in text
    assert "2 |     x.add_(1)\n  |     ^^^^^^^^^ AL201\n" in text


def test_full_survives_stale_positions():
    diagnostics = [
        Diagnostic("AL201", "past the end", "train.py", P(99, 1), P(99, 4)),
        Diagnostic("AL201", "reversed", "train.py", P(9, 9), P(9, 2)),
        Diagnostic("AL201", "ends on the next row", "train.py", P(9, 5), P(10, 1)),
    ]
    assert render("full", diagnostics) == """\
train.py:99:1: AL201 [write-through-view] past the end

train.py:9:9: AL201 [write-through-view] reversed
  |
9 |     h.mul_(2)
  |         ^ AL201
  |

train.py:9:5: AL201 [write-through-view] ends on the next row
   |
 9 |     h.mul_(2)
   |     ^^^^^^^^^ AL201
   |

"""


def test_full_asks_for_each_file_once():
    asked = []

    def source_lines(filename):
        asked.append(filename)
        return SOURCES.get(filename)

    report.render("full", ALL, source_lines=source_lines)
    assert sorted(asked) == ["gone.py", "model/layers.py", "train.py"]


def test_color_only_when_asked():
    plain = render("full")
    colored = render("full", color=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31mAL101\x1b[0m" in colored
    assert "\x1b[1;31m^^^^^^^^^ AL101\x1b[0m" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", render("concise", color=True)) == render("concise")


def test_concise():
    assert render("concise") == """\
train.py:9:5: AL101 `h` is modified in place after `sigmoid` saved it for backward
train.py:13:5: AL201 (low confidence) write through a view of `x`, which is read later
gone.py:2:1: AL404 `.storage()` is deprecated
broken, 100%.py: AL902 could not be checked: invalid UTF-8 at byte 7
"""


def test_json():
    assert render("json", [WHOLE_FILE]) == """\
[
  {
    "code": "AL902",
    "name": "file-not-checked",
    "message": "could not be checked: invalid UTF-8 at byte 7",
    "filename": "broken, 100%.py",
    "location": {
      "row": 0,
      "column": 0
    },
    "end_location": {
      "row": 0,
      "column": 0
    },
    "related": [],
    "fix": null,
    "url": "https://github.com/aliaslint/aliaslint/blob/main/rules/AL902.md",
    "confidence": "high"
  }
]
"""
    assert json.loads(render("json")) == [d.to_json() for d in ALL]


def test_github():
    assert render("github") == (
        "::error title=aliaslint (AL101),file=train.py,line=9,col=5,endLine=9,endColumn=14::"
        "AL101 `h` is modified in place after `sigmoid` saved it for backward"
        "%0Ahelp: write `h = h.mul(2)` instead"
        "%0Atrain.py:11:5: backward reads the saved value here"
        "%0Atrain.py:5:9: saved for backward here\n"
        "::warning title=aliaslint (AL201),file=train.py,line=13,col=5,endLine=15,endColumn=6::"
        "AL201 write through a view of `x`, which is read later"
        "%0Amodel/layers.py:4:12: view created here\n"
        "::error title=aliaslint (AL404),file=gone.py,line=2,col=1,endLine=2,endColumn=10::"
        "AL404 `.storage()` is deprecated%0Agone.py:5:3: also here\n"
        "::error title=aliaslint (AL902),file=broken%2C 100%25.py::"
        "AL902 could not be checked: invalid UTF-8 at byte 7\n"
    )


def test_github_escapes_properties_and_data():
    diagnostic = Diagnostic("AL404", "50% done\r\nnext", "a:b,c.py", P(1, 1), P(1, 2))
    assert render("github", [diagnostic]) == (
        "::error title=aliaslint (AL404),file=a%3Ab%2Cc.py,line=1,col=1,endLine=1,endColumn=2::"
        "AL404 50%25 done%0D%0Anext\n"
    )


def test_gitlab():
    issues = json.loads(render("gitlab"))
    fingerprints = [issue.pop("fingerprint") for issue in issues]
    assert issues == [
        {
            "description": "AL101 `h` is modified in place after `sigmoid` saved it for backward"
                           " - help: write `h = h.mul(2)` instead"
                           " - train.py:11:5: backward reads the saved value here"
                           " - train.py:5:9: saved for backward here",
            "check_name": "AL101",
            "severity": "major",
            "location": {"path": "train.py", "lines": {"begin": 9, "end": 9}},
        },
        {
            "description": "AL201 write through a view of `x`, which is read later"
                           " - model/layers.py:4:12: view created here",
            "check_name": "AL201",
            "severity": "minor",
            "location": {"path": "train.py", "lines": {"begin": 13, "end": 15}},
        },
        {
            "description": "AL404 `.storage()` is deprecated - gone.py:5:3: also here",
            "check_name": "AL404",
            "severity": "major",
            "location": {"path": "gone.py", "lines": {"begin": 2, "end": 2}},
        },
        {
            "description": "AL902 could not be checked: invalid UTF-8 at byte 7",
            "check_name": "AL902",
            "severity": "major",
            "location": {"path": "broken, 100%.py", "lines": {"begin": 1}},
        },
    ]
    assert all(re.fullmatch(r"[0-9a-f]{32}", f) for f in fingerprints)
    assert len(set(fingerprints)) == len(fingerprints)


def test_gitlab_fingerprints_follow_the_finding_not_its_line():
    def issues(diagnostics):  # the code at a row is part of a fingerprint: none here
        return json.loads(report.render("gitlab", diagnostics, source_lines=lambda *_: None))

    moved = Diagnostic(SAVED.code, SAVED.message, SAVED.filename, P(20, 5), P(20, 14))
    (first,), (again,) = (issues([d]) for d in (SAVED, moved))
    assert first["fingerprint"] == again["fingerprint"]
    twice = issues([SAVED, moved])
    assert twice[0]["fingerprint"] == first["fingerprint"] != twice[1]["fingerprint"]
    elsewhere = Diagnostic(SAVED.code, SAVED.message, "other.py", P(9, 5), P(9, 14))
    assert issues([elsewhere])[0]["fingerprint"] != first["fingerprint"]
    # With the source: the code of the span counts, its whitespace does not.
    assert json.loads(render("gitlab", [SAVED]))[0][
        "fingerprint"] != first["fingerprint"]


def test_gitlab_fingerprints_stay_when_unrelated_lines_move(project):
    """Lines added above a finding move it and the lines its message names; its fingerprint
    stays, and its location follows."""
    source = ("import torch\n\ndef f():\n    x = torch.zeros(4)\n    y = x[0]\n"
              "    y.add_(1)\n    return x.sum()\n")
    (before,) = json.loads(render("gitlab", check_source(source, "m.py")))
    moved = source.replace("def f():", "import os\n\n\ndef g():\n    return 1\n\n\ndef f():")
    (after,) = json.loads(render("gitlab", check_source(moved, "m.py")))
    assert "line 5" in before["description"] and "line 12" in after["description"]
    assert after["location"]["lines"]["begin"] == before["location"]["lines"]["begin"] + 7
    assert after["fingerprint"] == before["fingerprint"]
    edited = source.replace("y = x[0]\n    y.add_", "z = x[0]\n    z.add_")  # what it names
    (other,) = json.loads(render("gitlab", check_source(edited, "m.py")))
    assert other["fingerprint"] != before["fingerprint"]


def test_concise_messages_fit_on_a_line_in_ascii():
    long = ("`positions.masked_fill_(tokens == PAD, 0)` writes in place a tensor made by "
            "`expand` (`torch.arange(tokens.shape[1]).expand(tokens.shape[0], -1)`, line 21): "
            "several of its elements are one memory location · clone it first")
    assert report.concise_message(long) == (
        "`positions.masked_fill_(toke...` writes in place a tensor made by `expand`")
    assert report.concise_message("SyntaxError: invalid syntax") == "SyntaxError: invalid syntax"
    assert report.concise_message("a `b…` c · d\nhelp: e") == "a `b...` c"
    assert report.concise_message("an `odd backtick") == "an 'odd backtick"
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        for d in check_source(path.read_text(encoding="utf-8"), "x.py"):
            text = report.concise_message(d.message)
            assert text.isascii(), text
            assert len(text) <= report.CONCISE_LENGTH, text


def test_gitlab_puts_a_notebook_cell_into_the_description():
    in_cell = Diagnostic("AL201", "m", "nb.ipynb", P(2, 5), P(2, 9), cell=3,
                         related=(Related("r", "nb.ipynb", P(1, 1), P(1, 2), cell=2),))
    (issue,) = json.loads(render("gitlab", [in_cell]))
    assert issue["description"] == "cell 3:2:5: AL201 m - nb.ipynb:cell 2:1:1: r"
    assert issue["location"] == {"path": "nb.ipynb", "lines": {"begin": 1}}


def _low_and_high():
    """One finding, as a high-confidence and as a low-confidence one."""
    high = Diagnostic("AL201", "`y` is written\nnote: a view of `x`", "train.py", P(9, 5), P(9, 14))
    return high, Diagnostic(high.code, high.message, high.filename, high.location,
                            high.end_location, confidence="low")


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_low_confidence_shows_in_every_format(fmt, tmp_path):
    high, low = _low_and_high()
    high_text, low_text = (render(fmt, [d], cwd=tmp_path) for d in (high, low))
    assert high_text != low_text
    if fmt == "full":
        assert high_text.startswith("train.py:9:5: AL201 [write-through-view] `y` is written\n")
        assert low_text == high_text.replace(
            "AL201 [write-through-view] `y`", "AL201 [write-through-view] (low confidence) `y`")
    elif fmt == "concise":
        assert high_text == "train.py:9:5: AL201 `y` is written\n"
        assert low_text == "train.py:9:5: AL201 (low confidence) `y` is written\n"
    elif fmt == "json":
        assert json.loads(high_text)[0]["confidence"] == "high"
        assert json.loads(low_text)[0]["confidence"] == "low"
    elif fmt == "sarif":
        (high_result,) = validate_sarif(high_text)["runs"][0]["results"]
        (low_result,) = validate_sarif(low_text)["runs"][0]["results"]
        assert (high_result["level"], high_result["properties"]) == ("error", {"confidence": "high"})
        assert (low_result["level"], low_result["properties"]) == ("warning", {"confidence": "low"})
    elif fmt == "github":
        assert high_text.startswith("::error ") and low_text.startswith("::warning ")
        assert high_text.partition(" ")[2] == low_text.partition(" ")[2]
    elif fmt == "gitlab":
        (high_issue,), (low_issue,) = json.loads(high_text), json.loads(low_text)
        assert (high_issue["severity"], low_issue["severity"]) == ("major", "minor")
        assert {**high_issue, "severity": "minor"} == low_issue
    elif fmt == "html":
        code = '<span class="code-id">AL201</span> '
        assert "(low confidence)" not in high_text
        assert low_text == high_text.replace(code, code + "(low confidence) ")
    else:
        pytest.fail(f"no test of low confidence in {fmt}")


def test_low_confidence_in_color():
    high, low = _low_and_high()
    assert render("concise", [high], color=True).startswith(
        "\x1b[1mtrain.py:9:5\x1b[0m: \x1b[1;31mAL201\x1b[0m `y`")
    assert render("concise", [low], color=True).startswith(
        "\x1b[1mtrain.py:9:5\x1b[0m: \x1b[1;33mAL201\x1b[0m \x1b[1;33m(low confidence)\x1b[0m `y`")
    assert "\x1b[1;33mAL201\x1b[0m [write-through-view] \x1b[1;33m(low confidence)\x1b[0m" in render(
        "full", [low], color=True)


def test_statistics():
    assert report.render_statistics([*ALL, SAVED]) == (
        "2\tAL101\tinplace-on-saved-tensor\n"
        "1\tAL201\twrite-through-view\n"
        "1\tAL404\ttyped-storage\n"
        "1\tAL902\tfile-not-checked\n"
        "2 hidden fixes can be enabled with the `--unsafe-fixes` option.\n"
    )
    assert report.render_statistics([SAVED] * 10 + [VIEW], applies=lambda d: d.fix is not None) == (
        "10\tAL101\t[*] inplace-on-saved-tensor\n 1\tAL201\t[ ] write-through-view\n"
        "[*] fixable with the `--fix` option\n"
    )
    assert report.render_statistics([]) == ""


def validate_sarif(text: str) -> dict:
    log = json.loads(text)
    # The schema declares draft-04; "format" (uri, date-time) is deliberately not checked.
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    return log


def test_sarif(tmp_path):
    log = validate_sarif(render("sarif", cwd=tmp_path))
    assert log["$schema"] == report.SARIF_SCHEMA == SARIF_SCHEMA["id"]
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "aliaslint"
    assert driver["version"] == report._tool_version() and driver["version"]
    assert driver["informationUri"] == "https://github.com/aliaslint/aliaslint"
    assert [rule["id"] for rule in driver["rules"]] == ["AL101", "AL201", "AL404", "AL902"]
    assert driver["rules"][0] == {
        "id": "AL101",
        "name": "inplace-on-saved-tensor",
        "shortDescription": {"text": "Summary of inplace-on-saved-tensor."},
        "fullDescription": {"text": "Checks for inplace-on-saved-tensor in code."},
        "help": {"text": RULES["AL101"].text, "markdown": RULES["AL101"].text},
        "helpUri": "https://github.com/aliaslint/aliaslint/blob/main/rules/AL101.md",
        "defaultConfiguration": {"level": "error"},
    }
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"

    def where(uri, start, end=None):
        location = {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}}
        if start:
            location["region"] = dict(
                zip(("startLine", "startColumn", "endLine", "endColumn"), (*start, *end))
            )
        return location

    saved, view, _, whole_file = run["results"]
    assert saved == {
        "ruleId": "AL101",
        "ruleIndex": 0,
        "level": "error",
        "message": {"text": SAVED.message},
        "locations": [{"physicalLocation": where("train.py", (9, 5), (9, 14))}],
        "relatedLocations": [
            {
                "id": 0,
                "message": {"text": "backward reads the saved value here"},
                "physicalLocation": where("train.py", (11, 5), (11, 20)),
            },
            {
                "id": 1,
                "message": {"text": "saved for backward here"},
                "physicalLocation": where("train.py", (5, 9), (5, 29)),
            },
        ],
        "fixes": [
            {
                "description": {"text": "Use out-of-place `mul`"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
                        "replacements": [
                            {
                                "deletedRegion": where("", (9, 5), (9, 14))["region"],
                                "insertedContent": {"text": "h = h.mul(2)"},
                            }
                        ],
                    }
                ],
                "properties": {"applicability": "unsafe"},
            }
        ],
        "properties": {"confidence": "high"},
    }
    assert view["ruleIndex"] == 1 and view["level"] == "warning"
    assert view["locations"][0]["physicalLocation"]["region"]["endLine"] == 15
    assert view["relatedLocations"][0]["physicalLocation"] == where(
        "model/layers.py", (4, 12), (4, 17)
    )
    assert view["properties"] == {"confidence": "low", "status": "confirmed"}
    assert whole_file["locations"] == [{"physicalLocation": where("broken%2C%20100%25.py", None)}]


def test_sarif_paths(tmp_path):
    outside = Diagnostic("AL404", "m", str(tmp_path / "lib" / "a b.py"), P(1, 1), P(1, 2))
    log = validate_sarif(report.render("sarif", [outside], source_lines=SOURCES.get, cwd=Path("/")))
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///"
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": (tmp_path / "lib" / "a b.py").as_uri()}


def test_sarif_describes_every_real_rule(monkeypatch):
    monkeypatch.undo()
    rules = catalog.load_docs()
    if not rules:
        pytest.skip("rules/ holds no specs")
    diagnostics = [Diagnostic(code, "m", "t.py", P(1, 1), P(1, 2)) for code in sorted(rules)]
    log = validate_sarif(report.render("sarif", diagnostics, source_lines=SOURCES.get))
    described = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in described] == sorted(rules)
    for rule in described:
        assert rule["help"]["markdown"] == rules[rule["id"]].text
        assert rule["fullDescription"]["text"]


def test_empty():
    for fmt in ("full", "concise", "github"):
        assert render(fmt, []) == ""
    assert render("json", []) == render("gitlab", []) == "[]\n"
    log = validate_sarif(render("sarif", []))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render("xml")


def test_formats_are_all_rendered():
    for fmt in report.FORMATS:
        assert render(fmt)


positions = st.builds(P, st.integers(0, 8), st.integers(0, 30))


@given(
    lines=st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n"), max_size=20)),
    spans=st.lists(st.tuples(st.sampled_from(["a.py", "b.py"]), positions, positions), min_size=1),
)
@example(lines=["", "\ud8000"], spans=[("a.py", P(1, 0), P(2, 0))])  # a lone surrogate
def test_any_positions_render(lines, spans):
    (filename, start, end), *rest = spans
    diagnostic = Diagnostic(
        "AL201",
        "m",
        filename,
        start,
        end,
        related=tuple(Related("r", name, s, e) for name, s, e in rest),
    )
    files = {"a.py": lines}
    for fmt in report.FORMATS:
        text = report.render(fmt, [diagnostic], source_lines=files.get)
        assert all(line == line.rstrip() for line in text.splitlines())


def test_messages_quote_a_statement_without_the_comments_above_it():
    from aliaslint.engine import check_source
    source = (
        "import torch\n"
        "def f(scores: torch.Tensor, n: int):\n"
        "    scores = scores.reshape(-1, n)\n"
        "    # keep only the first channel\n"
        "    # (the rest are masked)\n"
        "    scores[:, 1:] = 0\n"
        "    return scores\n"
    )
    (finding,) = [d for d in check_source(source) if d.code == "AL205"]
    assert "`scores[:, 1:] = 0`" in finding.message
    assert "#" not in finding.message


# --- file names that could act on the terminal -------------------------------------------------

HOSTILE_NAMES = {
    "a\nb.py": "a%0Ab.py",
    "c\rd.py": "c%0Dd.py",
    "e\x1b[31mf.py": "e%1B[31mf.py",
    "g\u202eh.py": "g%E2%80%AEh.py",  # a bidi override
    "i\x07 100%.py": "i%07 100%25.py",  # once escaped, % is too: the name reads back
    "j\udcffk.py": "j%FFk.py",  # an undecodable byte of the name
}


@pytest.mark.parametrize("name, shown", HOSTILE_NAMES.items())
def test_text_formats_escape_control_characters_in_file_names(name, shown):
    related = Related("saved here", name, Position(1, 1), Position(1, 2))
    d = Diagnostic("AL101", "m", name, Position(2, 1), Position(2, 4), (related,))
    other = Diagnostic("AL101", "m", "main.py", Position(2, 1), Position(2, 4), (related,))
    unreadable = report.render("full", [d, other], source_lines=lambda *_: None)
    assert unreadable.splitlines()[:2] == [
        f"{shown}:2:1: AL101 [inplace-on-saved-tensor] m", f"  = note: {shown}:1:1: saved here"]
    readable = report.render("full", [other], source_lines=lambda *_: ["x = 1", "y = 2"])
    assert f" ::: {shown}:1:1" in readable.splitlines()
    assert report.render("concise", [d], source_lines=lambda *_: None) == f"{shown}:2:1: AL101 m\n"
    for text in (unreadable, readable):
        assert not any(ch in text for ch in "\r\x1b\x07\u202e\udcff")


def test_a_checked_file_whose_name_holds_a_newline(tmp_path, monkeypatch, capsys):
    from aliaslint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil\nx.py:1:1: AL999 forged.py").write_text(
        "import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n")
    assert main(["check", "--no-cache", "--output-format", "concise"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("evil%0Ax.py:1:1: AL999 forged.py:3:7: AL401 ")
    assert len(out.splitlines()) == 2
