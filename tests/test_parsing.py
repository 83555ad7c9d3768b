"""The unvalidated parse makes libcst's own tree, and leaves node validation on after."""

import threading
from pathlib import Path

import libcst as cst
import pytest

from aliaslint.parsing import parse_module

FIXTURES = sorted(Path(__file__).parent.parent.joinpath("fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES[:80], ids=lambda p: p.name)
def test_the_tree_is_libcsts_own(path):
    text = path.read_text(encoding="utf-8")
    try:
        expected = cst.parse_module(text)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            parse_module(text)
        return
    parsed = parse_module(text)
    assert parsed.deep_equals(expected)
    assert parsed.code == text


def _an_invalid_node_is_refused():
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # an empty name: libcst's validation refuses it


def test_nodes_built_after_a_parse_are_validated():
    parse_module("x = 1\n")
    _an_invalid_node_is_refused()


def test_nodes_built_after_a_failed_parse_are_validated():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def (:\n")
    _an_invalid_node_is_refused()


def test_parses_on_several_threads_leave_validation_on():
    text = Path(__file__).read_text(encoding="utf-8")
    threads = [threading.Thread(target=lambda: [parse_module(text) for _ in range(5)])
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _an_invalid_node_is_refused()
