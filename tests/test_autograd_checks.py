"""AL101–AL105: what a finding says and where it points (the cases are in tests/rules/)."""

from aliaslint import check_source


def test_message_and_related_locations():
    source = (
        "import torch\n"
        "w = torch.randn(3, requires_grad=True)\n"
        "y = torch.sigmoid(w)\n"
        "y.mul_(2)\n"
        "loss = y.sum()\n"
        "loss.backward()\n"
    )
    (finding,) = check_source(source, "m.py", {"AL101"})
    assert finding.message == (
        "`y.mul_(2)` overwrites `y`, saved for backward by `torch.sigmoid(w)`; "
        "`loss.backward()` at line 6 will raise · saved: `torch.sigmoid(w)` (its result, "
        "line 3) · use the out-of-place op, or `.clone()` before writing"
    )
    assert [(r.message, r.location.row) for r in finding.related] == [
        ("saved for backward here", 3), ("backward runs here", 6)]
