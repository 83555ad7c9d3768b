"""The fuzz campaign of benchmarks/fuzz.py, deterministic from its seed: no crash, no hang, and
CPython's verdict on every program.  A plain run takes a few seconds; `-m fuzz` runs a longer
one, and `python benchmarks/fuzz.py --scale 50` the one benchmarks/fuzz.md reports."""

import pytest

from conftest import benchmark_script

pytest.importorskip("hypothesmith")


def _assert_clean(figures) -> None:
    assert figures.failures == 0, "\n".join(figures.problems)
    assert figures.valid > 0 and set(figures.tried) == {
        "mutated file", "hypothesmith grammar", "hypothesmith tree", "notebook", "config",
        "cache"}


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it makes
def test_fuzz_campaign():
    _assert_clean(benchmark_script("fuzz").campaign(seed=0, scale=2))


@pytest.mark.fuzz
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@pytest.mark.parametrize("seed", [1, 2])
def test_longer_fuzz_campaign(seed):
    _assert_clean(benchmark_script("fuzz").campaign(seed=seed, scale=5))
