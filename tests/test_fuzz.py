"""The fuzz campaigns of benchmarks/fuzz.py, deterministic from their seeds: no crash, no hang, and
CPython's verdict on every program; and every `--fix` verified (it compiles, a second fix changes
nothing, only the edited rows change, the fixed hazard runs under torch).  A plain run takes a few
seconds; `-m fuzz` (and CI's `-m ""`) runs longer ones, and benchmarks/fuzz.md the local ones."""

import importlib.util

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
@pytest.mark.parametrize("seed", [1])
def test_longer_fuzz_campaign(seed):
    _assert_clean(benchmark_script("fuzz").campaign(seed=seed, scale=5))


def _assert_fixes_hold(figures, programs: int) -> None:
    assert figures.failures == 0, "\n".join(figures.problems)
    assert figures.programs >= programs and set(figures.tried) == {
        "hazard variant", "hypothesmith with a hazard", "mutated example", "notebook"}
    # Fixes were made, and fixed hazard programs ran under torch.
    assert figures.fixes > 0
    if importlib.util.find_spec("torch") is not None:
        assert figures.ran > 0


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_fix_campaign_smoke():
    _assert_fixes_hold(benchmark_script("fuzz").fix_campaign(seed=0, count=24), 24)


@pytest.mark.fuzz
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_fix_campaign():
    """CI's run: 300 programs, every line ending (a lone CR included), fixed seed."""
    _assert_fixes_hold(benchmark_script("fuzz").fix_campaign(seed=0, count=300), 300)
