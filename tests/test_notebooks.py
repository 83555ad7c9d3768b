"""Jupyter notebooks: code cells make one module, findings point into cells."""

import json
from pathlib import Path

import pytest

from aliaslint.cli import main
from aliaslint.engine import check_notebook
from aliaslint.notebooks import load_notebook, mask_ipython
from aliaslint.report import render

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def notebook(*cells, nbformat=4, language="python") -> str:
    def cell(source):
        kind = "markdown" if source.startswith("# ") else "code"
        return {"cell_type": kind, "metadata": {}, "source": source.splitlines(True),
                **({"outputs": [], "execution_count": None} if kind == "code" else {})}

    return json.dumps({"cells": [cell(source) for source in cells], "nbformat": nbformat,
                       "nbformat_minor": 5,
                       "metadata": {"language_info": {"name": language}}})


SETUP = "!pip install torch\n%matplotlib inline\nimport torch\na = torch.zeros(3)\n"


def found(text: str):
    return [(d.cell, d.location.row, d.location.column, d.code)
            for d in check_notebook(text, "nb.ipynb")]


def test_magics_are_masked_and_rows_kept():
    source = (
        "%load_ext autoreload\n"
        "files = !ls\n"
        "x = '''\n%not a magic\n'''\n"
        "y = (1\n     % 2)\n"
        "for i in range(2):\n    %time f(i)\n"
        "torch.zeros?\n"
        "!pip install a \\\n    b\n"
        "ok = a != b\n"
    )
    masked = mask_ipython(source)
    assert masked.count("\n") == source.count("\n")
    assert masked.splitlines() == [
        "pass", "files = ...", "x = '''", "%not a magic", "'''", "y = (1", "     % 2)",
        "for i in range(2):", "    pass", "pass", "pass", "", "ok = a != b",
    ]
    compile(masked, "masked", "exec")
    assert mask_ipython("%%bash\necho hi\nexit 1\n") == "\n\n\n"
    assert mask_ipython("%%time\nx = 1\n") == "\nx = 1\n"


def test_findings_carry_cell_and_row_within_it():
    text = notebook("# Title", SETUP, "b = a[1:]\nprint(id(a) == id(b))\n", "a.storage()")
    assert found(text) == [(3, 2, 7, "AL401"), (4, 1, 1, "AL404")]


def test_noqa_inside_a_cell():
    text = notebook(SETUP, "print(id(a) == id(a[1:]))  # noqa: AL401\nprint(id(a) == id(a))")
    assert found(text) == [(2, 2, 7, "AL401")]


def test_a_broken_cell_is_reported_and_the_rest_still_checked():
    text = notebook(SETUP, "def f(:\n    pass\n", "print(id(a) == id(a[1:]))", "x = (1,")
    result = found(text)
    assert [(cell, code) for cell, _, _, code in result] == [
        (2, "AL902"), (3, "AL401"), (4, "AL902")]
    assert result[1][1:3] == (1, 7)


def test_a_broken_cell_is_a_finding_not_an_unchecked_file(project, capsys):
    (project / "nb.ipynb").write_text(notebook(SETUP, "x = (1,", "print(id(a) == id(a[1:]))"))
    (project / "clean.py").write_text("import torch\n")
    assert main(["check", "--color", "never", "--output-format", "concise"]) == 1
    # The summary counts every finding it printed, the broken cell's too.
    assert capsys.readouterr().out.splitlines()[-1] == "Found 2 findings in 1 of 2 files."
    (project / "broken.py").write_text("import torch\nx = (1,\n")
    assert main(["check", "--color", "never", "--output-format", "concise"]) == 2
    assert capsys.readouterr().out.splitlines()[-1] == (
        "Found 3 findings in 2 of 3 files; 1 file could not be checked.")


def test_files_that_are_not_notebooks():
    assert [d.message for d in check_notebook("{not json", "x.ipynb")][0].startswith(
        "notebook is not valid JSON")
    (old,) = check_notebook(notebook(SETUP, nbformat=3), "x.ipynb")
    assert old.code == "AL902" and "nbformat 4" in old.message and old.cell is None
    assert check_notebook(notebook("print(id(a) == id(a))", language="R"), "x.ipynb") == []
    assert check_notebook(b"\xff\xfe\x00garbage", "x.ipynb")[0].code == "AL902"
    (deep,) = check_notebook("[" * 100_000 + "]" * 100_000, "x.ipynb")
    assert deep.code == "AL902" and "nested too deeply" in deep.message


def test_cell_numbers_count_every_cell():
    loaded = load_notebook(notebook("# a", "x = 1\ny = 2", "# b", "", "z = 3"))
    assert [(c.number, c.first_row) for c in loaded.cells] == [(2, 1), (5, 3)]
    assert loaded.cell_at(2) == (2, 2) and loaded.cell_at(3) == (5, 1)


def _project(project: Path) -> None:
    (project / "nb.ipynb").write_text(notebook("# Title", SETUP, "b = a.t()\nassert b is a"))
    (project / "ok.py").write_text("import torch\n")


def test_cli_formats(project, capsys):
    _project(project)
    assert main(["check", "--color", "never", "--output-format", "concise"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("nb.ipynb:cell 3:2:8: AL402 ")
    main(["check", "--color", "never"])
    out = capsys.readouterr().out
    assert "nb.ipynb:cell 3:2:8: AL402 [is-sharing-check]" in out
    assert "2 | assert b is a\n  |        ^^^^^^ AL402" in out
    main(["check", "--output-format", "json"])
    (finding,) = json.loads(capsys.readouterr().out)
    assert finding["cell"] == 3 and finding["location"] == {"row": 2, "column": 8}
    main(["check", "--output-format", "github"])
    out = capsys.readouterr().out
    assert out.startswith("::error title=aliaslint (AL402),file=nb.ipynb::cell 3:2:8: AL402 ")
    main(["check", "--output-format", "sarif"])
    log = json.loads(capsys.readouterr().out)
    pytest.importorskip("jsonschema").Draft4Validator(SARIF_SCHEMA).validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["region"]["properties"] == {"cell": 3}
    assert location["logicalLocations"][0]["name"] == "cell 3"


def test_code_frame_shows_the_cell_as_written(project, capsys):
    (project / "nb.ipynb").write_text(notebook(
        "# Title", SETUP + "print(id(a) == id(a[1:]))\n%time print(1)\nprint(id(a) == a.t())"))
    main(["check", "--color", "never"])
    out = capsys.readouterr().out
    assert "nb.ipynb:cell 2:5:7: AL401" in out
    assert "5 | print(id(a) == id(a[1:]))\n" in out
    assert " |       ^^^^^^^^^^^^^^^^^^ AL401\n" in out


def test_walk_include_and_exclude(project, capsys):
    _project(project)
    (project / ".ipynb_checkpoints").mkdir()
    (project / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_text(notebook(SETUP))
    main(["check", "--show-files"])
    assert capsys.readouterr().out.splitlines() == ["nb.ipynb  (defaults)", "ok.py  (defaults)"]
    (project / "pyproject.toml").write_text(
        "[tool.aliaslint]\ninclude = ['*.py']\nextend-include = ['*.pyw']\n")
    (project / "gui.pyw").write_text("import torch\n")
    main(["check", "--show-files"])
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "gui.pyw", "ok.py"]
    assert main(["check", "nb.ipynb", "--no-cache"]) == 1  # named: checked anyway
    capsys.readouterr()
    (project / "pyproject.toml").write_text("[tool.aliaslint]\nextend-exclude = ['nb.ipynb']\n")
    main(["check", "--show-files"])
    assert capsys.readouterr().out.splitlines()[0] == "ok.py  (pyproject.toml)"


def test_every_precommit_hook_covers_notebooks():
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"]: hook["types_or"] for hook in hooks} == {
        "aliaslint": ["python", "pyi", "jupyter"],
        "aliaslint-fix": ["python", "pyi", "jupyter"]}


def test_related_locations_render_with_their_cell():
    from aliaslint.diagnostics import Diagnostic, Position, Related

    diagnostic = Diagnostic("AL201", "m", "nb.ipynb", Position(1, 1), Position(1, 4),
                            (Related("view made here", "nb.ipynb", Position(2, 5),
                                     Position(2, 8), cell=2),), cell=4)
    lines = {2: ["x = 1", "y = x.t()"], 4: ["y.add_(1)"]}
    text = render("full", [diagnostic], source_lines=lambda name, cell=None: lines.get(cell))
    assert "nb.ipynb:cell 4:1:1: AL201" in text
    assert "::: nb.ipynb:cell 2:2:5" in text and "2 | y = x.t()" in text
    assert diagnostic.to_json()["related"][0]["cell"] == 2
