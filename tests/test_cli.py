"""The command line as a user meets it: exit codes, formats, config, bad input."""

import json
import os
from pathlib import Path

import pytest

from aliaslint import registry
from aliaslint.analysis import Compare
from aliaslint.cli import main
from aliaslint.rule import Check

BAD = "import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n"
CLEAN = "import torch\na = torch.zeros(3)\nprint(a.sum())\n"


def run(capsys, *args):
    code = main(["check", "--color", "never", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_exit_codes(project, capsys):
    write(project / "clean.py", CLEAN)
    assert run(capsys, "clean.py")[0] == 0
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--output-format", "concise")
    assert code == 1
    assert out.splitlines()[0].startswith("bad.py:3:7: AL401 ")
    assert out.splitlines()[-1] == "Found 1 finding in 1 of 2 files."
    assert run(capsys, "--exit-zero")[0] == 0


def test_default_path_is_the_current_directory_and_output_is_relative(project, capsys):
    write(project / "pkg" / "m.py", BAD)
    code, out, _ = run(capsys, "--output-format", "concise")
    assert code == 1 and out.startswith("pkg/m.py:3:7: AL401")


def test_full_format_has_a_code_frame(project, capsys):
    write(project / "bad.py", BAD)
    _, out, _ = run(capsys)
    assert "bad.py:3:7: AL401 [id-sharing-check]" in out
    assert "3 | print(id(a) == id(a[1:]))" in out
    assert "^^^^^^^^^^^^^^^^^^" in out


def test_json_shape(project, capsys):
    write(project / "bad.py", BAD)
    _, out, _ = run(capsys, "--output-format", "json")
    (finding,) = json.loads(out)
    assert list(finding) == ["code", "name", "message", "filename", "location", "end_location",
                             "related", "fix", "url", "confidence"]
    assert finding["location"] == {"row": 3, "column": 7}
    assert finding["end_location"] == {"row": 3, "column": 25}
    assert finding["filename"] == "bad.py"
    assert finding["fix"] == {
        "message": "compare the untyped storages instead", "applicability": "unsafe",
        "edits": [{"content": "a.untyped_storage().data_ptr() == a[1:].untyped_storage()"
                              ".data_ptr()",
                   "location": {"row": 3, "column": 7}, "end_location": {"row": 3, "column": 25}}]}


def test_select_ignore_and_statistics(project, capsys):
    write(project / "m.py", "import torch\na = torch.zeros(3)\nprint(id(a) == id(a), a.storage())\n")
    _, out, _ = run(capsys, "--output-format", "concise", "--select", "AL404")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["AL404"]
    _, out, _ = run(capsys, "--output-format", "concise", "--ignore", "AL4")
    assert out.startswith("All checks passed!")
    _, out, _ = run(capsys, "--output-format", "concise", "--ignore", "AL4", "--extend-select",
                    "AL401")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["AL401"]
    _, out, _ = run(capsys, "--statistics")
    # AL401's fix is unsafe: fixable only with --unsafe-fixes ([*], as ruff marks it); AL404's
    # here is display-only, never applied.
    assert out.splitlines() == ["1\tAL401\tid-sharing-check", "1\tAL404\ttyped-storage",
                                "1 hidden fix can be enabled with the `--unsafe-fixes` option."]
    _, out, _ = run(capsys, "--statistics", "--unsafe-fixes")
    assert out.splitlines() == ["1\tAL401\t[*] id-sharing-check", "1\tAL404\t[ ] typed-storage",
                                "[*] fixable with the `--fix` option"]


def test_unknown_selectors_are_usage_errors(project, capsys):
    write(project / "m.py", CLEAN)
    code, _, err = run(capsys, "--select", "AL999")
    assert code == 2 and "unknown rule selector 'AL999'" in err


def test_config_file_and_per_file_ignores(project, capsys):
    write(project / "pyproject.toml", """
[tool.aliaslint]
ignore = ["AL404"]
per-file-ignores = { "tests/*" = ["AL401"] }
extend-exclude = ["generated"]
""")
    source = "import torch\na = torch.zeros(3)\nprint(id(a) == id(a), a.storage())\n"
    write(project / "src" / "m.py", source)
    write(project / "tests" / "t.py", source)
    write(project / "generated" / "g.py", source)
    code, out, _ = run(capsys, "--output-format", "concise")
    assert out.splitlines()[:-1] == [line for line in out.splitlines()[:-1]
                                     if line.startswith("src/m.py")]
    assert len(out.splitlines()) == 2 and code == 1
    code, out, _ = main(["check", "--show-files"]), *capsys.readouterr()
    assert out.splitlines() == ["src/m.py  (pyproject.toml)", "tests/t.py  (pyproject.toml)"]


def test_nearest_config_wins(project, capsys):
    write(project / "pyproject.toml", "[tool.aliaslint]\nignore = ['AL401']\n")
    write(project / "sub" / "aliaslint.toml", "select = ['AL401']\n")
    write(project / "top.py", BAD)
    write(project / "sub" / "inner.py", BAD)
    _, out, _ = run(capsys, "--output-format", "concise")
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["sub/inner.py"]


@pytest.mark.parametrize(("config", "message"), [
    ("[tool.aliaslint]\nselct = ['AL401']\n", "unknown key 'selct' (did you mean 'select'?)"),
    ("[tool.aliaslint]\nselect = 'AL401'\n", "select: expected a list of rule codes"),
    ("[tool.aliaslint]\nignore = ['XY1']\n", "ignore: unknown rule selector 'XY1'"),
    ("[tool.aliaslint\n", "invalid TOML"),
    ("[tool.aliaslint]\nmax-file-size = -1\n", "max-file-size: expected a positive number"),
    ("[tool.aliaslint]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("[tool.aliaslint]\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n",
     "nested too deeply"),
    ("[tool.aliaslint]\n# " + "x" * (1 << 20) + "\n", "larger than 1 MiB"),
    ("[tool.aliaslint]\nx" + ".x" * 100_000 + " = 1\n",
     "line 2: a dotted key of more than 1,000 parts"),
    ("[tool.aliaslint" + ".x" * 100_000 + "]\n", "line 1: a dotted key of more than 1,000 parts"),
    ("[tool.aliaslint]\nselect = ['" + "Q" * 500_000 + "']\n", "unknown rule selector 'QQQ"),
])
def test_broken_config_is_a_clear_error(project, capsys, config, message):
    write(project / "pyproject.toml", config)
    write(project / "m.py", CLEAN)
    code, out, err = run(capsys)
    assert code == 2
    assert "pyproject.toml" in err and message in err
    assert len(err) < 2000 and "Traceback" not in err


def test_a_pyproject_that_is_not_utf8_is_an_error_like_aliaslint_toml(project, capsys):
    for name in ("pyproject.toml", "aliaslint.toml"):
        (project / name).write_bytes(b"[tool.aliaslint]\nselect = ['AL401'] # \xff\xfe\n")
        write(project / "m.py", CLEAN)
        code, out, err = run(capsys)
        assert code == 2 and name in err and "cannot read" in err, (name, err)
        (project / name).unlink()


def test_explicit_config_and_isolated(project, capsys):
    write(project / "pyproject.toml", "[tool.aliaslint]\nignore = ['AL401']\n")
    write(project / "strict.toml", "select = ['ALL']\n")
    write(project / "m.py", BAD)
    assert run(capsys)[0] == 0
    assert run(capsys, "--config", "strict.toml")[0] == 1
    assert run(capsys, "--isolated")[0] == 1
    code, _, err = run(capsys, "--config", "missing.toml")
    assert code == 2 and "missing.toml: config file not found" in err


def test_default_excludes_and_force_exclude(project, capsys):
    write(project / ".venv" / "lib" / "x.py", BAD)
    write(project / "build" / "y.py", BAD)
    write(project / "ok.py", CLEAN)
    assert run(capsys)[0] == 0
    assert run(capsys, "build/y.py")[0] == 1  # named explicitly: checked
    assert run(capsys, "--force-exclude", "build/y.py")[0] == 0


BAD_INPUTS = {
    "syntax.py": ("import torch\ndef f(:\n", "SyntaxError: invalid syntax", 2),
    "latin.py": (b"import torch\nname = '\xe9t\xe9'\n", "not valid utf-8", 2),
    "cookie.py": (b"# -*- coding: klingon -*-\nimport torch\n", "bad encoding declaration", 1),
    "nul.py": (b"import torch\n\x00\x00\n", "NUL bytes", 2),
    "wide.py": ("import torch\nx = torch.ones(2)\n".encode("utf-16"),
                "not UTF-8 Python source (UTF-16 with BOM)", 1),
}


def test_bad_files_are_reported_and_the_rest_is_checked(project, capsys):
    for name, (content, _, _) in BAD_INPUTS.items():
        write(project / name, content)
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--output-format", "json")
    assert code == 2
    findings = {d["filename"]: d for d in json.loads(out)}
    assert findings["bad.py"]["code"] == "AL401"
    for name, (_, message, row) in BAD_INPUTS.items():
        assert findings[name]["code"] == "AL902", name
        assert message in findings[name]["message"], name
        assert findings[name]["location"]["row"] == row, name


def test_coding_cookie_is_honoured(project, capsys):
    write(project / "latin.py", "# -*- coding: latin-1 -*-\n".encode() + BAD.encode("latin-1")
          + "s = 'é'\n".encode("latin-1"))
    code, out, _ = run(capsys, "--output-format", "concise")
    assert code == 1 and out.startswith("latin.py:4:7: AL401")


def test_file_size_limit(project, capsys):
    write(project / "big.py", BAD + "#" * 5000 + "\n")
    code, out, _ = run(capsys, "--output-format", "concise", "--max-file-size", "1000")
    assert code == 2 and "over the 1,000-byte limit" in out


def test_unreadable_file(project, capsys, monkeypatch):
    write(project / "secret.py", BAD)
    write(project / "bad.py", BAD)
    real = os.open

    def open_(path, *args, **kwargs):
        if os.fspath(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    code, out, _ = run(capsys, "--output-format", "concise", "--jobs", "1")
    assert code == 2
    assert "secret.py:1:1: AL902 cannot read file: Permission denied" in out
    assert "bad.py:3:7: AL401" in out


def test_missing_path(project, capsys):
    code, out, _ = run(capsys, "--output-format", "concise", "nope.py")
    assert code == 2 and "nope.py" in out and "no such file or directory" in out


def test_an_exception_in_a_rule_is_an_internal_error_for_that_file(project, capsys,
                                                                    monkeypatch):
    def explode(event, ctx):
        raise ValueError("boom")
        yield

    rule = registry.get("AL403")
    monkeypatch.setattr(rule, "checks", [Check(Compare, explode), *rule.checks])
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--output-format", "concise", "--jobs", "1")
    assert code == 2
    assert "AL903 internal error in AL403: ValueError: boom" in out
    assert "bad.py:3:7: AL401" in out  # the other rules still ran


def test_suppressions(project, capsys):
    write(project / "m.py", """import torch
a = torch.zeros(3)
print(id(a) == id(a))  # noqa: AL401
print(id(a) == id(a))  # noqa
print(id(a) == id(a))  # aliaslint: ignore[AL402, AL401]
print(id(a) == id(a))  # noqa: E501
print(
    id(a) == id(a),
)  # this comment is not on the first line
print(  # aliaslint: ignore[AL401]
    id(a) == id(a),
)
x = a.storage()  # noqa: AL401
""")
    _, out, _ = run(capsys, "--output-format", "concise")
    rows = [line.split(":")[1] + " " + line.split()[1] for line in out.splitlines()[:-1]]
    assert rows == ["6 AL401", "8 AL401", "13 AL404"]
    _, out, _ = run(capsys, "--output-format", "concise", "--report-unused-suppressions")
    rows = [line.split(":")[1] + " " + line.split()[1] for line in out.splitlines()[:-1]]
    assert rows == ["5 AL901", "6 AL401", "8 AL401", "13 AL404", "13 AL901"]
    assert "unused suppression of `AL402`" in out


def test_file_level_suppression(project, capsys):
    write(project / "m.py", "# aliaslint: ignore-file\n" + BAD)
    assert run(capsys)[0] == 0


def test_parallel_output_is_deterministic(project, capsys):
    for i in range(24):
        write(project / f"m{i:02}.py", BAD * (1 + i % 3))
    outputs = {run(capsys, "--output-format", "json", "--jobs", str(jobs))[1]
               for jobs in (1, 2, 3)}
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == sum(1 + i % 3 for i in range(24))


def test_rule_and_rules_commands(capsys):
    assert main(["rule", "al401"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# AL401 id-sharing-check") and "## Why is this bad?" in out
    assert main(["rule", "AL999"]) == 2
    assert "unknown rule 'AL999'" in capsys.readouterr().err
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "AL401  id-sharing-check" in out and "AL901  unused-suppression" in out
    assert main(["rules", "--output-format", "json"]) == 0
    assert {r["code"] for r in json.loads(capsys.readouterr().out)} >= {"AL401", "AL902"}


def test_check_never_imports_torch_or_the_checked_code(tmp_path):
    import subprocess
    import sys

    write(tmp_path / "boom.py", "import torch\nraise SystemExit('executed!')\n")
    script = (
        "import sys\nfrom aliaslint.cli import main\n"
        "code = main(['check', sys.argv[1], '--jobs', '1', '--no-cache'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('exit', code)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.stdout.strip().endswith("exit 0"), result.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "boom.py"]  # nothing written


def test_output_file_quiet_and_statistics_as_json(project, capsys):
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--output-format", "concise", "--quiet", "-o", "report.txt")
    assert (code, out) == (1, "")
    assert (project / "report.txt").read_text(encoding="utf-8").startswith("bad.py:3:7: AL401 ")
    assert "Found" not in (project / "report.txt").read_text(encoding="utf-8")
    code, out, _ = run(capsys, "--statistics", "--output-format", "json")
    assert json.loads(out) == [  # its only fix is unsafe
        {"code": "AL401", "name": "id-sharing-check", "count": 1, "fixable": False}]
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", "--unsafe-fixes")
    assert json.loads(out) == [
        {"code": "AL401", "name": "id-sharing-check", "count": 1, "fixable": True}]
    (project / "pyproject.toml").write_text("[tool.aliaslint]\nunsafe-fixes = true\n")
    code, out, _ = run(capsys, "--statistics", "--output-format", "json")
    assert json.loads(out)[0]["fixable"] is True


def test_rule_by_name_as_json_and_did_you_mean(capsys):
    assert main(["rule", "id-sharing-check", "--output-format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["code"], data["name"]) == ("AL401", "id-sharing-check")
    assert data["explanation"].startswith("# AL401 id-sharing-check")
    assert main(["rule", "AL4O1"]) == 2
    assert "did you mean 'AL401'?" in capsys.readouterr().err
    assert main(["check", "--select", "AL4O1"]) == 2
    assert "did you mean 'AL401'?" in capsys.readouterr().err


def test_version_short_flag(capsys):
    with pytest.raises(SystemExit):
        main(["-V"])
    assert capsys.readouterr().out.startswith("aliaslint ")
