"""The pinned corpora: the wide precision group is selected by its `group`."""

import pytest
from conftest import benchmark_script

corpora = benchmark_script("corpora")


def test_the_wide_group_holds_the_released_packages_and_no_transformers():
    pins = corpora.load_pins()
    wide = corpora.select(pins, [], "wide")
    assert len(wide) >= 12
    assert all(c.kind == "pypi" and c.group == "wide" for c in wide)
    assert "transformers" not in {c.project for c in wide}
    assert sum(c.lines for c in wide) >= 300_000
    assert {c.name for c in corpora.select(pins, [])} >= {c.name for c in wide}


def test_an_unknown_group_is_an_error(tmp_path):
    with pytest.raises(corpora.Failure, match="group = 'nope'"):
        corpora.select(corpora.load_pins(), [], "nope")
    pins = tmp_path / "pins.toml"
    pins.write_text('[[corpus]]\nname = "a"\nkind = "git"\ngroup = 3\nurl = "u"\n'
                    'commit = "' + "0" * 40 + '"\ndigest = "sha256:' + "0" * 64 + '"\n')
    with pytest.raises(corpora.Failure, match="'group' must be a string"):
        corpora.load_pins(pins)


def test_list_prints_the_names_of_a_group(capsys):
    assert corpora.main(["list", "--group", "wide"]) == 0
    names = capsys.readouterr().out.split()
    assert "torchmetrics" in names and "timm" not in names
