"""AL401–AL404: what a finding says and where it points (the cases are in tests/rules/)."""

from aliaslint import check_source


def test_message_names_the_operands_and_the_fix():
    (finding,) = check_source(
        "import torch\nw = torch.ones(2)\nv = w.t()\nprint(id(w) == id(v))\n", "m.py", {"AL401"}
    )
    assert "`w.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()`" in finding.message
    assert "`aliaslint.shares_memory(w, v)`" in finding.message
    assert (finding.location.row, finding.location.column) == (4, 7)
    assert (finding.end_location.row, finding.end_location.column) == (4, 21)
